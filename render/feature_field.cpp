// Whole-field attract / repel (Taichi's mpm128 attractor), a feature
// (render/feature.h): with the switch on (key M, or "whole field" in the Tools
// panel), the attract and repel tools (3, 4) pull every particle of an MPM
// scene towards the cursor while the left button is held, or push it away
// (the repel tool, or Shift held), instead of acting within the brush. It goes
// through the world's one external force, MpmWorld::point_force (the grid
// update's point force; the rewind records it like the brush tools'): a radius
// a hundred times the domain's diagonal makes the acceleration nearly the same
// everywhere (mpm128's dist / |dist|), and the strength is capped for the scene
// so that matter falling the whole diagonal under it stays within the CFL
// limit: (C dx / dt)^2 / (2 L) with C = 0.5, L the diagonal. The tools' own
// strength slider sets it below the cap.
#include <glad/gl.h>  // before GLFW (window_state.h includes it)

#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "imgui.h"
#include "render/feature.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"

namespace ps {

namespace {

bool field_tool(Tool t) { return t == Tool::Attract || t == Tool::Repel; }

/// The domain's diagonal (world units).
float domain_diagonal(const MpmWorld& w) { return std::hypot(w.grid.width(), w.grid.height()); }

/// The largest acceleration the whole-field force may have in this world: matter
/// accelerated over the domain's diagonal L reaches sqrt(2 a L), kept to half a
/// cell per step (the CFL number 0.5).
float field_cap(const MpmWorld& w) {
  const float v = 0.5f * w.grid.dx / std::max(w.solver.dt, 1e-12f);
  return v * v / (2.f * std::max(domain_diagonal(w), 1e-6f));
}

class FieldFeature final : public Feature {
 public:
  const char* name() const override { return "field"; }

  bool key(App& a, int key, int) override {
    if (key != GLFW_KEY_M || !a.world()) return false;
    on_ = !on_;
    if (on_ && !field_tool(a.tools.tool)) {
      a.tools.tool = Tool::Attract;
      a.log("tool %s", tool_name(a.tools.tool));
    }
    a.log("field on=%d cap=%.6g", on_ ? 1 : 0, static_cast<double>(field_cap(*a.world())));
    a.set_status(
        on_ ? "whole field: hold the left button to pull everything to the cursor, Shift to push (M: off)"
            : "whole field off: attract and repel act within the brush");
    return true;
  }

  void on_scene(App&) override { held_ = false; }

  void pointer(App& a, Vec2 world, bool) override {
    MpmWorld* w = a.world();
    const bool act = w && on_ && field_tool(a.tools.tool);
    const bool held = act && a.left_down;  // the press began over the scene (App::handle_input)
    if (act) {
      const bool repel = a.tools.tool == Tool::Repel || ImGui::GetIO().KeyShift;
      w->point_force = field_force(*w, world, a.tools.force, repel, held);
    }
    if (held != held_) {
      held_ = held;
      if (held)
        a.log("field begin x=%.9g y=%.9g strength=%.6g cap=%.6g", static_cast<double>(world.x),
              static_cast<double>(world.y), static_cast<double>(w->point_force.strength),
              static_cast<double>(field_cap(*w)));
      else
        a.log("field end");
    }
  }

  void draw_over(App& a) override {
    // Arrows around the cursor, in or out: the force reaches every particle, not a brush.
    if (!on_ || !a.world() || !field_tool(a.tools.tool) || !a.cam.viewport().contains(a.mouse) ||
        (ImGui::GetIO().WantCaptureMouse && !a.left_down))
      return;
    const bool repel = a.tools.tool == Tool::Repel || ImGui::GetIO().KeyShift;
    const Vec2 c = a.cam.screen_to_world(a.mouse);
    const float px = 1.f / a.cam.scale();
    const uint32_t col = repel ? pack_rgba(1.f, 0.4f, 0.35f, held_ ? 0.95f : 0.6f)
                               : pack_rgba(0.35f, 0.85f, 0.55f, held_ ? 0.95f : 0.6f);
    for (int k = 0; k < 8; ++k) {
      const float t = 0.785398163f * static_cast<float>(k);
      const Vec2 d{std::cos(t), std::sin(t)};
      const Vec2 far = c + (40.f * px) * d, near = c + (18.f * px) * d;
      if (repel)
        a.over.arrow(near, far, held_ ? 2.4f : 1.6f, col);
      else
        a.over.arrow(far, near, held_ ? 2.4f : 1.6f, col);
    }
  }

  bool tool_panel(App& a, Tool tool) override {
    if (!field_tool(tool)) return false;
    MpmWorld* w = a.world();
    ImGui::BeginDisabled(!w);
    if (ImGui::Checkbox("whole field  M", &on_) && w)
      a.log("field on=%d cap=%.6g", on_ ? 1 : 0, static_cast<double>(field_cap(*w)));
    ImGui::EndDisabled();
    ui::help_marker(
        "Every particle is pulled towards the cursor while the left button is held (pushed away:\n"
        "the repel tool, or Shift held), as in Taichi's mpm128 example, instead of those within\n"
        "the brush. The strength is capped for the scene so that it cannot blow it up.");
    if (w && on_)
      ImGui::TextDisabled("acting: %.3g m/s^2 (at most %.3g here)",
                          static_cast<double>(std::min(std::fabs(a.tools.force), field_cap(*w))),
                          static_cast<double>(field_cap(*w)));
    else if (!w)
      ImGui::TextDisabled("whole field: MPM scenes only");
    return true;
  }

  void load_settings(const SettingsFile& s) override { on_ = s.get_bool("tool.whole_field", on_); }
  void save_settings(SettingsFile& s) const override { s.set_bool("tool.whole_field", on_); }
  void help(std::vector<HelpRow>& rows) const override {
    rows.push_back(
        {"M", "whole field: attract / repel (3, 4) pull or push every particle, Shift repels"});
  }

  /// The world's point force for the whole field at `cursor`: towards it (away when
  /// `repel`), `strength` capped for the world, active only while `held`.
  static PointForce field_force(const MpmWorld& w, Vec2 cursor, float strength, bool repel,
                                bool held) {
    PointForce f;
    f.active = held && std::isfinite(cursor.x) && std::isfinite(cursor.y);
    f.pos = cursor;
    f.radius = 100.f * domain_diagonal(w);
    const float s = std::min(std::fabs(strength), field_cap(w));
    f.strength = repel ? -s : s;
    return f;
  }

 private:
  bool on_ = false;    ///< the switch (M)
  bool held_ = false;  ///< the force is on now (logged when it starts and ends)
};

}  // namespace

std::unique_ptr<Feature> make_field_feature() { return std::make_unique<FieldFeature>(); }

}  // namespace ps
