/// The MPM backend interface: the CPU reference and the CUDA stepper both
/// implement it; the world never branches on which one it holds.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include "sim/mpm/mpm_params.h"
#include "sim/mpm/mpm_particles.h"

namespace ps {

/// Grab tool: particles `index[k]` are pulled towards `target + offset[k]`
/// by a critically damped spring of stiffness `stiffness` (1/s^2).
struct GrabInput {
  const uint32_t* index = nullptr;
  const Vec2* offset = nullptr;
  int count = 0;
  Vec2 target{0.f, 0.f};
  float stiffness = 4000.f;
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
};

struct SubstepResult {
  bool ok = true;
  int64_t bad_index = -1;   ///< lowest particle index that blew up, if !ok
  float max_speed = 0.f;    ///< max |v| after the substep (for the CFL step)
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
  /// Grid after the last substep's update (node mass and velocity), for the
  /// teaching overlays. Empty before the first substep.
  virtual void read_grid(GridSpec& spec, std::vector<float>& mass, std::vector<Vec2>& velocity) const = 0;
};

/// Backends this build can create. "cpu" always; "cuda" when compiled with
/// nvcc and a device is present.
std::vector<std::string> available_backends();
/// Creates a backend: "cpu", "cuda" or "auto" (CUDA when present, else CPU).
/// threads applies to the CPU backend (<= 0: all cores). Throws on failure.
std::unique_ptr<MpmBackend> make_backend(const std::string& kind, int threads);

}  // namespace ps
