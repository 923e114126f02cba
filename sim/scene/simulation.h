/// What the runner and the window need from any loaded scene, MPM or DEM:
/// step, diagnostics, a particle table for dumps and drawing.
#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>
#include "sim/core/particle_table.h"
#include "sim/io/p4.h"
#include "sim/mpm/mpm_world.h"
#include "sim/scene/scene.h"
#include "sim/sgf/sgf.h"

namespace ps {

namespace dem {
class DemWorld;
}
namespace rigid {
class RigidWorld;
}

/// A saved state of a Simulation (save_state / load_state; the rewind,
/// sim/scene/rewind.h). Opaque to callers.
struct SimState {
  virtual ~SimState() = default;
  /// Bytes the state holds (the rewind's budget counts these).
  virtual size_t bytes() const = 0;
  int64_t step = 0;  ///< the step count it was saved at
};

class Simulation {
 public:
  virtual ~Simulation() = default;
  virtual const SceneInfo& info() const = 0;
  virtual StepStatus step(int substeps) = 0;
  virtual int substeps_per_frame() const = 0;
  virtual int64_t step_count() const = 0;
  virtual double time() const = 0;
  virtual Diagnostics diagnostics() = 0;
  /// The same totals without the state hash (hash = 0), where that is
  /// cheaper: the window's plots sample them 20 times a second.
  virtual Diagnostics totals() { return diagnostics(); }
  virtual std::string backend_name() const = 0;
  virtual void table(ParticleTable& t) = 0;
  /// Domain rectangle for framing the view.
  virtual void bounds(Vec2& lo, Vec2& hi) const = 0;
  /// Material names, indexed like ParticleTable::material.
  virtual std::vector<std::string> material_names() const = 0;
  /// Timed body forces (SGF list) applied from the next step on; an empty
  /// list removes them.
  virtual void set_force_list(const SgfList& list) = 0;
  /// The MPM world, when this is an MPM scene (the window's panels use it).
  virtual MpmWorld* mpm() { return nullptr; }
  /// The DEM world, when this is a DEM scene.
  virtual dem::DemWorld* dem() { return nullptr; }
  /// The rigid bodies, when the scene has any (sim/scene/coupled.h).
  virtual rigid::RigidWorld* rigid() { return nullptr; }
  // What callers ask of any simulation; the world-type branches are here
  // (simulation.cpp), not in the window or the runner.
  /// The blow-up that stopped stepping (its message), or null while it runs.
  const StepStatus* halted();
  /// What the user can change before a reset after a blow-up.
  const char* halt_advice();
  /// Whether a device backend failed and its world went on on the CPU.
  bool fell_back_to_cpu();
  /// Whether a world steps on a device that can hand the renderer its
  /// particles directly (the CUDA-GL interop).
  bool has_device_view();
  /// The attract / repel tool's force, for every world that has particles.
  void set_point_force(const PointForce& f);
  /// The precision its particles are written with in P4P (doubles with DEM grains, else floats).
  P4Precision p4_precision();
  /// ", APIC transfer, quadratic kernel" for MPM matter, else "".
  std::string scheme_note();
  /// The MPM stepper's time per phase and its notes (false: no MPM matter).
  bool step_phases(BackendStats& out);
  /// Whether its work is counted in pairwise interactions per step (DEM) or
  /// per substep of the grid (MPM).
  bool counts_interactions() { return dem() != nullptr; }
  /// Pairwise interactions the last step computed (DEM contacts, wall contacts
  /// and intact bonds; 0 for MPM, whose particles interact through the grid).
  virtual size_t last_interactions() const { return 0; }
  /// Particle state in the original tool's P4P form, and contacts as P4C
  /// (empty for MPM, whose particles never touch directly).
  virtual P4ParticleFrame p4_particles() = 0;
  virtual P4ContactFrame p4_contacts() = 0;
  /// Messages for the user since the last call, joined by newlines ("" when
  /// none): the auto backend's choice when it fell on the CPU for a reason,
  /// and a run-time fallback from a failed device backend to the CPU (the
  /// world then continues from its last preserved state; docs/reliability.md).
  /// The runner prints them to stderr, the window shows them in its status line.
  virtual std::string take_notice() { return ""; }
  // Saved states (sim/scene/rewind.h).
  /// "" when save_state / load_state restore this scene exactly on the CPU
  /// backend (the steps after a restore are bit-identical), else why not.
  virtual std::string rewind_unsupported() const {
    return "this kind of scene keeps no saved states";
  }
  /// The whole state: particles, clock, parameters, tools, SGF hook and
  /// runtime counters (null when unsupported).
  virtual std::unique_ptr<SimState> save_state() { return nullptr; }
  /// Restores a state from save_state() of this simulation.
  virtual void load_state(const SimState&) {}
  /// The controls image (MpmWorld::controls, DemWorld::controls): what the
  /// user changes between steps that is not particle data ("" when none).
  virtual std::string controls() const { return ""; }
  virtual void set_controls(const std::string&) {}
};

class MpmSimulation final : public Simulation {
 public:
  explicit MpmSimulation(MpmScene scene) : scene_(std::move(scene)) {}
  const SceneInfo& info() const override { return scene_.info; }
  StepStatus step(int substeps) override { return scene_.world->step(substeps); }
  int substeps_per_frame() const override { return scene_.world->solver.substeps; }
  int64_t step_count() const override { return scene_.world->step_count(); }
  double time() const override { return scene_.world->time(); }
  Diagnostics diagnostics() override { return scene_.world->diagnostics(); }
  Diagnostics totals() override { return scene_.world->totals(); }
  std::string backend_name() const override { return scene_.world->backend_name(); }
  void table(ParticleTable& t) override;
  void bounds(Vec2& lo, Vec2& hi) const override;
  std::vector<std::string> material_names() const override { return scene_.world->material_names; }
  void set_force_list(const SgfList& list) override;
  MpmWorld* mpm() override { return scene_.world.get(); }
  P4ParticleFrame p4_particles() override;
  P4ContactFrame p4_contacts() override;
  std::string take_notice() override { return scene_.world->take_notice(); }
  MpmScene& scene() { return scene_; }
  std::string rewind_unsupported() const override { return ""; }
  std::unique_ptr<SimState> save_state() override;
  void load_state(const SimState& s) override;
  std::string controls() const override { return scene_.world->controls(); }
  void set_controls(const std::string& image) override { scene_.world->set_controls(image); }

 private:
  MpmScene scene_;
};

/// Loads any scene file (by path or built-in name), applies overrides and
/// creates the backend ("cpu", "cuda", "auto": what the program's installed
/// rule chooses, sim/scene/auto_backend.h; sandbox installs the CUDA
/// self-check gate, sim/selfcheck/verdict.h). A scene's "sgf" folder is
/// loaded and applied. Throws InputError for bad input and
/// std::runtime_error for an unavailable backend.
std::unique_ptr<Simulation> load_simulation(const std::string& name_or_path,
                                            const std::vector<std::string>& overrides,
                                            const std::string& backend, int threads);
/// The scene refined k times (`sandbox bench --sizes k`, `run --refine k`,
/// `gui --refine k`): MPM grid x k, particle spacing and dt / k (same particles
/// per cell, same CFL number); DEM particle radius / k (dt follows the stable
/// estimate, or / k when fixed). Particles grow about k^2. Shipped SGF lists
/// name the unrefined IDs and are dropped. k = 1 is load_simulation.
std::unique_ptr<Simulation> load_refined(const std::string& name,
                                         const std::vector<std::string>& sets, int k,
                                         const std::string& backend, int threads);
/// What load_simulation does once the document is read and overridden: the
/// scene's "sgf" folder (relative to `path`) is loaded and applied, then the
/// world is built (build_simulation). `sandbox compare` builds each pane so.
std::unique_ptr<Simulation> simulation_from_document(Json doc, const std::string& path,
                                                     const std::string& backend, int threads);
/// A DEM world behind the Simulation interface (what build_simulation makes
/// of a DEM scene; verification cases compose it with bodies in code).
std::unique_ptr<Simulation> make_dem_simulation(SceneInfo info,
                                                std::unique_ptr<dem::DemWorld> world);
/// Builds the world of a document whose overrides are applied ("mpm" / "dem").
std::unique_ptr<Simulation> build_simulation(const Json& doc, const std::string& path,
                                             const std::string& kind, const std::string& backend,
                                             int threads);

}  // namespace ps
