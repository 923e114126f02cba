/// The window's SGF editor and specimen state (internal to render/): the
/// particle selection (select tool), the editable SgfSet with its groups and
/// timed entries, the timeline strip, seeking to a step, and the specimen-
/// from-image window. Code: panel_sgf.cpp (selection, SGF panel, timeline,
/// overlays, seeking) and panel_specimen.cpp (specimen window).
///
/// How edits apply: the panels edit `set` and mark it dirty; sgf_sync (called
/// from App::sync, the window's one sync point) hands the flattened set to
/// Simulation::set_force_list, which replaces the world's force hook from the
/// next step on. The simulation is not reset and keeps running.
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "render/cpu/selection.h"
#include "render/cpu/timeline.h"
#include "sim/core/image.h"
#include "sim/sgf/sgf.h"
#include "sim/specimen/specimen.h"

namespace ps {

struct App;

/// The specimen-from-image window's state.
struct SpecimenUi {
  bool open = false;
  std::string path = "assets/specimens/dancer.png";
  std::string loaded_path;  ///< image in `image` (empty: none)
  std::string error;
  Image image;
  unsigned int texture = 0;  ///< GL texture of `image` (0: none)
  int tex_w = 0, tex_h = 0;
  // Parameters (a change recomputes everything below; it is cheap).
  int rule = 1;  ///< 0 dark, 1 not background
  int threshold = 128, tolerance = 32;
  bool invert = false;
  float radius_px = 1.f;
  int test = 1;     ///< inside test used for the particles (InsideTest)
  int compare = 0;  ///< 0: literal nearest contour, 1: oriented
  int belt_t = 160;
  float zoom = 2.f;
  bool show_contours = true, show_points = true;
  bool dirty = true;
  // Results.
  Mask mask;
  std::vector<Contour> contours;
  std::vector<Vec2> grid;  ///< y-up pixel positions
  std::vector<uint8_t> by_winding, by_nearest;
  size_t both = 0, winding_only = 0, nearest_only = 0;
  Specimen specimen;  ///< with the chosen inside test
  std::vector<uint32_t> belt;
  double compute_ms = 0.0;
  // Export and soft body.
  std::string out_folder;  ///< default: <out>/specimen-<stem>
  float width_m = 0.32f;   ///< body width in the new scene
  bool bonded = true, gravity = true;
  std::string status;
};

struct SgfUi {
  // [SECTION] Selection (sorted unique stable IDs)
  std::vector<uint32_t> selection;
  int select_mode = 0;  ///< 0 box, 1 lasso (a click without drag picks one particle)
  bool dragging = false;
  Vec2 drag_start{0.f, 0.f};  ///< screen
  float drag_far = 0.f;       ///< farthest the cursor got from drag_start (px)
  std::vector<Vec2> lasso;    ///< screen points of the lasso being drawn
  SelectOp drag_op = SelectOp::Replace;
  std::string ids_edit, ids_error;

  // [SECTION] The set being edited
  SgfSet set;
  std::string scene_path;      ///< scene the set belongs to
  std::string scene_sgf_dir;   ///< the scene's "sgf" folder (empty: none)
  std::string source;          ///< where the set came from (shown)
  bool dirty = false;          ///< apply at the next sync point
  bool edited = false;         ///< edited since the scene was opened (re-applied after a reset)
  uint64_t edits = 0;          ///< counts the edits (the group table rebuilds on a change)
  std::string list_logged;     ///< the groups list as last logged (verbose)
  int group = -1, entry = -1;  ///< current group / entry (-1: none)
  std::string folder;          ///< save / load folder
  std::vector<std::string> messages;  ///< load and save problems (file:line:col: ...)
  std::string status;

  // [SECTION] Timeline
  bool show_timeline = false;
  bool highlight = true;     ///< tint the groups whose force is on, on the body
  bool request_tab = false;  ///< bring the SGF tab to the front next frame
  bool tab_open = false;     ///< the SGF tab is the visible one
  TimelineView view;
  bool view_user = false;  ///< zoomed / panned: stop auto-fitting
  BarHit drag_bar;         ///< bar being dragged
  SgfEntry drag_orig;
  float drag_x = 0.f;
  bool scrubbing = false;
  int64_t scrub_step = 0;
  int64_t step_edit = 0;
  /// The step field is being typed in (as of the last frame): only then does it not follow the
  /// simulation's step (a rewind scrub, another active widget, must not freeze it).
  bool step_typing = false;
  int64_t step_logged =
      -1;  ///< the field's value last logged (`timeline field step=…`, while paused)

  // [SECTION] Seeking (scrub): reset + fast re-simulation when going back
  int64_t seek_target = -1;  ///< -1: not seeking
  int64_t seek_from = 0;
  bool seek_reset = false;  ///< a reset was requested for this seek
  bool resume_after_seek = false;

  // [SECTION] Per frame
  bool was_running = false;
  bool was_select = false;          ///< the select tool was on last frame
  std::vector<uint32_t> row_of_id;  ///< id -> row + 1 (0: none), rebuilt per frame
  std::vector<uint32_t> sel_rows;
  std::vector<uint8_t> active;  ///< per group at the current step
  std::vector<Vec2> lasso_world;

  SpecimenUi spec;
};

// Hooks called from the window's shared code (window_app.cpp, window_panels.cpp).
void sgf_scene_loaded(App& app);  ///< end of App::load_scene
void sgf_sync(App& app);          ///< App::sync, after reset/open
bool sgf_seek_frame(App& app);    ///< App::step_frame: true when seeking used the frame
void sgf_select_begin(App& app);  ///< select tool: left button pressed over the scene
void sgf_select_drag(App& app);   ///< ... held
void sgf_select_end(App& app);    ///< ... released
void sgf_draw_over(App& app);     ///< overlays into App::over (world units)
bool sgf_overlay_needs_rows(
    const App& app);            ///< sgf_draw_over will mark particles (needs current host rows)
void sgf_right_tabs(App& app);  ///< the "SGF forces" tab of the right column
float sgf_timeline_height(const App& app);  ///< logical px the timeline strip takes (0: hidden)
void sgf_draw_timeline(App& app);           ///< the timeline strip under the scene
void sgf_draw_specimen(App& app);           ///< the specimen window (when open)
void sgf_shutdown(App& app);                ///< GL cleanup while the context is current

// Shared by the SGF tab (panel_sgf.cpp) and the timeline strip (sgf_timeline.cpp).
std::string sgf_force_text(const SgfEntry& e);    ///< "(fx,fy,fz)"
int64_t sgf_current_step(const App& app);         ///< the simulation's step (0 without one)
void sgf_mark_edited(App& app);                   ///< the set changed: applied at the next sync
void sgf_request_seek(App& app, int64_t target);  ///< go to a step (fast-forward or re-run)
void sgf_cancel_seek(App& app, const char* why);  ///< stop seeking, logged with the reason

}  // namespace ps
