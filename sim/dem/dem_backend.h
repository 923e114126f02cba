/// The DEM backend interface: the CPU reference and the CUDA stepper
/// implement it; the world never branches on which one it holds.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include "sim/dem/dem_params.h"
#include "sim/dem/dem_particles.h"
#include "sim/mpm/mpm_params.h"

namespace ps {
namespace dem {

/// Grab tool: particles `index[k]` are pulled towards `target + offset[k]`
/// by a critically damped spring: a = stiffness d - 2 sqrt(stiffness) v.
struct DemGrab {
  const uint32_t* index = nullptr;
  const Vec2d* offset = nullptr;
  int count = 0;
  Vec2d target{0.0, 0.0};
  double stiffness = 4000.0;  ///< 1/s^2
};

struct DemStepInput {
  DemSolverParams solver;
  DemBondParams bond;
  const DemMaterial* materials = nullptr;
  int material_count = 0;
  const DemWall* walls = nullptr;
  int wall_count = 0;
  const DemLoad* loads = nullptr;
  int load_count = 0;
  double dt = 1e-5;
  double time = 0.0;     ///< time at the start of the step (load ramps)
  int64_t step = 1;      ///< 1-based index of the step being computed
  PointForce point;      ///< attract/repel: acceleration strength (1 - r/radius)
  DemGrab grab;
  bool use_fext = true;  ///< add particles.fext to the forces this step
  /// The scene's box (DemWorld::domain_min/max): a device backend's cell grid
  /// covers it (and the particles as last seen on the host).
  Vec2d domain_lo{0.0, 0.0}, domain_hi{1.0, 1.0};
  /// Optional output, 3 doubles per wall: Fx, Fy and the torque about the
  /// wall's c of the forces the particles exert on the wall this step
  /// (normal, tangential and rolling). When non-null the backend zeroes and
  /// fills it (the CPU deterministically, in particle index order). Per
  /// contact the wall receives exactly the opposite of the particle's force.
  double* wall_reaction = nullptr;
};

struct DemStepResult {
  bool ok = true;
  int64_t bad_index = -1;  ///< lowest particle index that blew up, if !ok
  double max_speed = 0.0;  ///< max |v| after the step
  int bonds_broken = 0;    ///< bonds that broke during this step
  size_t contacts = 0;     ///< unbonded particle-particle contacts this step
  size_t wall_contacts = 0;
};

/// An unbonded contact as the last step computed it.
struct DemContact {
  uint32_t i = 0;       ///< particle index
  uint32_t j = 0;       ///< other particle index (i < j), or wall index for wall contacts
  Vec2d point;          ///< contact point
  Vec2d f_i;            ///< force on i (on j: -f_i)
  /// Moments on i and on j (about their centres; for a wall contact t_j is
  /// the moment on the wall about its reference point c).
  double t_i = 0.0, t_j = 0.0;
  double overlap = 0.0;
  double xi = 0.0, mr = 0.0;    ///< history (ContactHistory)
};

/// The contact history a step hands to the next (Mindlin and rolling
/// springs): last step's contacts with their CSR starts by particle. The
/// rewind (sim/scene/rewind.h) saves and restores it for exact replays.
struct DemHistory {
  std::vector<DemContact> pairs, walls;
  std::vector<uint32_t> pair_start, wall_start;
};

class DemBackend {
 public:
  virtual ~DemBackend() = default;
  virtual std::string name() const = 0;
  /// The host state. The CPU backend steps it in place.
  virtual void bind(DemParticles* particles, DemBonds* bonds) = 0;
  /// The host arrays were replaced or edited: take them as the new state
  /// (contact history is dropped when particles were added or removed).
  virtual void host_changed() = 0;
  /// Make the host arrays current (no-op on the CPU backend).
  virtual void sync_to_host() = 0;
  virtual DemStepResult step(const DemStepInput& in) = 0;
  /// Unbonded particle-particle and particle-wall contacts of the last step.
  virtual void read_contacts(std::vector<DemContact>& pairs, std::vector<DemContact>& walls) const = 0;
  /// Copies the contact history; false when this backend cannot (CUDA: a
  /// restored state then restarts its springs, as after any host edit).
  virtual bool save_history(DemHistory&) const { return false; }
  /// Takes a saved history for the state just given through host_changed().
  virtual bool load_history(const DemHistory&) { return false; }
};

/// Creates a backend: "cpu" or "cuda" (no self-check). "auto" is resolved one
/// layer up, by choose_auto_backend (sim/selfcheck/verdict.h: CUDA only on a
/// device that passed its self-check), so this layer never depends on the
/// check that builds worlds of it; passing "auto" here throws std::logic_error.
/// threads applies to the CPU backend (<= 0: all cores). Throws on failure.
std::unique_ptr<DemBackend> make_dem_backend(const std::string& kind, int threads);

}  // namespace dem
}  // namespace ps
