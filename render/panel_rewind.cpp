// The rewind in the window: the recording of the loaded scene,
// seeking (keys Left / Right / Home, the strip under the scene), replaying
// the recorded future (Space), and the strip itself. The recording and its
// rules are sim/scene/rewind.h; what this file adds is the window's timing:
// seeks are requested by keys and the strip, applied at the sync point
// (rewind_sync) and replayed in step_frame under a time budget per frame.
#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "imgui.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"
#include "sim/dem/dem_world.h"

namespace ps {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kSeekBudgetMs = 40.0;    // simulation time per frame while seeking
constexpr double kReplayBudgetMs = 12.0;  // ... while replaying at normal speed (as live frames)

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// The state hash for the verbose log (0 when not verbose: it costs a pass).
uint64_t logged_hash(App& a) { return a.sim ? a.log_hash(*a.sim) : 0; }

/// The panels' copies of the world's parameters are taken again after the
/// recording changed the world (a restore, a replayed edit), so the next sync
/// point writes back what the world has and records nothing.
void adopt(App& a) {
  RewindUi& r = a.rw;
  if (r.generation == r.ring.generation()) return;
  r.generation = r.ring.generation();
  a.adopt_world_params();  // the features' copies too (Feature::pull)
  a.host_table_stale = true;
  a.grab_rows.clear();
}

void log_start(App& a) {
  RewindUi& r = a.rw;
  if (r.ring.active())
    a.log("rewind start step=%" PRId64 " hash=%016" PRIx64
          " budget=%zu snapshot=%zu interval=%" PRId64,
          a.sim->step_count(), logged_hash(a), r.ring.budget(), r.ring.stats().snapshot_bytes,
          r.ring.stats().interval);
  else
    a.log("rewind off reason=\"%s\"", r.ring.why_off().c_str());
}

ImU32 action_color(RewindAction::Kind k) {
  switch (k) {
    case RewindAction::Kind::Controls: return IM_COL32(120, 190, 255, 255);
    case RewindAction::Kind::Preset: return IM_COL32(255, 200, 80, 255);
    case RewindAction::Kind::Paint: return IM_COL32(120, 230, 140, 255);
    case RewindAction::Kind::ForceList: return IM_COL32(230, 120, 230, 255);
    case RewindAction::Kind::Keyframe: return IM_COL32(255, 130, 100, 255);
  }
  return IM_COL32_WHITE;
}

}  // namespace

size_t rewind_budget_from_settings(int mb) {
  return mb > 0 ? static_cast<size_t>(mb) << 20 : default_rewind_budget();
}

void rewind_check_scene(App& a) {
  RewindUi& r = a.rw;
  if (r.sim == a.sim.get()) return;
  r.sim = a.sim.get();
  r.pending_seek = r.target = -1;
  r.playback = r.dragging = r.was_behind = false;
  if (!a.sim) {
    r.ring.off("no scene");
    return;
  }
  r.ring.reset(*a.sim);
  r.generation = r.ring.generation();
  log_start(a);
}

void rewind_backend_changed(App& a) {
  // The recorded calls ran on the old backend: a new recording starts here.
  RewindUi& r = a.rw;
  if (!a.sim) return;
  r.pending_seek = r.target = -1;
  r.playback = false;
  r.ring.reset(*a.sim);
  r.generation = r.ring.generation();
  log_start(a);
}

void rewind_request_seek(App& a, int64_t step) {
  RewindUi& r = a.rw;
  if (!a.sim) return;
  if (!r.ring.active()) {
    a.set_status("rewind is off: " + r.ring.why_off());
    return;
  }
  r.pending_seek = std::max<int64_t>(0, step);
  if (a.running) {
    a.running = false;  // scrubbing pauses; Space replays the recorded future, then runs live
    a.log("pause");
  }
}

void rewind_keys(App& a, bool left, bool right, bool home) {
  if (!(left || right || home) || !a.sim) return;
  if (Comparison* c = a.compare.cmp.get()) {  // every pane to the same frame
    if (!c->rewinding()) {
      a.set_status("rewind is off: " + c->rewind_off());
      return;
    }
    const int64_t cur = a.compare.pending_seek >= 0 ? a.compare.pending_seek : c->frame();
    const int64_t to = home ? c->first_frame() : left ? cur - 1 : cur + 1;
    compare_request_seek(a, to);
    return;
  }
  RewindUi& r = a.rw;
  const int64_t cur = r.pending_seek >= 0 ? r.pending_seek
                      : r.target >= 0     ? r.target
                                          : a.sim->step_count();
  int64_t to = cur;
  if (home)
    to = r.ring.start();
  else if (left)
    to = r.ring.prev_boundary(cur);
  else
    to = r.ring.next_boundary(cur);
  rewind_request_seek(a, to);
}

void rewind_sync(App& a) {
  rewind_check_scene(a);
  RewindUi& r = a.rw;
  if (r.pending_seek < 0 || !a.sim) return;
  const int64_t want = r.pending_seek;
  r.pending_seek = -1;
  if (!r.ring.active()) return;
  a.sgf.seek_target = -1;  // a rewind seek replaces an SGF timeline seek
  r.target = std::clamp(want, r.ring.start(), r.ring.head());
  r.seek_t0 = Clock::now();
  r.seek_from = r.ring.restore_for(*a.sim, r.target);
  r.playback = true;
  adopt(a);
}

bool rewind_step_frame(App& a) {
  RewindUi& r = a.rw;
  if (!a.sim || !r.ring.active()) return false;
  Simulation& s = *a.sim;
  const bool seeking = r.target >= 0;
  const bool single = !a.running && a.pending.single_frames > 0;
  const bool behind = r.ring.behind_head(s);
  if (!seeking && !(behind && (a.running || single))) return false;
  int64_t target = r.target;
  double budget = kSeekBudgetMs;
  if (!seeking) {
    // One frame of the recorded future: whole recorded calls, up to a frame's substeps.
    const int64_t want = std::max(1, s.substeps_per_frame());
    target = s.step_count();
    while (target < s.step_count() + want && target < r.ring.head())
      target = r.ring.next_boundary(target);
    budget = kReplayBudgetMs;
    if (single) {
      --a.pending.single_frames;
      budget = 1e30;
    }
  }
  const auto t0 = Clock::now();
  int done = 0;
  bool halted = false;
  while (s.step_count() < target) {
    int n = 0;
    StepStatus st = r.ring.replay_call(s, target, n);
    done += n;
    if (!st.ok) {
      a.log("halt step=%" PRId64 " particle=%u message=\"%s\"", st.step, st.particle_id,
            st.message.c_str());
      halted = true;
      break;
    }
    if (n == 0 || ms_since(t0) >= budget) break;
  }
  a.substeps_last = done;
  if (done > 0) {
    const double per = ms_since(t0) / done;
    a.ms_per_substep = a.ms_per_substep > 0.0 ? 0.8 * a.ms_per_substep + 0.2 * per : per;
  }
  r.playback = true;
  adopt(a);
  if (seeking && (s.step_count() >= r.target || halted)) {
    a.log("rewind seek step=%" PRId64 " hash=%016" PRIx64 " from=%" PRId64 " ms=%.1f",
          s.step_count(), logged_hash(a), r.seek_from, ms_since(r.seek_t0));
    r.target = -1;
  } else if (!seeking && done > 0) {
    a.log("rewind replay step=%" PRId64 " hash=%016" PRIx64, s.step_count(), logged_hash(a));
    if (!r.ring.behind_head(s)) a.log("rewind live step=%" PRId64, s.step_count());
  }
  return true;
}

void rewind_after_live(App& a) {
  RewindUi& r = a.rw;
  if (!a.sim || a.substeps_last <= 0) return;
  r.playback = false;
  r.ring.end_frame();
  if (r.ring.active())
    a.log("rewind frame step=%" PRId64 " hash=%016" PRIx64, a.sim->step_count(), logged_hash(a));
}

// [SECTION] The strip -------------------------------------------------------------

float rewind_strip_height(const App& a) { return a.sim ? 30.f * a.ui_scale : 0.f; }

void compare_request_seek(App& a, int64_t frame) {
  Comparison* c = a.compare.cmp.get();
  if (!c || !c->rewinding()) return;
  a.compare.pending_seek = std::clamp(frame, c->first_frame(), c->head_frame());
  if (a.running) {
    a.running = false;  // scrubbing pauses; Space replays the recorded frames, then runs live
    a.log("pause");
  }
}

namespace {

/// The strip's common layout: its label, the bar (an invisible button named
/// `id`, marked for the GUI tests) and the memory text after it. Returns the
/// bar's corners.
void strip_bar(App& a, float rh, const char* label, const char* mem, const char* id, ImVec2& p0,
               ImVec2& p1) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(label);
  ImGui::SameLine();
  const float mem_w = ImGui::CalcTextSize(mem).x + 12.f * a.ui_scale;
  p0 = ImGui::GetCursorScreenPos();
  const float bw = std::max(40.f, ImGui::GetContentRegionAvail().x - mem_w);
  const float bh = std::max(8.f, rh - 8.f * a.ui_scale);
  ImGui::InvisibleButton(id, ImVec2(bw, bh));
  ui_mark(a, id + 2);  // without the "##"
  p1 = ImVec2(p0.x + bw, p0.y + bh);
}

/// The bar's background and the recorded part up to the shown state at `xs`.
void bar_base(ImDrawList* dl, ImVec2 p0, ImVec2 p1, float xs) {
  dl->AddRectFilled(p0, p1, IM_COL32(38, 42, 54, 255), 3.f);
  dl->AddRectFilled(p0, ImVec2(xs, p1.y), IM_COL32(64, 92, 130, 255), 3.f);
}

/// The playhead at `xs` and the bar's frame.
void bar_top(ImDrawList* dl, ImVec2 p0, ImVec2 p1, float xs, float ui_scale) {
  dl->AddLine(ImVec2(xs, p0.y - 1.f), ImVec2(xs, p1.y + 1.f), IM_COL32(255, 255, 255, 255),
              2.f * ui_scale);
  dl->AddRect(p0, p1, IM_COL32(90, 98, 120, 255), 3.f);
}

/// The comparison's strip: one bar over its recorded frames (every pane is
/// recorded by its own ring; a frame is the same moment in every pane).
void compare_draw_strip(App& a, float rh) {
  Comparison& c = *a.compare.cmp;
  const ImGuiIO& io = ImGui::GetIO();
  if (!c.rewinding()) {
    ImGui::TextDisabled("Rewind off: %s", c.rewind_off().c_str());
    return;
  }
  const int64_t first = c.first_frame(), head = std::max(c.head_frame(), first + 1);
  const int64_t shown = a.compare.pending_seek >= 0 ? a.compare.pending_seek : c.frame();
  char label[96];
  std::snprintf(label, sizeof label, "Rewind frame %6" PRId64 " / %" PRId64, shown, c.head_frame());
  char mem[64];
  std::snprintf(mem, sizeof mem, "%.0f MB, %zu panes",
                static_cast<double>(c.rewind_bytes()) / (1 << 20), c.size());
  ImVec2 p0, p1;
  strip_bar(a, rh, label, mem, "##compare_rewind_bar", p0, p1);
  const float bw = p1.x - p0.x;
  auto to_x = [&](int64_t f) {
    return p0.x + bw * static_cast<float>(static_cast<double>(f - first) /
                                          static_cast<double>(head - first));
  };
  if (ImGui::IsItemActive()) {
    const double u = std::clamp((io.MousePos.x - p0.x) / bw, 0.f, 1.f);
    const int64_t f =
        first + static_cast<int64_t>(std::floor(u * static_cast<double>(head - first) + 0.5));
    if (!a.compare.dragging || f != shown) compare_request_seek(a, f);
    a.compare.dragging = true;
  } else if (a.compare.dragging) {
    a.compare.dragging = false;
    a.log("compare scrub end frame=%" PRId64, shown);
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float xs = to_x(shown);
  bar_base(dl, p0, p1, xs);
  bar_top(dl, p0, p1, xs, a.ui_scale);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Every pane at the same frame (drag to scrub; Left / Right: one frame, Home: the start,\n"
        "Space: replay the recorded frames, then live). An edit behind the head discards the\n"
        "recorded frames after it in every pane.");
  ImGui::SameLine();
  ImGui::TextDisabled("%s", mem);
}

}  // namespace

void rewind_draw_strip(App& a) {
  const float rh = rewind_strip_height(a);
  if (rh <= 0.f) return;
  RewindUi& r = a.rw;
  const ImGuiIO& io = ImGui::GetIO();
  const float W = io.DisplaySize.x, H = io.DisplaySize.y;
  const float x = a.side_left(), w = std::max(64.f, W - a.side_left() - a.side_right());
  if (!ui::begin_strip("##rewind_strip", ImVec2(x, H - rh), ImVec2(w, rh),
                       ImVec2(8.f * a.ui_scale, 4.f * a.ui_scale)))
    return;
  if (a.compare.cmp) {
    compare_draw_strip(a, rh);
    ui::end_strip();
    return;
  }
  if (!r.ring.active()) {
    ImGui::TextDisabled("Rewind off: %s", r.ring.why_off().c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.ring.why_off().c_str());
    ui::end_strip();
    return;
  }
  const int64_t start = r.ring.start(), head = std::max(r.ring.head(), r.ring.start() + 1);
  const int64_t step = a.sim->step_count();
  const RewindStats st = r.ring.stats();
  char label[96];
  std::snprintf(label, sizeof label, "Rewind %7" PRId64 " / %" PRId64, step, r.ring.head());
  char mem[64];
  std::snprintf(mem, sizeof mem, "%.0f / %.0f MB",
                static_cast<double>(st.snapshot_bytes + st.log_bytes) / (1 << 20),
                static_cast<double>(st.budget) / (1 << 20));
  ImVec2 p0, p1;
  strip_bar(a, rh, label, mem, "##rewind_bar", p0, p1);
  const float bw = p1.x - p0.x, bh = p1.y - p0.y;
  r.view.step0 = static_cast<double>(start);
  r.view.step1 = static_cast<double>(head);
  r.view.x0 = p0.x;
  r.view.width = bw;
  const bool hovered = ImGui::IsItemHovered();
  if (ImGui::IsItemActive()) {
    // Scrub to the recorded frame boundary at or before the cursor (exact replays).
    int64_t s = std::clamp(r.view.step_at(io.MousePos.x), start, r.ring.head());
    if (s < r.ring.head()) s = r.ring.prev_boundary(s + 1);
    const int64_t shown = r.target >= 0 ? r.target : step;
    if (!r.dragging || s != shown) rewind_request_seek(a, s);
    r.dragging = true;
  } else if (r.dragging) {
    r.dragging = false;
    a.log("rewind scrub end step=%" PRId64, r.target >= 0 ? r.target : step);
  }

  ImDrawList* dl = ImGui::GetWindowDrawList();
  // The recorded future ahead of the shown state (replayed by Space).
  const float xs = r.view.step_to_x(static_cast<double>(step));
  bar_base(dl, p0, p1, xs);
  // Snapshots in the ring: ticks along the bottom.
  for (int64_t s : r.ring.snapshot_steps()) {
    const float sx = r.view.step_to_x(static_cast<double>(s));
    dl->AddLine(ImVec2(sx, p1.y - 0.35f * bh), ImVec2(sx, p1.y), IM_COL32(200, 210, 230, 150), 1.f);
  }
  // Recorded actions: dots along the top, coloured by kind.
  for (const RewindAction& act : r.ring.actions()) {
    const float ax = r.view.step_to_x(static_cast<double>(act.step));
    dl->AddCircleFilled(ImVec2(ax, p0.y + 0.3f * bh), 2.5f * a.ui_scale, action_color(act.kind));
  }
  // The playhead (and the seek target while replaying towards it).
  if (r.target >= 0) {
    const float tx = r.view.step_to_x(static_cast<double>(r.target));
    dl->AddLine(ImVec2(tx, p0.y), ImVec2(tx, p1.y), IM_COL32(255, 200, 80, 200), 1.5f);
  }
  bar_top(dl, p0, p1, xs, a.ui_scale);
  if (hovered) {
    const int64_t hs = std::clamp(r.view.step_at(io.MousePos.x), start, r.ring.head());
    ImGui::SetTooltip(
        "Step %" PRId64
        " (drag to scrub; Left / Right: one frame, Home: the start, Space: replay, then live)\n"
        "%zu snapshots every %" PRId64 " substeps or more, %zu recorded edits, %" PRId64
        " branches\n"
        "An edit behind the head discards the recorded future after it (a new branch).",
        hs, st.snapshots, st.interval, st.actions, st.branches);
  }
  ImGui::SameLine();
  ImGui::TextDisabled("%s", mem);
  ui::end_strip();
}

}  // namespace ps
