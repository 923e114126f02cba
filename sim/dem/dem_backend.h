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
  double time = 0.0;  ///< time at the start of the step (load ramps)
  int64_t step = 1;   ///< 1-based index of the step being computed
  PointForce point;   ///< attract/repel: acceleration strength (1 - r/radius)
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
  /// The lowest index of the bonds that broke during this step (the first in
  /// (i, j) order), and why it broke; -1 when none did.
  int64_t first_broken = -1;
  BondBreak first_broken_mode = BondBreak::None;
  size_t contacts = 0;  ///< unbonded particle-particle contacts this step
  size_t wall_contacts = 0;
};

/// An unbonded contact as the last step computed it.
struct DemContact {
  uint32_t i = 0;  ///< particle index
  uint32_t j = 0;  ///< other particle index (i < j), or wall index for wall contacts
  Vec2d point;     ///< contact point
  Vec2d f_i;       ///< force on i (on j: -f_i)
  /// Moments on i and on j (about their centres; for a wall contact t_j is
  /// the moment on the wall about its reference point c).
  double t_i = 0.0, t_j = 0.0;
  double overlap = 0.0;
  double xi = 0.0, mr = 0.0;  ///< history (ContactHistory)
};

/// The contact history a step hands to the next (Mindlin and rolling
/// springs): last step's contacts with their CSR starts by particle. The
/// rewind (sim/scene/rewind.h) saves and restores it for exact replays.
struct DemHistory {
  std::vector<DemContact> pairs, walls;
  std::vector<uint32_t> pair_start, wall_start;
};

/// Device-resident DEM state, for the window's CUDA-GL interop
/// (render/cuda/particle_interop.h): the renderer fills its vertex buffers
/// from these on the device, with no host copy. Particles are in host index
/// order, bonds in the host's (i, j) order. Device pointers, valid until the
/// next step, host_changed() or backend change.
struct DemDeviceView {
  size_t count = 0;  ///< particles
  const Vec2d* x = nullptr;
  const Vec2d* v = nullptr;
  const double* theta = nullptr;
  const double* omega = nullptr;
  const double* radius = nullptr;
  const double* mass = nullptr;
  const double* inertia = nullptr;
  const uint8_t* material = nullptr;
  const uint16_t* group = nullptr;
  size_t bond_count = 0;
  const uint32_t* bond_i = nullptr;
  const uint32_t* bond_j = nullptr;
  const double* length0 = nullptr;
  const double* shear_disp = nullptr;
  const double* bend_angle = nullptr;
  const uint8_t* broken = nullptr;
  const uint8_t* mode = nullptr;  ///< BondBreak
  const int64_t* break_step = nullptr;
  const float* sigma = nullptr;  ///< as stored by the last step
  const float* tau = nullptr;
  const Vec2d* force = nullptr;
  /// Each particle's bonds: as i, bond_start[p] .. bond_start[p + 1] (bonds
  /// are sorted by i); as j, bond_j_list[bond_j_start[p] .. bond_j_start[p + 1]].
  const uint32_t* bond_start = nullptr;
  const uint32_t* bond_j_start = nullptr;
  const uint32_t* bond_j_list = nullptr;
  void* stream = nullptr;  ///< cudaStream_t the stepper uses (null: the legacy default stream)
  int device = 0;          ///< CUDA device ordinal
};

/// Sums over the particles in double (the window's plots: DemWorld::totals).
struct DemTotals {
  double mass = 0.0;
  double momentum[2] = {0.0, 0.0};
  double angular_momentum = 0.0;   ///< sum m (x - centre) x v + I omega
  double kinetic_energy = 0.0;     ///< translational plus rotational
  double rotational_energy = 0.0;  ///< sum I omega^2 / 2
  double max_speed = 0.0;
};

class DemBackend {
 public:
  virtual ~DemBackend() = default;
  virtual std::string name() const = 0;
  /// The host state, taken as the backend's state at once (a device backend
  /// uploads it). The CPU backend steps it in place. May throw (out of device
  /// memory); the world then keeps its old backend.
  virtual void bind(DemParticles* particles, DemBonds* bonds) = 0;
  /// The host arrays were replaced or edited: take them as the new state
  /// (contact history is dropped when particles were added or removed).
  virtual void host_changed() = 0;
  /// Make the host arrays current (no-op on the CPU backend).
  virtual void sync_to_host() = 0;
  virtual DemStepResult step(const DemStepInput& in) = 0;
  /// Unbonded particle-particle and particle-wall contacts of the last step.
  virtual void read_contacts(std::vector<DemContact>& pairs,
                             std::vector<DemContact>& walls) const = 0;
  /// Copies the contact history; false when this backend cannot (CUDA: a
  /// restored state then restarts its springs, as after any host edit).
  virtual bool save_history(DemHistory&) const { return false; }
  /// Takes a saved history for the state just given through host_changed().
  virtual bool load_history(const DemHistory&) { return false; }
  /// Device arrays for interop, or null (CPU backend).
  virtual const DemDeviceView* device_view() { return nullptr; }
  /// The particles' totals about `centre`, reduced where the state lives,
  /// without copying it to the host. False: the caller syncs and sums.
  virtual bool device_totals(Vec2d /*centre*/, DemTotals& /*out*/) { return false; }
  /// The periodic checkpoint in the background (as MpmBackend's, with
  /// sim/core/checkpoint.h on the world's side): starts copying the state the
  /// steps change (x, v, theta, omega and the bonds' state) to host memory
  /// while stepping goes on. False: not supported (the caller syncs).
  virtual bool checkpoint_begin() { return false; }
  /// The last begun checkpoint has arrived in host memory (no wait).
  virtual bool checkpoint_arrived() { return false; }
  /// Writes a checkpoint into the host arrays (their sizes must be the
  /// checkpoint's): the last begun, once it arrived, or (`previous`) the one
  /// begun before it. Host memory only: safe after a device failure.
  virtual bool checkpoint_restore(bool /*previous*/) { return false; }
};

/// Creates a backend: "cpu" or "cuda" (no self-check). "auto" is resolved one
/// layer up, by choose_auto_backend (sim/selfcheck/verdict.h: CUDA only on a
/// device that passed its self-check), so this layer never depends on the
/// check that builds worlds of it; passing "auto" here throws std::logic_error.
/// threads applies to the CPU backend (<= 0: all cores). Throws on failure.
std::unique_ptr<DemBackend> make_dem_backend(const std::string& kind, int threads);

}  // namespace dem
}  // namespace ps
