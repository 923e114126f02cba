/// A scene as a composition (issue #14): a matter world (MPM or DEM, or
/// none) plus rigid bodies, stepped in one order with two-way coupling.
///
/// One coupling step (docs/architecture.md, "Rigid bodies"):
///   1. the bodies' parts at their current pose and velocity go to the matter
///      (MPM: grid colliders; DEM: moving walls after the scene's own walls,
///      one per part in a fixed order, so their contact history carries over);
///   2. the matter takes one step of its own dt (MPM substep, DEM step) and
///      returns, per part, the impulse and angular impulse it gave the body;
///   3. the impulses are applied to the bodies, and Box2D advances by the
///      same dt (gravity, joints, body-body contacts).
/// Momentum that leaves the matter at a body enters the body in the same step.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>
#include "sim/io/json.h"
#include "sim/rigid/rigid_world.h"
#include "sim/scene/simulation.h"

namespace ps {

class CoupledSimulation final : public Simulation {
 public:
  /// matter may be null (a scene of rigid bodies only: then `dt` and
  /// `substeps` set the clock).
  CoupledSimulation(SceneInfo info, std::unique_ptr<Simulation> matter, std::unique_ptr<rigid::RigidWorld> rigid,
                    Vec2 lo, Vec2 hi, double dt, int substeps);

  const SceneInfo& info() const override { return info_; }
  StepStatus step(int substeps) override;
  int substeps_per_frame() const override { return matter_ ? matter_->substeps_per_frame() : substeps_; }
  int64_t step_count() const override { return matter_ ? matter_->step_count() : steps_; }
  double time() const override { return matter_ ? matter_->time() : rigid_->time(); }
  Diagnostics diagnostics() override;
  Diagnostics totals() override;
  std::string backend_name() const override { return matter_ ? matter_->backend_name() : "cpu (Box2D)"; }
  void table(ParticleTable& t) override;
  void bounds(Vec2& lo, Vec2& hi) const override { lo = lo_; hi = hi_; }
  std::vector<std::string> material_names() const override;
  void set_force_list(const SgfList& list) override { if (matter_) matter_->set_force_list(list); }
  MpmWorld* mpm() override { return matter_ ? matter_->mpm() : nullptr; }
  dem::DemWorld* dem() override { return matter_ ? matter_->dem() : nullptr; }
  rigid::RigidWorld* rigid() override { return rigid_.get(); }
  size_t last_interactions() const override { return matter_ ? matter_->last_interactions() : 0; }
  P4ParticleFrame p4_particles() override;
  P4ContactFrame p4_contacts() override;
  std::string take_notice() override;
  /// Rewind is refused: Box2D keeps a contact cache (warm-starting impulses,
  /// island and broad-phase order) that a saved pose and velocity cannot
  /// restore, so a replay would not reproduce the run.
  std::string rewind_unsupported() const override {
    return "not for scenes with rigid bodies (Box2D's contact cache cannot be saved, so a replay would differ)";
  }
  void post_notice(const std::string& s) { if (!s.empty()) notices_ += (notices_.empty() ? "" : "\n") + s; }

  /// The matter's own simulation (MpmSimulation or the DEM one), or null.
  Simulation* matter() { return matter_.get(); }
  /// Impulse the matter gave each body over the last step() (N s, N m s).
  const std::vector<double>& last_body_impulse() const { return body_impulse_; }
  /// Simulated seconds the last step() covered (last_body_impulse / this = mean force).
  double last_step_seconds() const { return last_step_seconds_; }
  /// The scene file's "rigid" section as loaded (options kept when saving).
  const Json& rigid_doc() const { return rigid_doc_; }
  void set_rigid_doc(Json doc) { rigid_doc_ = std::move(doc); }
  /// Wall-clock milliseconds per coupling step spent in the coupling itself
  /// (placing parts, reading impulses, Box2D's step), a moving average.
  double coupling_ms() const { return coupling_ms_; }

 private:
  StepStatus step_mpm(MpmWorld& w);
  StepStatus step_dem(dem::DemWorld& w);
  /// One part's impulse (x, y, angular) to its body, summed per body.
  void give_impulse(int body, const double* j);
  /// The matter's totals plus the dynamic bodies' (the conserved quantities of the coupled system).
  Diagnostics totals_of(Diagnostics matter) const;
  /// Box2D over dt; the coupling's cost (the parts before the matter's step,
  /// the impulses and Box2D after it) goes into the running average.
  void finish_step(double dt, std::chrono::steady_clock::duration coupling_before_box2d);
  SceneInfo info_;
  std::unique_ptr<Simulation> matter_;
  std::unique_ptr<rigid::RigidWorld> rigid_;
  Vec2 lo_, hi_;
  double dt_ = 1.0 / 600.0;
  int substeps_ = 10;
  int64_t steps_ = 0;
  std::string notices_;
  std::vector<double> body_impulse_;  // 3 per body
  double coupling_ms_ = 0.0;
  double last_step_seconds_ = 0.0;
  Json rigid_doc_ = Json::object();
  std::vector<rigid::WorldPart> parts_;
  size_t dem_scene_walls_ = 0;  // the DEM scene's own walls come first; the bodies' parts follow
};

/// Builds a coupled scene: `doc` is the whole scene document and `rigid` its
/// "rigid" object, already removed from `doc`; kind is "mpm", "dem" or
/// "rigid". The matter is built by `build_matter` (build_simulation's own
/// builders). Throws InputError.
std::unique_ptr<Simulation> build_coupled(const Json& doc, const Json& rigid, const std::string& path,
                                          const std::string& kind, std::unique_ptr<Simulation> matter);

/// Gives a scene without bodies an empty rigid world (walls at the domain's
/// edges), so bodies can be added while it runs (the window's Body tool). Its
/// notices carry over.
std::unique_ptr<CoupledSimulation> with_bodies(std::unique_ptr<Simulation> matter);

}  // namespace ps
