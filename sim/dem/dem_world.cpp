#include "sim/dem/dem_world.h"

#include "sim/core/bytes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <tuple>
#include "sim/core/assert.h"
#include "sim/core/hash.h"
#include "sim/core/progress.h"
#include "sim/dem/dem_cpu.h"
#include "sim/dem/dem_kernels.h"

namespace ps {
namespace dem {

DemWorld::DemWorld()
    : guard_({[this] { return clock(); }, [this](const Clock& c) { set_clock(c); },
              [this] {
                std::unique_ptr<DemBackend> cpu = make_dem_backend("cpu", fallback_threads);
                cpu->bind(&particles, &bonds);  // takes the host state (history restarts)
                host_state_taken();
                return cpu;
              },
              [this] { count_host_broken(); },
              [this](const BackendFallback& fb) {
                if (on_fallback) on_fallback(fb);
              }},
             make_dem_backend("cpu", 0)) {
  guard_.backend().bind(&particles, &bonds);
}
DemWorld::~DemWorld() = default;

int DemWorld::add_material(const std::string& name, const DemMaterial& m) {
  if (material_index(name) >= 0)
    throw std::runtime_error("DEM material '" + name + "' defined twice");
  if (materials.size() >= 256) throw std::runtime_error("at most 256 DEM materials");
  materials.push_back(m);
  material_names.push_back(name);
  return static_cast<int>(materials.size()) - 1;
}

int DemWorld::material_index(const std::string& name) const {
  for (size_t k = 0; k < material_names.size(); ++k)
    if (material_names[k] == name) return static_cast<int>(k);
  return -1;
}

void DemWorld::set_backend(std::unique_ptr<DemBackend> backend) {
  // The old backend hands its state over; a failed device keeps the last host copy.
  guard_.sync();
  backend->bind(
      &particles,
      &bonds);  // takes the state (a device uploads); when it throws the old backend stays
  guard_.replace(std::move(backend));
  host_state_taken();
}

std::string DemWorld::backend_name() const { return guard_.backend().name(); }

void DemWorld::host_changed() {
  PS_ASSERT(particles.consistent() && bonds.consistent(),
            "an edit left the particle or bond columns of different lengths");
  PS_ASSERT(bonds.indices_valid(particles.size()),
            "an edit left a bond joining a particle that is not there");
  host_state_taken();
  // The host arrays are the state (with the user's edits) whether or not the device takes them.
  guarded("taking the edited state", AtFailure::HostAuthoritative,
          [&] { backend().host_changed(); });
  guard_.host_taken();
}

void DemWorld::sync() { guard_.sync(); }

// [SECTION] Run-time backend failures ------------------------------------------------

DemWorld::Clock DemWorld::clock() const {
  Clock c;
  c.step = step_count_;
  c.time = time_;
  c.last_dt = last_dt_;
  c.last_max_speed = last_max_speed_;
  c.bonds_broken_total = bonds_broken_total_;
  c.last_result = last_result_;
  return c;
}

void DemWorld::set_clock(const Clock& c) {
  step_count_ = c.step;
  time_ = c.time;
  last_dt_ = c.last_dt;
  last_max_speed_ = c.last_max_speed;
  bonds_broken_total_ = c.bonds_broken_total;
  last_result_ = c.last_result;
}

bool DemWorld::on_cpu() const { return guard_.on_cpu(); }

void DemWorld::reset_clock() {
  step_count_ = 0;
  time_ = 0.0;
  last_dt_ = 0.0;
  last_max_speed_ = 0.0;
  bonds_broken_total_ = 0;
  last_result_ = DemStepResult{};
  failure_ = DemStepStatus{};
  guard_.reset();
}

void DemWorld::clear() {
  host_state_taken();
  particles.clear();
  bonds.clear();
  walls.clear();
  loads.clear();
  materials.clear();
  material_names.clear();
  grab_end();
  reset_clock();
  host_changed();
}

int64_t DemWorld::index_of(uint32_t id) const {
  // IDs are assigned in increasing order, so the array is sorted by ID.
  auto it = std::lower_bound(particles.id.begin(), particles.id.end(), id);
  if (it != particles.id.end() && *it == id) return it - particles.id.begin();
  for (size_t i = 0; i < particles.size(); ++i)
    if (particles.id[i] == id) return static_cast<int64_t>(i);
  return -1;
}

// [SECTION] Bond formation -----------------------------------------------------------

size_t DemWorld::form_bonds() {
  guard_.sync();
  bonds.clear();
  const size_t n = particles.size();
  if (!bond.enabled || n == 0) {
    host_changed();
    return 0;
  }
  // Only grains of a bonded body (body != 0) bond, and only within their body:
  // the cells are sized from those grains alone. Sized from every grain, one
  // steel ball of radius 0.015 beside 432 000 bonded grains of radius 0.0002
  // put 6000 grains in a cell and took 20 s to bond (now 0.2 s); the bonds
  // are the same either way.
  const double mult = bond.contact_radius_multiplier;
  double rmax = 0.0;
  Vec2d lo{std::numeric_limits<double>::max(), std::numeric_limits<double>::max()}, hi = -lo;
  size_t bonded = 0;
  for (size_t i = 0; i < n; ++i) {
    if (particles.body[i] == 0) continue;
    ++bonded;
    rmax = std::max(rmax, particles.radius[i]);
    lo.x = std::min(lo.x, particles.x[i].x);
    lo.y = std::min(lo.y, particles.x[i].y);
    hi.x = std::max(hi.x, particles.x[i].x);
    hi.y = std::max(hi.y, particles.x[i].y);
  }
  if (bonded == 0) {
    host_changed();
    return 0;
  }
  double cell = std::max(2.0 * rmax * mult, 1e-12);
  const double cap = std::max<double>(1024.0, 4.0 * static_cast<double>(bonded));
  while (((hi.x - lo.x) / cell + 1.0) * ((hi.y - lo.y) / cell + 1.0) > cap) cell *= 2.0;
  const int gx = static_cast<int>((hi.x - lo.x) / cell) + 1,
            gy = static_cast<int>((hi.y - lo.y) / cell) + 1;
  std::vector<uint32_t> start(static_cast<size_t>(gx) * gy + 1, 0), items(n), cell_of(n);
  for (size_t i = 0; i < n; ++i) {
    if (particles.body[i] == 0) continue;
    int cx = std::clamp(static_cast<int>((particles.x[i].x - lo.x) / cell), 0, gx - 1);
    int cy = std::clamp(static_cast<int>((particles.x[i].y - lo.y) / cell), 0, gy - 1);
    cell_of[i] = static_cast<uint32_t>(cy * gx + cx);
    ++start[cell_of[i] + 1];
  }
  for (size_t c = 0; c + 1 < start.size(); ++c) start[c + 1] += start[c];
  std::vector<uint32_t> cursor(start.begin(), start.end() - 1);
  for (size_t i = 0; i < n; ++i)
    if (particles.body[i] != 0) items[cursor[cell_of[i]]++] = static_cast<uint32_t>(i);
  std::vector<uint32_t> cand;
  for (size_t i = 0; i < n; ++i) {
    if (particles.body[i] == 0) continue;
    // sim/core/progress.h: bonding is the DEM loader's 80-90 % of the bar.
    if ((i & 16383) == 0)
      progress("bonding the grains", 0.8 + 0.1 * static_cast<double>(i) / static_cast<double>(n));
    cand.clear();
    const int cx = static_cast<int>(cell_of[i] % static_cast<uint32_t>(gx));
    const int cy = static_cast<int>(cell_of[i] / static_cast<uint32_t>(gx));
    for (int yy = std::max(cy - 1, 0); yy <= std::min(cy + 1, gy - 1); ++yy)
      for (int xx = std::max(cx - 1, 0); xx <= std::min(cx + 1, gx - 1); ++xx) {
        const size_t c = static_cast<size_t>(yy) * gx + xx;
        for (uint32_t o = start[c]; o < start[c + 1]; ++o) {
          const uint32_t j = items[o];
          if (j <= i || particles.body[j] != particles.body[i]) continue;
          const double rr = mult * (particles.radius[i] + particles.radius[j]);
          if (length2(particles.x[j] - particles.x[i]) < rr * rr) cand.push_back(j);
        }
      }
    std::sort(cand.begin(), cand.end());
    for (uint32_t j : cand)
      bonds.add(static_cast<uint32_t>(i), j, length(particles.x[j] - particles.x[i]));
  }
  host_changed();
  return bonds.size();
}

// [SECTION] Time step --------------------------------------------------------------

size_t DemWorld::intact_bonds() const {
  if (intact_size_ != bonds.size()) {
    intact_ = 0;
    for (uint8_t b : bonds.broken) intact_ += b ? 0 : 1;
    intact_size_ = bonds.size();
  }
  return intact_;
}

std::vector<double> DemWorld::dt_cache_key() const {
  // The broken bonds the bond bound below sees: on the CPU backend the host
  // arrays are stepped, so every break counts; a device's breaks reach them
  // only with a sync.
  const size_t broken = on_cpu() ? bonds_broken_total_ : host_broken_;
  std::vector<double> k = {static_cast<double>(generation_),
                           static_cast<double>(particles.size()),
                           static_cast<double>(bonds.size()),
                           static_cast<double>(broken),
                           bond.enabled ? 1.0 : 0.0,
                           bond.E,
                           bond.nu,
                           bond.radius_ratio};
  for (const DemMaterial& m : materials) {
    k.push_back(m.density);
    k.push_back(m.E);
    k.push_back(m.nu);
  }
  return k;
}

DemTimeStep DemWorld::estimate_time_step() const {
  const double vmax = std::max(solver.expected_speed, last_max_speed_);
  const double safety = solver.dt_safety > 0.0 ? solver.dt_safety : 0.2;
  auto finish = [&](DemTimeStep ts) {
    const double base = std::min(ts.rayleigh, std::min(ts.bond, 0.5 * ts.hertz));
    ts.recommended = std::isfinite(base) ? safety * base : solver.dt;
    return ts;
  };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> key = dt_cache_key();
  if (key == dt_cache_.key) {
    DemTimeStep ts = dt_cache_.base;
    ts.hertz = inf;
    const size_t i = dt_cache_.hertz_index;
    if (vmax > 0.0 && i < particles.size()) {
      PairProps pp = pair_props(materials[particles.material[i]], materials[particles.material[i]]);
      ts.hertz =
          hertz_duration(0.5 * particles.mass[i], 0.5 * particles.radius[i], pp.E_star, vmax);
    }
    return finish(ts);
  }
  DemTimeStep ts;
  ts.rayleigh = ts.hertz = ts.bond = inf;
  const size_t n = particles.size();
  size_t hertz_index = static_cast<size_t>(-1);
  for (size_t i = 0; i < n; ++i) {
    const size_t mi = particles.material[i];
    if (mi >= materials.size()) continue;
    const DemMaterial& m = materials[mi];
    const double R = particles.radius[i];
    ts.rayleigh = std::min(ts.rayleigh, rayleigh_time(R, m.density, m.E, m.nu));
    // Two equal particles of this kind meeting at vmax.
    PairProps pp = pair_props(m, m);
    if (vmax > 0.0) {
      const double t = hertz_duration(0.5 * particles.mass[i], 0.5 * R, pp.E_star, vmax);
      if (t < ts.hertz) {
        ts.hertz = t;
        hertz_index = i;
      }
    }
  }
  // Bond springs: Gershgorin bound on the largest eigenfrequency of the
  // mass-scaled bond stiffness (symplectic Euler is stable for omega dt < 2).
  // Per particle, the row sums of the translational block, of the rotational
  // block, and of the translation-rotation coupling:
  //   trans = sum 2 (k_n + k_s) A / m_i,
  //   rot   = sum (k_s A a_i (a_i + a_j) + 2 k_n I) / I_i,
  //   coup  = sum 2 k_s A a_i / sqrt(m_i I_i),
  //   omega^2 <= max(trans, rot) + coup.
  if (bond.enabled && bonds.size() > 0) {
    std::vector<double> trans(n, 0.0), rot(n, 0.0), coup(n, 0.0);
    const double G = bond.E / (2.0 * (1.0 + bond.nu));
    for (size_t k = 0; k < bonds.size(); ++k) {
      if (bonds.broken[k]) continue;
      const uint32_t i = bonds.i[k], j = bonds.j[k];
      BondSection s = bond_section(bond, particles.radius[i], particles.radius[j]);
      const double L0 = bonds.length0[k];
      const double kn = bond.E / L0, ks = G / L0;
      const double gap = L0 - particles.radius[i] - particles.radius[j];
      const double ai = particles.radius[i] + 0.5 * gap, aj = particles.radius[j] + 0.5 * gap;
      const double t = 2.0 * (kn + ks) * s.A;
      trans[i] += t / particles.mass[i];
      trans[j] += t / particles.mass[j];
      rot[i] += (ks * s.A * ai * (ai + aj) + 2.0 * kn * s.I) / particles.inertia[i];
      rot[j] += (ks * s.A * aj * (ai + aj) + 2.0 * kn * s.I) / particles.inertia[j];
      coup[i] += 2.0 * ks * s.A * ai / std::sqrt(particles.mass[i] * particles.inertia[i]);
      coup[j] += 2.0 * ks * s.A * aj / std::sqrt(particles.mass[j] * particles.inertia[j]);
    }
    double wmax2 = 0.0;
    for (size_t i = 0; i < n; ++i) wmax2 = std::max(wmax2, std::max(trans[i], rot[i]) + coup[i]);
    if (wmax2 > 0.0) ts.bond = 2.0 / std::sqrt(wmax2);
  }
  if (vmax > 0.0) {  // without a speed no particle was ranked: no cache
    dt_cache_.key = std::move(key);
    dt_cache_.base = ts;
    dt_cache_.hertz_index = hertz_index;
  }
  return finish(ts);
}

double DemWorld::next_dt() const {
  if (solver.dt_safety > 0.0) return estimate_time_step().recommended;
  return solver.dt;
}

// [SECTION] Stepping ---------------------------------------------------------------

std::string check_wall(const DemWall& w) {
  auto finite = [](Vec2d p) { return std::isfinite(p.x) && std::isfinite(p.y); };
  if (!finite(w.c) || !finite(w.vel) || !std::isfinite(w.omega))
    return "non-finite motion (c, vel or omega)";
  if (w.type == WallType::Disk && !(w.radius >= 0.0 && std::isfinite(w.radius)))
    return "disk radius must be finite and >= 0";
  if (w.type != WallType::Polygon) return "";
  if (w.count < 3 || w.count > kMaxWallVertices)
    return "a polygon has 3 to " + std::to_string(kMaxWallVertices) + " vertices, not " +
           std::to_string(w.count);
  for (int k = 0; k < w.count; ++k)
    if (!finite(w.v[k])) return "non-finite polygon vertex";
  // Strictly convex and counter-clockwise: every other vertex lies strictly
  // to the left of every edge.
  for (int k = 0; k < w.count; ++k) {
    const Vec2d p0 = w.v[k], e = w.v[(k + 1) % w.count] - p0;
    for (int j = 0; j < w.count; ++j)
      if (j != k && j != (k + 1) % w.count && !(cross(e, w.v[j] - p0) > 0.0))
        return "polygon vertices must be strictly convex and counter-clockwise (edge " +
               std::to_string(k) + ")";
  }
  return "";
}

DemStepStatus DemWorld::step(int n) {
  if (!failure_.ok) return failure_;
  PS_ASSERT(particles.consistent() && bonds.consistent(),
            "every particle and bond column holds one entry a particle or bond");
  for (size_t k = 0; k < walls.size(); ++k) {
    const std::string why = check_wall(walls[k]);
    if (!why.empty()) throw std::invalid_argument("DEM wall " + std::to_string(k) + ": " + why);
  }
  // Reactions: zero until a step fills them (also when nothing is stepped).
  const size_t nr = want_wall_reaction ? 3 * walls.size() : 0;
  wall_reaction_.assign(nr, 0.0);
  wall_impulse_.assign(nr, 0.0);
  if (particles.size() == 0 || materials.empty()) {
    step_count_ += n;
    guard_.host_taken();  // nothing on a device to lose
    return DemStepStatus{};
  }
  // Checkpoint: a device backend's state comes back to host memory now and
  // then, in the background (free on the CPU backend, which steps the host
  // arrays). An arrived copy is noted at once, so a later device failure can
  // roll back to it without asking the device. After a fallback the call
  // returns ok and the caller steps on from the preserved state.
  const int fallbacks_before = guard_.fallbacks();
  auto fell_back = [&] { return guard_.fallbacks() != fallbacks_before; };
  if (!guard_.keep_checkpoint(checkpoint_interval)) return DemStepStatus{};
  DemStepInput in;
  in.solver = solver;
  in.bond = bond;
  in.materials = materials.data();
  in.material_count = static_cast<int>(materials.size());
  in.walls = walls.data();
  in.wall_count = static_cast<int>(walls.size());
  in.loads = loads.data();
  in.load_count = static_cast<int>(loads.size());
  in.point = point_force;
  in.grab.index = grab_.index.data();
  in.grab.offset = grab_.offset.data();
  in.grab.count = static_cast<int>(grab_.index.size());
  in.grab.target = grab_.target;
  in.grab.stiffness = grab_stiffness;
  in.domain_lo = domain_min;
  in.domain_hi = domain_max;
  in.wall_reaction = want_wall_reaction && !walls.empty() ? wall_reaction_.data() : nullptr;
  // The step size is fixed for the whole call (a displayed frame).
  in.dt = next_dt();
  for (int s = 0; s < n; ++s) {
    in.step = step_count_ + 1;
    in.time = time_;
    in.use_fext = false;
    if (force_hook) {
      guard_.sync();
      if (fell_back()) return DemStepStatus{};
      // The hook writes only fext. A backend reads fext at every step where
      // use_fext is set (the CPU one in place, CUDA uploads it), so no
      // host_changed(): that would also drop the contact history (Mindlin and
      // rolling springs) at every step with SGF forces.
      in.use_fext = force_hook(in.step, particles);
    }
    DemStepResult r;
    if (!guarded("stepping", AtFailure::Unknown, [&] { r = backend().step(in); }))
      return DemStepStatus{};
    ++step_count_;
    time_ += in.dt;
    for (size_t k = 0; k < wall_impulse_.size(); ++k) wall_impulse_[k] += wall_reaction_[k] * in.dt;
    if (advance_walls)
      for (DemWall& wall : walls) move_wall(wall, in.dt);
    last_dt_ = in.dt;
    last_max_speed_ = r.max_speed;
    bonds_broken_total_ += static_cast<size_t>(r.bonds_broken);
    if (r.bonds_broken > 0 && r.first_broken >= 0)
      last_break_ = DemLastBreak{in.step, r.first_broken, r.first_broken_mode};
    if (intact_size_ == bonds.size())
      intact_ -= std::min(intact_, static_cast<size_t>(r.bonds_broken));
    last_result_ = r;
    if (!r.ok) {
      guard_.sync();
      if (fell_back()) return DemStepStatus{};
      DemStepStatus st;
      st.ok = false;
      st.step = step_count_;
      st.index = r.bad_index;
      const size_t i = static_cast<size_t>(r.bad_index);
      st.particle_id = i < particles.size() ? particles.id[i] : 0;
      Vec2d v = i < particles.size() ? particles.v[i] : Vec2d{};
      Vec2d x = i < particles.size() ? particles.x[i] : Vec2d{};
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "numerical blow-up at step %lld: particle %u is at (%g, %g) with velocity "
                    "(%g, %g) (limit %g); dt = %g s (stable estimate %g s); stepping stopped",
                    static_cast<long long>(st.step), st.particle_id, x.x, x.y, v.x, v.y,
                    solver.velocity_limit, in.dt, estimate_time_step().recommended);
      st.message = buf;
      failure_ = st;
      return st;
    }
  }
  return DemStepStatus{};
}

// [SECTION] Grab ------------------------------------------------------------------

void DemWorld::grab_begin(const std::vector<uint32_t>& indices, Vec2d target) {
  guard_.sync();
  grab_.begin(indices, particles.x, target);
}

void DemWorld::grab_end() { grab_.end(); }

// [SECTION] Saved states (the rewind, sim/scene/rewind.h) ---------------------------

template <class Self, class F>
void DemWorld::each_control(Self& w, F&& f) {
  f(w.solver);
  f(w.bond);
  f(w.materials);
  f(w.walls);
  f(w.loads);
  f(w.grab_.index);
  f(w.grab_.offset);
  f(w.grab_.target);
  f(w.grab_stiffness);
  f(w.want_wall_reaction);
  f(w.advance_walls);
}

std::string DemWorld::controls() const { return controls_image(*this); }

void DemWorld::set_controls(const std::string& image) { apply_controls_image(*this, image); }

size_t DemWorld::State::bytes() const {
  const DemParticles& p = particles;
  const DemBonds& b = bonds;
  size_t n = sizeof(*this) + controls.size();
  n += vec_bytes(p.x) + vec_bytes(p.v) + vec_bytes(p.theta) + vec_bytes(p.omega) +
       vec_bytes(p.radius) + vec_bytes(p.mass) + vec_bytes(p.inertia) + vec_bytes(p.material) +
       vec_bytes(p.group) + vec_bytes(p.body) + vec_bytes(p.fixed) + vec_bytes(p.id) +
       vec_bytes(p.fext);
  n += vec_bytes(b.i) + vec_bytes(b.j) + vec_bytes(b.length0) + vec_bytes(b.shear_disp) +
       vec_bytes(b.bend_angle) + vec_bytes(b.broken) + vec_bytes(b.mode) + vec_bytes(b.break_step) +
       vec_bytes(b.sigma) + vec_bytes(b.tau) + vec_bytes(b.force);
  n += vec_bytes(history.pairs) + vec_bytes(history.walls) + vec_bytes(history.pair_start) +
       vec_bytes(history.wall_start);
  return n;
}

void DemWorld::save_state(State& s) {
  guard_.sync();
  std::tie(s.particles, s.bonds, s.failure, s.force_hook) =
      std::tie(particles, bonds, failure_, force_hook);
  s.clock = clock();
  s.controls = controls();
  s.have_history = backend().save_history(s.history);
  if (!s.have_history) s.history = DemHistory{};
}

void DemWorld::load_state(const State& s) {
  std::tie(particles, bonds, failure_, force_hook) =
      std::tie(s.particles, s.bonds, s.failure, s.force_hook);
  set_clock(s.clock);
  set_controls(s.controls);
  host_changed();  // drops the backend's history; the saved one follows
  if (s.have_history) backend().load_history(s.history);
}

// [SECTION] Diagnostics and export ---------------------------------------------------

DemDiagnostics DemWorld::diagnostics() {
  guard_.sync();
  return compute_diagnostics(particles, bonds, 0.5 * (domain_min + domain_max));
}

DemDiagnostics DemWorld::totals() {
  const Vec2d centre = 0.5 * (domain_min + domain_max);
  DemTotals t;
  bool ok = false;
  guarded("summing the particles", AtFailure::DeviceAtClock,
          [&] { ok = backend().device_totals(centre, t); });
  DemDiagnostics d;
  if (ok) {
    d.count = particles.size();
    d.mass = t.mass;
    d.momentum[0] = t.momentum[0];
    d.momentum[1] = t.momentum[1];
    d.angular_momentum = t.angular_momentum;
    d.kinetic_energy = t.kinetic_energy;
    d.rotational_energy = t.rotational_energy;
    d.max_speed = t.max_speed;
  } else {
    guard_.sync();  // free on the CPU backend
    d = compute_diagnostics(particles, bonds, centre, false);
  }
  d.bonds = bonds.size();
  d.bonds_broken = bonds.size() - intact_bonds();
  return d;
}

void DemWorld::count_last_break() {
  last_break_ = DemLastBreak{};
  const DemBonds& b = bonds;
  for (size_t k = 0; k < b.size(); ++k) {
    // The latest step wins; within one step the first bond in (i, j) order.
    if (b.broken[k] && b.break_step[k] > last_break_.step)
      last_break_ = DemLastBreak{b.break_step[k], static_cast<int64_t>(k), b.mode[k]};
  }
}

DemDiagnostics compute_diagnostics(const DemParticles& p, const DemBonds& b, Vec2d centre,
                                   bool with_hash) {
  DemDiagnostics d;
  d.count = p.size();
  for (size_t i = 0; i < p.size(); ++i) {
    const double m = p.mass[i], vx = p.v[i].x, vy = p.v[i].y, w = p.omega[i];
    const double rx = p.x[i].x - centre.x, ry = p.x[i].y - centre.y;
    d.mass += m;
    d.momentum[0] += m * vx;
    d.momentum[1] += m * vy;
    d.angular_momentum += m * (rx * vy - ry * vx) + p.inertia[i] * w;
    const double rot = 0.5 * p.inertia[i] * w * w;
    d.kinetic_energy += 0.5 * m * (vx * vx + vy * vy) + rot;
    d.rotational_energy += rot;
    d.max_speed = std::max(d.max_speed, length(p.v[i]));
  }
  d.bonds = b.size();
  d.bonds_broken = b.size() - b.intact();
  if (with_hash) d.hash = state_hash(p, b);
  return d;
}

uint64_t state_hash(const DemParticles& p, const DemBonds& b) {
  Fnv1a h;
  h.add_array(p.x.data(), p.size());
  h.add_array(p.v.data(), p.size());
  h.add_array(p.theta.data(), p.size());
  h.add_array(p.omega.data(), p.size());
  h.add_array(b.shear_disp.data(), b.size());
  h.add_array(b.bend_angle.data(), b.size());
  h.add_array(b.broken.data(), b.size());
  return h.h;
}

void DemWorld::contacts(std::vector<ContactRecord>& out, bool include_walls) {
  guard_.sync();
  std::vector<DemContact> pairs, wall_contacts;
  if (!guarded("reading contacts", AtFailure::DeviceAtClock,
               [&] { backend().read_contacts(pairs, wall_contacts); }))
    backend().read_contacts(pairs, wall_contacts);  // the CPU backend's: none until its first step
  out.clear();
  out.reserve(pairs.size() + bonds.size() + (include_walls ? wall_contacts.size() : 0));
  const size_t n = particles.size();
  for (const DemContact& c : pairs) {
    if (c.i >= n || c.j >= n) continue;
    ContactRecord r;
    r.p1 = particles.id[c.i];
    r.p2 = particles.id[c.j];
    r.c[0] = c.point.x;
    r.c[1] = c.point.y;
    r.f[0] = c.f_i.x;
    r.f[1] = c.f_i.y;
    out.push_back(r);
  }
  for (size_t k = 0; k < bonds.size(); ++k) {
    if (bonds.broken[k]) continue;
    const uint32_t i = bonds.i[k], j = bonds.j[k];
    if (i >= n || j >= n) continue;
    Vec2d dx = particles.x[j] - particles.x[i];
    double d = length(dx);
    Vec2d nrm = d > 0.0 ? dx / d : Vec2d{1.0, 0.0};
    double ai = particles.radius[i] + 0.5 * (d - particles.radius[i] - particles.radius[j]);
    ContactRecord r;
    r.p1 = particles.id[i];
    r.p2 = particles.id[j];
    r.c[0] = particles.x[i].x + ai * nrm.x;
    r.c[1] = particles.x[i].y + ai * nrm.y;
    r.f[0] = bonds.force[k].x;
    r.f[1] = bonds.force[k].y;
    r.bonded = true;
    out.push_back(r);
  }
  if (include_walls)
    for (const DemContact& c : wall_contacts) {
      if (c.i >= n) continue;
      ContactRecord r;
      r.p1 = particles.id[c.i];
      r.p2 = 0;
      r.c[0] = c.point.x;
      r.c[1] = c.point.y;
      r.f[0] = c.f_i.x;
      r.f[1] = c.f_i.y;
      out.push_back(r);
    }
}

}  // namespace dem
}  // namespace ps
