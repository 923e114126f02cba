#include "sim/scene/coupled.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include "sim/core/error.h"
#include "sim/core/hash.h"
#include "sim/dem/dem_kernels.h"
#include "sim/dem/dem_world.h"
#include "sim/io/json_read.h"
#include "sim/scene/rigid_scene.h"

namespace ps {

namespace {

/// The grains' mean diameter (0 without grains): a DEM body's default depth,
/// and the layer a DEM world beside MPM matter stands for.
double mean_grain_diameter(const dem::DemWorld& w) {
  double sum = 0.0;
  for (double r : w.particles.radius) sum += 2.0 * r;
  return w.particles.size() ? sum / static_cast<double>(w.particles.size()) : 0.0;
}

}  // namespace

CoupledSimulation::CoupledSimulation(SceneInfo info, std::unique_ptr<Simulation> matter,
                                     std::unique_ptr<rigid::RigidWorld> rigid, Vec2 lo, Vec2 hi,
                                     double dt, int substeps)
    : info_(std::move(info)),
      matter_(std::move(matter)),
      rigid_(std::move(rigid)),
      lo_(lo),
      hi_(hi),
      dt_(dt),
      substeps_(substeps) {
  body_impulse_.assign(3 * rigid_->body_count(), 0.0);
  if (dem::DemWorld* w = matter_ ? matter_->dem() : nullptr) dem_scene_walls_ = w->walls.size();
}

void CoupledSimulation::add_grains(std::unique_ptr<Simulation> grains, Json doc) {
  grains_ = std::move(grains);
  grains_doc_ = std::move(doc);
  grain_scale_ = 1.0;
  dem_scene_walls_ = 0;
  if (dem::DemWorld* w = grains_ ? grains_->dem() : nullptr) {
    dem_scene_walls_ = w->walls.size();
    const double d = mean_grain_diameter(*w);
    if (d > 0.0) grain_scale_ = 1.0 / d;
  }
}

void CoupledSimulation::place_dem_walls(dem::DemWorld& w) {
  // Every part as a moving wall (the body's rigid velocity field about its
  // centre of mass), after the scene's walls.
  w.walls.resize(dem_scene_walls_ + parts_.size());
  for (size_t k = 0; k < parts_.size(); ++k) {
    const rigid::WorldPart& p = parts_[k];
    const rigid::BodyState st = rigid_->state(p.body);
    dem::DemWall& dw = w.walls[dem_scene_walls_ + k];
    dw = dem::DemWall{};
    if (p.shape == ColliderShape::Disk) {
      dw.type = dem::WallType::Disk;
      dw.a = p.v[0];
      dw.radius = p.radius;
    } else {
      dw.type = dem::WallType::Polygon;
      dw.count = p.count;
      for (int v = 0; v < p.count; ++v) dw.v[v] = p.v[v];
    }
    dw.c = st.com;
    dw.vel = st.velocity;
    dw.omega = st.omega;
    dw.material = rigid_->def(p.body).dem_material;
  }
  w.want_wall_reaction = true;
}

StepStatus CoupledSimulation::step_dem(dem::DemWorld& w) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  // 1. Every part as a moving wall, after the scene's walls.
  rigid_->world_parts(parts_);
  place_dem_walls(w);
  const Clock::time_point t1 = Clock::now();
  // 2. One DEM step: the reactions are the forces the grains put on each wall.
  StepStatus st = w.step(1);
  const Clock::time_point t2 = Clock::now();
  if (!st.ok) return st;
  // 3. Their impulses (force x dt, torque about the centre of mass x dt) to
  //    the bodies, then Box2D over the same dt.
  const std::vector<double>& J = w.wall_impulse();
  for (size_t k = 0; k < parts_.size() && 3 * (dem_scene_walls_ + k) + 2 < J.size(); ++k)
    give_impulse(parts_[k].body, &J[3 * (dem_scene_walls_ + k)]);
  finish_step(w.last_dt(), (t1 - t0) + (Clock::now() - t2));
  return st;
}

void CoupledSimulation::give_impulse(int body, const double* j) {
  rigid_->apply_impulse(body, dem::Vec2d{j[0], j[1]}, j[2]);
  for (int c = 0; c < 3; ++c) body_impulse_[3 * static_cast<size_t>(body) + c] += j[c];
}

void CoupledSimulation::note_coupling_ms(double ms) {
  coupling_ms_ += (coupling_ms_ == 0.0 ? 1.0 : 0.05) * (ms - coupling_ms_);
}

void CoupledSimulation::finish_step(double dt,
                                    std::chrono::steady_clock::duration coupling_before_box2d) {
  const auto t0 = std::chrono::steady_clock::now();
  rigid_->step(dt);
  note_coupling_ms(std::chrono::duration<double, std::milli>(
                       coupling_before_box2d + (std::chrono::steady_clock::now() - t0))
                       .count());
}

// [SECTION] MPM matter: the batched exchange ----------------------------------------

void place_mpm_colliders(const rigid::RigidWorld& rw, MpmWorld& w) {
  rw.mpm_colliders(w.colliders);
  // A fluid carries no shear stress at rest, so it cannot hold a body up by
  // friction: along a wetted face only its viscosity acts (through the
  // grid's velocities), and a floating box settles where the pressure alone
  // puts it. The grid rule's Coulomb friction (mpm_collider.h) is for matter
  // with shear strength; with it, a box of density 0.3 in still water hung
  // 11 % above its Archimedes draft, mu times the side pressure carrying the
  // difference in its weight (rigid.archimedes_volume). The grid does not know
  // which material a node holds, so a scene that mixes fluid with solids or
  // grains keeps the body's friction on all of them (docs/rigid.md).
  if (std::all_of(w.materials.begin(), w.materials.end(),
                  [](const MaterialParams& m) { return m.type == MaterialType::Fluid; }))
    for (RigidCollider& c : w.colliders) c.friction = 0.f;
}

void CoupledSimulation::open_batch(MpmWorld& w, dem::DemWorld* grains) {
  // The bodies' parts at the batch's start; with K > 1 they move on along
  // their rigid motion through the batch (the backend moves them per substep).
  const bool moving = exchange_substeps_ > 1;
  place_mpm_colliders(*rigid_, w);
  w.collider_impulse.assign(3 * w.colliders.size(), 0.0);
  w.colliders_move = moving;
  w.colliders_time = w.time();
  if (grains) {
    rigid_->world_parts(parts_);
    place_dem_walls(*grains);
    grain_impulse_.assign(3 * parts_.size(), 0.0);
    if (moving)
      placed_walls_.assign(grains->walls.begin() + static_cast<std::ptrdiff_t>(dem_scene_walls_),
                           grains->walls.end());
    else
      placed_walls_.clear();
  }
  batch_open_ = true;
  batch_step0_ = w.step_count();
  batch_t0_ = w.time();
}

StepStatus CoupledSimulation::grains_catch_up(MpmWorld& w, dem::DemWorld& grains, int chunk) {
  // The grains catch up with the MPM clock in steps of their own dt. Batched,
  // each DEM step sees the bodies' walls where their rigid motion has them at
  // the step's start (dem::move_wall from the placed wall: the same path the
  // MPM's parts follow); K = 1 holds them where the substep began.
  const double until = w.time() - 1e-6 * w.last_dt();
  const int64_t most = static_cast<int64_t>(kMaxGrainSteps) * std::max(1, chunk);
  for (int64_t n = 0; grains.time() < until; ++n) {
    if (n >= most) {
      StepStatus st;
      st.ok = false;
      st.step = w.step_count();
      st.message =
          "DEM grains: more than " + std::to_string(kMaxGrainSteps) +
          " DEM steps in one MPM substep (the DEM time step is too small against the MPM one)";
      return st;
    }
    if (!placed_walls_.empty() && grains.walls.size() == dem_scene_walls_ + placed_walls_.size()) {
      const double tau = grains.time() - batch_t0_;
      for (size_t k = 0; k < placed_walls_.size(); ++k) {
        dem::DemWall& dw = grains.walls[dem_scene_walls_ + k];
        dw = placed_walls_[k];
        dem::move_wall(dw, tau);
      }
    }
    StepStatus g = grains.step(1);
    if (!g.ok) return g;
    const std::vector<double>& J = grains.wall_impulse();
    for (size_t q = 0; q < grain_impulse_.size() && 3 * dem_scene_walls_ + q < J.size(); ++q)
      grain_impulse_[q] += J[3 * dem_scene_walls_ + q];
  }
  return StepStatus{};
}

void CoupledSimulation::close_batch(MpmWorld& w) {
  // The batch's summed impulses (MPM's as they are, the grains' times their
  // depth scale) go to the bodies spread over Box2D's m steps of the batch's
  // time, 1/m before each: the matter's mean force over the batch acts on the
  // bodies through it, so their path in Box2D is the one the parts followed
  // (a body at rest on the matter stays where the parts were). m = 1 is the
  // per-substep exchange: each part's impulse, then Box2D by that substep's dt.
  batch_open_ = false;
  const int64_t m = w.step_count() - batch_step0_;
  const double seconds = w.time() - batch_t0_;
  const size_t nb = rigid_->body_count(), nc = w.colliders.size();
  const size_t ng = std::min(grain_impulse_.size() / 3, parts_.size());
  batch_body_J_.assign(3 * nb, 0.0);
  batch_has_part_.assign(nb, 0);
  for (size_t k = 0; k < nc; ++k) {
    const size_t b = static_cast<size_t>(w.colliders[k].body);
    batch_has_part_[b] = 1;
    for (int c = 0; c < 3; ++c) batch_body_J_[3 * b + c] += w.collider_impulse[3 * k + c];
  }
  for (size_t k = 0; k < ng; ++k) {
    const size_t b = static_cast<size_t>(parts_[k].body);
    batch_has_part_[b] = 1;
    for (int c = 0; c < 3; ++c)
      batch_body_J_[3 * b + c] += grain_scale_ * grain_impulse_[3 * k + c];
  }
  for (size_t q = 0; q < 3 * nb; ++q) body_impulse_[q] += batch_body_J_[q];
  if (m == 1 || m <= 0) {
    for (size_t k = 0; k < nc; ++k) {
      const double* j = &w.collider_impulse[3 * k];
      rigid_->apply_impulse(w.colliders[k].body, dem::Vec2d{j[0], j[1]}, j[2]);
    }
    for (size_t k = 0; k < ng; ++k) {
      const double* j = &grain_impulse_[3 * k];
      rigid_->apply_impulse(parts_[k].body, dem::Vec2d{grain_scale_ * j[0], grain_scale_ * j[1]},
                            grain_scale_ * j[2]);
    }
    // m <= 0: a device fallback rolled the matter back before the batch
    // began; the impulses go to the bodies and Box2D does not step.
    if (m == 1) {
      rigid_->step(w.last_dt());
      closed_seconds_ += seconds;
    }
    return;
  }
  // Box2D keeps velocities in floats: m equal additions would round alike m
  // times. Each step's share is what brings the body's received momentum (its
  // mass times its velocity change, as the totals count it) to (s + 1) / m of
  // the batch's, so the rounding does not build up over the batch.
  batch_taken_.assign(3 * nb, 0.0);
  for (int64_t s = 0; s < m; ++s) {
    const double upto = static_cast<double>(s + 1) / static_cast<double>(m);
    for (size_t b = 0; b < nb; ++b) {
      if (!batch_has_part_[b]) continue;
      const int bi = static_cast<int>(b);
      const rigid::BodyState a = rigid_->state(bi);
      if (!(a.mass > 0.0)) continue;  // static and kinematic bodies take nothing
      const double* J = &batch_body_J_[3 * b];
      double* got = &batch_taken_[3 * b];
      rigid_->apply_impulse(bi, dem::Vec2d{upto * J[0] - got[0], upto * J[1] - got[1]},
                            upto * J[2] - got[2]);
      const rigid::BodyState z = rigid_->state(bi);
      got[0] += a.mass * (z.velocity.x - a.velocity.x);
      got[1] += a.mass * (z.velocity.y - a.velocity.y);
      got[2] += a.inertia * (z.omega - a.omega);
    }
    rigid_->step(seconds / static_cast<double>(m));
  }
  closed_seconds_ += seconds;
}

StepStatus CoupledSimulation::step_mpm(MpmWorld& w, dem::DemWorld* grains, int substeps) {
  using Clock = std::chrono::steady_clock;
  const int64_t K = std::max(1, exchange_substeps_);
  for (int left = substeps; left > 0;) {
    const Clock::time_point t0 = Clock::now();
    if (!batch_open_) {
      batch_cost_ = Clock::duration{};
      open_batch(w, grains);
    }
    // A batch ends where the step count is a multiple of K, whatever the calls' sizes.
    const int64_t into = ((w.step_count() % K) + K) % K;
    const int chunk = static_cast<int>(std::min<int64_t>(left, K - into));
    const Clock::time_point t1 = Clock::now();
    StepStatus st = w.step(chunk);
    if (!st.ok) return st;
    if (grains) {
      st = grains_catch_up(w, *grains, chunk);
      if (!st.ok) return st;
    }
    left -= chunk;
    const Clock::time_point t2 = Clock::now();
    batch_cost_ += t1 - t0;
    const bool rolled_back = w.time() < batch_t0_;
    if (w.step_count() % K == 0 || rolled_back) {
      const int64_t m = std::max<int64_t>(1, w.step_count() - batch_step0_);
      close_batch(w);
      batch_cost_ += Clock::now() - t2;
      note_coupling_ms(std::chrono::duration<double, std::milli>(batch_cost_).count() /
                       static_cast<double>(m));
    }
  }
  return StepStatus{};
}

void CoupledSimulation::add_pending(Diagnostics& d) {
  // The impulse of the open batch is momentum on its way from the matter to
  // the (dynamic) bodies: it counts with them.
  const MpmWorld* w = matter_ ? matter_->mpm() : nullptr;
  if (!batch_open_ || !w) return;
  const dem::Vec2d about{0.5 * (lo_.x + hi_.x), 0.5 * (lo_.y + hi_.y)};
  auto add = [&](int body, double jx, double jy, double jl) {
    if (body < 0 || static_cast<size_t>(body) >= rigid_->body_count()) return;
    if (rigid_->def(body).type != rigid::BodyType::Dynamic)
      return;  // static and kinematic bodies take nothing
    const rigid::BodyState s = rigid_->state(body);
    d.momentum[0] += jx;
    d.momentum[1] += jy;
    d.angular_momentum += jl + (s.com.x - about.x) * jy - (s.com.y - about.y) * jx;
  };
  for (size_t k = 0; k < w->colliders.size() && 3 * k + 2 < w->collider_impulse.size(); ++k)
    add(w->colliders[k].body, w->collider_impulse[3 * k], w->collider_impulse[3 * k + 1],
        w->collider_impulse[3 * k + 2]);
  if (grains_)
    for (size_t k = 0; k < parts_.size() && 3 * k + 2 < grain_impulse_.size(); ++k)
      add(parts_[k].body, grain_scale_ * grain_impulse_[3 * k],
          grain_scale_ * grain_impulse_[3 * k + 1], grain_scale_ * grain_impulse_[3 * k + 2]);
}

StepStatus CoupledSimulation::step(int substeps) {
  body_impulse_.assign(3 * rigid_->body_count(),
                       0.0);  // bodies may have been added (the window's draw tool)
  const double t_start = time();
  if (MpmWorld* w = matter_ ? matter_->mpm() : nullptr) {
    closed_seconds_ = 0.0;
    struct Span {  // the exchanges' time, however the call returns
      CoupledSimulation& c;
      ~Span() {
        c.last_step_seconds_ = c.closed_seconds_;
        c.note_exchange();
      }
    } span{*this};
    return step_mpm(*w, grains_ ? grains_->dem() : nullptr, substeps);
  }
  struct Span {  // the simulated time this call covered, however it returns
    CoupledSimulation& c;
    double t0;
    ~Span() {
      c.last_step_seconds_ = c.time() - t0;
      c.note_exchange();
    }
  } span{*this, t_start};
  if (dem::DemWorld* w = matter_ ? matter_->dem() : nullptr) {
    for (int s = 0; s < substeps; ++s) {
      StepStatus st = step_dem(*w);
      if (!st.ok) return st;
    }
    return StepStatus{};
  }
  // Bodies alone.
  for (int s = 0; s < substeps; ++s) {
    rigid_->step(dt_);
    ++steps_;
  }
  return StepStatus{};
}

namespace {

/// d += g: counts, mass, momentum, angular momentum, energy; the larger speed.
void add_totals(Diagnostics& d, const Diagnostics& g) {
  d.count += g.count;
  d.mass += g.mass;
  d.momentum[0] += g.momentum[0];
  d.momentum[1] += g.momentum[1];
  d.angular_momentum += g.angular_momentum;
  d.kinetic_energy += g.kinetic_energy;
  d.max_speed = std::max(d.max_speed, g.max_speed);
}

}  // namespace

Diagnostics CoupledSimulation::grain_totals(bool with_hash) {
  Diagnostics g = with_hash ? grains_->diagnostics() : grains_->totals();
  g.mass *= grain_scale_;
  g.momentum[0] *= grain_scale_;
  g.momentum[1] *= grain_scale_;
  g.angular_momentum *= grain_scale_;
  g.kinetic_energy *= grain_scale_;
  return g;
}

Diagnostics CoupledSimulation::diagnostics() {
  Diagnostics d = totals_of(matter_ ? matter_->diagnostics() : Diagnostics{});
  add_pending(d);
  Fnv1a h;
  h.add(&d.hash, sizeof d.hash);
  if (const MpmWorld* w = matter_ ? matter_->mpm() : nullptr; w && batch_open_) {
    // A batch in progress is state too: its placed parts' impulses so far.
    h.add_array(w->collider_impulse.data(), w->collider_impulse.size());
    h.add_array(grain_impulse_.data(), grain_impulse_.size());
  }
  if (grains_) {
    const Diagnostics g = grain_totals(true);
    add_totals(d, g);
    h.add(&g.hash, sizeof g.hash);
  }
  const uint64_t rh = rigid_->hash();
  h.add(&rh, sizeof rh);
  d.hash = h.h;
  return d;
}

Diagnostics CoupledSimulation::totals() {
  Diagnostics d = totals_of(matter_ ? matter_->totals() : Diagnostics{});
  add_pending(d);
  if (grains_) add_totals(d, grain_totals(false));
  return d;
}

Diagnostics CoupledSimulation::totals_of(Diagnostics d) const {
  // Totals of matter plus dynamic bodies (the conserved quantities of the
  // coupled system), about the same centre as the matter's.
  const rigid::RigidTotals t =
      rigid_->totals(dem::Vec2d{0.5 * (lo_.x + hi_.x), 0.5 * (lo_.y + hi_.y)});
  d.mass += t.mass;
  d.momentum[0] += t.momentum[0];
  d.momentum[1] += t.momentum[1];
  d.angular_momentum += t.angular_momentum;
  d.kinetic_energy += t.kinetic_energy;
  for (size_t i = 0; i < rigid_->body_count(); ++i) {
    const rigid::BodyState s = rigid_->state(static_cast<int>(i));
    d.max_speed = std::max(d.max_speed, static_cast<float>(std::hypot(s.velocity.x, s.velocity.y)));
  }
  return d;
}

void CoupledSimulation::table(ParticleTable& t) {
  if (!matter_) {
    t = ParticleTable{};
    return;
  }
  matter_->table(t);
  if (!grains_) return;
  // The grains' rows after the matter's, their materials after the matter's;
  // the columns are the union (NaN where a column does not apply).
  ParticleTable g;
  grains_->table(g);
  append_table_rows(t, g, static_cast<uint16_t>(matter_->material_names().size()));
}

std::vector<std::string> CoupledSimulation::material_names() const {
  std::vector<std::string> n = matter_ ? matter_->material_names() : std::vector<std::string>{};
  if (grains_)
    for (const std::string& s : grains_->material_names()) n.push_back(s);
  return n;
}

P4ParticleFrame CoupledSimulation::p4_particles() {
  // P4P is the DEM tool's format: with MPM and DEM together it holds the grains.
  if (grains_) return grains_->p4_particles();
  if (matter_) return matter_->p4_particles();
  P4ParticleFrame f;
  f.time = time();
  return f;
}

P4ContactFrame CoupledSimulation::p4_contacts() {
  if (grains_) return grains_->p4_contacts();
  if (matter_) return matter_->p4_contacts();
  P4ContactFrame f;
  f.time = time();
  return f;
}

std::string CoupledSimulation::take_notice() {
  std::string out = notices_;
  notices_.clear();
  for (Simulation* s : {matter_.get(), grains_.get()}) {
    if (!s) continue;
    const std::string m = s->take_notice();
    if (!m.empty()) out += (out.empty() ? "" : "\n") + m;
  }
  return out;
}

std::unique_ptr<Simulation> build_coupled(const Json& doc, const Json& rigid_doc,
                                          const std::string& path, const std::string& kind,
                                          std::unique_ptr<Simulation> matter,
                                          std::unique_ptr<Simulation> grains,
                                          const Json& grains_doc) {
  rigid::RigidSceneContext ctx;
  SceneInfo info;
  Vec2 lo, hi;
  double dt = 1.0 / 600.0;
  int substeps = 10;
  if (matter) {
    info = matter->info();
    matter->bounds(lo, hi);
    if (MpmWorld* w = matter->mpm()) {
      ctx.gravity = dem::Vec2d{w->solver.gravity.x, w->solver.gravity.y};
      ctx.default_depth = 1.0;  // MPM matter is per metre of depth
      if (dem::DemWorld* g = grains ? grains->dem() : nullptr)
        ctx.dem_materials = g->material_names;
    } else if (dem::DemWorld* w = matter->dem()) {
      ctx.gravity = w->solver.gravity;
      const double d = mean_grain_diameter(*w);
      ctx.default_depth = d > 0.0 ? d : 0.01;
      ctx.dem_materials = w->material_names;
    }
  } else {
    // A scene of bodies only: name, domain and a fixed-step clock.
    ObjReader r(doc, "");
    info.path = path;
    info.kind = kind;
    info.name = r.string("name", std::filesystem::path(path).stem().string());
    info.description = r.string("description", "");
    info.frames = r.integer("frames", 200, 1, 10000000);
    r.get("kind");
    r.get("rigid");
    {
      const Json* d = r.get("domain");
      if (!d) r.fail("domain", "required field is missing");
      ObjReader dr(*d, "domain");
      const Vec2 size = dr.vec2("size", Vec2{1.f, 1.f});
      if (!(size.x > 0.f && size.y > 0.f)) dr.fail("size", "both sides must be positive");
      lo = dr.vec2("origin", Vec2{0.f, 0.f});
      hi = lo + size;
      dr.finish();
    }
    if (const Json* s = r.get("solver")) {
      ObjReader sr(*s, "solver");
      dt = sr.number("dt", dt, 1e-7, 0.1);
      substeps = sr.integer("substeps", substeps, 1, 100000);
      const Vec2 g = sr.vec2("gravity", Vec2{0.f, -9.81f});
      ctx.gravity = dem::Vec2d{g.x, g.y};
      sr.finish();
    }
    r.finish();
  }
  ctx.domain_lo = dem::Vec2d{lo.x, lo.y};
  ctx.domain_hi = dem::Vec2d{hi.x, hi.y};
  std::unique_ptr<rigid::RigidWorld> rw = rigid::read_rigid_section(rigid_doc, ctx);
  // The batch length of the exchange with MPM matter (DEM matter and bodies
  // alone exchange every step: a DEM step already synchronises with the host).
  int exchange = CoupledSimulation::kDefaultExchangeSubsteps;
  {
    ObjReader r(rigid_doc, "rigid");
    if (r.has("exchange_substeps")) {
      if (!matter || !matter->mpm())
        r.fail("exchange_substeps",
               "applies to MPM matter only (DEM grains and bodies alone exchange every step)");
      exchange = r.integer("exchange_substeps", exchange, 1, 1000000);
    }
  }
  auto sim = std::make_unique<CoupledSimulation>(info, std::move(matter), std::move(rw), lo, hi, dt,
                                                 substeps);
  sim->set_exchange_substeps(exchange);
  sim->set_rigid_doc(rigid_doc);
  if (grains) sim->add_grains(std::move(grains), grains_doc);
  return sim;
}

std::unique_ptr<CoupledSimulation> with_bodies(std::unique_ptr<Simulation> matter) {
  const SceneInfo info = matter->info();
  std::string notice = matter->take_notice();
  std::unique_ptr<Simulation> sim =
      build_coupled(Json::object(), Json::object(), info.path, info.kind, std::move(matter));
  auto* c = static_cast<CoupledSimulation*>(sim.release());
  c->post_notice(notice);
  return std::unique_ptr<CoupledSimulation>(c);
}

}  // namespace ps
