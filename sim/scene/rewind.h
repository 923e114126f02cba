/// Rewind: a memory-bounded ring of saved
/// states plus a log of what the user did to the world, so a run can be
/// scrubbed back instantly and played forward again exactly.
///
/// Recording. The window calls, at its one sync point, apply() for every edit
/// that has an action kind (preset, paint, SGF list, a whole-state keyframe)
/// and note_controls() after its edits (a changed controls image: parameters,
/// grab, point force, heat lamp; Simulation::controls); then it steps through
/// step(), which records each call's substep count and takes a snapshot every
/// `interval()` substeps. Every action carries the step count it was applied
/// at: it acts before step `step + 1`.
///
/// Playback. seek(step) restores the nearest snapshot at or before `step`
/// (or steps on from the current state when that is shorter) and re-simulates
/// to exactly `step`, replaying the recorded actions at their steps and the
/// recorded calls' substep counts. The state at a step is the state before
/// that step's actions. The CPU backends are deterministic, so the replayed
/// state hashes equal the recorded run's (tests/sim/scene/test_rewind.cpp).
///
/// Branches. An action recorded while the simulation is behind the head (after
/// a seek back) starts a new branch: the recorded future after that step
/// (actions, calls, snapshots) is discarded; so is a live step() there.
///
/// Memory. K starts at one frame (Simulation::substeps_per_frame), or at as
/// many frames as keep the snapshot copies to about 4 MB per frame on average.
/// Snapshots and the log together stay within budget() bytes (the
/// step-0 snapshot is always kept, whatever it costs). A snapshot that does
/// not fit drops the oldest snapshot whose neighbours are at most 2 K substeps
/// apart (K: the interval); when none is, K doubles. So the ring always spans
/// the whole recording, at a spacing that grows with its length, and a seek
/// re-simulates at most about 2 K substeps.
///
/// Scenes whose Simulation::rewind_unsupported() is not empty (rigid bodies)
/// are not recorded: reset() returns false and apply() only applies.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include "sim/scene/simulation.h"

namespace ps {

/// The rewind's default memory budget for a machine with this much physical
/// memory: a quarter of it, at most 512 MiB (a classroom laptop of 4 to 8 GB
/// keeps room for the window, the scene and the rest); 512 MiB when unknown (0).
size_t default_rewind_budget_for(size_t physical_bytes);
/// default_rewind_budget_for(this machine's physical memory).
size_t default_rewind_budget();

/// One thing the user did to the world, with the step count it was applied at.
struct RewindAction {
  enum class Kind : uint8_t { Controls, Preset, Paint, ForceList, Keyframe };
  Kind kind = Kind::Controls;
  int64_t step = 0;
  std::string controls;                 ///< Controls: the image after the change
  Preset preset = Preset::Translation;  ///< Preset: MpmWorld::apply_preset(preset, speed)
  float speed = 1.f;
  std::vector<Vec2>
      sites;  ///< Paint: MpmWorld::add_particles(sites, material, spacing, velocity, group)
  int material = 0;
  float spacing = 0.f;
  Vec2 velocity{0.f, 0.f};
  uint16_t group = 0;
  std::shared_ptr<const SgfList>
      list;  ///< ForceList: Simulation::set_force_list (empty list: none)
  std::shared_ptr<const SimState>
      state;  ///< Keyframe: the whole state right after an edit with no kind of its own
  size_t bytes() const;
};
const char* rewind_action_name(RewindAction::Kind k);

/// Applies an action to a simulation (live and in replays: one code path).
void perform_action(Simulation& sim, const RewindAction& a);

struct RewindStats {
  size_t snapshots = 0;
  size_t snapshot_bytes = 0;
  size_t log_bytes = 0;  ///< actions (keyframes included) and recorded calls
  size_t budget = 0;
  int64_t interval = 0;  ///< K: substeps between snapshots
  size_t actions = 0;
  int64_t branches = 0;  ///< futures discarded since reset()
};

class Rewind {
 public:
  explicit Rewind(size_t budget_bytes = default_rewind_budget()) : budget_(budget_bytes) {}

  /// Starts a new recording at the simulation's current state (the first
  /// snapshot). False when the scene cannot be rewound (why_off() says why).
  bool reset(Simulation& sim);
  /// Stops recording (a scene without saved states, a backend switch pending).
  void off(const std::string& why);
  bool active() const { return active_; }
  const std::string& why_off() const { return why_off_; }
  void set_budget(size_t bytes);
  size_t budget() const { return budget_; }

  // Recording.
  /// Applies `a` at the current step and records it (a branch when behind
  /// the head). Without a recording it only applies.
  void apply(Simulation& sim, RewindAction a);
  /// Records the controls image when it differs from the one after the last
  /// step or record. True when it recorded.
  bool note_controls(Simulation& sim);
  /// Records the whole state now as a Keyframe action (an edit the log has no kind for).
  void keyframe(Simulation& sim);
  /// A live step(n): records the call and takes a snapshot when due. Behind
  /// the head it first discards the recorded future (a branch).
  StepStatus step(Simulation& sim, int n);
  /// Marks the last recorded call as the end of a displayed frame: frames are
  /// what prev_boundary / next_boundary step between (a frame may take
  /// several calls when the window's time budget splits it).
  void end_frame();

  // Playback.
  int64_t start() const { return start_; }  ///< first recorded step
  int64_t head() const { return head_; }    ///< last recorded step
  /// Recorded steps lie ahead of the simulation (after a seek back).
  bool behind_head(const Simulation& sim) const { return active_ && sim.step_count() < head_; }
  /// Restores the nearest snapshot at or before `step` unless stepping on from
  /// the current state is shorter; returns the step the simulation is at.
  int64_t restore_for(Simulation& sim, int64_t step);
  /// Steps along the recorded calls towards `target` (at most the head): the
  /// actions at the current step, then one recorded call (or the part of it
  /// up to `target`). Returns the status; `steps` gets the substeps done.
  StepStatus replay_call(Simulation& sim, int64_t target, int& steps);
  /// restore_for + replay_call until the simulation is at `step` (clamped to
  /// [start, head]). Returns the step reached (less on a blow-up).
  int64_t seek(Simulation& sim, int64_t step);
  /// How many of the log's actions the current state holds. With
  /// seek_applied a caller that noted it gets that exact state back, also
  /// when several states share one step (edits made between two frames in
  /// which a comparison pane took no substep).
  size_t applied() const { return cursor_; }
  /// seek(step), then the recorded actions at `step` among the first
  /// `applied` of the log (a state holding more of them than that is
  /// restored from a snapshot first). Returns the step reached.
  int64_t seek_applied(Simulation& sim, int64_t step, size_t applied);
  /// The recorded frame ends (end_frame) before and after `step`; the start
  /// and the head when there is none.
  int64_t prev_boundary(int64_t step) const;
  int64_t next_boundary(int64_t step) const;
  std::vector<int64_t> snapshot_steps() const;
  const std::vector<RewindAction>& actions() const { return actions_; }
  RewindStats stats() const;
  /// Bumped whenever playback changed the world's controls or state from
  /// outside the caller's edits (a restore, a replayed action): the window
  /// then re-reads its panel copies.
  uint64_t generation() const { return generation_; }

 private:
  struct Snap {
    int64_t step = 0;
    std::shared_ptr<const SimState> state;
    size_t bytes = 0;
  };
  struct Call {
    int64_t start = 0;
    int32_t n = 0;
    bool frame_end = false;  ///< the window showed the state after this call
  };
  void branch(Simulation& sim);
  /// Restores the nearest snapshot at or before `step` (no shortcut).
  void restore_snapshot(Simulation& sim, int64_t step);
  /// Applies the recorded actions at the current step not yet in the state
  /// (only those among the log's first `limit`).
  void apply_pending(Simulation& sim, size_t limit = SIZE_MAX);
  void record(Simulation& sim, RewindAction a);
  void take_snapshot(Simulation& sim);
  void trim();
  size_t total_bytes() const { return snap_bytes_ + log_bytes_; }
  size_t first_action_at(int64_t step) const;

  bool active_ = false;
  std::string why_off_ = "no scene";
  size_t budget_;
  int64_t start_ = 0, head_ = 0;
  int64_t interval_ = 1;
  std::vector<Snap> snaps_;            ///< sorted by step; snaps_[0] is the start
  std::vector<RewindAction> actions_;  ///< sorted by step, in applied order
  std::vector<Call> calls_;            ///< contiguous: calls_[k].start + n == calls_[k + 1].start
  size_t cursor_ = 0;                  ///< actions_[0, cursor_) are in the current state
  std::string controls_;               ///< the controls image after the last step or record
  size_t snap_bytes_ = 0, log_bytes_ = 0;
  int64_t branches_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace ps
