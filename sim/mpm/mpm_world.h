/// An MPM world: grid, solver settings, material table, particles and the
/// backend that steps them. The app, the runner, the tests and the benchmark
/// all drive this one type.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include "sim/core/backend_guard.h"
#include "sim/core/grab.h"
#include "sim/core/names.h"
#include "sim/core/step_status.h"
#include "sim/mpm/heat.h"
#include "sim/mpm/mpm_backend.h"
#include "sim/mpm/mpm_params.h"
#include "sim/mpm/mpm_particles.h"
#include "sim/mpm/resample.h"

namespace ps {

class MpmCpuBackend;

/// The lecture's velocity presets (pic_vs_apic demo, keys t / r / s / d).
enum class Preset : uint8_t { Translation, Rotation, Shear, Dilation };
inline constexpr NameTable<Preset, 4> kPresetNames{
    0, {"translation", "rotation", "shear", "dilation"}};

/// Conserved quantities and a state hash of the particle set.
struct Diagnostics {
  size_t count = 0;
  double mass = 0.0;
  double momentum[2] = {0.0, 0.0};
  double angular_momentum = 0.0;  ///< sum m (x - centre) x v, about the domain centre
  double kinetic_energy = 0.0;
  float max_speed = 0.f;
  uint64_t hash = 0;
};

/// Running totals of the world's resampling passes (since the scene loaded).
struct ResampleTotals {
  int64_t calls = 0;
  int64_t inserted = 0;
  int64_t merged = 0;
  double ms = 0.0;       ///< wall time of all passes, sync and push included
  double last_ms = 0.0;  ///< the last pass, sync and push included
};

/// Running totals of the heat passes (since the scene loaded): the energy
/// ledger (J per unit depth) and the solver's work.
struct HeatLedger {
  int64_t passes = 0;
  int64_t iterations = 0;                      ///< PCG iterations, all passes
  int64_t unconverged = 0;                     ///< passes whose PCG stopped at max_iterations
  double walls = 0.0, air = 0.0, lamps = 0.0;  ///< energy in from each
  double grid = 0.0;                           ///< sum over passes of sum_i C_i dT_i
  double solver = 0.0;      ///< sum of the solves' energy defects (HeatReport::energy_solver)
  double solver_abs = 0.0;  ///< sum of their magnitudes
  double rounding = 0.0;    ///< sum of the temperature rounding energies
  double rounding_abs = 0.0;
  double melted = 0.0;  ///< ice mass melted
  int64_t emitted = 0, converted = 0;
  double ms = 0.0, last_ms = 0.0;
  double solve_ms = 0.0;      ///< the linear solves' part of ms
  int64_t device_passes = 0;  ///< passes whose system the device solved
  double initial_heat = 0.0;  ///< heat content before the first pass
  bool have_initial = false;
  double heat_time = 0.0;  ///< heat time simulated (time_scale included)
};

/// A particle a resampling pass inserted (merged = false) or kept as the
/// survivor of a merge (merged = true), with the step the pass ran after.
struct ResampleMark {
  uint32_t id = 0;
  int64_t step = 0;
  bool merged = false;
};

/// A scene handle: particles pulled along a straight path by the grab
/// spring (the toffee's grabbed ends). Particle k's target is
/// anchor[k] + velocity * (clamp(t, start, stop) - start): held in place
/// before `start`, moving until `stop`, held again after it. Particles are
/// named by ID so the handle survives resampling (a retired ID drops out).
/// While a target moves, step() advances the CPU backend one substep per
/// call so every substep pulls towards its own time's target (the same path
/// whatever chunks the caller steps in); a device backend advances blocks of
/// kHandleBlock substeps aligned to the step count, each towards the target
/// at the block's middle (path error <= 4 dt |velocity|).
struct MpmHandle {
  std::vector<uint32_t> ids;
  std::vector<Vec2> anchor;
  Vec2 velocity{0.f, 0.f};
  double start = 0.0;
  double stop = 1e30;
  /// Spring stiffness (1/s^2), capped at (0.25 / dt)^2 so the explicit
  /// spring stays stable; 0 (the default) is that cap: the stiffest stable
  /// spring, so the ends follow the path closely (lag 2 |velocity| / sqrt(ks)).
  float stiffness = 0.f;
  /// Target of a particle anchored at `a` at time t.
  Vec2 target(Vec2 a, double t) const {
    const double s = (t < start ? start : (t > stop ? stop : t)) - start;
    return a + static_cast<float>(s) * velocity;
  }
};

/// Everything later steps of an MpmWorld depend on (the rewind,
/// sim/scene/rewind.h): the particles, the clock, the controls image
/// (MpmWorld::controls), the handles and SGF hook, and the runtime state of
/// resampling and heat. Restoring it and stepping on gives bit-identical
/// states on the CPU backend.
struct MpmWorldState {
  MpmParticles particles;
  StepClock clock;
  StepStatus failure;
  std::string controls;
  std::vector<MpmHandle> handles;
  std::function<bool(int64_t step, MpmParticles& p)> force_hook;
  ResampleReport resample_last;
  int64_t last_resample_step = -1;
  ResampleTotals resample_totals;
  std::vector<ResampleMark> resample_marks;
  std::vector<uint32_t> retired_ids;
  float heat_quantum = 0.f;
  HeatLedger heat_ledger;
  double last_heat_time = 0.0;
  /// A device backend's save: the stepped columns stay on the device
  /// (`device`) and `host_columns` holds the others (mass, volume, material,
  /// group, ID, heat state; shared by the saves between two host edits);
  /// `particles` is then empty. Null: `particles` holds everything.
  std::shared_ptr<const DeviceStateCopy> device;
  std::shared_ptr<const MpmParticles> host_columns;
  /// Bytes the state holds (particle columns and lists, device copies included).
  size_t bytes() const;
};

class MpmWorld {
 public:
  MpmWorld();
  ~MpmWorld();

  GridSpec grid;
  SolverParams solver;
  std::vector<MaterialParams> materials;
  std::vector<std::string> material_names;
  MpmParticles particles;
  PointForce point_force;
  /// Called before every substep with its 1-based index; it may write
  /// particles.fext and returns true when it did (SGF lists use this).
  std::function<bool(int64_t step, MpmParticles& p)> force_hook;
  /// Rigid bodies' parts as moving boundaries for the next step() (placed by
  /// the coupling, sim/scene/coupled.h), and the impulses the matter gave
  /// each part, 3 per part, ADDED by every substep of step() (the caller zeroes
  /// them). Both backends (sim/mpm/mpm_collider.h).
  std::vector<RigidCollider> colliders;
  std::vector<double> collider_impulse;
  /// false: the parts stay where they were placed. true: they were placed at
  /// clock time colliders_time and each substep sees them moved rigidly since
  /// (their own velocity and spin, mpm::collider_moved), so a step(n) of many
  /// substeps sweeps the boundary along the bodies' paths (the coupling's
  /// batched exchange).
  bool colliders_move = false;
  double colliders_time = 0.0;

  /// Replaces the backend (state is handed over through the host arrays).
  /// When the old backend cannot hand its state over, the last host copy is
  /// kept (as for a run-time failure, below); when the new one cannot take
  /// it, it throws and the old backend stays.
  void set_backend(std::unique_ptr<MpmBackend> backend);
  MpmBackend& backend() { return guard_.backend(); }
  std::string backend_name() const;

  // Run-time failures of a device backend (docs/reliability.md). Any
  // exception a non-CPU backend throws from advance, sync_to_host,
  // host_changed, read_grid or stats is caught here: the world keeps the last
  // good host state, switches to a CPU backend, posts a notice and continues.
  // The last good host state is the device state read back when the failure
  // left it intact (a BackendError with state_intact, or a failure outside
  // advance), else the last host copy: the particles as of the last
  // sync_to_host / host_changed, with the clock of that moment.
  /// A device backend's state is copied to the host at the start of a step()
  /// call once the host copy is this many substeps old: a failure rolls back
  /// at most checkpoint_interval - 1 + n substeps (n: the failing call's count).
  int checkpoint_interval = 256;
  /// Threads of the CPU backend the world falls back to (<= 0: all cores).
  int fallback_threads = 0;
  /// The last fallback (happened = false when there was none).
  const BackendFallback& fallback() const { return guard_.last_fallback(); }
  /// Called after each fallback, once the CPU backend has taken over (the
  /// verification runner records it in the case's result; null: nobody listens).
  std::function<void(const BackendFallback&)> on_fallback;
  /// The step of the state the host arrays hold (the last preserved state).
  int64_t host_state_step() const { return guard_.host_clock().step; }
  /// Messages for the user (a fallback; the auto backend's choice), oldest
  /// first, joined by newlines; cleared by the call. "" when there are none.
  std::string take_notice() { return guard_.take_notice(); }
  void post_notice(const std::string& text) { guard_.post_notice(text); }
  /// backend().read_grid / stats() guarded as above (the window's overlays
  /// and Stats panel).
  void read_grid(GridSpec& spec, std::vector<float>& mass, std::vector<Vec2>& velocity);
  BackendStats backend_stats();

  /// Runs up to n substeps; stops at the first blow-up and stays halted
  /// (further calls return the same failure) until reset_halt().
  StepStatus step(int n);
  bool halted() const { return !failure_.ok; }
  const StepStatus& failure() const { return failure_; }
  void reset_halt() { failure_ = StepStatus{}; }

  int64_t step_count() const { return clock_.step; }
  double time() const { return clock_.time; }
  float last_dt() const { return clock_.last_dt; }
  /// The substep-size rule the solver settings give.
  StepRule step_rule() const;
  /// The substep size the next substep will use.
  float next_dt() const;

  /// Sets velocities (and C to the field's gradient) of all particles, or of
  /// `selection` (indices) when given, to a preset field about the selection's
  /// centre of mass: t v = s (1, 0); r v = s (y - cy, cx - x);
  /// s v = s (0, x - cx); d v = s (0, y - cy).
  void apply_preset(Preset preset, float speed = 1.f,
                    const std::vector<uint32_t>* selection = nullptr);

  /// Appends particles at `sites` (the paint tool) with material `material`,
  /// spacing h (mass = density h^2, rest area h^2), velocity `v` and group
  /// `group`, then host_changed(). Returns the number added (0 for an unknown material).
  size_t add_particles(const std::vector<Vec2>& sites, int material, float h, Vec2 v,
                       uint16_t group);

  /// Grab tool: particles follow a moving target keeping their offsets.
  void grab_begin(const std::vector<uint32_t>& indices, Vec2 target);
  void grab_move(Vec2 target) { grab_.target = target; }
  void grab_end();
  bool grabbing() const { return grab_.active(); }
  /// Indices of the grabbed particles now (kept by ID across resampling passes).
  const std::vector<uint32_t>& grab_indices() const { return grab_.index; }
  float grab_stiffness = 4000.f;
  /// Scene handles (moved by the same spring as the grab tool).
  std::vector<MpmHandle> handles;
  /// Particles were added, removed or reordered (resampling, painting,
  /// loading): index-based lists (grab, handles) are rebuilt from IDs.
  void particles_reindexed();

  /// Particle resampling (sim/mpm/resample.h): when
  /// resampling.enabled, step() runs a pass after every substep whose
  /// 1-based index is a multiple of resampling.interval. On a device backend
  /// the pass runs on the host: the state comes back, is resampled and goes
  /// out again (docs/benchmarks.md gives the cost).
  ResampleParams resampling;
  /// Runs one resampling pass now (whatever resampling.enabled says).
  void resample_now();
  /// The last pass: its report (new, merged and retired IDs) and the step it ran after (-1: none yet).
  const ResampleReport& last_resample() const { return resampler_last_; }
  int64_t last_resample_step() const { return last_resample_step_; }
  const ResampleTotals& resample_totals() const { return resample_totals_; }
  /// Inserted and merged particles of the passes within the last
  /// kResampleMarkPasses * interval substeps, oldest first (the window's highlight).
  const std::vector<ResampleMark>& resample_marks() const { return resample_marks_; }
  static constexpr int kResampleMarkPasses = 256;
  /// Whether a resampling merge of this world retired `id` (since the scene loaded).
  bool id_retired(uint32_t id) const {
    return std::binary_search(retired_ids_.begin(), retired_ids_.end(), id);
  }
  /// Syncs and measures the interior holes without changing the particles
  /// (resampling may be off): interior cells with fewer than
  /// resampling.min_per_cell particles. resampler().sdf() is then current.
  int measure_interior_holes();
  /// The resampler (its signed distance and cell counts of the last pass, for overlays).
  const Resampler& resampler() const { return resampler_; }

  /// Heat and melting (sim/mpm/heat.h): when heat.enabled,
  /// step() runs a heat pass after every substep whose 1-based index is a
  /// multiple of heat.interval, over the time since the last pass (times
  /// heat.time_scale). heat.only freezes the material (no mechanics). On a
  /// device backend the pass runs on the host like resampling (one copy each
  /// way per pass).
  HeatParams heat;
  /// Lamps of the window's heat tool, applied by every pass while set.
  std::vector<HeatLamp> heat_tool;
  /// Runs one heat pass now over the time since the last one.
  void heat_now();
  /// Puts the masses of melting materials on the heat solver's quantum and
  /// takes the initial heat of the ledger, once (heat.h, "Conservation"). The
  /// scene builder calls it when the scene starts with heat on, so the total
  /// mass is exact from step 0; the first heat pass calls it otherwise.
  void start_heat();
  const HeatReport& last_heat() const { return heat_solver_.last(); }
  const HeatLedger& heat_ledger() const { return heat_ledger_; }
  const HeatSolver& heat_solver() const { return heat_solver_; }
  /// Syncs and sums ice, water and heat content.
  HeatTotals heat_totals();

  /// The controls as a byte image (sim/core/bytes.h): solver, materials,
  /// resampling and heat parameters, the point force (an inactive one as the
  /// default: the cursor's position does not matter then), the heat tool's
  /// lamps and the grab (indices, offsets, target, IDs, stiffness). Equal
  /// images are equal controls; the rewind records a change of image.
  std::string controls() const;
  /// Applies an image from controls() (of this world, at the same particle order).
  void set_controls(const std::string& image);
  /// The image's members in order, after the point force (sim/core/bytes.h's
  /// controls_image writes them, apply_controls_image reads them).
  template <class Self, class F>
  static void each_control(Self& w, F&& f);
  /// Copies the whole state (a device backend is synced first).
  void save_state(MpmWorldState& s);
  /// Restores a saved state (a device backend takes it through host_changed).
  void load_state(const MpmWorldState& s);

  /// Host particle arrays were edited (presets, painting, loading): push them.
  void host_changed();
  /// Makes `particles` current (CUDA backends copy back; CPU is a no-op).
  void sync();
  /// Totals without the state hash (mass, momentum, angular momentum about
  /// the domain centre, kinetic energy, max speed): a device backend reduces
  /// them on the device, so the window's plots copy no particles back.
  Diagnostics totals();
  /// Syncs and computes the diagnostics.
  /// Totals, max speed and (with_hash) the state hash: FNV-1a over every
  /// particle's state, the costly part (~7 MB hashed for 90 k particles).
  Diagnostics diagnostics(bool with_hash = true);
  /// Resets step counter and time (after a scene load).
  void reset_clock() {
    clock_ = StepClock{};
    guard_.reset();
    failure_ = StepStatus{};
    resample_totals_ = ResampleTotals{};
    last_resample_step_ = -1;
    resample_marks_.clear();
    retired_ids_.clear();
    heat_ledger_ = HeatLedger{};
    last_heat_time_ = 0.0;
    heat_solver_.reset();
  }

 private:
  /// A backend call, guarded (BackendGuard::run): false after a fallback.
  template <class F>
  bool guarded(const char* during, AtFailure at, F&& call) {
    return guard_.run(during, at, std::forward<F>(call));
  }
  /// backend_->advance, guarded; false after a fallback.
  bool advance_guarded(const SubstepInput& in, int n, const StepRule& rule, SubstepResult& r);
  bool on_cpu() const;

  /// (member, saved copy) pairs of a saved state: save_state copies one way,
  /// load_state the other.
  template <class S, class F>
  void each_saved(S& s, F&& f);

  StepClock clock_;
  /// The backend, the last good host copy's clock, checkpoints, fallbacks, notices.
  BackendGuard<MpmBackend, MpmCpuBackend, StepClock> guard_;
  /// Bumped by every host edit (host_changed): save_state shares the host
  /// columns of a device save while it is unchanged.
  uint64_t host_gen_ = 0;
  std::shared_ptr<const MpmParticles> host_cols_;
  uint64_t host_cols_gen_ = ~0ull;
  StepStatus failure_;
  GrabSet<Vec2> grab_;
  std::vector<uint32_t> grab_ids_;  ///< IDs of the grabbed particles (to reindex)
  // The grab spring's input when handles are active: the mouse grab and every
  // handle as absolute targets (target 0, offset = target position).
  std::vector<uint32_t> spring_index_;
  std::vector<Vec2> spring_offset_;
  std::vector<float> spring_ks_;
  std::vector<uint32_t> handle_index_;  ///< per handle particle: index, or UINT32_MAX when retired
  std::vector<uint32_t> id_to_index_;   ///< scratch of particles_reindexed
  bool handles_dirty_ = true;
  /// The spring input, handles' targets taken at `target_time`.
  void build_spring_input(SubstepInput& in, double target_time);
  /// Substeps a device backend advances per call while a handle moves.
  static constexpr int kHandleBlock = 8;
  /// A handle's target is still moving (step() then advances one substep per call).
  bool handles_moving() const;
  Resampler resampler_;
  ResampleReport resampler_last_;
  int64_t last_resample_step_ = -1;
  ResampleTotals resample_totals_;
  std::vector<ResampleMark> resample_marks_;
  std::vector<uint32_t> retired_ids_;  ///< sorted: IDs merges retired
  HeatSolver heat_solver_;
  HeatLedger heat_ledger_;
  double last_heat_time_ = 0.0;  ///< clock time of the last heat pass
  /// Substeps ran under another transfer since PolyPIC last wrote
  /// particles.poly: those modes are stale and are zeroed before PolyPIC
  /// steps again (the other transfers carry no higher modes).
  bool poly_stale_ = false;
};

/// Diagnostics of a particle set (double accumulation in index order).
Diagnostics compute_diagnostics(const MpmParticles& p, Vec2 centre, bool with_hash = true);
/// Stored elastic energy sum vol0 psi of the particles (double accumulation;
/// psi per model: mpm::energy_density in sim/mpm/materials.h).
double elastic_energy(const MpmParticles& p, const std::vector<MaterialParams>& materials);

/// FNV-1a over positions, velocities, C, F, J and Jp, in index order.
uint64_t state_hash(const MpmParticles& p);
const char* preset_name(Preset p);

}  // namespace ps
