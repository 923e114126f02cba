/// Side by side: 2 to 4 panes, each a Simulation
/// built from the same scene document with its own settings ("--vary"
/// overrides), stepped in lockstep, with the conserved quantities recorded per
/// pane per frame. No GL: `sandbox compare` draws the panes into PNGs and the
/// window will draw them side by side.
///
/// Independence: every pane owns a deep copy of the document, its world, its
/// backend and its force hook; nothing mutable is shared, so a setting applied
/// to one pane never reaches another.
///
/// Lockstep: the first pane is the clock. A frame steps it its substeps per
/// frame (or the count given), then every other pane steps to the first
/// pane's simulated time: a fixed-dt pane takes round(left / dt) substeps at
/// once (so panes with the same dt take the same substeps), a CFL-adaptive MPM
/// pane one substep at a time while half its next dt still fits. Panes with
/// different dt therefore agree in time to half a substep; a pane whose world
/// gives no dt (rigid bodies only) takes the first pane's substep count. SGF
/// lists count substeps (1-based steps), so with different dt they act at
/// different simulated times. Panes whose time steps are more than
/// kMaxDtRatio apart are refused when built; a catch-up limit
/// (set_catch_up_limit) bounds one call's work, the clock waiting for a
/// pane left behind.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include "sim/core/step_status.h"
#include "sim/mpm/mpm_world.h"
#include "sim/scene/rewind.h"
#include "sim/scene/simulation.h"

namespace ps {

/// One "--vary path=a,b,c": a setting path and the values its panes take.
struct VaryAxis {
  std::string path;
  std::vector<std::string> values;
};

/// Parses "path=a,b,c". Values are split at commas outside brackets and
/// quotes (solver.gravity=[0,-9.8],[0,0] gives two values). Throws InputError
/// located at "--vary SPEC" for a missing '=', an empty path or an empty value.
VaryAxis parse_vary(const std::string& spec);

/// What one pane is: its label ("transfer=pic") and its overrides
/// ("solver.transfer=pic"), applied after the common --set overrides.
struct PaneSpec {
  std::string label;
  std::vector<std::string> settings;
};

/// How many panes the axes give (the product of their value counts), from
/// the counts alone: nothing is built. 0 for no axes; saturates at UINT64_MAX.
uint64_t vary_pane_count(const std::vector<VaryAxis>& axes);
/// "solver.transfer: 3 values x solver.kernel: 2 values" (the first four
/// axes, then how many there are in all).
std::string vary_shape(const std::vector<VaryAxis>& axes);
/// The cartesian product of the axes, the first axis varying slowest. A
/// label names each setting by the last segment of its path ("transfer=pic"),
/// or by the whole path when two axes end alike. More than
/// Comparison::kMaxPanes panes is an InputError naming the count, thrown
/// before any pane is built (fewer than kMinPanes: Comparison checks it).
std::vector<PaneSpec> vary_panes(const std::vector<VaryAxis>& axes);
/// The window's and the lessons' form: "path=a,b path2=x,y" (items separated
/// by spaces, so a value holds none) -> panes. Throws InputError for a bad
/// item, for a product of fewer than 2 or more than 4 panes (counted before
/// anything is built) and for a path given by two items.
std::vector<PaneSpec> vary_panes_text(const std::string& space_separated);

/// The conserved quantities of one pane at one frame.
struct CurveSample {
  int64_t frame = 0;
  double time = 0.0;
  int64_t steps = 0;  ///< the pane's substeps so far
  double kinetic_energy = 0.0;
  double momentum[2] = {0.0, 0.0};
  double angular_momentum = 0.0;  ///< about the domain centre (Diagnostics)
  uint64_t hash = 0;              ///< state hash (bit-identity of panes)
};

struct ComparePane {
  PaneSpec spec;
  std::unique_ptr<Simulation> sim;
  std::vector<CurveSample> curve;  ///< one sample per recorded frame
  std::unique_ptr<Rewind> rewind;  ///< its recording (enable_rewind), else null
};

class Comparison {
 public:
  static constexpr size_t kMinPanes = 2;
  static constexpr size_t kMaxPanes = 4;
  /// The largest ratio of two panes' time steps (largest dt / smallest): the
  /// pane with the smaller one takes that many substeps for each of the
  /// other's (docs/compare.md says why 100).
  static constexpr double kMaxDtRatio = 100.0;

  /// Loads `scene` (a file or a built-in name) once, applies `sets`, then
  /// builds one world per pane from a copy with the pane's settings (errors
  /// name "--vary path=value" as --set errors name the override). Throws
  /// InputError for bad input, for fewer than 2 or more than 4 panes, for
  /// a --vary path that a --set also gives and for panes whose time steps
  /// are more than kMaxDtRatio apart; std::runtime_error for an unavailable
  /// backend. Records frame 0.
  Comparison(const std::string& scene, const std::vector<std::string>& sets,
             const std::vector<PaneSpec>& panes, const std::string& backend, int threads);
  /// The same from a document already read and overridden (a lesson's scene
  /// with its "set" entries, from `path`), the panes' settings written in a
  /// file: every error points at `where` (the lesson's "compare" entry),
  /// names `entry` as its field and says which pane.
  Comparison(const Json& base, const std::string& path, const std::vector<PaneSpec>& panes,
             const std::string& backend, int threads, const SourceLoc& where,
             const std::string& entry);

  size_t size() const { return panes_.size(); }
  ComparePane& pane(size_t i) { return panes_[i]; }
  const ComparePane& pane(size_t i) const { return panes_[i]; }
  /// The scene as the first pane loaded it.
  const SceneInfo& info() const { return panes_.front().sim->info(); }
  /// Frames stepped so far (0 after construction).
  int64_t frame() const { return frame_; }

  /// One frame: the first pane steps `substeps` (<= 0: its substeps per
  /// frame), the others step to its time (see the file comment); then every
  /// pane's sample is recorded (unless recording is off). On a blow-up the message names the pane
  /// ("pane 2 (transfer=flip): ...") and the frame counter stays.
  StepStatus step_frame(int substeps = 0);
  /// step_frame in parts: the window steps a displayed frame in chunks under
  /// its time budget (step_part each), then ends it once (finish_frame), so
  /// a frame, a curve sample and a rewind mark are one displayed frame.
  StepStatus step_part(int substeps);
  void finish_frame();
  /// At most `substeps` substeps per pane for catching up in one step_part
  /// (0, the default: no limit). A pane left short of the first pane's time
  /// goes on catching up in the next call, and the first pane waits for it
  /// (behind()): the window keeps its frame budget with panes whose time
  /// steps are far apart (or a CFL-adaptive pane whose dt has fallen), and
  /// the panes still show the same simulated time whenever none is behind.
  void set_catch_up_limit(int64_t substeps) { catch_up_limit_ = substeps; }
  /// True while a pane is short of the first pane's time (set_catch_up_limit).
  bool behind() const { return behind_; }
  /// The panes behind and by how much ("pane 2 (dt=1e-05) 0.0012 s behind"); "" when none.
  std::string behind_text();
  /// Records the current state as the sample of frame(); a sample for the
  /// same frame is replaced (after a preset, say).
  void record();

  /// Off: step_frame records no samples (the window plots its own totals and
  /// skips the per-frame state hash; a session would grow the curves).
  void set_recording(bool on) { recording_ = on; }

  /// The same point force (attract / repel) in every pane.
  void set_point_force(const PointForce& f);
  /// Grab the same particle rows in every MPM pane (panes start identical, so
  /// the rows are the same particles); move and release them together.
  void grab_begin(const std::vector<uint32_t>& rows, Vec2 target, float stiffness);
  void grab_move(Vec2 target);
  void grab_end();

  // Rewind (sim/scene/rewind.h): each pane is recorded by its own ring, and
  // the comparison keeps, for every frame, each pane's step count and how
  // many of its ring's actions its state holds (Rewind::applied), so a seek
  // to frame f puts every pane exactly where it was at f, also a pane that
  // took no substep between two frames (restored from its ring and
  // re-simulated with its recorded calls and actions: bit-identical on the
  // CPU). A frame's state is the last one shown at it: edits made while
  // frame f is shown belong to f. Stepping a frame while behind the recorded
  // head replays the next recorded frame; an action there (preset, force
  // list, grab, point force) discards the recorded future in every pane (a
  // branch).

  /// Starts recording every pane from its current state, `budget_bytes`
  /// shared equally. False (rewind_off() says why) when a pane cannot be
  /// rewound (rigid bodies); the comparison then runs unrecorded.
  bool enable_rewind(size_t budget_bytes);
  bool rewinding() const { return rewinding_; }
  const std::string& rewind_off() const { return rewind_off_; }
  /// The last recorded frame (frame() when live).
  int64_t head_frame() const {
    return panes_.empty() ? first_frame_
                          : static_cast<int64_t>(marks_.size() / panes_.size()) - 1 + first_frame_;
  }
  int64_t first_frame() const { return first_frame_; }
  /// Every pane to its state at frame `f` (clamped to the recording). Returns
  /// the status of the re-simulation; the frame counter follows.
  StepStatus seek_frame(int64_t f);
  /// True after a seek until a live step or an action: the shown state is
  /// the recording's (the window then leaves the tools' state alone).
  bool playing_back() const { return playback_; }
  /// Memory the panes' recordings and the frame marks hold.
  size_t rewind_bytes() const;

  /// Body forces for every pane (each pane gets its own hook and applier).
  void set_force_list(const SgfList& list);
  /// A velocity preset on every MPM pane (returns how many took it).
  size_t apply_preset(Preset preset, float speed = 1.f);

  /// frame,time,pane,label,steps,kinetic_energy,momentum_x,momentum_y,angular_momentum,hash
  /// (one row per pane per recorded frame; pane is 1-based).
  std::string curves_csv() const;

 private:
  void build(const Json& base, const std::string& path, const std::vector<PaneSpec>& panes,
             const std::string& backend, int threads, const SourceLoc* where,
             const std::string& entry);
  /// Throws InputError at `where` when two panes' time steps are more than kMaxDtRatio apart.
  void check_step_ratio(const SourceLoc& where, const std::string& entry) const;
  /// Steps `pane` towards `target` (at most catch_up_limit_ substeps); a pane
  /// with no dt of its own takes `ref_substeps`. `left_short`: the limit stopped it.
  StepStatus catch_up(ComparePane& pane, double target, int ref_substeps, bool& left_short);
  /// Every pane but the first towards the first's time; sets behind_.
  StepStatus catch_up_all(int ref_substeps);
  static bool short_of(ComparePane& pane, double target);
  void update_behind();
  /// One pane's step(n), through its recording when there is one.
  StepStatus pane_step(ComparePane& pane, int n);
  /// Records changed controls (grab, point force) in every pane's ring.
  void note_controls();
  std::vector<ComparePane> panes_;
  /// After an action that reached the panes: the recorded future after this
  /// frame is gone (their rings branch themselves) and this frame's marks
  /// take the action in.
  void after_action();
  /// Ends a stepped frame: the rings mark it, the panes' marks are kept.
  void end_frame_recording();
  /// Writes every pane's mark (step count, actions held) for frame_.
  void mark_frame();

  int64_t frame_ = 0;
  int64_t catch_up_limit_ = 0;
  bool behind_ = false;
  bool recording_ = true;
  bool rewinding_ = false, playback_ = false;
  std::string rewind_off_ = "not started";
  int64_t first_frame_ = 0;  ///< the frame the recording starts at
  struct FrameMark {
    int64_t step = 0;    ///< the pane's step count
    size_t applied = 0;  ///< Rewind::applied() of its ring
  };
  std::vector<FrameMark> marks_;  ///< [(frame - first_frame_) * panes + pane]
};

}  // namespace ps
