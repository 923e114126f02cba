// The SGF timeline strip under the scene (render/sgf_ui.h): play / pause, the step
// readout, one bar per group entry (drag to move it in time), the playhead, scrubbing
// (forward: a fast-forward; backward: a reset and a re-run to the target) and zoom.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "imgui.h"
#include "render/cpu/timeline.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"

namespace ps {

namespace {
using ui::kAccent;
using ui::kMuted;
using ui::kWarn;
}  // namespace

// [SECTION] Timeline strip -------------------------------------------------------------------

float sgf_timeline_height(const App& a) {
  if (!a.sim || !a.sgf.show_timeline) return 0.f;
  return std::min(182.f * a.ui_scale, 0.4f * a.cam.height());
}

void sgf_draw_timeline(App& a) {
  SgfUi& s = a.sgf;
  const float th = sgf_timeline_height(a);
  if (th <= 0.f) return;
  const ImGuiIO& io = ImGui::GetIO();
  const float W = io.DisplaySize.x, H = io.DisplaySize.y;
  const float x = a.side_left(), w = std::max(64.f, W - a.side_left() - a.side_right());
  // Above the rewind strip (panel_rewind.cpp).
  if (!ui::begin_strip("##sgf_timeline", ImVec2(x, H - th - rewind_strip_height(a)), ImVec2(w, th),
                       ImVec2(10.f * a.ui_scale, 6.f * a.ui_scale)))
    return;
  const int64_t step = sgf_current_step(a);
  const int64_t last = last_sgf_step(s.set);
  if (!s.view_user) s.view.fit(last, std::max(step, s.seek_target));

  // Toolbar.
  const bool seeking = s.seek_target >= 0;
  if (ImGui::Button(a.running ? "Pause" : "Play", ImVec2(64.f * a.ui_scale, 0))) {
    if (seeking) sgf_cancel_seek(a, "play/pause");
    a.running = !a.running;
    a.log(a.running ? "resume" : "pause");
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Space");
  ImGui::SameLine();
  if (ImGui::Button("Restart")) sgf_request_seek(a, 0);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Back to step 0 (Shift+R); the edited forces are kept.");
  ImGui::SameLine();
  if (seeking) {
    // While seeking the toolbar is the progress: where to, how far, Cancel.
    const double span =
        static_cast<double>(std::max<int64_t>(1, s.seek_target - (s.seek_reset ? 0 : s.seek_from)));
    const double done = static_cast<double>(step - (s.seek_reset ? 0 : s.seek_from));
    char over[128];
    std::snprintf(over, sizeof over, "%s to step %" PRId64 "  (now %" PRId64 ")",
                  s.seek_reset ? "re-simulating from 0" : "fast-forward", s.seek_target, step);
    const float cancel_w = ImGui::CalcTextSize("Cancel").x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::ProgressBar(
        static_cast<float>(std::clamp(done / span, 0.0, 1.0)),
        ImVec2(ImGui::GetContentRegionAvail().x - cancel_w - ImGui::GetStyle().ItemSpacing.x, 0),
        over);
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) sgf_cancel_seek(a, "cancel");
  } else {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("step");
    ImGui::SameLine();
    // The field follows the simulation's step (also while the rewind strip is dragged and shows
    // a recorded step) unless it is itself being typed in.
    if (!s.step_typing) s.step_edit = step;
    ImGui::SetNextItemWidth(90.f * a.ui_scale);
    if (ImGui::InputScalar("##step", ImGuiDataType_S64, &s.step_edit, nullptr, nullptr, nullptr,
                           ImGuiInputTextFlags_EnterReturnsTrue))
      sgf_request_seek(a, s.step_edit);
    s.step_typing = ImGui::IsItemActive();
    if (!a.running && !s.step_typing && s.step_edit != s.step_logged) {
      s.step_logged = s.step_edit;
      a.log("timeline field step=%" PRId64, s.step_edit);
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Type a step and press Enter to go there (back = re-run from step 0).");
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
    ImGui::Text("t = %.3f s", a.sim->time());
    ImGui::PopStyleColor();
    ImGui::SameLine();
    ImGui::Checkbox("on body", &s.highlight);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Tint the particles of groups whose force is on now, in the group colour,\n"
          "with an arrow in the force direction.");
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
    const char* hint = "drag the ruler to go to a step · wheel on it zooms";
    ImGui::TextUnformatted(
        ImGui::CalcTextSize(hint).x < ImGui::GetContentRegionAvail().x - 90.f * a.ui_scale ? hint
                                                                                           : "");
    ImGui::PopStyleColor();
    ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - 84.f * a.ui_scale);
    if (ImGui::Button("Fit", ImVec2(38.f * a.ui_scale, 0))) s.view_user = false;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Show all entries and the playhead.");
    ImGui::SameLine();
    if (ImGui::Button("Hide", ImVec2(-FLT_MIN, 0))) s.show_timeline = false;
  }

  // Geometry.
  const ImGuiStyle& st = ImGui::GetStyle();
  const float label_w = 128.f * a.ui_scale;
  const float ruler_h = 20.f * a.ui_scale;
  const float row_h = 22.f * a.ui_scale;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float avail_w = ImGui::GetContentRegionAvail().x;
  const float bars_x0 = origin.x + label_w;
  const float bars_w = std::max(20.f, avail_w - label_w - st.ScrollbarSize);
  s.view.x0 = bars_x0;
  s.view.width = bars_w;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = IM_COL32(228, 232, 240, 255), muted = IM_COL32(150, 158, 175, 255);
  const ImU32 accent = ImGui::GetColorU32(kAccent);

  // Ruler: click / drag scrubs, wheel zooms.
  ImGui::SetCursorScreenPos(ImVec2(bars_x0, origin.y));
  ImGui::InvisibleButton("##ruler", ImVec2(bars_w, ruler_h));
  ui_mark(a, "sgf_ruler");
  const bool ruler_hover = ImGui::IsItemHovered();
  if (ImGui::IsItemActive()) {
    s.scrubbing = true;
    s.scrub_step = s.view.step_at(io.MousePos.x);
  }
  if (ImGui::IsItemDeactivated() && s.scrubbing) {
    s.scrubbing = false;
    sgf_request_seek(a, s.scrub_step);
  }
  if (ruler_hover && io.MouseWheel != 0.f) {
    s.view.zoom_about(io.MousePos.x, std::pow(1.25f, io.MouseWheel));
    s.view_user = true;
  }
  dl->AddRectFilled(ImVec2(bars_x0, origin.y), ImVec2(bars_x0 + bars_w, origin.y + ruler_h),
                    IM_COL32(30, 34, 44, 255), 3.f);
  const double tick = tick_spacing(s.view, 70.f * a.ui_scale);
  dl->PushClipRect(ImVec2(bars_x0, origin.y), ImVec2(bars_x0 + bars_w, origin.y + th), true);
  for (double t0 = std::ceil(s.view.step0 / tick) * tick; t0 <= s.view.step1; t0 += tick) {
    float tx = s.view.step_to_x(t0);
    dl->AddLine(ImVec2(tx, origin.y + ruler_h - 6.f), ImVec2(tx, origin.y + ruler_h), muted);
    // The playhead's own label wins where they would overlap.
    const float ph = s.view.step_to_x(static_cast<double>(step));
    if (tx + 3.f < ph + 60.f * a.ui_scale && tx + 50.f * a.ui_scale > ph) continue;
    char b[32];
    std::snprintf(b, sizeof b, "%.0f", t0);
    dl->AddText(ImVec2(tx + 3.f, origin.y + 2.f), muted, b);
  }
  dl->PopClipRect();
  {
    ImVec2 lp(origin.x, origin.y + 2.f);
    dl->AddText(lp, muted, s.set.groups.empty() ? "no groups" : "groups");
  }

  // Rows (scroll when there are many groups).
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + ruler_h + 2.f));
  const float rows_h = std::max(row_h, ImGui::GetContentRegionAvail().y);
  ImGui::BeginChild("##rows", ImVec2(avail_w, rows_h), false,
                    ImGuiWindowFlags_AlwaysVerticalScrollbar);
  ImDrawList* cl = ImGui::GetWindowDrawList();
  const ImVec2 co = ImGui::GetCursorScreenPos();  // scrolled origin of row 0
  const int ng = static_cast<int>(s.set.groups.size());
  const float total_h = std::max(1, ng) * row_h;
  ImGui::InvisibleButton("##rowsbtn", ImVec2(label_w + bars_w, total_h));
  const bool rows_hover = ImGui::IsItemHovered();
  const bool rows_active = ImGui::IsItemActive();
  const float pad = 3.f * a.ui_scale;
  const Vec2 m{io.MousePos.x, io.MousePos.y};
  BarHit hover = rows_hover ? hit_test_bar(s.set, s.view, co.y, row_h, pad, m) : BarHit{};
  if (hover.part == BarPart::Start || hover.part == BarPart::End ||
      s.drag_bar.part == BarPart::Start || s.drag_bar.part == BarPart::End)
    ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
  // Press: select the group (label column) or the bar under the mouse; drag moves / resizes it.
  if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) {
    const int g = static_cast<int>(std::floor((m.y - co.y) / row_h));
    if (g >= 0 && g < ng) {
      s.group = g;
      s.entry = hover.entry;
      s.request_tab = !s.tab_open;
    }
    if (hover.part != BarPart::None) {
      s.drag_bar = hover;
      s.drag_orig =
          s.set.groups[static_cast<size_t>(hover.group)].entries[static_cast<size_t>(hover.entry)];
      s.drag_x = m.x;
    }
  }
  if (rows_hover && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left) &&
      hover.part == BarPart::None && m.x > bars_x0) {
    const int g = static_cast<int>(std::floor((m.y - co.y) / row_h));
    if (g >= 0 && g < ng) {
      SgfGroup& grp = s.set.groups[static_cast<size_t>(g)];
      SgfEntry en;
      en.s0 = std::max<int64_t>(1, s.view.step_at(m.x));
      en.s1 = en.s0 +
              std::max<int64_t>(1, static_cast<int64_t>(0.1 * (s.view.step1 - s.view.step0))) - 1;
      grp.entries.push_back(en);
      s.group = g;
      s.entry = static_cast<int>(grp.entries.size()) - 1;
      sgf_mark_edited(a);
      a.log("sgf entry s0=%" PRId64 " s1=%" PRId64 " f=%s group=\"%s\" index=%d action=add", en.s0,
            en.s1, sgf_force_text(en).c_str(), grp.name.c_str(), s.entry);
    }
  }
  if (s.drag_bar.part != BarPart::None) {
    if (rows_active && s.drag_bar.group < ng &&
        s.drag_bar.entry <
            static_cast<int>(s.set.groups[static_cast<size_t>(s.drag_bar.group)].entries.size())) {
      const double per_px = (s.view.step1 - s.view.step0) / std::max(1.f, s.view.width);
      const int64_t d = static_cast<int64_t>(std::llround((m.x - s.drag_x) * per_px));
      SgfEntry& en = s.set.groups[static_cast<size_t>(s.drag_bar.group)]
                         .entries[static_cast<size_t>(s.drag_bar.entry)];
      SgfEntry moved = drag_entry(s.drag_orig, s.drag_bar.part, d);
      if (moved.s0 != en.s0 || moved.s1 != en.s1) {
        en.s0 = moved.s0;
        en.s1 = moved.s1;
        sgf_mark_edited(a);
      }
    } else {
      if (s.drag_bar.group < ng) {
        const SgfGroup& grp = s.set.groups[static_cast<size_t>(s.drag_bar.group)];
        if (s.drag_bar.entry < static_cast<int>(grp.entries.size())) {
          const SgfEntry& en = grp.entries[static_cast<size_t>(s.drag_bar.entry)];
          if (en.s0 != s.drag_orig.s0 || en.s1 != s.drag_orig.s1)
            a.log("sgf entry s0=%" PRId64 " s1=%" PRId64 " f=%s group=\"%s\" index=%d action=move",
                  en.s0, en.s1, sgf_force_text(en).c_str(), grp.name.c_str(), s.drag_bar.entry);
        }
      }
      s.drag_bar = BarHit{};
    }
  }
  if (rows_hover && io.KeyCtrl && io.MouseWheel != 0.f) {
    s.view.zoom_about(m.x, std::pow(1.25f, io.MouseWheel));
    s.view_user = true;
  }

  // Draw visible rows.
  const float scroll = ImGui::GetScrollY();
  const int first = std::max(0, static_cast<int>(scroll / row_h));
  const int last_row = std::min(ng, static_cast<int>((scroll + rows_h) / row_h) + 1);
  const float clip_x1 = bars_x0 + bars_w;
  for (int g = first; g < last_row; ++g) {
    const SgfGroup& grp = s.set.groups[static_cast<size_t>(g)];
    const bool on = g < static_cast<int>(s.active.size()) && s.active[static_cast<size_t>(g)];
    const float y0 = co.y + g * row_h, y1 = y0 + row_h;
    if (g == s.group)
      cl->AddRectFilled(ImVec2(co.x, y0), ImVec2(clip_x1, y1), IM_COL32(255, 255, 255, 14));
    if (on)
      cl->AddRectFilled(ImVec2(bars_x0, y0), ImVec2(clip_x1, y1), ui::col32(grp.color, 0.14f));
    cl->AddLine(ImVec2(co.x, y1 - 0.5f), ImVec2(clip_x1, y1 - 0.5f), IM_COL32(255, 255, 255, 16));
    // Label.
    cl->AddRectFilled(ImVec2(co.x + 2, y0 + 5), ImVec2(co.x + 12, y1 - 5), ui::col32(grp.color),
                      2.f);
    cl->PushClipRect(ImVec2(co.x, y0), ImVec2(bars_x0 - 4.f, y1), true);
    cl->AddText(ImVec2(co.x + 18.f, y0 + 0.5f * (row_h - ImGui::GetFontSize())),
                on ? accent : (g == s.group ? text : muted), grp.name.c_str());
    cl->PopClipRect();
    // Bars.
    cl->PushClipRect(ImVec2(bars_x0, y0), ImVec2(clip_x1, y1), true);
    for (size_t e = 0; e < grp.entries.size(); ++e) {
      const SgfEntry& en = grp.entries[e];
      float xa, xb;
      bar_extent(s.view, en, 4.f, xa, xb);
      if (xb < bars_x0 || xa > clip_x1) continue;
      const bool cur_on = en.s0 <= step && step <= en.s1;
      const bool zero = en.fx == 0.0 && en.fy == 0.0 && en.fz == 0.0;
      const float alpha = zero ? 0.35f : (cur_on ? 1.f : 0.75f);
      cl->AddRectFilled(ImVec2(xa, y0 + pad), ImVec2(xb, y1 - pad), ui::col32(grp.color, alpha),
                        3.f);
      const bool sel = g == s.group && static_cast<int>(e) == s.entry;
      if (cur_on || sel)
        cl->AddRect(ImVec2(xa, y0 + pad), ImVec2(xb, y1 - pad),
                    IM_COL32(255, 255, 255, sel ? 255 : 200), 3.f, 0, sel ? 2.f : 1.2f);
      // Force direction arrow inside the bar.
      const float len = std::hypot(static_cast<float>(en.fx), static_cast<float>(en.fy));
      if (xb - xa > 20.f && len > 0.f) {
        const float r = 0.5f * (row_h - 2 * pad) - 2.f;
        const ImVec2 c(0.5f * (xa + xb), 0.5f * (y0 + y1));
        const float ux = static_cast<float>(en.fx) / len,
                    uy = -static_cast<float>(en.fy) / len;  // screen y down
        const ImVec2 tip(c.x + ux * r * 1.4f, c.y + uy * r);
        const ImVec2 tail(c.x - ux * r * 1.4f, c.y - uy * r);
        cl->AddLine(tail, tip, IM_COL32(10, 12, 16, 230), 2.f);
        const ImVec2 nrm(-uy, ux);
        cl->AddTriangleFilled(tip,
                              ImVec2(tip.x - ux * 5 + nrm.x * 3.5f, tip.y - uy * 5 + nrm.y * 3.5f),
                              ImVec2(tip.x - ux * 5 - nrm.x * 3.5f, tip.y - uy * 5 - nrm.y * 3.5f),
                              IM_COL32(10, 12, 16, 230));
      }
    }
    cl->PopClipRect();
  }
  if (ng == 0) {
    cl->AddText(
        ImVec2(bars_x0 + 8.f, co.y + 3.f), muted,
        "Select particles (tool 6), then SGF forces > New from selection; add entries with a force.");
  }
  if (hover.part != BarPart::None && s.drag_bar.part == BarPart::None) {
    const SgfGroup& grp = s.set.groups[static_cast<size_t>(hover.group)];
    const SgfEntry& en = grp.entries[static_cast<size_t>(hover.entry)];
    ImGui::SetTooltip("%s, entry %d\nsteps %" PRId64 " - %" PRId64
                      "\nforce per particle (%.4g, %.4g, %.4g)\n%zu particles\n"
                      "drag to move, drag an end to resize",
                      grp.name.c_str(), hover.entry + 1, en.s0, en.s1, en.fx, en.fy, en.fz,
                      grp.ids.size());
  }
  ImGui::EndChild();

  // Playhead, scrub ghost and seek target, over ruler and rows.
  ImDrawList* fg = ImGui::GetWindowDrawList();
  fg->PushClipRect(ImVec2(bars_x0 - 1.f, origin.y),
                   ImVec2(bars_x0 + bars_w + 1.f, origin.y + ruler_h + 2.f + rows_h), false);
  const float y_top = origin.y, y_bot = origin.y + ruler_h + 2.f + rows_h;
  auto vline = [&](int64_t sv, ImU32 c, float width, const char* label) {
    const float px = s.view.step_to_x(static_cast<double>(sv));
    if (px < bars_x0 - 1.f || px > bars_x0 + bars_w + 1.f) return;
    fg->AddLine(ImVec2(px, y_top), ImVec2(px, y_bot), c, width);
    fg->AddTriangleFilled(ImVec2(px - 5.f, y_top), ImVec2(px + 5.f, y_top), ImVec2(px, y_top + 7.f),
                          c);
    if (label) {
      ImVec2 ts = ImGui::CalcTextSize(label);
      float lx = std::min(px + 4.f, bars_x0 + bars_w - ts.x - 2.f);
      fg->AddRectFilled(ImVec2(lx - 2.f, y_top + ruler_h - ts.y - 1.f),
                        ImVec2(lx + ts.x + 2.f, y_top + ruler_h), IM_COL32(20, 24, 32, 235), 2.f);
      fg->AddText(ImVec2(lx, y_top + ruler_h - ts.y - 1.f), c, label);
    }
  };
  char lbl[48];
  std::snprintf(lbl, sizeof lbl, "%" PRId64, step);
  vline(step, accent, 2.f, lbl);
  if (s.seek_target >= 0) vline(s.seek_target, ImGui::GetColorU32(kWarn), 1.5f, nullptr);
  if (s.scrubbing) {
    std::snprintf(lbl, sizeof lbl, "go to %" PRId64, s.scrub_step);
    vline(s.scrub_step, IM_COL32(255, 255, 255, 220), 1.f, lbl);
  }
  fg->PopClipRect();
  (void)last;
  ui::end_strip();
}

}  // namespace ps
