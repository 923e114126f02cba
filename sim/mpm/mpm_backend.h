/// The MPM backend interface: the CPU reference and the CUDA stepper both
/// implement it; the world never branches on which one it holds.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include "sim/mpm/mpm_collider.h"
#include "sim/mpm/mpm_params.h"
#include "sim/mpm/mpm_particles.h"

namespace ps {

class HeatLinearSolver;

/// Grab tool: particles `index[k]` are pulled towards `target + offset[k]`
/// by a critically damped spring of stiffness `stiffness` (1/s^2), or
/// stiffness_each[k] when given.
struct GrabInput {
  const uint32_t* index = nullptr;
  const Vec2* offset = nullptr;
  int count = 0;
  Vec2 target{0.f, 0.f};
  float stiffness = 4000.f;
  /// Per-entry stiffness (scene handles are stiffer than the mouse), or null
  /// for `stiffness` everywhere.
  const float* stiffness_each = nullptr;
};

struct SubstepInput {
  GridSpec grid;
  SolverParams solver;
  const MaterialParams* materials = nullptr;
  int material_count = 0;
  float dt = 1e-4f;
  PointForce point;
  GrabInput grab;
  bool use_fext = false;  ///< particles.fext holds forces for this substep
  /// Rigid bodies' convex parts as moving boundaries (mpm_collider.h), placed
  /// at the substep's start, and their impulses: 3 doubles per part (Jx, Jy,
  /// angular impulse about the body's centre of mass) that the substep ADDS,
  /// the momentum the matter gave the part. Null / 0: no rigid bodies.
  const RigidCollider* colliders = nullptr;
  int collider_count = 0;
  double* collider_impulse = nullptr;
  /// The parts move during a batch of substeps (the batched exchange,
  /// sim/scene/coupled.h): a substep that starts at clock time `time` sees
  /// each part as placed at `collider_time` and moved rigidly since
  /// (mpm::collider_moved over time - collider_time, in float). False: the
  /// parts stay where they were placed.
  bool colliders_move = false;
  double collider_time = 0.0;
  /// Clock time at the substep's start (advance() sets it per substep).
  double time = 0.0;
};

/// How the substep size is chosen: fixed, or CFL-adaptive from the largest
/// particle speed of the previous substep plus the materials' wave speed.
/// Evaluated by the backend between substeps (on the device for CUDA).
struct StepRule {
  bool adaptive = false;
  float dt_max = 1e-4f;  ///< the fixed step, or the adaptive upper bound
  float dt_min = 1e-7f;
  float cfl = 0.5f;
  float dx = 1.f / 128.f;
  float wave_speed = 0.f;  ///< max over the materials (mpm::wave_speed)
};

/// dt of the next substep given the previous substep's max |v|.
PS_HD float next_substep_dt(const StepRule& r, float last_max_speed) {
  if (!r.adaptive) return r.dt_max;
  const float v = last_max_speed + r.wave_speed;
  const float dt = r.cfl * r.dx / (v > 1e-6f ? v : 1e-6f);
  const float lo = dt > r.dt_min ? dt : r.dt_min;
  return r.dt_max < lo ? r.dt_max : lo;
}

/// The world's clock, advanced by the backend: substeps done, simulated time,
/// the last substep's dt and max |v| (the next adaptive dt depends on it).
struct StepClock {
  int64_t step = 0;
  double time = 0.0;
  float last_dt = 0.f;
  float last_max_speed = 0.f;
};

struct SubstepResult {
  bool ok = true;
  int64_t bad_index = -1;  ///< lowest particle index that blew up, if !ok
  float max_speed = 0.f;   ///< max |v| after the substep (for the CFL step)
};

/// Time of one phase of a substep, in milliseconds per substep (a moving
/// average over recent batches).
struct PhaseTiming {
  std::string name;
  double ms = 0.0;
};

/// What the Stats panel and `sandbox info` show about a backend.
struct BackendStats {
  std::string device;               ///< "CPU, 4 threads" or the GPU's name
  size_t memory_used = 0;           ///< device memory in use (all processes); 0 on CPU
  size_t memory_total = 0;          ///< device memory; 0 on CPU
  size_t state_bytes = 0;           ///< bytes this backend holds (particles, grid, scratch)
  std::vector<PhaseTiming> phases;  ///< per substep
  double ms_per_substep = 0.0;      ///< whole substep, same averaging
  double rigid_grid_ms =
      0.0;            ///< the rigid-body grid rule's part of the grid update (0: no bodies)
  std::string notes;  ///< e.g. "sorted every 16 substeps; CUDA graph"
};

/// Device-resident particle arrays, for CUDA-GL interop: the renderer maps
/// its vertex buffers and fills them from these pointers on the device, with
/// no host copy. Slot k holds the particle whose host index is perm[k]
/// (backends may reorder particles for locality). All pointers are device
/// pointers, valid until the next substep, host_changed() or backend change.
struct DeviceParticleView {
  size_t count = 0;
  const Vec2* x = nullptr;
  const Vec2* v = nullptr;
  const Mat2* C = nullptr;
  const Mat2* F = nullptr;
  const float* J = nullptr;
  const float* Jp = nullptr;
  const float* vol0 = nullptr;  ///< rest volume (the sprite radius is 0.5 sqrt(vol0))
  const uint8_t* material = nullptr;
  const uint32_t* perm = nullptr;             ///< slot -> host index
  const MaterialParams* materials = nullptr;  ///< device copy of the material table
  int material_count = 0;
  void* stream = nullptr;  ///< cudaStream_t the stepper uses
  int device = 0;          ///< CUDA device ordinal
};

/// Sums over the particles (double accumulation): the window's plots read
/// them several times a second, so a device backend reduces on the device
/// instead of copying every particle back.
struct ParticleTotals {
  double mass = 0.0;
  double momentum[2] = {0.0, 0.0};
  double angular_momentum = 0.0;  ///< about the centre given
  double kinetic_energy = 0.0;
  float max_speed = 0.f;
};

/// A device backend's copy of its stepped particle columns (position,
/// velocity, C, F, J, Jp, PolyPIC's modes) kept on the device: the rewind's
/// snapshots of a CUDA world cost a device-to-device copy instead of a copy
/// to the host. Opaque; its memory goes with the last reference, also after
/// the backend that made it is gone. Only that backend can load it.
class DeviceStateCopy {
 public:
  virtual ~DeviceStateCopy() = default;
  virtual size_t bytes() const = 0;
  virtual size_t count() const = 0;   ///< particles
  virtual bool has_poly() const = 0;  ///< PolyPIC's modes are in it
};

class MpmBackend {
 public:
  virtual ~MpmBackend() = default;
  /// e.g. "cpu (4 threads)"
  virtual std::string name() const = 0;
  /// The host particle arrays. The CPU backend steps them in place.
  virtual void bind(MpmParticles* host) = 0;
  /// The host arrays were replaced or edited: take them as the new state.
  virtual void host_changed() = 0;
  /// Make the host arrays current (no-op on the CPU backend).
  virtual void sync_to_host() = 0;
  virtual SubstepResult substep(const SubstepInput& in) = 0;
  /// Runs up to `count` substeps, choosing each dt by `rule`, and advances
  /// `clock`. Stops after the first substep that blows up (that substep is
  /// counted) and reports it. The default loops over substep(); the CUDA
  /// backend keeps dt and the blow-up flag on the device and reads them back
  /// once per call.
  virtual SubstepResult advance(const SubstepInput& in, int count, const StepRule& rule,
                                StepClock& clock);
  /// Timings and memory for the Stats panel.
  virtual BackendStats stats() const = 0;
  /// Device arrays for interop, or null (CPU backend).
  virtual const DeviceParticleView* device_view() { return nullptr; }
  /// The particles' totals, about `centre`, reduced where the state lives
  /// without copying it to the host. False: the caller syncs and sums (CPU).
  virtual bool device_totals(Vec2 /*centre*/, ParticleTotals& /*out*/) { return false; }
  /// A copy of the stepped columns on the device, or null (the CPU backend;
  /// the host copy is current; out of device memory): the caller copies the
  /// host arrays instead.
  virtual std::shared_ptr<const DeviceStateCopy> save_device_state() { return nullptr; }
  /// Takes a copy this backend made as its state (the host arrays' other
  /// columns must be those of the copy's moment: the caller restores them).
  /// False when the copy is not this backend's or its size differs.
  virtual bool load_device_state(const DeviceStateCopy& /*copy*/) { return false; }
  /// Starts copying the state to host memory in the background (a device
  /// backend: a device-side copy now, the transfer on a copy engine while the
  /// stepping goes on). False: not supported (the caller syncs instead).
  virtual bool checkpoint_begin() { return false; }
  /// The last begun checkpoint has arrived in host memory (no wait).
  virtual bool checkpoint_arrived() { return false; }
  /// Writes a checkpoint into the host arrays (host order; their size must be
  /// the checkpoint's): the last begun, once it arrived, or (`previous`) the
  /// one begun before it, which is complete by then. Host memory only: safe
  /// after a device failure. False when there is no such copy.
  virtual bool checkpoint_restore(bool /*previous*/) { return false; }
  /// A solver for the heat pass's linear system on this backend's device
  /// (sim/mpm/heat.h), owned by the backend, or null (CPU backend).
  virtual HeatLinearSolver* heat_linear_solver() { return nullptr; }
  /// Grid after the last substep's update (node mass and velocity), for the
  /// teaching overlays. Empty before the first substep.
  virtual void read_grid(GridSpec& spec, std::vector<float>& mass,
                         std::vector<Vec2>& velocity) const = 0;
};

/// Backends this build can create. "cpu" always; "cuda" when compiled with
/// nvcc and a device is present.
std::vector<std::string> available_backends();
/// Creates a backend: "cpu" or "cuda" (no self-check). "auto" is resolved one
/// layer up, by choose_auto_backend (sim/selfcheck/verdict.h: CUDA only on a
/// device that passed its self-check), so this layer never depends on the
/// check that builds worlds of it; passing "auto" here throws std::logic_error.
/// threads applies to the CPU backend (<= 0: all cores). Throws on failure.
std::unique_ptr<MpmBackend> make_backend(const std::string& kind, int threads);

}  // namespace ps
