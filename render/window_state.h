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
#include <string>
#include <vector>
#include "render/compare_ui.h"
#include "render/cpu/settings.h"
#include "render/dem_ui.h"
#include "render/feature.h"
#include "render/gl_draw.h"
#include "render/input_state.h"
#include "render/lesson_ui.h"
#include "render/particle_state.h"
#include "render/recorder.h"
#include "render/rewind_ui.h"
#include "render/run_state.h"
#include "render/sgf_ui.h"
#include "render/soak.h"
#include "render/view_state.h"
#include "render/window_app.h"
#include "sim/scene/simulation.h"

struct GLFWwindow;

namespace ps {

/// The window: its state in parts (the view, the particles shown, running, input, the lesson:
/// their own headers) and below, the frame's methods. Features own theirs (render/feature.h).
struct App : ViewState, ParticleState, RunState, InputState, LessonState {
  // [SECTION] Setup
  WindowOptions opt;
  GLFWwindow* window = nullptr;
  /// Shows the drawn frame (swap buffers; render/build_progress.cpp draws its own).
  std::function<void()> present;
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
  /// settings.ini is written when it changes, not only on quit.
  SettingsAutosave settings_autosave;
  double settings_offered = -1.0;  ///< when autosave_settings last looked (every 0.25 s)

  // [SECTION] Scene
  std::unique_ptr<Simulation> sim;
  std::string scene_arg;  ///< as given (built-in name or path)
  /// The last adopted simulation came from the same file as the one before (a reset, a re-grid)
  /// and keeps the window's edits (not a lesson): features keep theirs (Feature::on_scene).
  bool scene_reloaded = false;
  /// --set overrides, plus domain.grid when changed in the window.
  std::vector<std::string> overrides;
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

  const GroupTable& group_table();  ///< ParticleState::groups, current (panel_sgf.cpp)

  // [SECTION] Features (render/feature.h): resampling, heat, ... in frame order
  FeatureList features = make_features();

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
