/// The window's state, shared by the main loop (window_app.cpp) and the
/// panels (window_panels.cpp). Internal to render/.
///
/// Ownership and timing (MuJoCo simulate's "pending actions + sync" habit):
/// panels and input only write the app-owned copies below (`solver`,
/// `materials`, `pending`); `App::sync()` applies them to the world at one
/// point each frame, before stepping. The simulation runs on the main thread
/// with a time budget per frame (see App::step_frame) so the UI never waits on
/// a long frame and no state is shared across threads.
#pragma once
#include <glad/gl.h>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include "render/compare_ui.h"
#include "render/cpu/camera.h"
#include "render/cpu/colormap.h"
#include "render/cpu/group_table.h"
#include "render/cpu/heat_view.h"
#include "render/cpu/layout.h"
#include "render/cpu/lesson.h"
#include "render/cpu/settings.h"
#include "render/cpu/time_rate.h"
#include "render/cpu/tools.h"
#include "render/cuda/particle_interop.h"
#include "render/dem_ui.h"
#include "render/feature.h"
#include "render/gl_draw.h"
#include "render/recorder.h"
#include "render/rewind_ui.h"
#include "render/sgf_ui.h"
#include "render/soak.h"
#include "render/window_app.h"
#include "sim/scene/simulation.h"

struct GLFWwindow;

namespace ps {

/// How often the plots sample the simulation (seconds).
inline constexpr double kDiagPeriod = 1.0 / 20;

/// A fixed-size history for ImGui::PlotLines (no allocation after construction).
struct History {
  static constexpr int kSize = 240;
  std::array<float, kSize> v{};
  int head = 0, count = 0;
  void push(float x) {
    v[static_cast<size_t>(head)] = x;
    head = (head + 1) % kSize;
    count = count < kSize ? count + 1 : kSize;
  }
  void clear() { head = count = 0; }
  /// Offset for PlotLines so the oldest sample comes first.
  int offset() const { return count < kSize ? 0 : head; }
  float last() const { return count ? v[static_cast<size_t>((head + kSize - 1) % kSize)] : 0.f; }
};

/// Actions requested by panels and keys, applied at the sync point.
struct Pending {
  bool reset = false;
  std::string open_path;    ///< load this scene (name or path)
  std::string open_lesson;  ///< open this lesson (id or path; render/panel_lesson.cpp)
  int lesson_step =
      0;  ///< open_lesson came from Page Down (+1) / Up (-1): on failure go on past it
  std::string compare_vary;  ///< start (or restart) the comparison view with these items
  bool compare_end = false;  ///< back to the single view
  int grid = 0;              ///< re-initialise with this grid resolution
  std::string backend;       ///< switch backend
  std::optional<Preset> preset;
  bool fit_view = false;
  bool screenshot = false;
  bool scene_shot = false;  ///< Shift+F12: the scene alone (no panels, legends or text), for slides
  bool toggle_record = false;
  int single_frames = 0;  ///< N: frames to step while paused
};

struct App {
  // [SECTION] Setup
  WindowOptions opt;
  GLFWwindow* window = nullptr;
  std::function<void()>
      present;  ///< shows the drawn frame (swap buffers; render/build_progress.cpp draws its own)
  float ui_scale = 1.f;         ///< effective UI scale: content x user x projector
  float content_scale = 1.f;    ///< the monitor's content scale (HiDPI)
  float user_scale = 1.f;       ///< settings "ui.scale", Ctrl+= / Ctrl+- / Ctrl+0
  bool projector = false;       ///< projector mode (F2): high contrast, larger text and particles
  bool ui_rebuild = false;      ///< rebuild fonts and style before the next frame
  bool panels_resized = false;  ///< the panels take left_w / right_w at the next draw
  /// F11: full screen on the window's monitor; the windowed position and size to go back to.
  bool fullscreen = false;
  std::array<int, 4> windowed{0, 0, 0, 0};
  std::string gl_renderer;
  std::string config_dir, settings_path, imgui_ini_path;
  SettingsFile settings;
  SettingsAutosave
      settings_autosave;           ///< settings.ini is written when it changes, not only on quit
  double settings_offered = -1.0;  ///< when autosave_settings last looked (every 0.25 s)

  // [SECTION] Scene
  std::unique_ptr<Simulation> sim;
  std::string scene_arg;  ///< as given (built-in name or path)
  /// The last adopted simulation came from the same file as the one before (a reset, a re-grid)
  /// and keeps the window's edits (not a lesson): features keep theirs (Feature::on_scene).
  bool scene_reloaded = false;
  std::vector<std::string>
      overrides;  ///< --set overrides, plus domain.grid when changed in the window
  std::string backend = "auto";
  SolverParams solver;  ///< app-owned copies the panels edit
  std::vector<MaterialParams> materials;
  int grid_edit = 0;
  float preset_speed = 1.f;
  std::string load_error;       ///< last failed load (shown in the window)
  bool load_cancelled = false;  ///< the last load or lesson was cancelled (render/build_progress.h)
  std::string status_line;      ///< last success message (saved, recording, ...)
  double status_time = -1.0;
  std::string open_folder, open_path, save_path;

  // [SECTION] Running
  bool running = true;
  Pending pending;
  int64_t frame = 0;
  double ms_per_substep = 0.0;  ///< smoothed
  double speed_ratio = 1.0;     ///< substeps done / substeps wanted (smoothed): < 1 is slow motion
  SimRate sim_rate;             ///< simulated seconds per wall second (render/cpu/time_rate.h)
  bool slow_shown = false;      ///< the slow-motion line is up (logged when it comes and goes)
  bool slow_rate_logged =
      false;  ///< its line was logged with a measured rate (the first may come before one)
  int substeps_last = 0;
  double fps = 0.0, frame_ms = 0.0;
  History ke, momentum_x, momentum_y, angular;
  Diagnostics diag;
  double last_diag_time = -1.0;

  // [SECTION] View
  Camera2D cam;
  bool view_touched = false;  ///< user panned/zoomed: stop auto-fitting on resize
  ScreenRect last_fit_viewport{0, 0, 0, 0};
  /// The legends and the status line beside the scene, never over it (render/cpu/layout.h):
  /// the split of the scene's area this frame, the boxes placed in it, and the last
  /// frame's boxes, from which the split is made.
  OverlayDock overlay_dock;
  OverlayFlow overlay_flow,
      overlay_check;  ///< this frame's placing; the dock's fit, checked every frame
  std::vector<Vec2> overlay_boxes;
  /// What the dock was split for: the scene's area, what is shown, how many panes.
  struct OverlayKey {
    float x = 0.f, y = 0.f, w = 0.f, h = 0.f;
    const void* shown = nullptr;
    int panes = 0;
    bool operator==(const OverlayKey& o) const {
      return x == o.x && y == o.y && w == o.w && h == o.h && shown == o.shown && panes == o.panes;
    }
  };
  OverlayKey overlay_key;
  ColorMode color_mode = ColorMode::Material;
  int scalar_column = 0;
  std::array<Colormap, kColorModeCount> cmap{
      Colormap::Viridis,  Colormap::Turbo,   Colormap::Viridis, Colormap::Coolwarm,
      Colormap::Viridis,  Colormap::Viridis, Colormap::Turbo,   Colormap::Turbo,
      Colormap::Coolwarm, Colormap::IceWater};
  bool auto_range = true;
  float range_lo = 0.f, range_hi = 1.f;
  float sprite_scale = 1.f;
  bool show_grid = false, show_grid_velocity = false, show_particle_velocity = false,
       show_affine = true;
  /// Rigid bodies' contact points and the matter's force on each body (render/feature_rigid.cpp).
  bool show_contacts = true, show_forces = true;
  bool show_help = false;
  /// Speed drawn as a 1.5-cell arrow: the largest speed seen since the last
  /// load or preset, so decay (PIC losing rotation) shows as shrinking arrows.
  float grid_ref_speed = 0.f, particle_ref_speed = 0.f;
  bool vsync = true;
  double frame_rest_ms =
      0.0;  ///< a frame's time besides stepping (moving average): the step budget's complement
  SpritePath sprite_path = SpritePath::Auto;  ///< settings view.sprites (render/gl_draw.h)
  float left_w = 340.f, right_w = 330.f;      ///< panel widths (logical px, scaled)
  /// The widths wanted (the defaults, or where the user dragged the edges): left_w and right_w
  /// are these within the panels' share of the window (render/cpu/layout.h), applied every frame.
  float left_pref = 340.f, right_pref = 330.f;
  /// Tab: both side panels hidden, the scene takes the window (a projector's presenter view).
  bool panels_hidden = false;
  float side_left() const { return panels_hidden ? 0.f : left_w; }  ///< what the left panel takes
  float side_right() const {
    return panels_hidden ? 0.f : right_w;
  }  ///< what the right panel takes
  /// The side panels' background: their ImGui window background is left
  /// transparent and a scissored clear in the colour ImGui would have blended
  /// over the scene is put first in each panel's draw list (a callback), so it
  /// keeps the window's place in ImGui's drawing order. With software OpenGL
  /// the blended, textured background quad cost about 1.5 ms a frame.
  struct PanelBackground {
    std::array<float, 4> rect{};  ///< display coordinates: x, y, w, h
    std::array<float, 3> rgb{};
    void* draw_list =
        nullptr;  ///< this frame's ImDrawList of the panel, until the callback is put in
  };
  std::array<PanelBackground, 2> panel_backgrounds{};

  // [SECTION] Particles (reused every frame)
  ParticleTable table;
  ParticleTable grain_table;  ///< DEM grains beside MPM matter, appended to `table` (reused)
  /// With MPM matter and DEM grains in one scene `table` holds the MPM rows,
  /// then the grains': the first DEM row (0 in a DEM scene), and how many
  /// rows the SGF selection may take (the MPM's; all rows otherwise).
  size_t dem_row0 = 0;
  size_t sgf_rows = SIZE_MAX;
  std::vector<float> xy, vxy, scalar, range_scratch;
  std::vector<uint8_t> rgba;
  std::vector<float> grid_mass;
  std::vector<Vec2> grid_vel;
  GridSpec grid_spec;
  uint32_t selected_id = 0;   ///< 0: none
  int64_t selected_row = -1;  ///< host row (table, host arrays)

  // [SECTION] CUDA-GL interop (render/cuda/particle_interop.h)
  // With the CUDA backend the particle buffers are filled on the device, in
  // slot order, and `table` is no longer rebuilt every frame: only when stale
  // (loads, edits) and on demand (refresh_host_table: clicks, tools); the
  // selected particle's row is patched every frame and the plots' totals are
  // summed on the device.
  ParticleInterop interop;
  bool interop_wanted =
      true;  ///< the Stats panel's switch (--interop off): draw from the host copy
  InteropResult interop_result;
  /// "CUDA-GL interop: on", or "CUDA-GL interop: off: <reason>" (for the Stats panel).
  std::string interop_note = "CUDA-GL interop: off: not started";
  bool interop_frame =
      false;  ///< the last snapshot drew through the interop (buffers in slot order)
  int64_t selected_slot =
      -1;  ///< the selected particle's row in the GPU buffers when interop_frame
  double host_table_time = -1.0;  ///< glfwGetTime() of the last host table rebuild
  bool host_table_stale = true;   ///< rebuild the host table at the next snapshot
  /// The particle groups shown (render/cpu/group_table.h): the "group" colour mode's colours and
  /// legend and the SGF tab's list of groups, one table. Rebuilt by group_table() when the host
  /// table was rebuilt or the SGF set changed (`groups_key`).
  GroupTable groups;
  double groups_time = -2.0;
  size_t groups_rows = 0;
  uint64_t groups_key = 0;
  const GroupTable& group_table();
  std::string legend_logged;  ///< the group legend as last logged (verbose)

  // [SECTION] Features (render/feature.h): resampling, heat, ... in frame order
  FeatureList features = make_features();

  // [SECTION] Temperature colours (the view's; heat itself is a feature, render/feature_heat.cpp)
  bool temp_auto = true;                  ///< temperature range from the particles' min / max
  float temp_lo = -10.f, temp_hi = 60.f;  ///< the fixed temperature range, deg C
  std::vector<MeltRole> melt_role;        ///< per material (melt-fraction colours)

  // [SECTION] Tools
  ToolSettings tools;
  bool left_down = false, right_down = false;
  Vec2 mouse{0.f, 0.f}, last_mouse{0.f, 0.f};
  /// Key presses since the last frame (GLFW key, mods), queued by a GLFW
  /// callback: ImGui 1.86 polls key state per frame and would miss a press
  /// and release that both fall between two frames.
  struct KeyPress {
    int key, mods;
  };
  std::vector<KeyPress> key_queue;
  std::vector<uint32_t> grab_rows;
  Vec2 grab_centroid_start{};
  PaintStroke stroke;
  std::vector<Vec2> paint_sites;
  uint16_t paint_group = 0;

  // [SECTION] Output
  std::string out_dir = "captures";
  int screenshots = 0;
  Recorder recorder;
  std::vector<uint8_t> readback;

  // [SECTION] GL
  ParticleRenderer particles;
  ShapeBatch under, over;
  DeviceLineBuffer bond_lines;  ///< DEM bond lines the interop writes on the device (dem_draw.cpp)

  // [SECTION] DEM grains in the snapshot (render/dem_ui.h; the DEM feature: render/feature_dem.h)
  DemView dem_view;

  // [SECTION] Comparison view (panel_compare.cpp)
  CompareUi compare;

  // [SECTION] Lessons (panel_lesson.cpp)
  std::optional<Lesson> lesson;  ///< the open lesson (its panel shows), if any
  /// The open lesson's comparison was ended (Esc): its text, about the panes, is put away.
  bool lesson_compare_ended = false;
  bool lesson_panel_request = false;  ///< open the Lesson header at the next draw
  /// Frames until the Lesson panel logs what its first page shows (`lesson page ...`): the
  /// column is scrolled to the top when a lesson opens, and laid out by then.
  int lesson_page_frames = 0;
  /// What a lesson's view sets (colour, overlays, tool, preset speed).
  struct LessonView {
    ColorMode color_mode = ColorMode::Material;
    std::array<Colormap, kColorModeCount> cmap{};
    float range_lo = 0.f, range_hi = 1.f;
    bool grid = false, grid_velocity = false, particle_velocity = false, affine = true;
    bool contacts = true, forces = true;
    Tool tool = Tool::Grab;
    float preset_speed = 1.f;
  };
  /// The view as it was before the first lesson changed it: closing the lesson
  /// (or opening another scene) gives it back, and settings.ini keeps it, not
  /// the lesson's.
  std::optional<LessonView> view_before_lesson;
  /// The Lessons list: the folder re-read every 2 s (not every frame), a file parsed again
  /// only when it changed, a file that does not load reported once and skipped.
  struct LessonTitles {
    LessonCatalog catalog;
    double time = -1.0;
  } lesson_titles;

  // [SECTION] SGF editor, selection, timeline, specimen (panel_sgf.cpp, panel_specimen.cpp)
  SgfUi sgf;

  // [SECTION] Rewind (panel_rewind.cpp): the recording, seeking, the strip
  RewindUi rw;

  // [SECTION] Soak (render/soak.h): `--soak SECONDS` drives the loop unattended
  SoakDriver soak;

  // Methods (window_app.cpp).
  void log(const char* fmt, ...) const;
  /// A simulation's state hash for a log line: only with --verbose --log-hashes
  /// (it is a pass over every particle), else 0.
  uint64_t log_hash(Simulation& s) const {
    return opt.verbose && opt.log_hashes ? s.diagnostics().hash : 0;
  }
  void set_status(const std::string& s);
  /// "resume", or "pause step=... t=... ke=... angular=..." (the GUI tests read it).
  void log_run_state();
  /// keep_edits: a reset or re-grid of the same scene keeps the parameters
  /// edited in the window (false: the file's and the overrides' values, as a lesson wants).
  bool load_scene(const std::string& name_or_path, const std::vector<std::string>& overrides,
                  bool keep_edits = true);
  /// What load_scene does with the simulation it built (a lesson builds its own, build_lesson).
  void adopt_scene(std::unique_ptr<Simulation> next, const std::string& name_or_path,
                   const std::vector<std::string>& overrides, bool keep_edits);
  void adopt_world_params();
  void sync();
  void step_frame();
  void snapshot();
  /// Makes `table` (and the world's host arrays) current now: a device ->
  /// host sync when the interop drew the last frame, else nothing to do.
  void refresh_host_table();
  void handle_input();
  void draw_scene();
  void log_view() const;
  void toggle_fullscreen();  ///< F11 (glfwSetWindowMonitor with the monitor's video mode, and back)
  /// Between the side panels, above the SGF timeline and the rewind strip.
  ScreenRect scene_area() const;
  /// The scene area less the overlays' dock (sets overlay_dock): where the scene is fitted.
  ScreenRect scene_viewport();
  /// The top-left corner of a legend's box of `size` (px), in the dock.
  Vec2 overlay_slot(Vec2 size) { return overlay_flow.place(size); }
  float overlay_gap() const { return 10.f * ui_scale; }
  void draw_status_line(Vec2 at, float pad);
  Vec2 status_box() const;  ///< the status line's box ("H  help")
  /// The legends' boxes of this frame, measured before the scene's place is set: they
  /// draw off the screen (OverlayFlow::begin_measure).
  void measure_overlays();
  float compare_pane_gap() const { return 4.f * ui_scale; }  ///< between the comparison's panes
  float compare_label_band() const;  ///< each pane's label band at its top (px)
  /// The framebuffer, or its part under `area` (logical px), as a PNG.
  void take_screenshot(const std::string& path, const ScreenRect* area = nullptr);
  void record_frame();
  void load_settings();
  void save_settings();
  /// The settings as save_settings writes them, into `settings`.
  void fill_settings();
  /// Writes settings.ini when it has changed (render/cpu/settings.h SettingsAutosave); `now` in
  /// seconds. Returns true when it wrote.
  bool autosave_settings(double now);
  /// Notes the frame's simulated time for the real-time factor (sim_rate).
  void sample_sim_rate(double now);
  MpmWorld* world() { return sim ? sim->mpm() : nullptr; }
  MpmScene* mpm_scene();
  Vec2 centroid(const std::vector<uint32_t>& rows) const;
  // DEM scenes: render/feature_dem.h.
  dem::DemWorld* dem_world() { return sim ? sim->dem() : nullptr; }

  // Comparison view (panel_compare.cpp).
  bool start_compare(const std::string& vary);  ///< false: the reason is in compare.error
  /// What start_compare does with the comparison it built (a lesson builds its own).
  void adopt_compare(std::unique_ptr<Comparison> next, const std::string& vary,
                     const std::vector<PaneSpec>& panes);
  void end_compare();
  void compare_step_frame();
  void compare_snapshot();
  /// Chooses the panes' tiling for the scene's aspect and the viewport (render/cpu/layout.h);
  /// logs `compare layout rows=… cols=…` when it changes. Called before the panes are used.
  void compare_layout();
  ScreenRect compare_pane_rect(size_t k) const;
  Camera2D compare_camera(size_t k);  ///< pane k's view of the linked camera
  void compare_draw();
  void compare_labels();
  void compare_input(bool over_scene);
  void panel_compare();
  void panel_compare_stats();
  void compare_plot(const char* title, int which);
  bool begin_props_compare();

  // Lessons (panel_lesson.cpp).
  bool open_lesson(const std::string&
                       name_or_path);  ///< false: the error is in load_error, the old scene runs on
  void lessons_list();                 ///< the Lessons list in the Scene panel
  void step_lesson(
      int delta);  ///< the next (+1) or previous (-1) built-in lesson that loads (Page Down / Up)
  void report_lesson_errors(
      const std::vector<std::string>& errors);  ///< the log and stderr, one line each
  void panel_lesson();                          ///< the open lesson's text, keys and buttons
  void close_lesson();                          ///< ends the open lesson and gives the view back
  LessonView current_view() const;
  void set_view(const LessonView& v);

  // Rigid bodies: render/feature_rigid.cpp.
  rigid::RigidWorld* rigid_world() { return sim ? sim->rigid() : nullptr; }

  // Panels (window_panels.cpp).
  void setup_style();
  /// The scale from content_scale, user_scale and projector; fonts, style and
  /// panel widths rebuilt to it (between frames: ImGui's font atlas).
  void rebuild_ui();
  float effective_ui_scale() const {
    return content_scale * user_scale * (projector ? 1.35f : 1.f);
  }
  void draw_panels();
  void draw_overlays();            ///< legend, strips, banners, help: over the scene, panels or not
  void clear_panel_backgrounds();  ///< after ImGui::Render(): the panels' background callbacks
  void panel_scene();
  void panel_solver();
  void panel_presets();
  void panel_materials();
  void panel_tools();
  void panel_view();
  void panel_inspector();
  void panel_stats();
  void panel_backend_stats();
  BackendStats backend_stats;  ///< polled from the MPM backend by the Stats panel
  int stats_poll_ = 0;
  void draw_legend();
  void draw_banners();
  void draw_help();
  /// Temperature range of the colour mode: min / max of `v` (auto) or the fixed one.
  void update_temperature_range(const std::vector<float>& v);
};

/// Verbose mode: logs a widget's screen rectangle when it appears or moves
/// ("ui name=... x= y= w= h= visible=0|1", panel_sgf.cpp) for the GUI tests.
void ui_mark(App& a, const char* name);

}  // namespace ps
