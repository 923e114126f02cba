// The SGF editor on the feature seam (render/feature.h): the select tool, the "SGF forces" tab
// of the right column, the overlays of the selection and of the groups whose force is on, the
// timeline strip under the scene with its seeking, and the specimen window. Its code is in
// panel_sgf.cpp, sgf_timeline.cpp and panel_specimen.cpp; the set being edited is the app's
// (App::sgf, render/sgf_ui.h), since the comparison, the group table, the soak and the rewind
// read it too.
#include <memory>

#include "render/feature.h"
#include "render/window_state.h"

namespace ps {

namespace {

class SgfFeature final : public Feature {
 public:
  const char* name() const override { return "sgf"; }

  void on_scene(App& a) override { sgf_scene_loaded(a); }
  void push(App& a) override { sgf_sync(a); }  // an edited set replaces the world's force list
  bool step(App& a) override { return sgf_seek_frame(a); }
  bool press(App& a, Vec2) override {
    if (a.tools.tool == Tool::Select) sgf_select_begin(a);
    return false;
  }
  void drag(App& a, Vec2) override {
    if (a.tools.tool == Tool::Select) sgf_select_drag(a);
  }
  void release(App& a, Vec2) override { sgf_select_end(a); }
  void draw_over(App& a) override { sgf_draw_over(a); }
  const char* needs_host_rows(const App& a) const override {
    return sgf_overlay_needs_rows(a) ? "the SGF selection or groups overlay needs the host table"
                                     : nullptr;
  }
  void right_tab(App& a) override { sgf_right_tabs(a); }
  float strip_height(const App& a) const override { return sgf_timeline_height(a); }
  void strip(App& a) override { sgf_draw_timeline(a); }
  void overlay(App& a) override { sgf_draw_specimen(a); }
  void shutdown(App& a) override { sgf_shutdown(a); }
};

}  // namespace

std::unique_ptr<Feature> make_sgf_feature() { return std::make_unique<SgfFeature>(); }

}  // namespace ps
