// The rigid-body part of the window: the Bodies panel (list,
// inspector with live density / friction / restitution, coupling cost), the
// Body tool (draw a box or disk), picking and grabbing bodies with Box2D's
// mouse joint, and the drawing of bodies, joints, contacts and the force the
// matter puts on each body. Only active when the scene has a rigid world;
// drawing a body into a scene without one gives it one (sim/scene/coupled.h).
#include <glad/gl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "imgui.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"
#include "sim/dem/dem_world.h"
#include "sim/mpm/mpm_backend.h"
#include "sim/scene/coupled.h"

namespace ps {

namespace {
using ui::begin_props;
using ui::help_marker;
using ui::kMuted;
using ui::kWarn;
using ui::prop;
using ui::section_label;


const char* field_name(int f) { return f == 0 ? "density" : (f == 1 ? "friction" : "restitution"); }

}  // namespace

// [SECTION] Sync point ---------------------------------------------------------

void App::rigid_sync() {
  rigid::RigidWorld* rw = rigid_world();
  if (rw) {
    for (const RigidUi::Edit& e : rigidui.edits) {
      if (e.body < 0 || e.body >= static_cast<int>(rw->body_count())) continue;
      if (e.field == 0) rw->set_density(e.body, e.value);
      if (e.field == 1) rw->set_friction(e.body, e.value);
      if (e.field == 2) rw->set_restitution(e.body, e.value);
      log("body %d %s %.9g", e.body + 1, field_name(e.field), e.value);
    }
  }
  rigidui.edits.clear();
  if (!rigidui.add) return;
  rigid::BodyDef def = *rigidui.add;
  rigidui.add.reset();
  if (!rw) {
    // The scene had no bodies: the matter (on whichever backend it runs) is
    // wrapped with an empty rigid world.
    try {
      sim = with_bodies(std::move(sim));
      host_table_stale = true;
      log("rigid world added (scene had no bodies)");
    } catch (const std::exception& e) {
      load_error = std::string("body not added: ") + e.what();
      return;
    }
    rw = rigid_world();
  }
  const int b = rw->add_body(def);
  rigidui.selected = b;
  const rigid::BodyState s = rw->state(b);
  log("body add id=%d name=\"%s\" shape=%s x=%.9g y=%.9g mass=%.9g", b + 1, def.name.c_str(),
      def.parts[0].shape == ColliderShape::Disk ? "disk" : "box", s.position.x, s.position.y, s.mass);
  set_status("added " + def.name + " (" + std::to_string(static_cast<int>(std::lround(s.mass))) + " kg per metre of depth)");
}

// [SECTION] Mouse -----------------------------------------------------------------

bool App::rigid_tool_begin(Vec2 wm) {
  if (tools.tool == Tool::Body) {
    rigidui.drawing = true;
    rigidui.draft.shape = tools.body_shape;
    rigidui.draft.a = rigidui.draft.b = wm;
    rigidui.draft.density = tools.body_density;
    rigidui.draft.friction = tools.body_friction;
    rigidui.draft.restitution = tools.body_restitution;
    return true;
  }
  rigid::RigidWorld* rw = rigid_world();
  if (!rw || (tools.tool != Tool::Pick && tools.tool != Tool::Grab)) return false;
  const int b = rw->body_at(rigid::Vec2d{wm.x, wm.y});
  if (b < 0) {
    if (tools.tool == Tool::Pick) rigidui.selected = -1;
    return false;
  }
  rigidui.selected = b;
  selected_id = 0;
  selected_row = -1;
  const rigid::BodyState s = rw->state(b);
  log("pick body=%d name=\"%s\" mass=%.9g vx=%.9g vy=%.9g omega=%.9g", b + 1, rw->def(b).name.c_str(), s.mass,
      s.velocity.x, s.velocity.y, s.omega);
  if (tools.tool == Tool::Grab) {
    rigidui.grabbing = rw->grab(b, rigid::Vec2d{wm.x, wm.y});
    if (rigidui.grabbing) log("grab body=%d x=%.9g y=%.9g", b + 1, s.com.x, s.com.y);
    else set_status(std::string(rw->def(b).name) + " is " + rigid::body_type_name(rw->def(b).type) + ": only dynamic bodies can be dragged");
  }
  return true;
}

void App::rigid_tool_drag(Vec2 wm) {
  if (rigidui.drawing) rigidui.draft.b = wm;
  if (rigidui.grabbing)
    if (rigid::RigidWorld* rw = rigid_world()) rw->grab_target(rigid::Vec2d{wm.x, wm.y});
}

void App::rigid_tool_end(Vec2 wm) {
  if (rigidui.grabbing) {
    rigidui.grabbing = false;
    if (rigid::RigidWorld* rw = rigid_world()) {
      const int b = rw->grabbed();
      rw->release();
      if (b >= 0) {
        const rigid::BodyState s = rw->state(b);
        log("grab body end=%d x=%.9g y=%.9g", b + 1, s.com.x, s.com.y);
      }
    }
  }
  if (!rigidui.drawing) return;
  rigidui.drawing = false;
  rigidui.draft.b = wm;
  if (!sim) return;
  Vec2 lo, hi;
  sim->bounds(lo, hi);
  // At least 3 screen pixels and 2 grid cells (what the grid rule can hold).
  float min_size = 3.f / cam.scale();
  if (MpmWorld* w = world()) min_size = std::max(min_size, 2.f * w->grid.dx);
  // Inside the domain's boundary layer, where the matter lives.
  if (MpmWorld* w = world()) {
    const float b = w->grid.dx * static_cast<float>(w->solver.boundary_nodes);
    lo = lo + Vec2{b, b};
    hi = hi - Vec2{b, b};
  }
  rigid::RigidWorld empty(rigid::Vec2d{0.0, 0.0}, 1.0, 1.0);
  rigid::BodyDef def;
  std::string why;
  if (!body_from_drag(rigidui.draft, rigid_world() ? *rigid_world() : empty, lo, hi, min_size, def, &why)) {
    set_status("no body drawn: " + why);
    log("body add refused: %s", why.c_str());
    return;
  }
  rigidui.add = def;
}

// [SECTION] Panels ---------------------------------------------------------------

void App::panel_rigid_tool() {
  const char* shapes[] = {"box (drag corner to corner)", "disk (drag centre to rim)"};
  ImGui::Combo("shape", &tools.body_shape, shapes, 2);
  ImGui::SliderFloat("density", &tools.body_density, 10.f, 20000.f, "%.0f kg/m3", ImGuiSliderFlags_Logarithmic);
  help_marker("Water is 1000 kg/m3: lighter bodies float, heavier ones sink. Wood ~500, ice 917, steel 7850.");
  ImGui::SliderFloat("friction", &tools.body_friction, 0.f, 2.f, "%.2f");
  ImGui::SliderFloat("restitution", &tools.body_restitution, 0.f, 1.f, "%.2f");
  if (!rigid_world() && sim) ImGui::TextDisabled("the first body gives this scene a rigid world");
}

void App::panel_rigid() {
  rigid::RigidWorld* rw = rigid_world();
  if (!rw) return;
  if (!ImGui::CollapsingHeader("Bodies", ImGuiTreeNodeFlags_DefaultOpen)) return;
  auto* coupled = dynamic_cast<CoupledSimulation*>(sim.get());
  const float label_w = ImGui::GetFontSize() * 6.f;
  ImGui::PushItemWidth(-label_w);
  ImGui::Text("%zu %s", rw->body_count(), rw->body_count() == 1 ? "body" : "bodies");
  if (coupled && coupled->matter()) {
    // The coupling's own cost (placing the parts, the impulses, Box2D's step) per substep.
    const double c = coupled->coupling_ms();
    ImGui::SameLine();
    ImGui::TextDisabled("coupling %.3f ms/substep (%.1f%%)", c, ms_per_substep > 0.0 ? 100.0 * c / ms_per_substep : 0.0);
  }
  ImGui::Checkbox("contacts", &rigidui.show_contacts);
  ImGui::SameLine();
  ImGui::Checkbox("forces", &rigidui.show_forces);
  help_marker("Contacts: where bodies touch each other or the walls (red), the line's length grows with the\n"
              "normal impulse. Forces: the matter's mean force on each body over the last frame (cyan), and\n"
              "its weight (grey) for comparison: a floating body's two arrows are equal and opposite.");
  if (ImGui::BeginListBox("##bodies", ImVec2(-FLT_MIN, ImGui::GetTextLineHeightWithSpacing() * std::min<float>(6.f, static_cast<float>(rw->body_count()) + 0.5f)))) {
    for (size_t i = 0; i < rw->body_count(); ++i) {
      const rigid::BodyDef& d = rw->def(static_cast<int>(i));
      char label[160];
      std::snprintf(label, sizeof label, "%zu  %s  (%s)", i + 1, d.name.c_str(), rigid::body_type_name(d.type));
      if (ImGui::Selectable(label, rigidui.selected == static_cast<int>(i))) {
        rigidui.selected = static_cast<int>(i);
        log("select body=%zu", i + 1);
      }
    }
    ImGui::EndListBox();
  }
  const int b = rigidui.selected;
  if (b >= 0 && b < static_cast<int>(rw->body_count())) {
    const rigid::BodyDef& d = rw->def(b);
    const rigid::BodyState s = rw->state(b);
    if (begin_props("body")) {
      prop("ID", "%d  %s", b + 1, d.name.c_str());
      prop("type", "%s", rigid::body_type_name(d.type));
      if (d.type == rigid::BodyType::Dynamic) prop("mass", "%.4g kg  (per %.3g m depth)", s.mass, rw->depth());
      prop("centre", "%.4f, %.4f m", s.com.x, s.com.y);
      prop("velocity", "%.4f, %.4f m/s", s.velocity.x, s.velocity.y);
      prop("speed", "%.4f m/s", std::hypot(s.velocity.x, s.velocity.y));
      prop("angle", "%.2f deg", s.angle * 180.0 / 3.14159265358979);
      prop("omega", "%.4f rad/s", s.omega);
      if (coupled && coupled->matter() && coupled->last_exchange_impulse().size() >= 3 * rw->body_count()) {
        const BodyForce f = mean_force(&coupled->last_exchange_impulse()[3 * static_cast<size_t>(b)], coupled->last_exchange_seconds());
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
    float dens = static_cast<float>(d.density), fr = static_cast<float>(d.friction), re = static_cast<float>(d.restitution);
    ImGui::BeginDisabled(d.type != rigid::BodyType::Dynamic);
    if (ImGui::SliderFloat("density", &dens, 10.f, 20000.f, "%.0f kg/m3", ImGuiSliderFlags_Logarithmic))
      rigidui.edits.push_back({b, 0, static_cast<double>(dens)});
    ImGui::EndDisabled();
    if (ImGui::SliderFloat("friction", &fr, 0.f, 2.f, "%.2f")) rigidui.edits.push_back({b, 1, static_cast<double>(fr)});
    if (ImGui::SliderFloat("restitution", &re, 0.f, 1.f, "%.2f")) rigidui.edits.push_back({b, 2, static_cast<double>(re)});
    help_marker("Friction acts between bodies and, through the grid rule, between a body and the matter.\n"
                "Restitution acts between bodies (the matter's own response decides its bounce).");
  } else {
    ImGui::TextDisabled("click a body (pick or grab tool) to inspect it");
  }
  ImGui::PopItemWidth();
}

// [SECTION] Drawing -----------------------------------------------------------------

void App::rigid_draw() {
  rigid::RigidWorld* rw = rigid_world();
  const float px = 1.f / cam.scale();
  rigidui.drawn_bodies = rigidui.drawn_contacts = 0;
  if (rw) {
    // The parts as the matter sees them (world_parts: the same list the grid rule and the DEM walls use).
    rw->world_parts(rigidui.parts);
    for (const rigid::WorldPart& p : rigidui.parts) {
      const rigid::BodyDef& d = rw->def(p.body);
      const bool sel = p.body == rigidui.selected;
      const uint32_t fill = pack_rgba(d.color[0], d.color[1], d.color[2], d.type == rigid::BodyType::Static ? 0.75f : 0.95f);
      const uint32_t edge = sel ? pack_rgba(1.f, 0.85f, 0.25f) : pack_rgba(0.1f * d.color[0], 0.1f * d.color[1], 0.1f * d.color[2], 0.9f);
      if (p.shape == ColliderShape::Disk) {
        const Vec2 c = to_f(p.v[0]);
        const float r = static_cast<float>(p.radius);
        const double a = rw->state(p.body).angle;
        over.disc(c, r, fill, 48);
        over.circle(c, r, sel ? 2.5f : 1.5f, edge, 48);
        over.line(c, c + r * Vec2{static_cast<float>(std::cos(a)), static_cast<float>(std::sin(a))}, 1.5f, edge);  // the angle shows
      } else {
        rigidui.poly.clear();
        for (int k = 0; k < p.count; ++k) rigidui.poly.push_back(to_f(p.v[k]));
        over.convex(rigidui.poly.data(), p.count, fill);
        over.outline(rigidui.poly.data(), p.count, sel ? 2.5f : 1.5f, edge);
      }
    }
    rigidui.drawn_bodies = rw->body_count();
    // Joints pinned to the world: a ring at the pin.
    for (const rigid::JointDef& j : rw->joints())
      if (j.body_b < 0) {
        over.disc(to_f(j.anchor), 4.f * px, pack_rgba(0.15f, 0.15f, 0.18f));
        over.circle(to_f(j.anchor), 4.f * px, 1.5f, pack_rgba(0.9f, 0.9f, 0.95f));
      }
    if (rigidui.show_contacts) {
      rw->contacts(rigidui.contacts);
      double jmax = 0.0;
      for (const auto& c : rigidui.contacts) jmax = std::max(jmax, c.impulse);
      for (const auto& c : rigidui.contacts) {
        const Vec2 p = to_f(c.point);
        over.disc(p, 3.f * px, pack_rgba(1.f, 0.3f, 0.25f));
        if (jmax > 0.0) {
          const float len = static_cast<float>(24.0 * c.impulse / jmax) * px;
          over.line(p, p + len * to_f(c.normal), 1.5f, pack_rgba(1.f, 0.3f, 0.25f, 0.9f));
        }
        ++rigidui.drawn_contacts;
      }
    }
    auto* coupled = dynamic_cast<CoupledSimulation*>(sim.get());
    if (rigidui.show_forces && coupled && coupled->matter() &&
        coupled->last_exchange_impulse().size() >= 3 * rw->body_count()) {
      // One scale for all arrows: the heaviest body's weight is 60 pixels
      // long (without dynamic bodies, the largest force seen since the load);
      // impacts are clipped at 4 weights so the steady forces stay readable.
      const double g = std::hypot(rw->gravity().x, rw->gravity().y);
      double wmax = 0.0;
      for (size_t i = 0; i < rw->body_count(); ++i) wmax = std::max(wmax, rw->state(static_cast<int>(i)).mass * g);
      if (wmax > 0.0) {
        rigidui.force_ref = wmax;
      } else {
        for (size_t i = 0; i < rw->body_count(); ++i) {
          const BodyForce f = mean_force(&coupled->last_exchange_impulse()[3 * i], coupled->last_exchange_seconds());
          rigidui.force_ref = std::max(rigidui.force_ref, std::hypot(f.fx, f.fy));
        }
      }
      if (rigidui.force_ref > 0.0) {
        const float k = static_cast<float>(60.0 / rigidui.force_ref) * px;
        const float cap = 240.f * px;
        auto clip = [&](Vec2 v) { const float l = length(v); return l > cap ? (cap / l) * v : v; };
        const uint32_t halo = pack_rgba(0.02f, 0.02f, 0.03f, 0.6f);
        for (size_t i = 0; i < rw->body_count(); ++i) {
          const rigid::BodyState s = rw->state(static_cast<int>(i));
          if (rw->def(static_cast<int>(i)).type != rigid::BodyType::Dynamic) continue;
          const Vec2 c = to_f(s.com);
          const BodyForce f = mean_force(&coupled->last_exchange_impulse()[3 * i], coupled->last_exchange_seconds());
          const Vec2 wv = clip(k * static_cast<float>(s.mass) * Vec2{static_cast<float>(rw->gravity().x), static_cast<float>(rw->gravity().y)});
          const Vec2 fv = clip(k * Vec2{static_cast<float>(f.fx), static_cast<float>(f.fy)});
          // Side by side, each straight from its own anchor (render/cpu/body_tool.h).
          const ForceArrows arr = force_arrows(c, wv, fv, 5.f * px);
          if (length(wv) > 2.f * px) {
            over.arrow(arr.weight.from, arr.weight.to, 4.f, halo);
            over.arrow(arr.weight.from, arr.weight.to, 2.f, pack_rgba(0.75f, 0.75f, 0.78f));
          }
          if (length(fv) > 2.f * px) {
            over.arrow(arr.force.from, arr.force.to, 4.f, halo);
            over.arrow(arr.force.from, arr.force.to, 2.f, pack_rgba(0.3f, 0.9f, 1.f));
          }
        }
      }
    }
  }
  // A screenshot's log line says what the overlay holds (scripts check it).
  if (rw && (pending.screenshot || (opt.screenshot_after_frames >= 0 && frame == opt.screenshot_after_frames &&
                                    !opt.screenshot_path.empty())))
    log("rigid overlay bodies=%zu contacts=%zu", rigidui.drawn_bodies, rigidui.drawn_contacts);
  // The Body tool's draft.
  if (rigidui.drawing) {
    const BodyDraft& d = rigidui.draft;
    const uint32_t col = pack_rgba(1.f, 0.85f, 0.25f, 0.9f);
    if (d.shape == 1) {
      over.circle(d.a, length(d.b - d.a), 2.f, col);
      over.line(d.a, d.b, 1.f, col);
    } else {
      over.rect_outline(Vec2{std::min(d.a.x, d.b.x), std::min(d.a.y, d.b.y)},
                        Vec2{std::max(d.a.x, d.b.x), std::max(d.a.y, d.b.y)}, 2.f, col);
    }
  }
}

}  // namespace ps
