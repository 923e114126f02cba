/// The window's features: one class per feature, owning its state, taking
/// part in the frame through the hooks below (the habit of Box2D's samples and
/// the ImGui demo: a feature is a file, not edits threaded through the app).
/// `App::features` is one ordered list (render/features.cpp, one line a
/// feature); each phase of the frame is a loop over it, in list order:
///
///   key         a key press the app's own keys did not take (true: taken; the
///               app's keys handled after the features', Esc among them, skip it)
///   sync        the sync point's start, before the rewind restores or notes
///               anything: edits that may change the simulation itself (a drawn
///               body gives a scene a rigid world)
///   backend_changed  the MPM world's backend was switched at the sync point
///   push        the sync point: the feature's window-owned copies to the world,
///               before the rewind notes the controls; also when a reset keeps
///               the window's edits
///   step        the frame's stepping, before the app's: true when the feature
///               stepped (or held) the simulation itself this frame and the
///               app steps nothing (the SGF timeline's seek)
///   after_step  after the frame's live substeps
///   sample      after the particle snapshot, `now` = glfwGetTime()
///   draw_under  scene-space shapes under the particles (App::under)
///   draw_over   scene-space shapes over the particles (App::over)
///   press       a left press over the scene, its world position (true: taken;
///               the app's pick and grab and later features' presses skip it)
///   drag        the left button held (every feature, in order)
///   release     the left button released
///   pointer     the pointer over the scene, its world position (tools live)
///   panel       its part of the left column (hidden while comparing)
///   right_tab   its tab in the right column's tab bar
///   strip_height, strip  a strip along the scene's bottom edge (the SGF
///               timeline; the rewind strip is under it): its height is taken
///               from the scene's area, and it is drawn with the overlays
///   overlay     its windows over the scene and the panels (a browser, a
///               dialog), drawn every frame after the panels, also while
///               comparing and with the panels hidden (Tab)
///
/// and in the app's panels: `scene_panel` (the top of the Scene panel, under
/// the scene's name), `tool_panel` (the Tools panel while the tool is
/// the feature's), `material` (a material's fields in the Materials panel),
/// `inspector` (rows for the selected particle), `inspect_row` (the whole
/// Inspector when the selected row is the feature's, e.g. a DEM grain: true
/// when it drew it, and the app's particle rows are left out), `stats_rows`
/// and `stats` (the Stats panel's table and below it), `legend` (the colour
/// legend when the colour mode is the feature's: true when it drew it),
/// `legend_box` (its own overlays' legend, a box in the dock beside the scene:
/// measured off screen, then drawn, every frame);
///
/// and outside the frame: `pull` (the world's parameters into the window's
/// copies: a new scene, a rewind restore), `on_scene` (a new simulation was
/// adopted: per-scene state starts again), `load_settings` / `save_settings`
/// (settings.ini keys), `help` (rows of the keys overlay, H) and `shutdown`
/// (the window is closing, its GL context still current: stop workers, free
/// GL objects; a feature is destroyed only after the context is gone).
///
/// How to add one: docs/architecture.md, "Window features".
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>
#include "render/cpu/tools.h"
#include "sim/core/vec.h"

namespace ps {

struct App;
class SettingsFile;
struct MaterialParams;

/// One row of the keys overlay: the key, what it does.
struct HelpRow {
  const char* key;
  const char* action;
};

class Feature {
 public:
  virtual ~Feature() = default;
  virtual const char* name() const = 0;

  virtual void pull(App&) {}
  virtual void sync(App&) {}
  virtual void backend_changed(App&) {}
  virtual void push(App&) {}
  virtual void on_scene(App&) {}
  virtual bool key(App&, int /*glfw_key*/, int /*mods*/) { return false; }
  virtual bool step(App&) { return false; }
  virtual void after_step(App&) {}
  virtual void sample(App&, double /*now*/) {}
  virtual void draw_under(App&) {}
  virtual void draw_over(App&) {}
  virtual bool press(App&, Vec2 /*world*/) { return false; }
  virtual void drag(App&, Vec2 /*world*/) {}
  virtual void release(App&, Vec2 /*world*/) {}
  virtual void pointer(App&, Vec2 /*world*/, bool /*over_scene*/) {}
  virtual void panel(App&) {}
  virtual void right_tab(App&) {}
  virtual float strip_height(const App&) const { return 0.f; }
  virtual void strip(App&) {}
  /// Why the feature draws from the host table this frame (null: it does not): the CUDA-GL
  /// interop then leaves the frame to the host path and its note gives this reason.
  virtual const char* needs_host_rows(const App&) const { return nullptr; }
  virtual void overlay(App&) {}
  virtual void scene_panel(App&) {}
  virtual bool tool_panel(App&, Tool) { return false; }
  virtual void material(App&, MaterialParams&) {}
  virtual void inspector(App&, size_t /*row*/) {}
  virtual bool inspect_row(App&, size_t /*row*/) { return false; }
  virtual void stats_rows(App&) {}
  virtual void stats(App&) {}
  virtual bool legend(App&) { return false; }
  virtual void legend_box(App&) {}
  virtual void load_settings(const SettingsFile&) {}
  virtual void save_settings(SettingsFile&) const {}
  virtual void help(std::vector<HelpRow>&) const {}
  virtual void shutdown(App&) {}
};

using FeatureList = std::vector<std::unique_ptr<Feature>>;

/// Every feature, in the order of the frame's loops and of the left column.
FeatureList make_features();

}  // namespace ps
