// The rewind on the feature seam (render/feature.h): Left / Right / Home step through the
// recording, a requested seek restores its snapshot at the sync point (after the features that
// may replace the simulation, before any copies are pushed), a seek or a replay of the recorded
// future takes the frame's stepping, and the strip lies along the scene's bottom edge, under the
// SGF timeline. Its code is panel_rewind.cpp; the recording is the app's (App::rw,
// render/rewind_ui.h), since the SGF editor, the comparison, the paint and preset edits and the
// soak driver record into it or seek it. Listed last: its sync runs after the others', its
// stepping after the SGF timeline's seek.
#include <glad/gl.h>  // before GLFW (window_state.h includes it)

#include <GLFW/glfw3.h>

#include <memory>

#include "render/feature.h"
#include "render/window_state.h"

namespace ps {

namespace {

class RewindFeature final : public Feature {
 public:
  const char* name() const override { return "rewind"; }

  void on_scene(App& a) override { rewind_check_scene(a); }  // a new recording at the loaded state
  void backend_changed(App& a) override { rewind_backend_changed(a); }
  void sync(App& a) override { rewind_sync(a); }
  bool key(App& a, int key, int) override {
    if (key != GLFW_KEY_LEFT && key != GLFW_KEY_RIGHT && key != GLFW_KEY_HOME) return false;
    rewind_keys(a, key == GLFW_KEY_LEFT, key == GLFW_KEY_RIGHT, key == GLFW_KEY_HOME);
    return true;
  }
  bool step(App& a) override { return rewind_step_frame(a); }  // a seek, or the recorded future
  void after_step(App& a) override { rewind_after_live(a); }
  float strip_height(const App& a) const override { return rewind_strip_height(a); }
  void strip(App& a) override { rewind_draw_strip(a); }
};

}  // namespace

std::unique_ptr<Feature> make_rewind_feature() { return std::make_unique<RewindFeature>(); }

}  // namespace ps
