/// The window's rewind (internal to render/): the recording of the
/// loaded scene (sim/scene/rewind.h), the strip under the scene that shows the
/// recorded range, its snapshots, the actions and the playhead, and seeking.
/// Code: panel_rewind.cpp.
///
/// How it fits the one sync point: keys (Left, Right, Home) and the strip only
/// write `pending_seek`; rewind_sync (in App::sync, before the panels' copies
/// are written to the world) restores the snapshot, and step_frame replays
/// towards the target under the frame's time budget. Every edit App::sync
/// applies goes through the recording (Rewind::apply / note_controls), so it is
/// logged with its step. While the shown state comes from the recording
/// (`playback`), the tools leave the world alone until a button is pressed
/// over the scene; any edit there starts a new branch (the recorded future
/// after that step is discarded).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include "render/cpu/timeline.h"
#include "sim/scene/rewind.h"

namespace ps {

struct App;

struct RewindUi {
  Rewind ring;
  const Simulation* sim = nullptr;  ///< the simulation the recording belongs to
  uint64_t generation = 0;          ///< ring.generation() the panel copies were last taken at
  int64_t pending_seek = -1;        ///< requested by a key or the strip, applied at the sync point
  int64_t target = -1;              ///< seeking: replaying towards this step (-1: none)
  int64_t seek_from = 0;            ///< the step the seek restored (or continued) from
  std::chrono::steady_clock::time_point seek_t0;
  bool playback = false;    ///< the shown state comes from the recording
  bool dragging = false;    ///< the strip is dragged
  bool was_behind = false;  ///< behind the head last frame (logs "rewind live" on reaching it)
  TimelineView view;
};

// Hooks called from the window's shared code (window_app.cpp, window_panels.cpp).
void rewind_check_scene(
    App& app);  ///< a new Simulation (load, reset, bodies added): a new recording
void rewind_backend_changed(App& app);
void rewind_sync(App& app);  ///< App::sync: applies a pending seek (restore), before the edits
void rewind_request_seek(App& app, int64_t step);
/// App::step_frame: true when the frame was a seek or a replay of the recorded future.
bool rewind_step_frame(App& app);
void rewind_after_live(App& app);  ///< App::step_frame after live steps (verbose: the frame's hash)
void rewind_keys(App& app, bool left, bool right, bool home);
/// While comparing: every pane to `frame` at the next sync point (pauses).
void compare_request_seek(App& app, int64_t frame);
float rewind_strip_height(const App& app);  ///< logical px the strip takes (0: hidden)
void rewind_draw_strip(App& app);
/// Budget from the settings (key rewind.budget_mb; 0 or missing: the default).
size_t rewind_budget_from_settings(int mb);

}  // namespace ps
