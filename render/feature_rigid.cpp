// Rigid bodies in the window, a feature (render/feature.h): the Bodies panel
// (list, inspector with live density / friction / restitution, coupling cost),
// the Body tool (draw a box or disk), picking and grabbing bodies with Box2D's
// mouse joint, and the drawing of bodies, joints, contacts and the force the
// matter puts on each body. Only active when the scene has a rigid world;
// drawing a body into a scene without one gives it one (sim/scene/coupled.h).
// The contacts and forces switches are the view's (App::show_contacts,
// App::show_forces: a lesson sets them).
#include <glad/gl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "imgui.h"
#include "render/cpu/body_tool.h"
#include "render/feature.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"
#include "sim/mpm/mpm_backend.h"
#include "sim/rigid/rigid_world.h"
#include "sim/scene/coupled.h"

namespace ps {

namespace {
using ui::begin_props;
using ui::help_marker;
using ui::prop;

const char* field_name(int f) { return f == 0 ? "density" : (f == 1 ? "friction" : "restitution"); }

class RigidFeature final : public Feature {
 public:
  const char* name() const override { return "rigid"; }

  void on_scene(App&) override {
    selected_ = -1;
    grabbing_ = drawing_ = false;
    edits_.clear();
    add_.reset();
    force_ref_ = 0.0;
  }

  // [SECTION] Sync point ---------------------------------------------------------

  void sync(App& a) override {
    rigid::RigidWorld* rw = a.rigid_world();
    if (rw) {
      for (const Edit& e : edits_) {
        if (e.body < 0 || e.body >= static_cast<int>(rw->body_count())) continue;
        if (e.field == 0) rw->set_density(e.body, e.value);
        if (e.field == 1) rw->set_friction(e.body, e.value);
        if (e.field == 2) rw->set_restitution(e.body, e.value);
        a.log("body %d %s %.9g", e.body + 1, field_name(e.field), e.value);
      }
    }
    edits_.clear();
    if (!add_) return;
    rigid::BodyDef def = *add_;
    add_.reset();
    if (!rw) {
      // The scene had no bodies: the matter (on whichever backend it runs) is
      // wrapped with an empty rigid world.
      try {
        a.sim = with_bodies(std::move(a.sim));
        a.host_table_stale = true;
        a.log("rigid world added (scene had no bodies)");
      } catch (const std::exception& e) {
        a.load_error = std::string("body not added: ") + e.what();
        return;
      }
      rw = a.rigid_world();
    }
    const int b = rw->add_body(def);
    selected_ = b;
    const rigid::BodyState s = rw->state(b);
    a.log("body add id=%d name=\"%s\" shape=%s x=%.9g y=%.9g mass=%.9g", b + 1, def.name.c_str(),
          def.parts[0].shape == ColliderShape::Disk ? "disk" : "box", s.position.x, s.position.y,
          s.mass);
    a.set_status("added " + def.name + " (" +
                 std::to_string(static_cast<int>(std::lround(s.mass))) + " kg per metre of depth)");
  }

  // [SECTION] Mouse -----------------------------------------------------------------

  bool press(App& a, Vec2 wm) override {
    if (a.tools.tool == Tool::Body) {
      drawing_ = true;
      draft_.shape = a.tools.body_shape;
      draft_.a = draft_.b = wm;
      draft_.density = a.tools.body_density;
      draft_.friction = a.tools.body_friction;
      draft_.restitution = a.tools.body_restitution;
      return true;
    }
    rigid::RigidWorld* rw = a.rigid_world();
    if (!rw || (a.tools.tool != Tool::Pick && a.tools.tool != Tool::Grab)) return false;
    const int b = rw->body_at(rigid::Vec2d{wm.x, wm.y});
    if (b < 0) {
      if (a.tools.tool == Tool::Pick) selected_ = -1;
      return false;
    }
    selected_ = b;
    a.selected_id = 0;
    a.selected_row = -1;
    const rigid::BodyState s = rw->state(b);
    a.log("pick body=%d name=\"%s\" mass=%.9g vx=%.9g vy=%.9g omega=%.9g", b + 1,
          rw->def(b).name.c_str(), s.mass, s.velocity.x, s.velocity.y, s.omega);
    if (a.tools.tool == Tool::Grab) {
      grabbing_ = rw->grab(b, rigid::Vec2d{wm.x, wm.y});
      if (grabbing_)
        a.log("grab body=%d x=%.9g y=%.9g", b + 1, s.com.x, s.com.y);
      else
        a.set_status(std::string(rw->def(b).name) + " is " +
                     rigid::body_type_name(rw->def(b).type) +
                     ": only dynamic bodies can be dragged");
    }
    return true;
  }

  void drag(App& a, Vec2 wm) override {
    if (drawing_) draft_.b = wm;
    if (grabbing_)
      if (rigid::RigidWorld* rw = a.rigid_world()) rw->grab_target(rigid::Vec2d{wm.x, wm.y});
  }

  void release(App& a, Vec2 wm) override {
    if (grabbing_) {
      grabbing_ = false;
      if (rigid::RigidWorld* rw = a.rigid_world()) {
        const int b = rw->grabbed();
        rw->release();
        if (b >= 0) {
          const rigid::BodyState s = rw->state(b);
          a.log("grab body end=%d x=%.9g y=%.9g", b + 1, s.com.x, s.com.y);
        }
      }
    }
    if (!drawing_) return;
    drawing_ = false;
    draft_.b = wm;
    if (!a.sim) return;
    Vec2 lo, hi;
    a.sim->bounds(lo, hi);
    // At least 3 screen pixels and 2 grid cells (what the grid rule can hold).
    float min_size = 3.f / a.cam.scale();
    if (MpmWorld* w = a.world()) min_size = std::max(min_size, 2.f * w->grid.dx);
    // Inside the domain's boundary layer, where the matter lives.
    if (MpmWorld* w = a.world()) {
      const float b = w->grid.dx * static_cast<float>(w->solver.boundary_nodes);
      lo = lo + Vec2{b, b};
      hi = hi - Vec2{b, b};
    }
    rigid::RigidWorld empty(rigid::Vec2d{0.0, 0.0}, 1.0, 1.0);
    rigid::BodyDef def;
    std::string why;
    if (!body_from_drag(draft_, a.rigid_world() ? *a.rigid_world() : empty, lo, hi, min_size, def,
                        &why)) {
      a.set_status("no body drawn: " + why);
      a.log("body add refused: %s", why.c_str());
      return;
    }
    add_ = def;
  }

  // [SECTION] Panels ---------------------------------------------------------------

  bool tool_panel(App& a, Tool t) override {
    if (t != Tool::Body) return false;
    const char* shapes[] = {"box (drag corner to corner)", "disk (drag centre to rim)"};
    ImGui::Combo("shape", &a.tools.body_shape, shapes, 2);
    ImGui::SliderFloat("density", &a.tools.body_density, 10.f, 20000.f, "%.0f kg/m3",
                       ImGuiSliderFlags_Logarithmic);
    help_marker(
        "Water is 1000 kg/m3: lighter bodies float, heavier ones sink. Wood ~500, ice 917, steel 7850.");
    ImGui::SliderFloat("friction", &a.tools.body_friction, 0.f, 2.f, "%.2f");
    ImGui::SliderFloat("restitution", &a.tools.body_restitution, 0.f, 1.f, "%.2f");
    if (!a.rigid_world() && a.sim)
      ImGui::TextDisabled("the first body gives this scene a rigid world");
    return true;
  }

  void panel(App& a) override {
    rigid::RigidWorld* rw = a.rigid_world();
    if (!rw) return;
    if (!ImGui::CollapsingHeader("Bodies", ImGuiTreeNodeFlags_DefaultOpen)) return;
    auto* coupled = dynamic_cast<CoupledSimulation*>(a.sim.get());
    const float label_w = ImGui::GetFontSize() * 6.f;
    ImGui::PushItemWidth(-label_w);
    ImGui::Text("%zu %s", rw->body_count(), rw->body_count() == 1 ? "body" : "bodies");
    if (coupled && coupled->matter()) {
      // The coupling's own cost (placing the parts, the impulses, Box2D's step) per substep.
      const double c = coupled->coupling_ms();
      ImGui::SameLine();
      ImGui::TextDisabled("coupling %.3f ms/substep (%.1f%%)", c,
                          a.ms_per_substep > 0.0 ? 100.0 * c / a.ms_per_substep : 0.0);
    }
    ImGui::Checkbox("contacts", &a.show_contacts);
    ImGui::SameLine();
    ImGui::Checkbox("forces", &a.show_forces);
    help_marker(
        "Contacts: where bodies touch each other or the walls (red), the line's length grows with the\n"
        "normal impulse. Forces: the matter's mean force on each body over the last frame (cyan), and\n"
        "its weight (grey) for comparison: a floating body's two arrows are equal and opposite.");
    if (ImGui::BeginListBox(
            "##bodies",
            ImVec2(-FLT_MIN,
                   ImGui::GetTextLineHeightWithSpacing() *
                       std::min<float>(6.f, static_cast<float>(rw->body_count()) + 0.5f)))) {
      for (size_t i = 0; i < rw->body_count(); ++i) {
        const rigid::BodyDef& d = rw->def(static_cast<int>(i));
        char label[160];
        std::snprintf(label, sizeof label, "%zu  %s  (%s)", i + 1, d.name.c_str(),
                      rigid::body_type_name(d.type));
        if (ImGui::Selectable(label, selected_ == static_cast<int>(i))) {
          selected_ = static_cast<int>(i);
          a.log("select body=%zu", i + 1);
        }
      }
      ImGui::EndListBox();
    }
    const int b = selected_;
    if (b >= 0 && b < static_cast<int>(rw->body_count())) {
      const rigid::BodyDef& d = rw->def(b);
      const rigid::BodyState s = rw->state(b);
      if (begin_props("body")) {
        prop("ID", "%d  %s", b + 1, d.name.c_str());
        prop("type", "%s", rigid::body_type_name(d.type));
        if (d.type == rigid::BodyType::Dynamic)
          prop("mass", "%.4g kg  (per %.3g m depth)", s.mass, rw->depth());
        prop("centre", "%.4f, %.4f m", s.com.x, s.com.y);
        prop("velocity", "%.4f, %.4f m/s", s.velocity.x, s.velocity.y);
        prop("speed", "%.4f m/s", std::hypot(s.velocity.x, s.velocity.y));
        prop("angle", "%.2f deg", s.angle * 180.0 / 3.14159265358979);
        prop("omega", "%.4f rad/s", s.omega);
        if (coupled && coupled->matter() &&
            coupled->last_exchange_impulse().size() >= 3 * rw->body_count()) {
          const BodyForce f =
              mean_force(&coupled->last_exchange_impulse()[3 * static_cast<size_t>(b)],
                         coupled->last_exchange_seconds());
          prop("matter force", "%.4g, %.4g N", f.fx, f.fy);
          prop("matter torque", "%.4g N m", f.torque);
          if (d.type == rigid::BodyType::Dynamic && s.mass > 0.0) {
            const double g = std::hypot(rw->gravity().x, rw->gravity().y);
            if (g > 0.0) prop("force / weight", "%.3f", std::hypot(f.fx, f.fy) / (s.mass * g));
          }
        }
        ImGui::EndTable();
      }
      // Live edits: applied at the sync point.
      float dens = static_cast<float>(d.density), fr = static_cast<float>(d.friction),
            re = static_cast<float>(d.restitution);
      ImGui::BeginDisabled(d.type != rigid::BodyType::Dynamic);
      if (ImGui::SliderFloat("density", &dens, 10.f, 20000.f, "%.0f kg/m3",
                             ImGuiSliderFlags_Logarithmic))
        edits_.push_back({b, 0, static_cast<double>(dens)});
      ImGui::EndDisabled();
      if (ImGui::SliderFloat("friction", &fr, 0.f, 2.f, "%.2f"))
        edits_.push_back({b, 1, static_cast<double>(fr)});
      if (ImGui::SliderFloat("restitution", &re, 0.f, 1.f, "%.2f"))
        edits_.push_back({b, 2, static_cast<double>(re)});
      help_marker(
          "Friction acts between bodies and, through the grid rule, between a body and solid or\n"
          "granular matter; water cannot rub a body (a fluid holds no shear at rest), so in a\n"
          "scene of fluids only it does not act on the water.\n"
          "Restitution acts between bodies (the matter's own response decides its bounce).");
    } else {
      ImGui::TextDisabled("click a body (pick or grab tool) to inspect it");
    }
    ImGui::PopItemWidth();
  }

  // [SECTION] Drawing -----------------------------------------------------------------

  void draw_over(App& a) override {
    rigid::RigidWorld* rw = a.rigid_world();
    const float px = 1.f / a.cam.scale();
    drawn_bodies_ = drawn_contacts_ = 0;
    if (rw) {
      // The parts as the matter sees them (world_parts: the same list the grid rule and the DEM walls use).
      rw->world_parts(parts_);
      for (const rigid::WorldPart& p : parts_) {
        const rigid::BodyDef& d = rw->def(p.body);
        const bool sel = p.body == selected_;
        const uint32_t fill = pack_rgba(d.color[0], d.color[1], d.color[2],
                                        d.type == rigid::BodyType::Static ? 0.75f : 0.95f);
        const uint32_t edge =
            sel ? pack_rgba(1.f, 0.85f, 0.25f)
                : pack_rgba(0.1f * d.color[0], 0.1f * d.color[1], 0.1f * d.color[2], 0.9f);
        if (p.shape == ColliderShape::Disk) {
          const Vec2 c = to_f(p.v[0]);
          const float r = static_cast<float>(p.radius);
          const double angle = rw->state(p.body).angle;
          a.over.disc(c, r, fill, 48);
          a.over.circle(c, r, sel ? 2.5f : 1.5f, edge, 48);
          a.over.line(c,
                      c + r * Vec2{static_cast<float>(std::cos(angle)),
                                   static_cast<float>(std::sin(angle))},
                      1.5f, edge);  // the angle shows
        } else {
          poly_.clear();
          for (int k = 0; k < p.count; ++k) poly_.push_back(to_f(p.v[k]));
          a.over.convex(poly_.data(), p.count, fill);
          a.over.outline(poly_.data(), p.count, sel ? 2.5f : 1.5f, edge);
        }
      }
      drawn_bodies_ = rw->body_count();
      // Joints pinned to the world: a ring at the pin.
      for (const rigid::JointDef& j : rw->joints())
        if (j.body_b < 0) {
          a.over.disc(to_f(j.anchor), 4.f * px, pack_rgba(0.15f, 0.15f, 0.18f));
          a.over.circle(to_f(j.anchor), 4.f * px, 1.5f, pack_rgba(0.9f, 0.9f, 0.95f));
        }
      if (a.show_contacts) {
        rw->contacts(contacts_);
        double jmax = 0.0;
        for (const auto& c : contacts_) jmax = std::max(jmax, c.impulse);
        for (const auto& c : contacts_) {
          const Vec2 p = to_f(c.point);
          a.over.disc(p, 3.f * px, pack_rgba(1.f, 0.3f, 0.25f));
          if (jmax > 0.0) {
            const float len = static_cast<float>(24.0 * c.impulse / jmax) * px;
            a.over.line(p, p + len * to_f(c.normal), 1.5f, pack_rgba(1.f, 0.3f, 0.25f, 0.9f));
          }
          ++drawn_contacts_;
        }
      }
      auto* coupled = dynamic_cast<CoupledSimulation*>(a.sim.get());
      if (a.show_forces && coupled && coupled->matter() &&
          coupled->last_exchange_impulse().size() >= 3 * rw->body_count()) {
        // One scale for all arrows: the heaviest body's weight is 60 pixels
        // long (without dynamic bodies, the largest force seen since the load);
        // impacts are clipped at 4 weights so the steady forces stay readable.
        const double g = std::hypot(rw->gravity().x, rw->gravity().y);
        double wmax = 0.0;
        for (size_t i = 0; i < rw->body_count(); ++i)
          wmax = std::max(wmax, rw->state(static_cast<int>(i)).mass * g);
        if (wmax > 0.0) {
          force_ref_ = wmax;
        } else {
          for (size_t i = 0; i < rw->body_count(); ++i) {
            const BodyForce f = mean_force(&coupled->last_exchange_impulse()[3 * i],
                                           coupled->last_exchange_seconds());
            force_ref_ = std::max(force_ref_, std::hypot(f.fx, f.fy));
          }
        }
        if (force_ref_ > 0.0) {
          const float k = static_cast<float>(60.0 / force_ref_) * px;
          const float cap = 240.f * px;
          auto clip = [&](Vec2 v) {
            const float l = length(v);
            return l > cap ? (cap / l) * v : v;
          };
          const uint32_t halo = pack_rgba(0.02f, 0.02f, 0.03f, 0.6f);
          for (size_t i = 0; i < rw->body_count(); ++i) {
            const rigid::BodyState s = rw->state(static_cast<int>(i));
            if (rw->def(static_cast<int>(i)).type != rigid::BodyType::Dynamic) continue;
            const Vec2 c = to_f(s.com);
            const BodyForce f = mean_force(&coupled->last_exchange_impulse()[3 * i],
                                           coupled->last_exchange_seconds());
            const Vec2 wv = clip(
                k * static_cast<float>(s.mass) *
                Vec2{static_cast<float>(rw->gravity().x), static_cast<float>(rw->gravity().y)});
            const Vec2 fv = clip(k * Vec2{static_cast<float>(f.fx), static_cast<float>(f.fy)});
            // Side by side, each straight from its own anchor (render/cpu/body_tool.h).
            const ForceArrows arr = force_arrows(c, wv, fv, 5.f * px);
            if (length(wv) > 2.f * px) {
              a.over.arrow(arr.weight.from, arr.weight.to, 4.f, halo);
              a.over.arrow(arr.weight.from, arr.weight.to, 2.f, pack_rgba(0.75f, 0.75f, 0.78f));
            }
            if (length(fv) > 2.f * px) {
              a.over.arrow(arr.force.from, arr.force.to, 4.f, halo);
              a.over.arrow(arr.force.from, arr.force.to, 2.f, pack_rgba(0.3f, 0.9f, 1.f));
            }
          }
        }
      }
    }
    // A screenshot's log line says what the overlay holds (scripts check it).
    if (rw && (a.pending.screenshot ||
               (a.opt.screenshot_after_frames >= 0 && a.frame == a.opt.screenshot_after_frames &&
                !a.opt.screenshot_path.empty())))
      a.log("rigid overlay bodies=%zu contacts=%zu", drawn_bodies_, drawn_contacts_);
    // The Body tool's draft.
    if (drawing_) {
      const BodyDraft& d = draft_;
      const uint32_t col = pack_rgba(1.f, 0.85f, 0.25f, 0.9f);
      if (d.shape == 1) {
        a.over.circle(d.a, length(d.b - d.a), 2.f, col);
        a.over.line(d.a, d.b, 1.f, col);
      } else {
        a.over.rect_outline(Vec2{std::min(d.a.x, d.b.x), std::min(d.a.y, d.b.y)},
                            Vec2{std::max(d.a.x, d.b.x), std::max(d.a.y, d.b.y)}, 2.f, col);
      }
    }
  }

 private:
  /// A panel edit, applied at the sync point.
  struct Edit {
    int body = -1;
    int field = 0;  ///< 0 density, 1 friction, 2 restitution
    double value = 0.0;
  };
  int selected_ = -1;      ///< body index (the ID shown is index + 1), -1: none
  bool grabbing_ = false;  ///< the mouse joint holds `selected_`
  bool drawing_ = false;   ///< the Body tool's drag
  BodyDraft draft_;
  std::vector<Edit> edits_;
  std::optional<rigid::BodyDef> add_;  ///< a drawn body, added at the sync point
  /// Scale of the force arrows: the heaviest weight (or the largest force seen, without dynamic bodies).
  double force_ref_ = 0.0;
  // Reused every frame.
  std::vector<rigid::WorldPart> parts_;
  std::vector<Vec2> poly_;
  std::vector<rigid::BodyContact> contacts_;
  size_t drawn_bodies_ = 0, drawn_contacts_ = 0;
};

}  // namespace

std::unique_ptr<Feature> make_rigid_feature() { return std::make_unique<RigidFeature>(); }

}  // namespace ps
