#include "sim/mpm/mpm_world.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include "sim/core/assert.h"
#include "sim/core/bytes.h"
#include "sim/core/hash.h"
#include "sim/mpm/mpm_cpu.h"
#include "sim/mpm/mpm_kernels.h"

namespace ps {

MpmWorld::MpmWorld()
    : guard_({[this] { return clock_; }, [this](const StepClock& c) { clock_ = c; },
              [this] {
                std::unique_ptr<MpmBackend> cpu = make_backend("cpu", fallback_threads);
                cpu->bind(&particles);
                cpu->host_changed();
                return cpu;
              },
              nullptr,
              [this](const BackendFallback& fb) {
                if (on_fallback) on_fallback(fb);
              }},
             make_backend("cpu", 0)) {
  guard_.backend().bind(&particles);
}
MpmWorld::~MpmWorld() = default;

void MpmWorld::set_backend(std::unique_ptr<MpmBackend> backend) {
  // The old backend hands its state over; a failed device keeps the last host copy.
  guard_.sync();
  backend->bind(&particles);
  try {
    backend->host_changed();
  } catch (...) {
    guard_.backend().bind(&particles);  // the old backend stays, bound as before
    throw;
  }
  guard_.replace(std::move(backend));
}

std::string MpmWorld::backend_name() const { return guard_.backend().name(); }

// [SECTION] Run-time backend failures ------------------------------------------------

bool MpmWorld::on_cpu() const { return guard_.on_cpu(); }

bool MpmWorld::advance_guarded(const SubstepInput& in, int n, const StepRule& rule,
                               SubstepResult& r) {
  // The clock moves only when the call succeeds: a failure leaves it at the
  // call's start, whatever the backend did to its copy.
  StepClock c = clock_;
  if (!guarded("stepping", AtFailure::Unknown, [&] { r = backend().advance(in, n, rule, c); }))
    return false;
  clock_ = c;
  return true;
}

void MpmWorld::read_grid(GridSpec& spec, std::vector<float>& mass, std::vector<Vec2>& velocity) {
  if (!guarded("reading the grid", AtFailure::DeviceAtClock,
               [&] { backend().read_grid(spec, mass, velocity); }))
    backend().read_grid(spec, mass, velocity);  // the CPU backend's: empty until its first substep
}

BackendStats MpmWorld::backend_stats() {
  BackendStats s;
  if (!guarded("reading its statistics", AtFailure::DeviceAtClock, [&] { s = backend().stats(); }))
    s = backend().stats();
  return s;
}

StepRule MpmWorld::step_rule() const {
  StepRule r;
  r.adaptive = solver.adaptive_dt;
  r.dt_max = solver.dt;
  r.dt_min = solver.dt_min;
  r.cfl = solver.cfl;
  r.dx = grid.dx;
  for (const auto& m : materials) r.wave_speed = std::max(r.wave_speed, mpm::wave_speed(m));
  return r;
}

float MpmWorld::next_dt() const { return next_substep_dt(step_rule(), clock_.last_max_speed); }

void MpmWorld::host_changed() {
  PS_ASSERT(particles.consistent(), "an edit left the per-particle arrays of different lengths");
  // The host arrays are the state (with the user's edits) whether or not the device takes them.
  ++host_gen_;
  guard_.host_edited();  // older than the host arrays now
  guarded("taking the edited state", AtFailure::HostAuthoritative,
          [&] { backend().host_changed(); });
  guard_.host_taken();
}

void MpmWorld::sync() { guard_.sync(); }

StepStatus MpmWorld::step(int n) {
  if (!failure_.ok) return failure_;
  PS_ASSERT(particles.consistent(), "every per-particle array holds one entry a particle");
  if (particles.size() == 0 || materials.empty()) {
    clock_.step += n;
    guard_.host_taken();  // nothing on a device to lose
    return StepStatus{};
  }
  // Checkpoint: a device backend's state comes back to host memory now and
  // then, in the background (free on the CPU backend, which steps the host
  // arrays). An arrived copy is noted at once, so a later device failure can
  // roll back to it without asking the device.
  const int fallbacks_before = guard_.fallbacks();
  auto fell_back = [&] { return guard_.fallbacks() != fallbacks_before; };
  if (!guard_.keep_checkpoint(checkpoint_interval)) return StepStatus{};
  if (const char* why = mpm::transfer_kernel_error(solver.transfer, solver.kernel))
    throw std::invalid_argument(why);
  if (solver.transfer != Transfer::PolyPIC) {
    poly_stale_ = true;
    if (particles.poly.capacity() != 0)
      std::vector<PolyModes>().swap(particles.poly);  // (a device backend frees its copy)
  } else if (poly_stale_ || particles.poly.size() != particles.size()) {
    guard_.sync();
    if (fell_back()) return StepStatus{};
    particles.poly.assign(particles.size(), PolyModes{});
    host_changed();
    if (fell_back()) return StepStatus{};
    poly_stale_ = false;
  }
  SubstepInput in;
  in.grid = grid;
  in.solver = solver;
  in.materials = materials.data();
  in.material_count = static_cast<int>(materials.size());
  in.point = point_force;
  if (!colliders.empty()) {
    collider_impulse.resize(3 * colliders.size(), 0.0);
    in.colliders = colliders.data();
    in.collider_count = static_cast<int>(colliders.size());
    in.collider_impulse = collider_impulse.data();
    in.colliders_move = colliders_move;
    in.collider_time = colliders_time;
  }
  const StepRule rule = step_rule();
  SubstepResult r;
  // A device failure below switches to the CPU backend at the preserved state
  // (fall_back); the call then returns ok and the caller steps on from there.
  // With resampling on, the n substeps run in chunks that end where a pass is due.
  const int64_t K = std::max(1, resampling.interval);
  const int64_t KH = std::max(1, heat.interval);
  int left = n;
  if (heat.enabled && heat.only) {
    // Heat-only: the material stays in place; the clock runs and heat passes
    // come at their interval.
    while (left > 0) {
      const int chunk = static_cast<int>(std::min<int64_t>(left, KH - clock_.step % KH));
      clock_.step += chunk;
      clock_.time += static_cast<double>(chunk) * solver.dt;
      clock_.last_dt = solver.dt;
      guard_.host_taken();
      left -= chunk;
      if (clock_.step % KH == 0) {
        heat_now();
        if (fell_back()) return StepStatus{};
      }
    }
    return StepStatus{};
  }
  while (left > 0 && r.ok) {
    int chunk = left;
    if (resampling.enabled) chunk = static_cast<int>(std::min<int64_t>(left, K - clock_.step % K));
    if (heat.enabled) chunk = static_cast<int>(std::min<int64_t>(chunk, KH - clock_.step % KH));
    // A moving handle's targets follow the clock. On the CPU backend one
    // substep at a time (a call costs nothing extra there), so the path is the
    // same whatever chunks the caller steps in. A device backend pays per call
    // (launches, a sync, a read-back): blocks of kHandleBlock substeps aligned
    // to the step count, each pulling towards the target at its middle.
    double target_time = clock_.time;
    if (handles_moving()) {
      if (on_cpu()) {
        chunk = 1;
      } else {
        chunk =
            static_cast<int>(std::min<int64_t>(chunk, kHandleBlock - clock_.step % kHandleBlock));
        target_time += 0.5 * chunk * static_cast<double>(solver.dt);
      }
    }
    build_spring_input(in, target_time);  // indices change with each resampling pass
    if (force_hook) {
      // The hook edits host forces before each substep: one substep at a time.
      for (int s = 0; s < chunk && r.ok; ++s) {
        guard_.sync();
        if (fell_back()) return StepStatus{};
        in.use_fext = force_hook(clock_.step + 1, particles);
        if (in.use_fext) host_changed();
        if (fell_back()) return StepStatus{};
        if (!advance_guarded(in, 1, rule, r)) return StepStatus{};
      }
    } else {
      if (!advance_guarded(in, chunk, rule, r)) return StepStatus{};
    }
    left -= chunk;
    if (r.ok && resampling.enabled && clock_.step % K == 0) {
      resample_now();
      if (fell_back()) return StepStatus{};
    }
    if (r.ok && heat.enabled && clock_.step % KH == 0) {
      heat_now();
      if (fell_back()) return StepStatus{};
    }
  }
  if (r.ok) return StepStatus{};
  guard_.sync();
  if (fell_back())
    return StepStatus{};  // the CPU goes on from the preserved state (and meets the blow-up if it is real)
  StepStatus st;
  st.ok = false;
  st.step = clock_.step;
  st.index = r.bad_index;
  size_t i = static_cast<size_t>(r.bad_index);
  st.particle_id = i < particles.size() ? particles.id[i] : 0;
  char buf[256];
  Vec2 v = i < particles.size() ? particles.v[i] : Vec2{};
  float J = i < particles.size() ? det(particles.F[i]) * particles.J[i] : 0.f;
  std::snprintf(buf, sizeof buf,
                "numerical blow-up at step %lld: particle %u has velocity (%g, %g) "
                "(limit %g) and volume ratio %g; stepping stopped",
                static_cast<long long>(st.step), st.particle_id, v.x, v.y, solver.velocity_limit,
                J);
  st.message = buf;
  failure_ = st;
  return st;
}

const char* preset_name(Preset p) { return kPresetNames(p); }

void MpmWorld::apply_preset(Preset preset, float speed, const std::vector<uint32_t>* selection) {
  guard_.sync();
  const size_t n = particles.size();
  auto for_each = [&](auto&& fn) {
    if (selection) {
      for (uint32_t i : *selection)
        if (i < n) fn(i);
    } else {
      for (size_t i = 0; i < n; ++i) fn(i);
    }
  };
  double m = 0.0, cx = 0.0, cy = 0.0;
  for_each([&](size_t i) {
    m += particles.mass[i];
    cx += particles.mass[i] * particles.x[i].x;
    cy += particles.mass[i] * particles.x[i].y;
  });
  if (m <= 0.0) return;
  Vec2 c{static_cast<float>(cx / m), static_cast<float>(cy / m)};
  Mat2 grad{};
  switch (preset) {
    case Preset::Translation: grad = Mat2{}; break;
    case Preset::Rotation: grad = Mat2{0.f, speed, -speed, 0.f}; break;
    case Preset::Shear: grad = Mat2{0.f, 0.f, speed, 0.f}; break;
    case Preset::Dilation: grad = Mat2{0.f, 0.f, 0.f, speed}; break;
  }
  for_each([&](size_t i) {
    Vec2 d = particles.x[i] - c;
    Vec2 v{};
    switch (preset) {
      case Preset::Translation: v = Vec2{speed, 0.f}; break;
      case Preset::Rotation: v = Vec2{speed * d.y, -speed * d.x}; break;
      case Preset::Shear: v = Vec2{0.f, speed * d.x}; break;
      case Preset::Dilation: v = Vec2{0.f, speed * d.y}; break;
    }
    particles.v[i] = v;
    particles.C[i] = grad;
    if (i < particles.poly.size())
      particles.poly[i] = PolyModes{};  // a linear field: no higher modes
  });
  host_changed();
}

size_t MpmWorld::add_particles(const std::vector<Vec2>& sites, int material, float h, Vec2 v,
                               uint16_t group) {
  if (sites.empty() || material < 0 || material >= static_cast<int>(materials.size())) return 0;
  guard_.sync();
  const float area = h * h;
  const float mass = materials[static_cast<size_t>(material)].density * area;
  for (Vec2 s : sites) particles.add(s, v, mass, area, static_cast<uint8_t>(material), group);
  host_changed();
  return sites.size();
}

void MpmWorld::grab_begin(const std::vector<uint32_t>& indices, Vec2 target) {
  guard_.sync();
  grab_.begin(indices, particles.x, target);
  grab_ids_.clear();
  for (uint32_t i : grab_.index) grab_ids_.push_back(particles.id[i]);
}

void MpmWorld::grab_end() {
  grab_.end();
  grab_ids_.clear();
}

void MpmWorld::resample_now() {
  const auto t0 = std::chrono::steady_clock::now();
  const int fallbacks_before = guard_.fallbacks();
  guard_.sync();  // a device backend's state comes to the host (a no-op on the CPU)
  // A failed read-back rolled the world back to its preserved state (maybe
  // mid-interval, maybe already resampled): the CPU goes on from there and
  // the next pass comes at the next multiple of the interval.
  if (guard_.fallbacks() != fallbacks_before) return;
  // The seed follows the step, so a run is reproducible and passes differ.
  const uint64_t seed =
      0x5A3D1E5EEDull ^ (static_cast<uint64_t>(clock_.step) * 0x9E3779B97F4A7C15ull);
  const ResampleReport& rep = resampler_.run(particles, grid, materials, resampling, seed);
  resampler_last_ = rep;
  last_resample_step_ = clock_.step;
  if (rep.inserted > 0 || rep.merged > 0) {
    host_changed();  // the new particle set goes out (a device grows its arrays geometrically)
    particles_reindexed();
  }
  // Marks for the highlight: drop those older than the kept passes, add this pass's.
  const int64_t oldest =
      clock_.step - int64_t{kResampleMarkPasses} * std::max(1, resampling.interval);
  size_t keep_from = 0;
  while (keep_from < resample_marks_.size() && resample_marks_[keep_from].step <= oldest)
    ++keep_from;
  resample_marks_.erase(resample_marks_.begin(),
                        resample_marks_.begin() + static_cast<std::ptrdiff_t>(keep_from));
  for (uint32_t id : rep.new_ids) resample_marks_.push_back(ResampleMark{id, clock_.step, false});
  if (!rep.retired_ids.empty()) {  // kept sorted for id_retired()
    const size_t mid = retired_ids_.size();
    retired_ids_.insert(retired_ids_.end(), rep.retired_ids.begin(), rep.retired_ids.end());
    std::sort(retired_ids_.begin() + static_cast<std::ptrdiff_t>(mid), retired_ids_.end());
    std::inplace_merge(retired_ids_.begin(),
                       retired_ids_.begin() + static_cast<std::ptrdiff_t>(mid), retired_ids_.end());
  }
  for (uint32_t id : rep.merged_ids) resample_marks_.push_back(ResampleMark{id, clock_.step, true});
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ++resample_totals_.calls;
  resample_totals_.inserted += rep.inserted;
  resample_totals_.merged += rep.merged;
  resample_totals_.ms += ms;
  resample_totals_.last_ms = ms;
}

void MpmWorld::start_heat() {
  if (heat_ledger_.have_initial) return;
  heat_solver_.quantize(particles,
                        materials);  // before the initial heat: the rounding is not drift
  heat_ledger_.initial_heat = HeatSolver::totals(particles, materials).heat();
  heat_ledger_.have_initial = true;
  host_changed();
}

void MpmWorld::heat_now() {
  const auto t0 = std::chrono::steady_clock::now();
  const int fallbacks_before = guard_.fallbacks();
  guard_.sync();
  if (guard_.fallbacks() != fallbacks_before) return;
  start_heat();
  const double dt = (clock_.time - last_heat_time_) * static_cast<double>(heat.time_scale);
  last_heat_time_ = clock_.time;
  const size_t n0 = particles.size();
  const uint64_t seed = 0x4EA7ull ^ (static_cast<uint64_t>(clock_.step) * 0x9E3779B97F4A7C15ull);
  // The backend's device solve, lent for this pass only. If making it fails
  // the world falls back (the host state is current) and the pass goes on
  // with the host's solve: no heat time is lost.
  HeatLinearSolver* device = nullptr;
  if (heat.device_solve != HeatDeviceSolve::Off)
    guarded("preparing the heat solve", AtFailure::DeviceAtClock,
            [&] { device = backend().heat_linear_solver(); });
  struct Lend {
    HeatSolver& h;
    ~Lend() { h.set_linear_solver(nullptr); }
  } lend{heat_solver_};
  heat_solver_.set_linear_solver(device);
  const HeatReport& rep =
      heat_solver_.run(particles, grid, solver, materials, heat, dt, seed, heat_tool);
  HeatLedger& L = heat_ledger_;
  if (rep.on_device) ++L.device_passes;
  L.solve_ms += rep.solve_ms;
  ++L.passes;
  L.iterations += rep.iterations;
  if (!rep.converged) ++L.unconverged;
  L.walls += rep.energy_walls;
  L.air += rep.energy_air;
  L.lamps += rep.energy_lamps;
  L.grid += rep.energy_grid;
  L.solver += rep.energy_solver;
  L.solver_abs += std::fabs(rep.energy_solver);
  L.rounding += rep.energy_rounding;
  L.rounding_abs += std::fabs(rep.energy_rounding);
  L.melted += rep.melted;
  L.emitted += rep.emitted;
  L.converted += rep.converted;
  L.heat_time += dt;
  // The device failed in the solve: the host solved the pass, and its result
  // (in the host arrays) goes on on the CPU.
  if (!rep.device_error.empty())
    guard_.fall_back(rep.device_error, "solving the heat equation", AtFailure::HostAuthoritative);
  // Melting and water flow change mass, volume, velocity and material: the
  // device needs them (on the CPU backend this only re-buckets).
  host_changed();
  if (particles.size() != n0) particles_reindexed();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  L.ms += ms;
  L.last_ms = ms;
}

HeatTotals MpmWorld::heat_totals() {
  guard_.sync();
  return HeatSolver::totals(particles, materials);
}

int MpmWorld::measure_interior_holes() {
  guard_.sync();
  return resampler_.count_interior_holes(particles, grid, materials, resampling);
}

void MpmWorld::particles_reindexed() {
  handles_dirty_ = true;
  if (!grab_.active()) return;
  // The grab keeps the particles it still has, by ID, with their offsets.
  uint32_t max_id = 0;
  for (uint32_t v : particles.id) max_id = std::max(max_id, v);
  id_to_index_.assign(static_cast<size_t>(max_id) + 1, UINT32_MAX);
  for (size_t i = 0; i < particles.size(); ++i)
    id_to_index_[particles.id[i]] = static_cast<uint32_t>(i);
  size_t out = 0;
  for (size_t k = 0; k < grab_ids_.size(); ++k) {
    const uint32_t id = grab_ids_[k];
    const uint32_t i = id < id_to_index_.size() ? id_to_index_[id] : UINT32_MAX;
    if (i == UINT32_MAX) continue;
    grab_.index[out] = i;
    grab_.offset[out] = grab_.offset[k];
    grab_ids_[out] = id;
    ++out;
  }
  grab_.index.resize(out);
  grab_.offset.resize(out);
  grab_ids_.resize(out);
}

bool MpmWorld::handles_moving() const {
  for (const MpmHandle& h : handles)
    if ((h.velocity.x != 0.f || h.velocity.y != 0.f) && clock_.time < h.stop) return true;
  return false;
}

void MpmWorld::build_spring_input(SubstepInput& in, double target_time) {
  in.grab.stiffness = grab_stiffness;
  if (handles.empty()) {
    in.grab.index = grab_.index.data();
    in.grab.offset = grab_.offset.data();
    in.grab.count = static_cast<int>(grab_.index.size());
    in.grab.target = grab_.target;
    return;
  }
  if (handles_dirty_) {
    uint32_t max_id = 0;
    for (uint32_t v : particles.id) max_id = std::max(max_id, v);
    id_to_index_.assign(static_cast<size_t>(max_id) + 1, UINT32_MAX);
    for (size_t i = 0; i < particles.size(); ++i)
      id_to_index_[particles.id[i]] = static_cast<uint32_t>(i);
    handle_index_.clear();
    for (const MpmHandle& h : handles)
      for (uint32_t id : h.ids)
        handle_index_.push_back(id < id_to_index_.size() ? id_to_index_[id] : UINT32_MAX);
    handles_dirty_ = false;
  }
  // Absolute targets: the mouse grab's, then each handle's at this step's time.
  spring_index_.assign(grab_.index.begin(), grab_.index.end());
  spring_offset_.clear();
  spring_ks_.assign(grab_.index.size(), grab_stiffness);
  for (size_t k = 0; k < grab_.index.size(); ++k)
    spring_offset_.push_back(grab_.target + grab_.offset[k]);
  const float dt = std::max(solver.dt, 1e-9f);
  const float ks_max = (0.25f / dt) * (0.25f / dt);
  size_t q = 0;
  for (const MpmHandle& h : handles)
    for (size_t k = 0; k < h.ids.size(); ++k, ++q) {
      if (handle_index_[q] == UINT32_MAX) continue;
      spring_index_.push_back(handle_index_[q]);
      spring_offset_.push_back(h.target(h.anchor[k], target_time));
      spring_ks_.push_back(h.stiffness > 0.f ? std::min(h.stiffness, ks_max) : ks_max);
    }
  in.grab.index = spring_index_.data();
  in.grab.offset = spring_offset_.data();
  in.grab.stiffness_each = spring_ks_.data();
  in.grab.count = static_cast<int>(spring_index_.size());
  in.grab.target = Vec2{0.f, 0.f};
}

// [SECTION] Saved states (the rewind, sim/scene/rewind.h) ---------------------------

namespace {

/// HeatParams field by field (it holds lists): one list for the controls
/// image's writer and reader. A new HeatParams field goes here too.
template <class H, class F>
void heat_fields(H& h, F&& f) {
  f(h.enabled);
  f(h.only);
  f(h.interval);
  f(h.time_scale);
  f(h.flip);
  f(h.tolerance);
  f(h.max_iterations);
  f(h.preconditioner);
  f(h.device_solve);
  f(h.walls);
  f(h.plates);
  f(h.lamps);
  f(h.air);
  f(h.air_temperature);
  f(h.emissivity);
  f(h.photons);
  f(h.convection_h);
  f(h.water_flow);
  f(h.flow_down_rate);
  f(h.flow_level_rate);
  f(h.emit_volume);
  f(h.gamma);
}

}  // namespace

template <class Self, class F>
void MpmWorld::each_control(Self& w, F&& f) {
  f(w.solver);
  f(w.materials);
  f(w.resampling);
  heat_fields(w.heat, f);
  f(w.heat_tool);
  f(w.grab_.index);
  f(w.grab_.offset);
  f(w.grab_.target);
  f(w.grab_ids_);
  f(w.grab_stiffness);
}

std::string MpmWorld::controls() const { return controls_image(*this); }

void MpmWorld::set_controls(const std::string& image) { apply_controls_image(*this, image); }

size_t MpmWorldState::bytes() const {
  size_t n = sizeof(*this) + controls.size() + vec_bytes(resample_marks) + vec_bytes(retired_ids);
  particles.for_each_array([&n](const auto& a) { n += vec_bytes(a); });
  // Counted whole in every save that shares them (an upper bound of the memory held).
  if (host_columns) host_columns->for_each_array([&n](const auto& a) { n += vec_bytes(a); });
  if (device) n += device->bytes();
  for (const MpmHandle& h : handles) n += vec_bytes(h.ids) + vec_bytes(h.anchor);
  n += vec_bytes(resample_last.new_ids) + vec_bytes(resample_last.merged_ids) +
       vec_bytes(resample_last.retired_ids);
  return n;
}

template <class S, class F>
void MpmWorld::each_saved(S& s, F&& f) {
  f(clock_, s.clock);
  f(failure_, s.failure);
  f(handles, s.handles);
  f(force_hook, s.force_hook);
  f(resampler_last_, s.resample_last);
  f(last_resample_step_, s.last_resample_step);
  f(resample_totals_, s.resample_totals);
  f(resample_marks_, s.resample_marks);
  f(retired_ids_, s.retired_ids);
  f(heat_ledger_, s.heat_ledger);
  f(last_heat_time_, s.last_heat_time);
}

namespace {

/// The columns a device backend never changes (a device save keeps the
/// others on the device), and how to put them back.
MpmParticles host_only_columns(const MpmParticles& p) {
  MpmParticles h;
  h.mass = p.mass;
  h.vol0 = p.vol0;
  h.material = p.material;
  h.group = p.group;
  h.id = p.id;
  h.fext = p.fext;
  h.temp = p.temp;
  h.melt = p.melt;
  h.vwater = p.vwater;
  h.next_id = p.next_id;
  return h;
}

void restore_host_columns(MpmParticles& p, const MpmParticles& h, size_t n, bool poly) {
  p.mass = h.mass;
  p.vol0 = h.vol0;
  p.material = h.material;
  p.group = h.group;
  p.id = h.id;
  p.fext = h.fext;
  p.temp = h.temp;
  p.melt = h.melt;
  p.vwater = h.vwater;
  p.next_id = h.next_id;
  // The stepped columns get the device's values (sync_to_host) right after.
  p.x.resize(n);
  p.v.resize(n);
  p.C.resize(n);
  p.F.resize(n);
  p.J.resize(n);
  p.Jp.resize(n);
  if (poly)
    p.poly.resize(n);
  else
    std::vector<PolyModes>().swap(p.poly);
}

}  // namespace

void MpmWorld::save_state(MpmWorldState& s) {
  // A device backend keeps the stepped columns on the device (a copy there
  // costs a fraction of a millisecond at a million particles, one to the host
  // tens): the window's rewind snapshots then never stall the stepping.
  std::shared_ptr<const DeviceStateCopy> dev;
  guarded("saving the state on the device", AtFailure::DeviceAtClock,
          [&] { dev = backend().save_device_state(); });
  if (dev) {
    if (!host_cols_ || host_cols_gen_ != host_gen_) {
      host_cols_ = std::make_shared<const MpmParticles>(host_only_columns(particles));
      host_cols_gen_ = host_gen_;
    }
    s.particles = MpmParticles{};
    s.device = std::move(dev);
    s.host_columns = host_cols_;
  } else {
    guard_.sync();
    s.particles = particles;
    s.device.reset();
    s.host_columns.reset();
  }
  each_saved(s, [](const auto& mine, auto& saved) { saved = mine; });
  s.controls = controls();
  s.heat_quantum = heat_solver_.quantum();
}

void MpmWorld::load_state(const MpmWorldState& s) {
  if (s.device) {
    // The device takes its copy first: when it cannot (another backend now,
    // or a device error), nothing here has changed.
    bool ok = false;
    const bool fine = guarded("restoring a saved state on the device", AtFailure::DeviceAtClock,
                              [&] { ok = backend().load_device_state(*s.device); });
    if (!fine || !ok)
      throw std::invalid_argument(
          "load_state: the state was saved on a device this world no longer steps with");
  }
  each_saved(s, [](auto& mine, const auto& saved) { mine = saved; });
  set_controls(s.controls);
  heat_solver_.set_quantum(s.heat_quantum);
  handles_dirty_ = true;
  backend().bind(&particles);
  if (s.device) {
    restore_host_columns(particles, *s.host_columns, s.device->count(), s.device->has_poly());
    host_cols_ = s.host_columns;
    host_cols_gen_ = ++host_gen_;
    guard_.host_edited();
    // The host's stepped columns get the restored state (a seek is
    // interactive: one copy to the host is fine).
    guard_.host_taken();
    guard_.sync();
  } else {
    particles = s.particles;
    host_changed();  // the clock above is the host copy's; a device backend uploads it
  }
}

Diagnostics MpmWorld::totals() {
  const Vec2 centre{grid.origin.x + 0.5f * grid.width(), grid.origin.y + 0.5f * grid.height()};
  ParticleTotals t;
  bool ok = false;
  // Where the state is stepped, also when the host copy is current: a device
  // sums a million particles in microseconds, one host thread in milliseconds
  // (a paused window sampling the plots 20 times a second).
  guarded("summing the particles", AtFailure::DeviceAtClock,
          [&] { ok = backend().device_totals(centre, t); });
  if (!ok) return diagnostics(false);
  Diagnostics d;
  d.count = particles.size();
  d.mass = t.mass;
  d.momentum[0] = t.momentum[0];
  d.momentum[1] = t.momentum[1];
  d.angular_momentum = t.angular_momentum;
  d.kinetic_energy = t.kinetic_energy;
  d.max_speed = t.max_speed;
  return d;
}

Diagnostics MpmWorld::diagnostics(bool with_hash) {
  guard_.sync();
  Vec2 centre{grid.origin.x + 0.5f * grid.width(), grid.origin.y + 0.5f * grid.height()};
  return compute_diagnostics(particles, centre, with_hash);
}

Diagnostics compute_diagnostics(const MpmParticles& p, Vec2 centre, bool with_hash) {
  Diagnostics d;
  d.count = p.size();
  for (size_t i = 0; i < p.size(); ++i) {
    double m = p.mass[i], vx = p.v[i].x, vy = p.v[i].y;
    double rx = static_cast<double>(p.x[i].x) - centre.x,
           ry = static_cast<double>(p.x[i].y) - centre.y;
    d.mass += m;
    d.momentum[0] += m * vx;
    d.momentum[1] += m * vy;
    d.angular_momentum += m * (rx * vy - ry * vx);
    d.kinetic_energy += 0.5 * m * (vx * vx + vy * vy);
    d.max_speed = std::max(d.max_speed, length(p.v[i]));
  }
  if (with_hash) d.hash = state_hash(p);
  return d;
}

uint64_t state_hash(const MpmParticles& p) {
  Fnv1a h;
  h.add_array(p.x.data(), p.size());
  h.add_array(p.v.data(), p.size());
  h.add_array(p.C.data(), p.size());
  h.add_array(p.F.data(), p.size());
  h.add_array(p.J.data(), p.size());
  h.add_array(p.Jp.data(), p.size());
  return h.h;
}

double elastic_energy(const MpmParticles& p, const std::vector<MaterialParams>& materials) {
  double e = 0.0;
  for (size_t i = 0; i < p.size(); ++i)
    e += p.vol0[i] * mpm::energy_density(materials[p.material[i]], p.F[i], p.J[i], p.Jp[i]);
  return e;
}

}  // namespace ps
