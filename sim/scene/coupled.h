/// A scene as a composition: matter (an MPM world, a DEM world,
/// both, or none) plus rigid bodies, stepped in one order with two-way
/// coupling. MPM matter and DEM grains do not touch each other directly (the
/// issue leaves MPM-DEM coupling out); both touch the bodies.
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
///
/// Batched exchange (MPM matter): steps 1-3 run once per batch of K MPM
/// substeps (`rigid.exchange_substeps`, default kDefaultExchangeSubsteps).
/// The parts are placed at the batch's start and move rigidly with the
/// bodies' velocity and spin through its substeps (MpmWorld::colliders_move:
/// each backend moves them per substep, no host exchange), the impulses are
/// summed over the batch, and at its end Box2D takes one step per substep of
/// the batch's time (m steps of its mean dt), the summed impulse spread over
/// them, 1/m before each (the matter's mean force acts on the body through
/// the batch, so the body's path is the one the parts followed; each share
/// makes up what Box2D's float velocities rounded off the earlier ones).
/// Node momentum change + body impulse = 0 over the batch. Batches end where
/// the MPM step count is a multiple of K, so step(n) in any chunks runs the
/// same batches; a batch may span calls (the bodies then trail the matter by
/// up to K - 1 substeps, and the totals count the impulse in transit). K = 1
/// is the per-substep exchange, bit for bit. On the CUDA backend a batch is
/// one stepper call (unless the MPM world splits it: SGF forces, resampling or
/// heat passes, moving handles), so one host synchronisation per K substeps.
///
/// MPM and DEM together: the MPM substep sets the clock. Each coupling step
/// places the parts in both worlds, takes one MPM substep, then DEM steps (of
/// the DEM's own dt) until the DEM clock has caught up with the MPM clock,
/// summing their wall impulses; the bodies get both sums and Box2D advances
/// by the MPM substep's dt. Batched, the grains catch up after each piece of
/// a batch the MPM took in one call, and each DEM step sees the bodies' walls
/// where their rigid motion has them at the step's start (K = 1 holds them
/// where the substep began). The bodies are then per metre of depth (as with
/// MPM matter) and the grains, one layer deep, stand for a slab of one grain
/// per diameter per metre: their impulses on the bodies, and their mass,
/// momentum and energy in the totals, count 1 / (mean grain diameter) times.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>
#include "sim/dem/dem_params.h"
#include "sim/io/json.h"
#include "sim/rigid/rigid_world.h"
#include "sim/scene/simulation.h"

namespace ps {

class CoupledSimulation final : public Simulation {
 public:
  /// matter may be null (a scene of rigid bodies only: then `dt` and
  /// `substeps` set the clock).
  CoupledSimulation(SceneInfo info, std::unique_ptr<Simulation> matter,
                    std::unique_ptr<rigid::RigidWorld> rigid, Vec2 lo, Vec2 hi, double dt,
                    int substeps);
  /// Adds DEM grains beside MPM matter (the scene's "dem" section; `doc` is
  /// kept for saving). Before the first step; matter must be MPM.
  void add_grains(std::unique_ptr<Simulation> grains, Json doc);

  const SceneInfo& info() const override { return info_; }
  StepStatus step(int substeps) override;
  int substeps_per_frame() const override {
    return matter_ ? matter_->substeps_per_frame() : substeps_;
  }
  int64_t step_count() const override {
    return matter_ ? matter_->step_count() : steps_;
  }  // MPM's when both
  double time() const override { return matter_ ? matter_->time() : rigid_->time(); }
  Diagnostics diagnostics() override;
  Diagnostics totals() override;
  std::string backend_name() const override {
    return matter_ ? matter_->backend_name() : "cpu (Box2D)";
  }
  void table(ParticleTable& t) override;
  void bounds(Vec2& lo, Vec2& hi) const override {
    lo = lo_;
    hi = hi_;
  }
  std::vector<std::string> material_names() const override;
  void set_force_list(const SgfList& list) override {
    if (matter_) matter_->set_force_list(list);
  }
  MpmWorld* mpm() override { return matter_ ? matter_->mpm() : nullptr; }
  dem::DemWorld* dem() override {
    return grains_ ? grains_->dem() : matter_ ? matter_->dem() : nullptr;
  }
  rigid::RigidWorld* rigid() override { return rigid_.get(); }
  size_t last_interactions() const override {
    return (matter_ ? matter_->last_interactions() : 0) +
           (grains_ ? grains_->last_interactions() : 0);
  }
  P4ParticleFrame p4_particles() override;
  P4ContactFrame p4_contacts() override;
  std::string take_notice() override;
  /// Rewind is refused: Box2D keeps a contact cache (warm-starting impulses,
  /// island and broad-phase order) that a saved pose and velocity cannot
  /// restore, so a replay would not reproduce the run.
  std::string rewind_unsupported() const override {
    return "not for scenes with rigid bodies (Box2D's contact cache cannot be saved, so a replay would differ)";
  }
  void post_notice(const std::string& s) {
    if (!s.empty()) notices_ += (notices_.empty() ? "" : "\n") + s;
  }

  /// The matter's own simulation (MpmSimulation or the DEM one), or null.
  Simulation* matter() { return matter_.get(); }
  /// The DEM grains' own simulation beside MPM matter, or null.
  Simulation* grains() { return grains_.get(); }
  /// The scene file's "dem" section as loaded (null Json when none).
  const Json& grains_doc() const { return grains_doc_; }
  /// 1 / (mean grain diameter) with MPM and DEM together (see above), else 1.
  double grain_depth_scale() const { return grain_scale_; }
  /// Impulse the matter gave each body (N s, N m s) in the exchanges of the
  /// last step(): the batches it closed (zero when it closed none).
  const std::vector<double>& last_body_impulse() const { return body_impulse_; }
  /// Simulated seconds those exchanges covered (last_body_impulse / this =
  /// mean force; 0 when the last step() closed no batch).
  double last_step_seconds() const { return last_step_seconds_; }
  /// The same for the latest step() that closed an exchange, kept through the
  /// calls that close none (a window stepping a few substeps per call under its
  /// frame budget closes a batch in only some of them): what a readout of the
  /// matter's force on the bodies shows. Empty / 0 until one has closed.
  const std::vector<double>& last_exchange_impulse() const { return exchange_impulse_; }
  double last_exchange_seconds() const { return exchange_seconds_; }
  /// The scene file's "rigid" section as loaded (options kept when saving).
  const Json& rigid_doc() const { return rigid_doc_; }
  void set_rigid_doc(Json doc) { rigid_doc_ = std::move(doc); }
  /// Wall-clock milliseconds per coupling step spent in the coupling itself
  /// (placing parts, reading impulses, Box2D's step), a moving average; per
  /// MPM substep when batched.
  double coupling_ms() const { return coupling_ms_; }

  /// MPM substeps per rigid-body exchange (the batch length K, >= 1). Scenes
  /// of DEM matter or bodies alone exchange every step whatever it says.
  int exchange_substeps() const { return exchange_substeps_; }
  /// Takes effect from the current batch on (it ends at the next multiple of K).
  void set_exchange_substeps(int k) { exchange_substeps_ = k < 1 ? 1 : k; }
  /// 16 MPM substeps: a batch then lasts 1.6 ms at the shipped scenes' dt of
  /// 1e-4 s, short against a floating body's response time (docs/rigid.md,
  /// "Batched exchange"), and one batch is one CUDA stepper call between two
  /// particle reorders (every 16 substeps).
  static constexpr int kDefaultExchangeSubsteps = 16;
  /// A batch is open: its parts are placed and its impulses not yet given
  /// to the bodies (a step() ended inside it).
  bool batch_open() const { return batch_open_; }

 private:
  static constexpr int kMaxGrainSteps = 10000;  ///< DEM steps in one MPM substep, at most
  /// `substeps` MPM substeps in batches (see the file comment).
  StepStatus step_mpm(MpmWorld& w, dem::DemWorld* grains, int substeps);
  /// Places the parts (colliders, the grains' walls) and zeroes the impulses.
  void open_batch(MpmWorld& w, dem::DemWorld* grains);
  /// DEM steps until the grains' clock has caught up with the MPM's; chunk:
  /// the MPM substeps just taken.
  StepStatus grains_catch_up(MpmWorld& w, dem::DemWorld& grains, int chunk);
  /// The batch's impulses to the bodies; Box2D over the batch's substeps.
  void close_batch(MpmWorld& w);
  /// Adds the open batch's impulse not yet given to dynamic bodies to the
  /// totals' momentum and angular momentum (nothing when no batch is open).
  void add_pending(Diagnostics& d);
  StepStatus step_dem(dem::DemWorld& w);
  /// Every part as a moving wall of w after its scene walls (its velocity
  /// field about the body's centre of mass); wall reactions on.
  void place_dem_walls(dem::DemWorld& w);
  /// The DEM's own totals, times grain_scale_.
  Diagnostics grain_totals(bool with_hash);
  /// One part's impulse (x, y, angular) to its body, summed per body.
  void give_impulse(int body, const double* j);
  /// The matter's totals plus the dynamic bodies' (the conserved quantities of the coupled system).
  Diagnostics totals_of(Diagnostics matter) const;
  /// Box2D over dt; the coupling's cost (the parts before the matter's step,
  /// the impulses and Box2D after it) goes into the running average.
  void finish_step(double dt, std::chrono::steady_clock::duration coupling_before_box2d);
  /// Adds one coupling cost (ms per step or substep) to the running average.
  void note_coupling_ms(double ms);
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
  std::vector<double> exchange_impulse_;  // last_exchange_impulse()
  double exchange_seconds_ = 0.0;
  void note_exchange() {
    if (!(last_step_seconds_ > 0.0)) return;
    exchange_impulse_ = body_impulse_;
    exchange_seconds_ = last_step_seconds_;
  }
  Json rigid_doc_ = Json::object();
  std::vector<rigid::WorldPart> parts_;
  size_t dem_scene_walls_ = 0;  // the DEM scene's own walls come first; the bodies' parts follow
  std::unique_ptr<Simulation> grains_;  // DEM beside MPM matter_ (null otherwise)
  Json grains_doc_;
  double grain_scale_ = 1.0;
  std::vector<double> grain_impulse_;  // 3 per part: the DEM steps of one batch
  int exchange_substeps_ = kDefaultExchangeSubsteps;
  // The open batch (MPM matter): where and when its parts were placed.
  bool batch_open_ = false;
  int64_t batch_step0_ = 0;
  double batch_t0_ = 0.0;
  std::chrono::steady_clock::duration
      batch_cost_{};  // the coupling's own time in this batch so far
  std::vector<dem::DemWall>
      placed_walls_;             // the grains' body walls as placed (moved per DEM step when K > 1)
  double closed_seconds_ = 0.0;  // simulated time of the batches the current step() closed
  // Per body, 3 each: a closing batch's impulse, and what Box2D has taken of it so far.
  std::vector<double> batch_body_J_, batch_taken_;
  std::vector<char> batch_has_part_;  // per body: it has parts in the closing batch
};

/// Builds a coupled scene: `doc` is the whole scene document and `rigid` its
/// "rigid" object, already removed from `doc`; kind is "mpm", "dem" or
/// "rigid". The matter is built by `build_matter` (build_simulation's own
/// builders); `grains` (with its "dem" section `grains_doc`), DEM grains
/// beside MPM matter, or null. Throws InputError.
std::unique_ptr<Simulation> build_coupled(const Json& doc, const Json& rigid,
                                          const std::string& path, const std::string& kind,
                                          std::unique_ptr<Simulation> matter,
                                          std::unique_ptr<Simulation> grains = nullptr,
                                          const Json& grains_doc = Json());

/// Step 1 for MPM matter: the bodies' parts at their current pose as the
/// grid rule sees them (RigidWorld::mpm_colliders into w.colliders), with the
/// rule's Coulomb friction off when every material of `w` is a fluid (a
/// fluid carries no shear stress at rest, so it cannot hold a body by
/// friction; see coupled.cpp).
void place_mpm_colliders(const rigid::RigidWorld& rw, MpmWorld& w);

/// Gives a scene without bodies an empty rigid world (walls at the domain's
/// edges), so bodies can be added while it runs (the window's Body tool). Its
/// notices carry over.
std::unique_ptr<CoupledSimulation> with_bodies(std::unique_ptr<Simulation> matter);

}  // namespace ps
