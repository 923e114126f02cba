/// A DEM world: materials, walls, bond parameters, particles, bonds and the
/// backend that steps them. The app, the tests and the benchmarks all drive
/// this one type (mirrors ps::MpmWorld).
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include "sim/core/backend_guard.h"
#include "sim/core/grab.h"
#include "sim/core/step_status.h"
#include "sim/dem/dem_backend.h"
#include "sim/dem/dem_params.h"
#include "sim/dem/dem_particles.h"
#include "sim/mpm/mpm_params.h"

namespace ps {
namespace dem {

class DemCpuBackend;

/// Outcome of stepping (shared with MPM).
using DemStepStatus = ps::StepStatus;

/// Conserved quantities and a state hash.
struct DemDiagnostics {
  size_t count = 0;
  double mass = 0.0;
  double momentum[2] = {0.0, 0.0};
  /// sum m (x - centre) x v + I omega (orbital plus spin), about `centre`
  double angular_momentum = 0.0;
  double kinetic_energy = 0.0;     ///< translational plus rotational
  double rotational_energy = 0.0;  ///< sum I omega^2 / 2 (part of kinetic_energy)
  double max_speed = 0.0;
  size_t bonds = 0, bonds_broken = 0;
  uint64_t hash = 0;
};

/// The most recent bond break (DemWorld::last_break): the step it broke in
/// (0: none yet), the bond (the first in (i, j) order among those that broke
/// in that step) and why it broke.
struct DemLastBreak {
  int64_t step = 0;
  int64_t bond = -1;
  BondBreak mode = BondBreak::None;
};

/// Stable time-step estimates (seconds).
struct DemTimeStep {
  double rayleigh = 0.0;  ///< min over particles of the Rayleigh time
  double hertz =
      0.0;            ///< shortest Hertz contact duration at max(expected_speed, current max speed)
  double bond = 0.0;  ///< 2 / omega_max of the bond springs (Gershgorin bound); inf without bonds
  /// safety x min(rayleigh, bond, hertz / 2): dt used when solver.dt_safety > 0
  /// (safety 0.2 gives LIGGGHTS' limits: 0.2 Rayleigh time, 0.1 Hertz time,
  /// i.e. an impact at the expected speed takes at least 10 steps).
  double recommended = 0.0;
};

/// One contact for export and drawing: the P4C row
/// `P1 P2 CX CY CZ FX FY FZ CONTACT_IS_BONDED`. The force is the one acting
/// on P1 from P2 (on P2 it is the opposite). Wall contacts have p2 = 0.
struct ContactRecord {
  uint32_t p1 = 0, p2 = 0;
  double c[3] = {0.0, 0.0, 0.0};
  double f[3] = {0.0, 0.0, 0.0};
  bool bonded = false;
};

class DemWorld {
 public:
  DemWorld();
  ~DemWorld();

  Vec2d domain_min{0.0, 0.0}, domain_max{1.0, 1.0};  ///< view box (and domain walls if added)
  DemSolverParams solver;
  DemBondParams bond;
  std::vector<DemMaterial> materials;
  std::vector<std::string> material_names;
  /// Walls may be edited between steps (moved, turned, given a velocity,
  /// replaced by another wall) without host_changed(): the contact history
  /// is kept per (particle, wall index), so walls kept in the same order keep
  /// their Mindlin and rolling springs. Adding or removing walls keeps it on
  /// the CPU for unchanged indices; the CUDA backend drops the wall history
  /// when the wall count changes. Checked at each step() (check_wall).
  std::vector<DemWall> walls;
  /// Fill wall_reaction() and wall_impulse() during step().
  bool want_wall_reaction = false;
  /// Move every wall by its own velocity after each step (move_wall): walls
  /// driven kinematically through a step(n) of many steps. (A device
  /// failure rolls the clock back to the last host copy; walls stay put.)
  bool advance_walls = false;
  std::vector<DemLoad> loads;
  DemParticles particles;
  DemBonds bonds;
  PointForce point_force;  ///< attract/repel (acceleration strength (1 - r / radius))
  /// Called before every step with its 1-based index; it may write
  /// particles.fext and returns true when fext applies to this step (SGF
  /// lists). Without a hook, fext does not apply (only the hook writes it;
  /// a device backend then uploads nothing per step).
  std::function<bool(int64_t step, DemParticles& p)> force_hook;

  /// Adds a material; returns its index. Names must be unique.
  int add_material(const std::string& name, const DemMaterial& m);
  int material_index(const std::string& name) const;  ///< -1 when absent

  /// Replaces the backend (state is handed over through the host arrays).
  /// When the old backend cannot hand its state over, the last host copy is
  /// kept (as for a run-time failure, below).
  void set_backend(std::unique_ptr<DemBackend> backend);
  DemBackend& backend() { return guard_.backend(); }
  std::string backend_name() const;

  // Run-time failures of a device backend, as in MpmWorld: any exception a
  // non-CPU backend throws from step, sync_to_host, host_changed or
  // read_contacts is caught; the world keeps the last good host state (the
  // particles and bonds as of the last sync_to_host / host_changed, with the
  // clock of that moment), switches to a CPU backend, posts a notice and
  // continues. Contact history (Mindlin and rolling springs) restarts there,
  // as after any host edit.
  /// A device backend's state is copied to host memory at the start of a
  /// step() call once the newest copy is this many steps old: a failure rolls
  /// back at most checkpoint_interval - 1 + n steps (n: the failing call's
  /// count). The CUDA backend copies in the background (checkpoint_begin;
  /// sim/core/checkpoint.h): the host arrays stay as they are until a failure
  /// needs the copy; others sync.
  int checkpoint_interval = 256;
  /// Threads of the CPU backend the world falls back to (<= 0: all cores).
  int fallback_threads = 0;
  const BackendFallback& fallback() const { return guard_.last_fallback(); }
  /// Called after each fallback, once the CPU backend has taken over (null: nobody listens).
  std::function<void(const BackendFallback&)> on_fallback;
  /// The step of the state the host arrays hold (the last preserved state).
  int64_t host_state_step() const { return guard_.host_clock().step; }
  /// Messages for the user, oldest first, joined by newlines; cleared by the call.
  std::string take_notice() { return guard_.take_notice(); }
  void post_notice(const std::string& text) { guard_.post_notice(text); }

  /// Forms EBPM bonds between particles of the same body (body != 0) whose
  /// centres are closer than bond.contact_radius_multiplier (R_i + R_j).
  /// Replaces existing bonds; returns how many formed. Does nothing (and
  /// clears bonds) when bond.enabled is false.
  size_t form_bonds();

  /// Runs up to n steps; stops at the first blow-up and stays halted
  /// (further calls return the same failure) until reset_halt().
  DemStepStatus step(int n);
  bool halted() const { return !failure_.ok; }
  const DemStepStatus& failure() const { return failure_; }
  void reset_halt() { failure_ = DemStepStatus{}; }

  /// With want_wall_reaction: 3 doubles per wall (Fx, Fy, torque about the
  /// wall's c) of the forces the particles exerted on the walls in the last
  /// step (DemStepInput::wall_reaction); empty otherwise.
  const std::vector<double>& wall_reaction() const { return wall_reaction_; }
  /// With want_wall_reaction: the sum of wall_reaction() x dt over the steps
  /// of the last step(n) call (linear impulse, and angular impulse about c),
  /// what a rigid body stepped once per step(n) call receives.
  const std::vector<double>& wall_impulse() const { return wall_impulse_; }

  int64_t step_count() const { return step_count_; }
  double time() const { return time_; }
  double last_dt() const { return last_dt_; }
  const DemStepResult& last_result() const { return last_result_; }
  size_t bonds_broken_total() const { return bonds_broken_total_; }
  /// Intact bonds now (counted on the host when it holds the state, then
  /// kept up to date from each step's breakages: no pass over the bonds).
  size_t intact_bonds() const;
  /// The step size the next step will use: solver.dt, or
  /// solver.dt_safety x the estimate when dt_safety > 0.
  double next_dt() const;
  DemTimeStep estimate_time_step() const;

  /// Grab tool: particles follow a moving target keeping their offsets.
  void grab_begin(const std::vector<uint32_t>& indices, Vec2d target);
  void grab_move(Vec2d target) { grab_.target = target; }
  void grab_end();
  bool grabbing() const { return grab_.active(); }
  double grab_stiffness = 4000.0;

  /// Host arrays were edited (loading, painting, velocities): push them.
  /// Contact history restarts.
  void host_changed();
  /// Makes `particles` and `bonds` current (CPU: no-op).
  void sync();
  /// Syncs and computes the diagnostics about the domain centre.
  DemDiagnostics diagnostics();
  /// The same sums without the state hash, for the window's plots (20 times a
  /// second): a device backend reduces them where the state lives
  /// (DemBackend::device_totals), nothing is copied to the host; the bond
  /// counts come from intact_bonds().
  DemDiagnostics totals();
  /// The most recent bond break, kept up to date from each step's result (no
  /// pass over the bonds; counted again from the host arrays when they become
  /// the state).
  const DemLastBreak& last_break() const { return last_break_; }
  /// Bumped whenever the host arrays become the state (host_changed, a load,
  /// a new backend, a fallback): the bond topology can only change then.
  uint64_t host_generation() const { return generation_; }
  /// Resets step counter and time (after a scene load).
  void reset_clock();
  /// Removes particles, bonds, walls, loads and materials; keeps parameters.
  void clear();

  /// Contacts of the last step: unbonded pairs (sorted by p1, p2), then
  /// intact bonds, then (when asked) wall contacts.
  void contacts(std::vector<ContactRecord>& out, bool include_walls = false);

  /// Index of the particle with stable ID `id`, or -1.
  int64_t index_of(uint32_t id) const;

 private:
  /// The clock and counters that go with a particle state.
  struct Clock {
    int64_t step = 0;
    double time = 0.0, last_dt = 0.0, last_max_speed = 0.0;
    size_t bonds_broken_total = 0;
    DemStepResult last_result;
  };
  Clock clock() const;
  void set_clock(const Clock& c);
  template <class F>
  bool guarded(const char* during, AtFailure at, F&& call) {
    return guard_.run(during, at, std::forward<F>(call));
  }
  bool on_cpu() const;

  /// The backend, the last good host copy's clock, checkpoints, fallbacks, notices.
  BackendGuard<DemBackend, DemCpuBackend, Clock> guard_;
  DemLastBreak last_break_;
  int64_t step_count_ = 0;
  double time_ = 0.0;
  double last_dt_ = 0.0;
  double last_max_speed_ = 0.0;
  size_t bonds_broken_total_ = 0;
  DemStepResult last_result_;
  DemStepStatus failure_;
  GrabSet<Vec2d> grab_;
  std::vector<double> wall_reaction_, wall_impulse_;
  /// Bumped whenever the host arrays become the state (host_changed, clear,
  /// a new backend): part of the time-step cache's key.
  uint64_t generation_ = 0;
  /// estimate_time_step() without a pass over every particle and bond per
  /// call: the Rayleigh and bond bounds, and which particle has the shortest
  /// Hertz time, are kept until the key (generation, counts, broken bonds,
  /// the material and bond constants they use) changes. The Hertz time of
  /// that particle is evaluated at each call's speed (the ordering of
  /// particles by Hertz time does not depend on the speed: t ~ v^-1/5).
  struct DtCache {
    std::vector<double> key;
    DemTimeStep base;
    size_t hertz_index = static_cast<size_t>(-1);
  };
  mutable DtCache dt_cache_;
  /// intact_bonds(): the count, and the bond-array size it was counted for
  /// (~0: count again).
  mutable size_t intact_ = 0, intact_size_ = static_cast<size_t>(-1);
  void host_state_taken() {
    ++generation_;
    intact_size_ = static_cast<size_t>(-1);
    intact_bonds();  // now, while the host arrays are the state
    count_last_break();
    count_host_broken();
    guard_.host_edited();
  }
  /// Broken bonds in the host arrays, counted when they become the state or
  /// are synced from a device: the time-step cache's key on a device backend,
  /// whose bond bound reads the host arrays (a break on the device changes
  /// nothing there until the next sync, so it needs no new pass).
  size_t host_broken_ = 0;
  void count_host_broken() {
    host_broken_ = 0;
    for (uint8_t b : bonds.broken) host_broken_ += b ? 1 : 0;
  }
  /// last_break_ from the host arrays.
  void count_last_break();
  std::vector<double> dt_cache_key() const;

 public:
  /// Everything later steps depend on (the rewind, sim/scene/rewind.h): the
  /// particles, bonds (broken flags included), clock, controls image, SGF
  /// hook and the backend's contact history (CPU; a CUDA backend's state
  /// restarts its springs, as after any host edit). Restoring it and stepping
  /// on gives bit-identical states on the CPU backend.
  struct State {
    DemParticles particles;
    DemBonds bonds;
    Clock clock;
    DemStepStatus failure;
    std::string controls;
    std::function<bool(int64_t step, DemParticles& p)> force_hook;
    DemHistory history;
    bool have_history = false;
    size_t bytes() const;
  };
  /// The controls as a byte image (sim/core/bytes.h): solver, bond and
  /// material parameters, walls, loads, the point force (an inactive one as
  /// the default), the grab and the wall flags.
  std::string controls() const;
  void set_controls(const std::string& image);
  /// The image's members in order, after the point force (sim/core/bytes.h).
  template <class Self, class F>
  static void each_control(Self& w, F&& f);
  void save_state(State& s);
  void load_state(const State& s);
};

/// Why a wall cannot be used (empty when it can): a non-finite motion (c,
/// vel, omega), a negative or non-finite disk radius, a polygon with fewer
/// than 3 or more than kMaxWallVertices vertices, non-finite ones, or not
/// strictly convex and counter-clockwise. DemWorld::step throws
/// std::invalid_argument naming the wall when one fails.
std::string check_wall(const DemWall& w);

/// Diagnostics of a particle set (double accumulation in index order);
/// without the hash when with_hash is false.
DemDiagnostics compute_diagnostics(const DemParticles& p, const DemBonds& b, Vec2d centre,
                                   bool with_hash = true);
/// FNV-1a over x, v, theta, omega and the bonds' state, in index order.
uint64_t state_hash(const DemParticles& p, const DemBonds& b);

}  // namespace dem
}  // namespace ps
