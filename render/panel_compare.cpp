// The comparison view: the scene's viewport split into 2 to 4
// panes, each a copy of the same initial state run with its own setting
// (sim/scene/compare.h), stepped in lockstep; presets, grab, attract and
// repel act on every pane at the same place; the cameras are linked (pan and
// zoom in one pane move all); each pane is labelled; the Stats plot overlays
// the panes' kinetic energy, momentum and angular momentum. The Compare
// panel (left column) starts and ends it. The single scene stays loaded,
// paused, and comes back when the comparison ends.
#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "imgui.h"
#include "imgui_stdlib.h"
#include "render/cpu/file_open.h"
#include "render/cpu/particle_fields.h"
#include "render/cpu/picking.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"
#include "sim/core/error.h"

namespace ps {

namespace {
using ui::help_marker;
using ui::kAccent;
using ui::kError;
using ui::kMuted;
using ui::section_label;

// Pane colours for labels and curves (distinct on dark and black backgrounds): the hues of
// `sandbox compare`'s images and curves.svg (verify::plot_colour: blue, orange, green, pink),
// lighter so they read on the dark panels.
const ImVec4 kPaneColor[4] = {{0.35f, 0.80f, 1.00f, 1.f},
                              {1.00f, 0.55f, 0.25f, 1.f},
                              {0.55f, 0.95f, 0.45f, 1.f},
                              {1.00f, 0.45f, 0.80f, 1.f}};

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
constexpr double kCompareBudgetMs =
    12.0;  // simulation time per frame for all panes together, as the single view

}  // namespace

// [SECTION] Start and end ------------------------------------------------------

bool App::start_compare(const std::string& vary) {
  CompareUi& c = compare;
  c.error.clear();
  if (!sim) return false;
  std::vector<PaneSpec> panes;
  std::unique_ptr<Comparison> next;
  try {
    panes = vary_panes_text(vary);
    // The scene's own overrides (a lesson's, --set) stay common, except those the panes vary.
    std::vector<std::string> common;
    for (const std::string& o : overrides) {
      const std::string path = o.substr(0, o.find('='));
      bool varied = false;
      for (const PaneSpec& p : panes)
        for (const std::string& s : p.settings) varied = varied || s.substr(0, s.find('=')) == path;
      if (!varied) common.push_back(o);
    }
    next = std::make_unique<Comparison>(scene_arg, common, panes, "cpu", opt.threads);
    next->set_recording(false);  // the Stats plots sample totals() themselves
  } catch (const InputError& e) {
    c.error = e.what();
  } catch (const std::exception& e) {
    c.error = e.what();
  }
  if (!next) {
    log("compare error %s", c.error.c_str());
    return false;
  }
  adopt_compare(std::move(next), vary, panes);
  return true;
}

void App::adopt_compare(std::unique_ptr<Comparison> next, const std::string& vary,
                        const std::vector<PaneSpec>& panes) {
  CompareUi& c = compare;
  c.error.clear();
  c.cmp = std::move(next);
  // The SGF lists edited in the window act on every pane (the scene's own come with each pane);
  // set before the recording starts, so its first snapshot holds them.
  if (!sgf.set.groups.empty()) c.cmp->set_force_list(sgf_list_for_sim(sgf.set));
  // Every pane recorded (Left / Right / Home and the strip): half the rewind budget on top of
  // the single scene's recording, which stays for when the comparison ends.
  if (!c.cmp->enable_rewind(rw.ring.budget() / 2))
    log("compare rewind off: %s", c.cmp->rewind_off().c_str());
  c.pending_seek = -1;
  c.dragging = false;
  c.vary = vary;
  c.panes = panes;
  c.linked_fit = true;
  c.touched = false;
  c.laid_panes = 0;  // laid out again at the next use
  // The panes' place this frame: the legends' dock is split for a comparison, not the single scene.
  if (cam.width() > 0.f) cam.set_viewport(scene_viewport());
  c.grabbing = false;
  c.halted.clear();
  c.last_sample = -1.0;
  if (color_mode == ColorMode::Speed)
    range_lo = range_hi = 0.f;  // the speed range starts with the panes
  for (auto& cv : c.curves) cv = CompareUi::Curves{};
  if (!c.renderers_ready) {
    for (ParticleRenderer& r : c.renderers) r.init();
    c.renderers_ready = true;
  }
  std::string labels;
  for (size_t k = 0; k < c.cmp->size(); ++k) labels += (k ? " | " : "") + c.cmp->pane(k).spec.label;
  log("compare start panes=%zu labels=\"%s\" hash0=%016" PRIx64, c.cmp->size(), labels.c_str(),
      log_hash(*c.cmp->pane(0).sim));
  set_status("comparing " + std::to_string(c.cmp->size()) + " panes: " + labels);
}

void App::end_compare() {
  if (!compare.cmp) return;
  log("compare end");
  if (lesson && !lesson->compare.empty() && !lesson_compare_ended) {
    // The lesson's text is about its panes: the Lesson panel puts it away (panel_lesson.cpp).
    lesson_compare_ended = true;
    log("lesson text hidden id=%s reason=\"comparison ended\"", lesson->id.c_str());
  }
  compare.cmp.reset();
  compare.grabbing = false;
  pending.fit_view = true;
  set_status("comparison ended: the single scene");  // not the panes' "comparing ..." line over it
}

// [SECTION] Stepping ------------------------------------------------------------

void App::compare_step_frame() {
  CompareUi& c = compare;
  substeps_last = 0;
  if (!c.halted.empty()) return;
  const bool single = !running && pending.single_frames > 0;
  if (!running && !single) return;
  if (single) --pending.single_frames;
  if (c.cmp->rewinding() && c.cmp->frame() < c.cmp->head_frame()) {
    // After a seek: the recorded future, one recorded frame per displayed frame, edits included.
    const int64_t s0 = c.cmp->pane(0).sim->step_count();
    const StepStatus st = c.cmp->step_frame();
    if (!st.ok) {
      c.halted = st.message;
      log("compare halt step=%" PRId64 " message=\"%s\"", st.step, st.message.c_str());
    }
    substeps_last = static_cast<int>(c.cmp->pane(0).sim->step_count() - s0);
    log("compare replay frame=%" PRId64 " hash0=%016" PRIx64 " hash1=%016" PRIx64, c.cmp->frame(),
        log_hash(*c.cmp->pane(0).sim), log_hash(*c.cmp->pane(1).sim));
    return;
  }
  const int want = std::max(1, c.cmp->pane(0).sim->substeps_per_frame());
  const double budget = single ? 1e30 : kCompareBudgetMs;
  const double t0 = seconds_now();
  auto all_steps = [&c] {
    int64_t n = 0;
    for (size_t k = 0; k < c.cmp->size(); ++k) n += c.cmp->pane(k).sim->step_count();
    return n;
  };
  const int64_t ref0 = c.cmp->pane(0).sim->step_count(), all0 = all_steps();
  int done = 0;
  bool ok = true;
  while (done < want) {
    // In double: a single frame's budget is 1e30, past int's range.
    const double left_ms = budget - 1e3 * (seconds_now() - t0);
    const double fit = ms_per_substep > 0.0 ? left_ms / ms_per_substep : 1.0;
    const int chunk = static_cast<int>(std::clamp(fit, 1.0, static_cast<double>(want - done)));
    // A pane far behind the first one's time (time steps up to Comparison::kMaxDtRatio apart, or a
    // CFL-adaptive pane whose dt has fallen) catches up within what is left of the frame's budget;
    // the first pane waits for it (the Compare panel says so). A single frame is stepped whole.
    const double room = c.ms_per_pane_substep > 0.0 ? left_ms / c.ms_per_pane_substep : 64.0;
    c.cmp->set_catch_up_limit(single ? 0 : static_cast<int64_t>(std::clamp(room, 1.0, 1e9)));
    const StepStatus st =
        c.cmp->step_part(chunk);  // the displayed frame ends below: one rewind frame
    done = static_cast<int>(c.cmp->pane(0).sim->step_count() - ref0);
    if (!st.ok) {
      ok = false;
      c.halted = st.message;
      log("compare halt step=%" PRId64 " message=\"%s\"", st.step, st.message.c_str());
      break;
    }
    if (1e3 * (seconds_now() - t0) >= budget) break;
  }
  if (ok) c.cmp->finish_frame();
  substeps_last = done;
  const double ms = 1e3 * (seconds_now() - t0);
  const double per = ms / std::max(1, done);
  ms_per_substep = ms_per_substep > 0.0 ? 0.8 * ms_per_substep + 0.2 * per : per;
  const double per_pane = ms / static_cast<double>(std::max<int64_t>(1, all_steps() - all0));
  c.ms_per_pane_substep =
      c.ms_per_pane_substep > 0.0 ? 0.8 * c.ms_per_pane_substep + 0.2 * per_pane : per_pane;
  speed_ratio = single ? 1.0 : 0.85 * speed_ratio + 0.15 * static_cast<double>(done) / want;
  if (c.cmp->behind() != c.was_behind) {
    c.was_behind = c.cmp->behind();
    if (c.was_behind)
      log("compare behind %s", c.cmp->behind_text().c_str());
    else
      log("compare caught up");
  }
  if (single)
    log("step frame substeps=%d want=%d step=%" PRId64, done, want,
        c.cmp->pane(0).sim->step_count());
}

/// Each pane's particles into its renderer; the curves sampled at the plots' rate.
void App::compare_snapshot() {
  CompareUi& c = compare;
  const bool speed = color_mode == ColorMode::Speed;
  float vmax = 0.f;
  for (size_t k = 0; k < c.cmp->size(); ++k) {
    ParticleTable& t = c.tables[k];
    c.cmp->pane(k).sim->table(t);
    if (speed)
      for (size_t i = 0; i < t.size(); ++i) vmax = std::max(vmax, std::hypot(t.vx[i], t.vy[i]));
  }
  if (speed) {
    // One range for all panes, so equal colours mean equal speeds: 0 to the
    // fastest since the comparison started or the last preset (as the single
    // view's), so a pane that loses its motion fades against one that keeps it.
    hold_speed_range(vmax, range_lo, range_hi);
  }
  for (size_t k = 0; k < c.cmp->size(); ++k) {
    const ParticleTable& t = c.tables[k];
    const size_t n = t.size();
    c.xy.resize(2 * n);
    for (size_t i = 0; i < n; ++i) {
      c.xy[2 * i] = t.x[i];
      c.xy[2 * i + 1] = t.y[i];
    }
    const float* sc = nullptr;
    const uint8_t* col = nullptr;
    if (speed) {
      c.scalar.resize(n);
      for (size_t i = 0; i < n; ++i) c.scalar[i] = std::hypot(t.vx[i], t.vy[i]);
      sc = c.scalar.data();
    } else {
      c.rgba.resize(4 * n);
      for (size_t i = 0; i < n; ++i) {
        for (int q = 0; q < 3; ++q)
          c.rgba[4 * i + q] = static_cast<uint8_t>(
              std::lround(std::clamp(t.color[i][static_cast<size_t>(q)], 0.f, 1.f) * 255.f));
        c.rgba[4 * i + 3] = 255;
      }
      col = c.rgba.data();
    }
    c.renderers[k].upload(n, c.xy.data(), nullptr, sc, col, t.radius.data());
  }
  const double now = seconds_now();
  if (c.last_sample < 0.0 || now - c.last_sample >= 0.05) {
    c.last_sample = now;
    if (running || c.curves[0].ke.empty()) {
      for (size_t k = 0; k < c.cmp->size(); ++k) {
        const Diagnostics d = c.cmp->pane(k).sim->totals();
        CompareUi::Curves& cv = c.curves[k];
        auto push = [](std::vector<float>& v, double x) {
          if (v.size() >= static_cast<size_t>(CompareUi::kSamples)) v.erase(v.begin());
          v.push_back(static_cast<float>(x));
        };
        push(cv.ke, d.kinetic_energy);
        push(cv.p, std::hypot(d.momentum[0], d.momentum[1]));
        push(cv.L, d.angular_momentum);
      }
    }
  }
}

// [SECTION] Layout and drawing ------------------------------------------------------

void App::compare_layout() {
  CompareUi& c = compare;
  if (!c.cmp) return;
  const ScreenRect v = cam.viewport();
  const float band = compare_label_band();
  Vec2 lo, hi;
  c.cmp->pane(0).sim->bounds(lo, hi);
  const float aspect = std::max(hi.x - lo.x, 1e-6f) / std::max(hi.y - lo.y, 1e-6f);
  const size_t n = c.cmp->size();
  const Tiling t = choose_tiling(static_cast<int>(n), v.w, v.h, aspect, compare_pane_gap(), band);
  if (c.laid_panes == n && t == c.tiling && band == c.band && v.x == c.laid_for.x &&
      v.y == c.laid_for.y && v.w == c.laid_for.w && v.h == c.laid_for.h)
    return;
  c.tiling = t;
  c.band = band;
  c.laid_for = v;
  c.laid_panes = n;
  c.labels_logged = false;
  if (!c.touched)
    c.linked_fit = true;  // a resize refits the panes, as the single view, until zoomed or panned
  const ScreenRect r0 = compare_pane_rect(0);
  log("compare layout rows=%d cols=%d panes=%zu viewport=%dx%d pane=%dx%d band=%d scene=%dx%d aspect=%.4g",
      t.rows, t.cols, n, static_cast<int>(v.w), static_cast<int>(v.h), static_cast<int>(r0.w),
      static_cast<int>(r0.h), static_cast<int>(band), static_cast<int>(t.scene_w),
      static_cast<int>(t.scene_h), static_cast<double>(aspect));
}

float App::compare_label_band() const {
  // The band at the top of each pane holds its label (the title font) and its time line.
  ImFont* big = ui::title_font();
  return 16.f * ui_scale + (big ? big->FontSize : ImGui::GetFontSize()) + ImGui::GetFontSize();
}

ScreenRect App::compare_pane_rect(size_t k) const {
  return tile_rect(compare.tiling, cam.viewport(), compare_pane_gap(), static_cast<int>(k));
}

Camera2D App::compare_camera(size_t k) {
  CompareUi& c = compare;
  compare_layout();
  Camera2D pc = cam;
  pc.set_viewport(compare_pane_rect(k));
  if (c.linked_fit) {
    Vec2 lo, hi;
    c.cmp->pane(0).sim->bounds(lo, hi);
    // Fitted below the label band; the linked centre is the world point at the pane's centre,
    // half a band above the fitted one's.
    const ScreenRect r0 = compare_pane_rect(0);
    Camera2D f = cam;
    f.set_viewport(ScreenRect{r0.x, r0.y + c.band, r0.w, std::max(1.f, r0.h - c.band)});
    f.fit(lo, hi);
    c.centre = f.centre() + Vec2{0.f, 0.5f * c.band / f.scale()};
    c.scale = f.scale();
    c.linked_fit = false;
    log("compare fit scale=%.6g", static_cast<double>(c.scale));  // pixels per world unit
  }
  pc.set(c.centre, c.scale);
  return pc;
}

void App::compare_draw() {
  CompareUi& c = compare;
  int fbw = 0, fbh = 0;  // draw_scene has set the viewport and cleared the frame
  glfwGetFramebufferSize(window, &fbw, &fbh);
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  glEnable(GL_SCISSOR_TEST);
  const ParticleShade shade =
      color_mode == ColorMode::Speed ? ParticleShade::Scalar : ParticleShade::Base;
  for (size_t k = 0; k < c.cmp->size(); ++k) {
    const Camera2D pc = compare_camera(k);
    const ScreenRect r = pc.viewport();
    const Vec2 f0 = pc.screen_to_framebuffer(Vec2{r.x, r.y + r.h});
    const Vec2 f1 = pc.screen_to_framebuffer(Vec2{r.x + r.w, r.y});
    glScissor(static_cast<GLint>(f0.x), fbh - static_cast<GLint>(f0.y),
              static_cast<GLsizei>(f1.x - f0.x), static_cast<GLsizei>(f0.y - f1.y));
    float view[16];
    pc.world_to_ndc(view);
    const float px = 1.f / pc.scale();
    Vec2 lo, hi;
    c.cmp->pane(k).sim->bounds(lo, hi);
    under.clear(px);
    under.rect(lo, hi,
               projector ? pack_rgba(0.05f, 0.05f, 0.06f) : pack_rgba(0.075f, 0.082f, 0.102f));
    under.rect_outline(lo, hi, 1.5f, pack_rgba(0.33f, 0.37f, 0.45f));
    under.draw(view);
    c.renderers[k].set_colormap(cmap[static_cast<size_t>(ColorMode::Speed)]);
    c.renderers[k].set_sprite_path(sprite_path);
    c.renderers[k].draw(view, pc.framebuffer_scale(),
                        projector ? 1.3f * sprite_scale : sprite_scale, shade, range_lo, range_hi,
                        -1);
    // The brush under the cursor, in the pane it is over (the same place acts in all).
    over.clear(px);
    if (r.contains(mouse) && !ImGui::GetIO().WantCaptureMouse &&
        (tools.tool == Tool::Grab || tools.tool == Tool::Attract || tools.tool == Tool::Repel)) {
      uint32_t col = pack_rgba(0.9f, 0.9f, 0.95f, 0.5f);
      if (tools.tool == Tool::Attract)
        col = pack_rgba(0.35f, 0.85f, 0.55f, left_down ? 0.9f : 0.5f);
      if (tools.tool == Tool::Repel) col = pack_rgba(1.f, 0.4f, 0.35f, left_down ? 0.9f : 0.5f);
      over.circle(pc.screen_to_world(mouse), tools.radius, 1.5f, col);
    }
    over.draw(view);
  }
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_BLEND);
}

/// Pane labels (large in projector mode), the paused cue and the halt banner, over the scene.
/// Each pane's label and time line stay in the band at its top, clipped to the pane: labels
/// take the title font where all of them fit it, else the text font, and one still too wide
/// is shortened with "...", so labels never run into each other or under the side panels.
void App::compare_labels() {
  CompareUi& c = compare;
  compare_layout();
  ImDrawList* dl = ImGui::GetForegroundDrawList();
  ImFont* big = ui::title_font();
  const float pad = 8.f * ui_scale;
  // One font for every label: the title font where all of them fit it.
  bool title_fits = big != nullptr;
  for (size_t k = 0; k < c.cmp->size() && title_fits; ++k)
    title_fits =
        big->CalcTextSizeA(big->FontSize, FLT_MAX, 0.f, c.cmp->pane(k).spec.label.c_str()).x <=
        compare_pane_rect(k).w - 2.f * pad;
  for (size_t k = 0; k < c.cmp->size(); ++k) {
    const ScreenRect r = compare_pane_rect(k);
    const ImVec4 pc = kPaneColor[k];
    dl->PushClipRect(ImVec2(r.x, r.y), ImVec2(r.x + r.w, r.y + r.h), true);
    dl->AddRect(ImVec2(r.x, r.y), ImVec2(r.x + r.w, r.y + r.h),
                ImGui::ColorConvertFloat4ToU32(ImVec4(pc.x, pc.y, pc.z, 0.6f)), 0.f, 0,
                1.5f * ui_scale);
    std::string label = c.cmp->pane(k).spec.label;
    const float room = std::max(0.f, r.w - 2.f * pad);
    ImFont* f = title_fits ? big : ImGui::GetFont();
    float size = title_fits ? big->FontSize : ImGui::GetFontSize();
    const char* fit = title_fits ? "title" : "text";
    if (f->CalcTextSizeA(size, FLT_MAX, 0.f, label.c_str()).x > room) {
      while (label.size() > 1 &&
             f->CalcTextSizeA(size, FLT_MAX, 0.f, (label + "...").c_str()).x > room) {
        label.pop_back();
        while (label.size() > 1 && (static_cast<unsigned char>(label.back()) & 0xC0) == 0x80)
          label.pop_back();  // whole UTF-8
      }
      label += "...";
      fit = "shortened";
    }
    const ImVec2 ts = f->CalcTextSizeA(size, FLT_MAX, 0.f, label.c_str());
    const ImVec2 p(r.x + pad, r.y + 6.f * ui_scale);
    dl->AddRectFilled(ImVec2(p.x - 4.f * ui_scale, p.y - 2.f * ui_scale),
                      ImVec2(p.x + ts.x + 4.f * ui_scale, p.y + ts.y + 2.f * ui_scale),
                      IM_COL32(0, 0, 0, 170), 4.f * ui_scale);
    dl->AddText(f, size, p, ImGui::ColorConvertFloat4ToU32(pc), label.c_str());
    // The time line; paused (a lesson opens so), it says so, and in the first pane how to run,
    // as the single scene's title line does, where that fits.
    char line[96];
    // Running: the real-time factor (simulated seconds per wall second), one clock for every pane.
    const std::string rate =
        running && sim_rate.known() ? "   " + rate_text(sim_rate.rate()) + " real time" : "";
    std::snprintf(line, sizeof line, "t = %.3f s%s", c.cmp->pane(k).sim->time(), rate.c_str());
    const ImVec2 tp(p.x, r.y + 10.f * ui_scale + (big ? big->FontSize : ImGui::GetFontSize()));
    dl->AddText(tp, ImGui::ColorConvertFloat4ToU32(kMuted), line);
    if (!running && c.halted.empty()) {
      const float x = tp.x + ImGui::CalcTextSize(line).x + 2.f * pad;
      const char* cue = k == 0 && ImGui::CalcTextSize("PAUSED   Space runs, N steps one frame").x <=
                                      r.x + r.w - pad - x
                            ? "PAUSED   Space runs, N steps one frame"
                            : "PAUSED";
      dl->AddText(ImVec2(x, tp.y), ImGui::ColorConvertFloat4ToU32(kAccent), cue);
    }
    dl->PopClipRect();
    if (!c.labels_logged)
      log("compare label pane=%zu x=%d y=%d w=%d h=%d font=%s pane_rect=%d,%d,%d,%d", k,
          static_cast<int>(p.x), static_cast<int>(p.y), static_cast<int>(ts.x),
          static_cast<int>(ts.y), fit, static_cast<int>(r.x), static_cast<int>(r.y),
          static_cast<int>(r.w), static_cast<int>(r.h));
  }
  c.labels_logged = true;
  if (!c.halted.empty()) {
    const ScreenRect v = cam.viewport();
    dl->AddText(ImVec2(v.x + 12.f * ui_scale, v.y + v.h - 3.f * ImGui::GetFontSize()),
                ImGui::ColorConvertFloat4ToU32(kError),
                ("stopped: " + c.halted + "   (Shift+R restarts the comparison)").c_str());
  }
}

// [SECTION] Input -------------------------------------------------------------------------

void App::compare_input(bool over_scene) {
  CompareUi& c = compare;
  ImGuiIO& io = ImGui::GetIO();
  compare_layout();
  if (pending.fit_view) {  // F: the panes fitted again
    c.linked_fit = true;
    c.touched = false;
  }
  // The pane under the cursor decides the world point; the same point acts in every pane.
  int pane = -1;
  for (size_t k = 0; k < c.cmp->size(); ++k)
    if (compare_pane_rect(k).contains(mouse)) pane = static_cast<int>(k);
  const bool in_pane = over_scene && pane >= 0;
  Camera2D pc = compare_camera(pane >= 0 ? static_cast<size_t>(pane) : 0);
  const Vec2 wm = pc.screen_to_world(mouse);
  if (in_pane && io.MouseWheel != 0.f) {
    pc.zoom_about(mouse, std::pow(1.15f, io.MouseWheel));
    c.centre = pc.centre();
    c.scale = pc.scale();
    c.touched = true;
  }
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Right) && in_pane) right_down = true;
  if (right_down) {
    if (io.MouseDown[ImGuiMouseButton_Right]) {
      const Vec2 d = mouse - last_mouse;
      if (d.x != 0.f || d.y != 0.f) {
        pc.pan(d);
        c.centre = pc.centre();
        c.touched = true;
      }
    } else {
      right_down = false;
    }
  }
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && in_pane) {
    left_down = true;
    if (tools.tool == Tool::Grab) {
      particles_within(c.tables[static_cast<size_t>(pane)], wm, tools.radius, c.grab_rows);
      if (!c.grab_rows.empty()) {
        c.cmp->grab_begin(c.grab_rows, wm, tools.grab_stiffness);
        c.grabbing = true;
        log("compare grab begin n=%zu pane=%d x=%.9g y=%.9g", c.grab_rows.size(), pane,
            static_cast<double>(wm.x), static_cast<double>(wm.y));
      }
    }
  }
  if (left_down) {
    if (io.MouseDown[ImGuiMouseButton_Left]) {
      if (c.grabbing) c.cmp->grab_move(wm);
    } else {
      left_down = false;
      if (c.grabbing) {
        c.cmp->grab_end();
        c.grabbing = false;
        log("compare grab end x=%.9g y=%.9g", static_cast<double>(wm.x), static_cast<double>(wm.y));
      }
    }
  }
  // After a seek the recorded attract / repel force stays until a button is pressed over a pane.
  if (!c.cmp->playing_back() || (left_down && in_pane))
    c.cmp->set_point_force(tool_point_force(tools, wm, left_down && in_pane));
}

// [SECTION] Panels ------------------------------------------------------------------------

void App::panel_compare() {
  CompareUi& c = compare;
  const ImGuiTreeNodeFlags open = c.cmp ? ImGuiTreeNodeFlags_DefaultOpen : 0;
  if (c.cmp) ImGui::SetNextItemOpen(true);
  if (!ImGui::CollapsingHeader("Compare side by side", open)) return;
  if (!c.cmp) {
    ImGui::TextWrapped(
        "Copies of this scene's initial state, one per setting, run in lockstep side by side.");
    section_label("vary (path=value,value,...; items separated by spaces)");
    ImGui::SetNextItemWidth(-FLT_MIN);
    const bool enter = ImGui::InputText("##vary", &c.vary, ImGuiInputTextFlags_EnterReturnsTrue);
    const char* quick[][2] = {
        {"PIC / APIC / FLIP", "solver.transfer=pic,apic,flip"},
        {"FLIP blend 0 / 0.95 / 1", "solver.transfer=flip solver.flip_blend=0,0.95,1"},
        {"kernel order", "solver.kernel=linear,quadratic,cubic"},
        {"grid 32 / 64", "domain.grid=32,64"}};
    for (int q = 0; q < 4; ++q) {
      if (q % 2) ImGui::SameLine();
      if (ImGui::SmallButton(quick[q][0])) c.vary = quick[q][1];
    }
    if (ImGui::Button("Compare", ImVec2(-FLT_MIN, 0)) || enter) pending.compare_vary = c.vary;
    help_marker(
        "Presets (T R S D), grab, attract and repel act on every pane at the same place; pan and zoom\n"
        "move all panes; Shift+R restarts the comparison; Esc or End comparison returns to the scene.\n"
        "Panes run to the same simulated time: a pane with a smaller time step takes more substeps (at\n"
        "most 100 times the first pane's dt apart); a pane that falls behind catches up while the others wait.");
  } else {
    for (size_t k = 0; k < c.cmp->size(); ++k) {
      ImGui::PushStyleColor(ImGuiCol_Text, kPaneColor[k]);
      ImGui::TextWrapped("%zu  %s", k + 1, c.cmp->pane(k).spec.label.c_str());
      ImGui::PopStyleColor();
    }
    ImGui::TextDisabled("step %" PRId64 "  |  %.3f ms per substep, all panes",
                        c.cmp->pane(0).sim->step_count(), ms_per_substep);
    if (c.cmp->behind()) {
      ImGui::PushStyleColor(ImGuiCol_Text, kAccent);
      ImGui::TextWrapped(
          "catching up: %s; the other panes wait (smaller time steps take more substeps)",
          c.cmp->behind_text().c_str());
      ImGui::PopStyleColor();
    }
    const float bw = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
    if (ImGui::Button("Restart  (Shift+R)", ImVec2(bw, 0))) pending.compare_vary = c.vary;
    ImGui::SameLine();
    if (ImGui::Button("End comparison", ImVec2(bw, 0))) pending.compare_end = true;
  }
  if (!c.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kError);
    ImGui::TextWrapped("%s", c.error.c_str());
    ImGui::PopStyleColor();
  }
}

/// One plot with a curve per pane (their own colours) and a shared range.
void App::compare_plot(const char* title, int which) {
  CompareUi& c = compare;
  const float h = 64.f * ui_scale;
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p0, ImVec2(p0.x + w, p0.y + h), ImGui::GetColorU32(ImGuiCol_FrameBg), 3.f);
  float lo = 1e30f, hi = -1e30f;
  auto series = [&](size_t k) -> const std::vector<float>& {
    const CompareUi::Curves& cv = c.curves[k];
    return which == 0 ? cv.ke : (which == 1 ? cv.p : cv.L);
  };
  for (size_t k = 0; k < c.cmp->size(); ++k)
    for (float v : series(k)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (which != 0) {  // momentum curves about zero: keep zero in view
    lo = std::min(lo, 0.f);
    hi = std::max(hi, 0.f);
  }
  if (!(hi > lo)) hi = lo + 1e-12f;
  // One polyline a curve, of a whole number of pixels: ImGui then draws it
  // from its baked line texture, two triangles a segment instead of six
  // (under software OpenGL the four panes' twelve curves were 17 000 triangles a frame).
  const float thickness = std::max(1.f, std::round(1.8f * ui_scale));
  ImVec2 pts[CompareUi::kSamples];
  for (size_t k = 0; k < c.cmp->size(); ++k) {
    const std::vector<float>& s = series(k);
    const int n = static_cast<int>(std::min(s.size(), static_cast<size_t>(CompareUi::kSamples)));
    for (int j = 0; j < n; ++j)
      pts[j] = ImVec2(p0.x + w * static_cast<float>(j) / (CompareUi::kSamples - 1),
                      p0.y + h - 3.f - (h - 6.f) * (s[static_cast<size_t>(j)] - lo) / (hi - lo));
    if (n >= 2)
      dl->AddPolyline(pts, n, ImGui::ColorConvertFloat4ToU32(kPaneColor[k]), ImDrawFlags_None,
                      thickness);
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s  [%.3g, %.3g]", title, static_cast<double>(lo),
                static_cast<double>(hi));
  dl->AddText(ImVec2(p0.x + 4.f, p0.y + 2.f), ImGui::GetColorU32(ImGuiCol_Text), buf);
  ImGui::Dummy(
      ImVec2(w, h));  // the plot was drawn with the draw list: reserve its place in the layout
}

void App::panel_compare_stats() {
  CompareUi& c = compare;
  if (!ImGui::CollapsingHeader("Stats (comparison)", ImGuiTreeNodeFlags_DefaultOpen)) return;
  for (size_t k = 0; k < c.cmp->size(); ++k) {
    if (k) ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, kPaneColor[k]);
    ImGui::Text("%zu", k + 1);
    ImGui::PopStyleColor();
  }
  ImGui::SameLine();
  ImGui::TextDisabled("(pane colours)");
  compare_plot("kinetic energy", 0);
  compare_plot("|linear momentum|", 1);
  compare_plot("angular momentum", 2);
  if (begin_props_compare()) {
    for (size_t k = 0; k < c.cmp->size(); ++k) {
      const CompareUi::Curves& cv = c.curves[k];
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::PushStyleColor(ImGuiCol_Text, kPaneColor[k]);
      ImGui::Text("%zu", k + 1);
      ImGui::PopStyleColor();
      ImGui::TableSetColumnIndex(1);
      ImGui::Text("%.4g", cv.ke.empty() ? 0.0 : static_cast<double>(cv.ke.back()));
      ImGui::TableSetColumnIndex(2);
      ImGui::Text("%.4g", cv.L.empty() ? 0.0 : static_cast<double>(cv.L.back()));
    }
    ImGui::EndTable();
  }
}

bool App::begin_props_compare() {
  if (!ImGui::BeginTable("##compare_now", 3, ImGuiTableFlags_SizingStretchProp)) return false;
  ImGui::TableSetupColumn("pane");
  ImGui::TableSetupColumn("KE");
  ImGui::TableSetupColumn("L");
  ImGui::TableHeadersRow();
  return true;
}

}  // namespace ps
