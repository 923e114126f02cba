// The SGF editor in the window: the select tool (click, box, lasso
// with Shift = add, Ctrl = remove), the selection's IDs (compact ranges,
// copyable, editable), the editable SgfSet (groups with name, colour, IDs and
// timed force entries), save / load as SGF CSVs plus groups.json, the
// timeline strip (render/sgf_timeline.cpp) and the overlays that show the selection and the groups whose force is on.
//
// Edits apply at the window's one sync point (sgf_sync, called from
// App::sync): the flattened set replaces the world's force hook through
// Simulation::set_force_list, from the next step on, without a reset.
//
// Scrubbing: forward is a fast-forward (the simulation steps at full speed,
// ~40 ms per frame, so the window stays live); backward resets the scene and
// re-simulates from step 0 to the target with the current set. The CPU
// backends are deterministic, so the re-simulated state is the state a run
// with these forces has at that step (mouse interactions are not replayed:
// the panel says so). A progress bar and a Cancel button show while seeking.
#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "imgui.h"
#include "imgui_stdlib.h"
#include "render/cpu/colormap.h"
#include "render/cpu/file_open.h"
#include "render/cpu/picking.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"
#include "sim/io/json.h"
#include "sim/scene/scene.h"

namespace ps {

namespace fs = std::filesystem;

namespace {
using ui::help_marker;
using ui::kAccent;
using ui::kError;
using ui::kGood;
using ui::kMuted;
using ui::kWarn;
using ui::section_label;

using Clock = std::chrono::steady_clock;

constexpr double kSeekBudgetMs = 40.0;  // simulation time per frame while seeking

}  // namespace

// Verbose mode: logs a widget's screen rectangle when it appears, moves or
// scrolls in or out of view, so the GUI tests can click it
// ("ui name=... x= y= w= h= visible=0|1"; visible = wholly inside its window).
// Declared in window_state.h (the Heat panel uses it too).
void ui_mark(App& a, const char* name) {
  if (!a.opt.verbose) return;
  static std::map<std::string, std::array<int, 5>> seen;
  const ImVec2 lo = ImGui::GetItemRectMin(), hi = ImGui::GetItemRectMax();
  const ImVec2 wp = ImGui::GetWindowPos(), ws = ImGui::GetWindowSize();
  const bool vis = ImGui::IsItemVisible() && lo.y >= wp.y && hi.y <= wp.y + ws.y && lo.x >= wp.x &&
                   hi.x <= wp.x + ws.x;
  std::array<int, 5> r{static_cast<int>(lo.x), static_cast<int>(lo.y),
                       static_cast<int>(hi.x - lo.x), static_cast<int>(hi.y - lo.y), vis ? 1 : 0};
  auto it = seen.find(name);
  if (it != seen.end() && it->second == r) return;
  seen[name] = r;
  a.log("ui name=%s x=%d y=%d w=%d h=%d visible=%d", name, r[0], r[1], r[2], r[3], r[4]);
}

// Shared with the timeline strip (render/sgf_timeline.cpp; declared in sgf_ui.h).

std::string sgf_force_text(const SgfEntry& e) {
  char b[96];
  std::snprintf(b, sizeof b, "(%.6g,%.6g,%.6g)", e.fx, e.fy, e.fz);
  return b;
}

int64_t sgf_current_step(const App& a) { return a.sim ? a.sim->step_count() : 0; }

void sgf_mark_edited(App& a) {
  a.sgf.dirty = true;
  a.sgf.edited = true;
  ++a.sgf.edits;
}

namespace {

std::vector<uint32_t> sorted_ids(const std::vector<uint32_t>& ids) {
  std::vector<uint32_t> s = ids;
  normalize_ids(s);
  return s;
}

std::string unique_group_name(const SgfSet& set) {
  for (size_t k = set.groups.size() + 1;; ++k) {
    std::string n = "group " + std::to_string(k);
    bool used = false;
    for (const SgfGroup& g : set.groups) used = used || g.name == n;
    if (!used) return n;
  }
}

void log_motion(App& a) {
  SgfUi& s = a.sgf;
  a.refresh_host_table();  // the CUDA-GL interop keeps it only roughly current
  const size_t n = std::min<size_t>(s.set.groups.size(), 40);
  for (size_t g = 0; g < n; ++g) {
    std::vector<uint32_t> ids = sorted_ids(s.set.groups[g].ids);
    size_t ni = 0, no = 0;
    Vec2 vi = mean_velocity(a.table, ids, true, ni);
    Vec2 vo = mean_velocity(a.table, ids, false, no);
    a.log("sgf motion group=\"%s\" n=%zu v=(%.6g,%.6g) others n=%zu v=(%.6g,%.6g) step=%" PRId64,
          s.set.groups[g].name.c_str(), ni, static_cast<double>(vi.x), static_cast<double>(vi.y),
          no, static_cast<double>(vo.x), static_cast<double>(vo.y), sgf_current_step(a));
  }
}

}  // namespace

void sgf_request_seek(App& a, int64_t target) {
  SgfUi& s = a.sgf;
  if (!a.sim) return;
  target = std::max<int64_t>(0, target);
  const int64_t cur = a.sim->step_count();
  if (target == cur && s.seek_target < 0) return;
  s.resume_after_seek = false;
  s.seek_target = target;
  s.seek_from = cur;
  s.seek_reset = target < cur;
  if (s.seek_reset) a.pending.reset = true;
  a.running = false;
  a.log("timeline step=%" PRId64 " from=%" PRId64 " reset=%d", target, cur, s.seek_reset ? 1 : 0);
}

void sgf_cancel_seek(App& a, const char* why) {
  if (a.sgf.seek_target < 0) return;
  a.log("timeline seek cancelled at step=%" PRId64 " (%s)", sgf_current_step(a), why);
  a.sgf.seek_target = -1;
  a.sgf.seek_reset = false;
}

// [SECTION] Scene changes and the sync point -------------------------------------

void sgf_scene_loaded(App& a) {
  SgfUi& s = a.sgf;
  if (!a.sim) return;
  const std::string path = a.sim->info().path;
  if (path == s.scene_path) {
    // A reset of the same scene: keep the edited set (and the selection, by ID).
    if (s.edited) s.dirty = true;
    return;
  }
  s.scene_path = path;
  s.set = SgfSet{};
  s.edited = s.dirty = false;
  s.group = s.entry = -1;
  s.selection.clear();
  s.messages.clear();
  s.status.clear();
  s.scene_sgf_dir.clear();
  s.view_user = false;
  s.drag_bar = BarHit{};
  s.folder = (fs::path(a.out_dir) / (fs::path(path).stem().string() + "-sgf")).string();
  s.source = "new set (the scene has no SGF folder)";
  try {
    Json doc = read_scene_document(path, a.overrides);
    if (const Json* j = doc.find("sgf"); j && j->is_string()) {
      fs::path dir = j->as_string();
      if (dir.is_relative()) dir = fs::path(path).parent_path() / dir;
      s.scene_sgf_dir = dir.lexically_normal().string();
      SgfSetLoadResult r = load_sgf_set(s.scene_sgf_dir);
      s.set = std::move(r.set);
      for (const InputError& e : r.diagnostics) s.messages.push_back(e.what());
      size_t entries = 0;
      for (const SgfGroup& g : s.set.groups) entries += g.entries.size();
      s.source = "scene folder " + fs::path(s.scene_sgf_dir).filename().string() + ": " +
                 std::to_string(s.set.groups.size()) + " groups, " + std::to_string(entries) +
                 " entries";
      a.log("sgf scene dir=%s groups=%zu entries=%zu problems=%zu", s.scene_sgf_dir.c_str(),
            s.set.groups.size(), entries, r.diagnostics.size());
    }
  } catch (const std::exception& e) {
    s.messages.push_back(e.what());
  }
  s.show_timeline = !s.set.groups.empty();
  s.view.fit(last_sgf_step(s.set), 0);
}

void sgf_sync(App& a) {
  SgfUi& s = a.sgf;
  // The select tool brings its panel forward.
  const bool select = a.tools.tool == Tool::Select;
  if (select && !s.was_select) {
    s.request_tab = true;
    s.show_timeline = true;
  }
  s.was_select = select;
  if (s.was_running && !a.running) log_motion(a);
  s.was_running = a.running;
  if (!s.dirty || !a.sim) return;
  s.dirty = false;
  auto l = std::make_shared<SgfList>(sgf_list_for_sim(s.set));  // render/cpu/file_open.h
  RewindAction act;  // recorded with its step (sim/scene/rewind.h)
  act.kind = RewindAction::Kind::ForceList;
  act.list = l;
  a.rw.ring.apply(*a.sim, std::move(act));
  if (a.compare.cmp) a.compare.cmp->set_force_list(*l);  // every pane alike
  a.log("sgf apply files=%zu rows=%zu step=%" PRId64,
        s.set.groups.empty() ? size_t{0} : sgf_flatten(s.set).files.size(), l->row_count(),
        sgf_current_step(a));
}

bool sgf_seek_frame(App& a) {
  SgfUi& s = a.sgf;
  if (s.seek_target < 0) return false;
  if (!a.sim) {
    s.seek_target = -1;
    return false;
  }
  int64_t cur = a.sim->step_count();
  if (cur > s.seek_target) {
    // The reset did not happen (the scene failed to reload): nothing to re-run.
    sgf_cancel_seek(a, "the scene could not be reset");
    return false;
  }
  auto t0 = Clock::now();
  double elapsed = 0.0;
  int done = 0;
  while (cur < s.seek_target) {
    int64_t chunk = 1;
    if (a.ms_per_substep > 0.0)
      chunk = static_cast<int64_t>((kSeekBudgetMs - elapsed) / a.ms_per_substep);
    chunk = std::clamp<int64_t>(chunk, 1, std::min<int64_t>(s.seek_target - cur, 1 << 20));
    StepStatus st = a.rw.ring.step(*a.sim, static_cast<int>(chunk));
    done += static_cast<int>(chunk);
    cur = a.sim->step_count();
    elapsed = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!st.ok) {
      a.log("halt step=%" PRId64 " particle=%u message=\"%s\"", st.step, st.particle_id,
            st.message.c_str());
      sgf_cancel_seek(a, "the simulation blew up");
      break;
    }
    if (elapsed >= kSeekBudgetMs) break;
  }
  a.substeps_last = done;
  if (done > 0) {
    double per = elapsed / done;
    a.ms_per_substep = a.ms_per_substep > 0.0 ? 0.8 * a.ms_per_substep + 0.2 * per : per;
  }
  if (s.seek_target >= 0 && cur >= s.seek_target) {
    a.log("timeline reached step=%" PRId64, cur);
    s.seek_target = -1;
    a.running = s.resume_after_seek;
    s.was_running = a.running;
  }
  return true;
}

// [SECTION] Select tool --------------------------------------------------------------

void sgf_select_begin(App& a) {
  SgfUi& s = a.sgf;
  const ImGuiIO& io = ImGui::GetIO();
  s.dragging = true;
  s.drag_start = a.mouse;
  s.lasso.clear();
  s.lasso.push_back(a.mouse);
  s.drag_op = select_op_from_mods(io.KeyShift, io.KeyCtrl || io.KeySuper);
  s.drag_far = 0.f;
}

void sgf_select_drag(App& a) {
  SgfUi& s = a.sgf;
  if (!s.dragging) return;
  s.drag_far = std::max(s.drag_far, length(a.mouse - s.drag_start));
  if (s.select_mode == 1 && length(a.mouse - s.lasso.back()) >= 2.f) s.lasso.push_back(a.mouse);
  // The modifiers may be pressed after the button.
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyShift || io.KeyCtrl || io.KeySuper)
    s.drag_op = select_op_from_mods(io.KeyShift, io.KeyCtrl || io.KeySuper);
}

void sgf_select_end(App& a) {
  SgfUi& s = a.sgf;
  if (!s.dragging) return;
  s.dragging = false;
  std::vector<uint32_t> hits;
  const char* kind = "point";
  const Vec2 end = a.mouse;
  // A click (the cursor never left a 4 px circle) picks one particle; a lasso may end where it began.
  if (std::max(s.drag_far, length(end - s.drag_start)) < 4.f) {
    float slack = 3.f / a.cam.scale();
    int64_t row = pick_particle(a.table, a.cam.screen_to_world(end), slack);
    if (row >= 0 && static_cast<size_t>(row) < a.sgf_rows) {
      hits.push_back(a.table.id[static_cast<size_t>(row)]);
      a.selected_id = hits[0];
      a.selected_row = row;
    }
  } else if (s.select_mode == 0) {
    kind = "box";
    hits = select_box(a.table, a.cam.screen_to_world(s.drag_start), a.cam.screen_to_world(end),
                      a.sgf_rows);
  } else {
    kind = "lasso";
    s.lasso.push_back(end);
    std::vector<Vec2> poly;
    poly.reserve(s.lasso.size());
    for (const Vec2& p : s.lasso) poly.push_back(a.cam.screen_to_world(p));
    hits = select_lasso(a.table, poly, a.sgf_rows);
  }
  apply_selection(s.selection, hits, s.drag_op);
  s.lasso.clear();
  s.request_tab = !s.tab_open;
  a.log("select n=%zu ids=%s kind=%s op=%s hits=%zu", s.selection.size(),
        format_id_ranges(s.selection).c_str(), kind, select_op_name(s.drag_op), hits.size());
}

// [SECTION] Overlays on the scene -------------------------------------------------------

bool sgf_overlay_needs_rows(const App& a) {
  const SgfUi& s = a.sgf;
  if (!s.selection.empty()) return true;
  if (!s.highlight) return false;
  const std::vector<uint8_t> on = active_groups(s.set, sgf_current_step(a));
  for (size_t g = 0; g < on.size() && g < s.set.groups.size(); ++g)
    if (on[g] && !s.set.groups[g].ids.empty()) return true;
  return false;
}

void sgf_draw_over(App& a) {
  SgfUi& s = a.sgf;
  if (!a.sim) return;
  const ParticleTable& t = a.table;
  const size_t n =
      std::min(t.size(), a.sgf_rows);  // the rows the lists act on (not a scene's grains)
  // ID -> row for this frame.
  uint32_t max_id = 0;
  for (size_t i = 0; i < n; ++i) max_id = std::max(max_id, t.id[i]);
  s.row_of_id.assign(static_cast<size_t>(max_id) + 1, 0);
  for (size_t i = 0; i < n; ++i) s.row_of_id[t.id[i]] = static_cast<uint32_t>(i + 1);
  auto row_of = [&](uint32_t id) -> int64_t {
    return id < s.row_of_id.size() && s.row_of_id[id] ? static_cast<int64_t>(s.row_of_id[id]) - 1
                                                      : -1;
  };
  const float px = 1.f / a.cam.scale();
  const int64_t step = sgf_current_step(a);
  s.active = active_groups(s.set, step);
  const uint32_t halo = pack_rgba(0.02f, 0.02f, 0.03f, 0.7f);

  // Groups whose force is on: tinted in the group colour, an arrow at the
  // centroid in the force direction (for at most 12 groups, else only the
  // current group's: a crowd of arrows hides the body).
  size_t n_active = 0;
  for (uint8_t on : s.active) n_active += on;
  for (size_t g = 0; g < s.set.groups.size() && s.highlight; ++g) {
    if (!s.active[g]) continue;
    const SgfGroup& grp = s.set.groups[g];
    const SgfEntry& e = grp.entries[static_cast<size_t>(active_entry(grp, step))];
    const uint32_t tint = pack_rgba(grp.color[0], grp.color[1], grp.color[2], 0.6f);
    double cx = 0, cy = 0;
    size_t cnt = 0;
    for (uint32_t id : grp.ids) {
      int64_t r = row_of(id);
      if (r < 0) continue;
      const size_t k = static_cast<size_t>(r);
      const float rad =
          std::max(t.radius.size() == n ? t.radius[k] * a.sprite_scale : 0.f, 1.6f * px);
      a.over.disc(Vec2{t.x[k], t.y[k]}, rad, tint, 8);
      cx += t.x[k];
      cy += t.y[k];
      ++cnt;
    }
    const Vec2 f{static_cast<float>(e.fx), static_cast<float>(e.fy)};
    if (cnt && length(f) > 0.f && (n_active <= 12 || static_cast<int>(g) == s.group)) {
      const Vec2 c{static_cast<float>(cx / cnt), static_cast<float>(cy / cnt)};
      const Vec2 tip = c + (46.f * px / length(f)) * f;
      a.over.arrow(c, tip, 6.f, halo);
      a.over.arrow(c, tip, 3.f, pack_rgba(grp.color[0], grp.color[1], grp.color[2], 1.f));
    }
  }

  // The selection: a bright ring (or a dot when particles are tiny on screen).
  s.sel_rows.clear();
  for (uint32_t id : s.selection) {
    int64_t r = row_of(id);
    if (r >= 0) s.sel_rows.push_back(static_cast<uint32_t>(r));
  }
  const uint32_t ring = pack_rgba(1.f, 1.f, 1.f, 0.95f), dot = pack_rgba(0.55f, 0.95f, 1.f, 0.85f);
  for (uint32_t r : s.sel_rows) {
    const float rad = t.radius.size() == n ? t.radius[r] * a.sprite_scale : 2.f * px;
    const Vec2 c{t.x[r], t.y[r]};
    if (rad * a.cam.scale() >= 3.5f) {
      a.over.circle(c, rad, 1.6f, ring, 12);
    } else {
      a.over.disc(c, std::max(rad, 1.2f * px), dot, 6);
    }
  }

  // The box or lasso being drawn.
  if (s.dragging && std::max(s.drag_far, length(a.mouse - s.drag_start)) >= 4.f) {
    const uint32_t col = s.drag_op == SelectOp::Remove ? pack_rgba(1.f, 0.45f, 0.4f, 0.95f)
                         : s.drag_op == SelectOp::Add  ? pack_rgba(0.45f, 0.9f, 0.55f, 0.95f)
                                                       : pack_rgba(0.9f, 0.93f, 1.f, 0.95f);
    const uint32_t fill = (col & 0x00FFFFFFu) | (0x22u << 24);
    if (s.select_mode == 0) {
      Vec2 w0 = a.cam.screen_to_world(s.drag_start), w1 = a.cam.screen_to_world(a.mouse);
      Vec2 lo{std::min(w0.x, w1.x), std::min(w0.y, w1.y)},
          hi{std::max(w0.x, w1.x), std::max(w0.y, w1.y)};
      a.over.rect(lo, hi, fill);
      a.over.rect_outline(lo, hi, 1.5f, col);
    } else if (s.lasso.size() >= 2) {
      s.lasso_world.clear();
      for (const Vec2& p : s.lasso) s.lasso_world.push_back(a.cam.screen_to_world(p));
      s.lasso_world.push_back(a.cam.screen_to_world(a.mouse));
      for (size_t k = 0; k + 1 < s.lasso_world.size(); ++k)
        a.over.line(s.lasso_world[k], s.lasso_world[k + 1], 1.6f, col);
      a.over.line(s.lasso_world.back(), s.lasso_world.front(), 1.f,
                  (col & 0x00FFFFFFu) | (0x80u << 24));
    }
  }
}

// [SECTION] The SGF tab ------------------------------------------------------------------

namespace {

void file_bar(App& a) {
  SgfUi& s = a.sgf;
  ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
  ImGui::TextWrapped("%s", s.source.c_str());
  ImGui::PopStyleColor();
  const ImGuiStyle& st = ImGui::GetStyle();
  const float bw = ImGui::CalcTextSize("Load").x + 2 * st.FramePadding.x;
  ImGui::SetNextItemWidth(-(2 * bw + 2 * st.ItemSpacing.x + 12.f));
  ImGui::InputTextWithHint("##sgf_folder", "folder for SGF CSVs + groups.json", &s.folder);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Save writes SGF<start>-<end>.csv files and groups.json here.");
  ImGui::SameLine();
  if (ImGui::Button("Save") && !s.folder.empty()) {
    // All or nothing (save_sgf_set): on failure the folder keeps the previous
    // set, and the message (file and OS reason) shows here and in the window's
    // status area.
    try {
      save_sgf_set(s.set, s.folder);
      SgfList flat = sgf_flatten(s.set);
      s.messages.clear();
      s.status = "saved " + std::to_string(s.set.groups.size()) + " groups, " +
                 std::to_string(flat.files.size()) + " files to " + s.folder;
      a.set_status("SGF set saved: " + s.folder);
      a.log("sgf save dir=%s groups=%zu files=%zu", s.folder.c_str(), s.set.groups.size(),
            flat.files.size());
    } catch (const std::exception& e) {
      s.status.clear();
      s.messages.assign(1, std::string("not saved: ") + e.what());
      a.load_error = std::string("SGF set not saved: ") + e.what();
      a.log("sgf save error %s", e.what());
    }
  }
  ui_mark(a, "sgf_save");
  ImGui::SameLine();
  if (ImGui::Button("Load") && !s.folder.empty()) {
    // Parsed into a fresh set (render/cpu/file_open.h), by the rule `--sgf` follows: the good
    // files load, a file with any problem is skipped whole and listed (file:line:col, field).
    // The live set, and so the running simulation's forces, change only when a file loaded.
    SgfSetOpen r = open_sgf_set(s.folder);
    if (!r.ok) {
      s.messages = std::move(r.messages);
      s.status.clear();
      // The verdict, then the first problem (file:line:col: field ...).
      a.log("sgf load error %s%s%s", s.messages.empty() ? "" : s.messages.front().c_str(),
            s.messages.size() > 1 ? " | " : "", s.messages.size() > 1 ? s.messages[1].c_str() : "");
    } else {
      s.messages = std::move(r.messages);  // the skipped files' problems, if any
      s.status.clear();
      s.set = std::move(r.set);
      s.group = s.set.groups.empty() ? -1 : 0;
      s.entry = -1;
      sgf_mark_edited(a);
      s.view_user = false;
      s.show_timeline = true;
      s.source =
          "loaded " + s.folder + ": " + std::to_string(s.set.groups.size()) + " groups, " +
          std::to_string(r.entries) + " entries" +
          (r.skipped.empty() ? "" : ", " + std::to_string(r.skipped.size()) + " files skipped");
      a.log("sgf load dir=%s groups=%zu entries=%zu problems=%zu files=%zu skipped=%zu",
            s.folder.c_str(), s.set.groups.size(), r.entries, r.problems, r.files,
            r.skipped.size());
      for (size_t k = 1; k < s.messages.size() && k <= 20; ++k)
        a.log("sgf load problem %s", s.messages[k].c_str());
    }
  }
  ui_mark(a, "sgf_load");
  if (!s.scene_sgf_dir.empty() && s.folder != s.scene_sgf_dir) {
    if (ImGui::SmallButton("use the scene's SGF folder")) s.folder = s.scene_sgf_dir;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", s.scene_sgf_dir.c_str());
  }
  if (!s.messages.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kError);
    const size_t shown = std::min<size_t>(s.messages.size(), 6);
    for (size_t k = 0; k < shown; ++k) ImGui::TextWrapped("%s", s.messages[k].c_str());
    if (s.messages.size() > shown) ImGui::Text("... and %zu more", s.messages.size() - shown);
    ImGui::PopStyleColor();
    if (ImGui::SmallButton("Dismiss")) s.messages.clear();
  } else if (!s.status.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kGood);
    ImGui::TextWrapped("%s", s.status.c_str());
    ImGui::PopStyleColor();
  }
}

void selection_section(App& a) {
  SgfUi& s = a.sgf;
  if (!ImGui::CollapsingHeader("Selection", ImGuiTreeNodeFlags_DefaultOpen)) return;
  if (a.tools.tool != Tool::Select) {
    if (ImGui::Button("Use the select tool  (6)", ImVec2(-FLT_MIN, 0))) {
      a.tools.tool = Tool::Select;
      a.log("tool %s", tool_name(a.tools.tool));
    }
  }
  ImGui::TextUnformatted("drag");
  ImGui::SameLine();
  if (ImGui::RadioButton("box", s.select_mode == 0)) s.select_mode = 0;
  ImGui::SameLine();
  if (ImGui::RadioButton("lasso", s.select_mode == 1)) s.select_mode = 1;
  ui_mark(a, "sgf_lasso");
  help_marker(
      "Select tool (key 6): click a particle, or drag a box / lasso around particles.\n"
      "Shift adds to the selection, Ctrl removes from it.\n"
      "IDs are the stable particle IDs that SGF files and dumps use.");
  // Typed / pasted IDs, then what is selected, then Copy / Clear: nothing above Select changes
  // height when the selection does, and what grows (the ranges, the ID list) is below Clear, so
  // a second click where Select was is Select again, never Clear.
  const ImGuiStyle& st = ImGui::GetStyle();
  const float sel_w = ImGui::CalcTextSize("Select").x + 2 * st.FramePadding.x;
  ImGui::SetNextItemWidth(-(sel_w + st.ItemSpacing.x));
  bool enter = ImGui::InputTextWithHint("##ids", "type IDs: 12-40, 57", &s.ids_edit,
                                        ImGuiInputTextFlags_EnterReturnsTrue);
  ui_mark(a, "sgf_ids");
  ImGui::SameLine();
  const bool select = ImGui::Button("Select");
  ui_mark(a, "sgf_select");
  if ((select || enter) && !s.ids_edit.empty()) {
    std::vector<uint32_t> ids;
    if (parse_id_ranges(s.ids_edit, ids, s.ids_error)) {
      s.selection = std::move(ids);
      a.log("select n=%zu ids=%s kind=typed op=replace hits=%zu", s.selection.size(),
            format_id_ranges(s.selection).c_str(), s.selection.size());
    }
  }
  if (!s.ids_error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kError);
    ImGui::TextWrapped("%s", s.ids_error.c_str());
    ImGui::PopStyleColor();
  }
  if (s.selection.empty())
    ImGui::TextDisabled("nothing selected");
  else
    ImGui::Text("%zu particles", s.selection.size());
  const float bw = (ImGui::GetContentRegionAvail().x - st.ItemSpacing.x) * 0.5f;
  ImGui::BeginDisabled(s.selection.empty());
  if (ImGui::Button("Copy IDs", ImVec2(bw, 0))) {
    std::string text = format_id_ranges(s.selection);
    ImGui::SetClipboardText(text.c_str());
    a.set_status("copied " + std::to_string(s.selection.size()) +
                 " IDs: " + format_id_ranges(s.selection, 60));
    a.log("select copy n=%zu", s.selection.size());
  }
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Copies the IDs as ranges (12-40, 57) to the clipboard.");
  ImGui::SameLine();
  if (ImGui::Button("Clear", ImVec2(bw, 0))) {
    s.selection.clear();
    a.log("select n=0 ids= kind=clear op=replace hits=0");
  }
  ui_mark(a, "sgf_clear");
  ImGui::EndDisabled();
  if (!s.selection.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
    ImGui::TextWrapped("%s", format_id_ranges(s.selection, 220).c_str());
    ImGui::PopStyleColor();
  }
  if (!s.selection.empty() && ImGui::TreeNode("list", "ID list (%zu)", s.selection.size())) {
    const float h = std::min<float>(6.f, static_cast<float>(s.selection.size())) *
                        ImGui::GetTextLineHeightWithSpacing() +
                    ImGui::GetStyle().FramePadding.y * 2;
    if (ImGui::BeginListBox("##idlist", ImVec2(-FLT_MIN, h))) {
      ImGuiListClipper clip;
      clip.Begin(static_cast<int>(s.selection.size()));
      while (clip.Step()) {
        for (int k = clip.DisplayStart; k < clip.DisplayEnd; ++k) {
          const uint32_t id = s.selection[static_cast<size_t>(k)];
          char label[32];
          std::snprintf(label, sizeof label, "%u", id);
          if (ImGui::Selectable(label, a.selected_id == id)) {
            a.selected_id = id;
            a.log("pick id=%u from=selection", id);
          }
          if (ImGui::IsItemHovered()) ImGui::SetTooltip("inspect particle %u (Particles tab)", id);
        }
      }
      ImGui::EndListBox();
    }
    ImGui::TreePop();
  }
}

void delete_group(App& a, int g) {
  SgfUi& s = a.sgf;
  if (g < 0 || g >= static_cast<int>(s.set.groups.size())) return;
  a.log("sgf group delete name=\"%s\"", s.set.groups[static_cast<size_t>(g)].name.c_str());
  s.set.groups.erase(s.set.groups.begin() + g);
  s.group = std::min(g, static_cast<int>(s.set.groups.size()) - 1);
  s.entry = -1;
  sgf_mark_edited(a);
}

void groups_section(App& a) {
  SgfUi& s = a.sgf;
  if (!ImGui::CollapsingHeader("Groups", ImGuiTreeNodeFlags_DefaultOpen)) return;
  SgfSet& set = s.set;
  const float bw = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
  ImGui::BeginDisabled(s.selection.empty());
  if (ImGui::Button("New from selection", ImVec2(bw, 0))) {
    SgfGroup g;
    g.name = unique_group_name(set);
    auto c = group_rgb(static_cast<unsigned>(set.groups.size() + 1));
    for (int k = 0; k < 3; ++k) g.color[k] = c[static_cast<size_t>(k)];
    g.ids = s.selection;
    set.groups.push_back(g);
    s.group = static_cast<int>(set.groups.size()) - 1;
    s.entry = -1;
    s.show_timeline = true;
    sgf_mark_edited(a);
    a.log("sgf group add name=\"%s\" n=%zu ids=%s", g.name.c_str(), g.ids.size(),
          format_id_ranges(g.ids, 400).c_str());
  }
  ImGui::EndDisabled();
  if (s.selection.empty() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Select particles first (select tool, key 6).");
  ui_mark(a, "sgf_group_new");
  ImGui::SameLine();
  ImGui::BeginDisabled(s.group < 0);
  if (ImGui::Button("Delete group", ImVec2(bw, 0))) ImGui::OpenPopup("Delete group?");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Delete the current group and its entries (asks first).");
  ImGui::EndDisabled();
  if (ImGui::BeginPopupModal("Delete group?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    if (s.group >= 0 && s.group < static_cast<int>(set.groups.size())) {
      const SgfGroup& g = set.groups[static_cast<size_t>(s.group)];
      ImGui::Text("Delete '%s' (%zu particles, %zu entries)?", g.name.c_str(), g.ids.size(),
                  g.entries.size());
    }
    if (ImGui::Button("Delete", ImVec2(120, 0))) {
      delete_group(a, s.group);
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel", ImVec2(120, 0))) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }

  if (set.groups.empty()) {
    ImGui::TextDisabled("no groups yet: select particles, then New group");
    return;
  }
  if (a.opt.verbose) {  // what the list shows, as the legend logs its rows (the same table)
    std::vector<GroupRow> rows;
    for (const SgfGroup& g : set.groups) rows.push_back(sgf_group_row(g));
    std::string text = group_rows_text(rows);
    if (text != s.list_logged) {
      s.list_logged = text;
      a.log("sgf groups entries=\"%s\"", text.c_str());
    }
  }
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float h = std::min<float>(7.f, static_cast<float>(set.groups.size())) * line +
                  2 * ImGui::GetStyle().FramePadding.y;
  if (ImGui::BeginListBox("##groups", ImVec2(-FLT_MIN, h))) {
    ImGuiListClipper clip;
    clip.Begin(static_cast<int>(set.groups.size()));
    while (clip.Step()) {
      for (int g = clip.DisplayStart; g < clip.DisplayEnd; ++g) {
        const SgfGroup& grp = set.groups[static_cast<size_t>(g)];
        // The name and colour every view shows for the group (the legend's and the body's too).
        const GroupRow row = sgf_group_row(grp);
        const bool on = g < static_cast<int>(s.active.size()) && s.active[static_cast<size_t>(g)];
        ImGui::PushID(g);
        ImVec2 p = ImGui::GetCursorScreenPos();
        char label[160];
        std::snprintf(label, sizeof label, "      %s", row.name.c_str());
        if (ImGui::Selectable(label, s.group == g)) {
          s.group = g;
          s.entry = -1;
        }
        ImDrawList* dl = ImGui::GetWindowDrawList();
        const float fs = ImGui::GetFontSize();
        dl->AddRectFilled(ImVec2(p.x + 2, p.y + 0.15f * fs), ImVec2(p.x + 2 + 0.85f * fs, p.y + fs),
                          ui::col32(row.rgb.data()), 3.f);
        if (on)
          dl->AddRect(ImVec2(p.x, p.y + 0.05f * fs), ImVec2(p.x + 4 + 0.85f * fs, p.y + 1.1f * fs),
                      IM_COL32(255, 255, 255, 230), 3.f, 0, 1.5f);
        char right[64];
        std::snprintf(right, sizeof right, "%s%zu · %zu", on ? "ON  " : "", grp.ids.size(),
                      grp.entries.size());
        const float rw = ImGui::CalcTextSize(right).x;
        const float x1 = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
        dl->AddText(ImVec2(x1 - rw - 4, p.y),
                    on ? ImGui::GetColorU32(kAccent) : ImGui::GetColorU32(kMuted), right);
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("%s: %zu particles, %zu entries%s", grp.name.c_str(), grp.ids.size(),
                            grp.entries.size(), on ? " (force on now)" : "");
        ImGui::PopID();
      }
    }
    ImGui::EndListBox();
  }
  ImGui::TextDisabled("particles · entries;  ON = force acting now");
}

void group_section(App& a) {
  SgfUi& s = a.sgf;
  SgfSet& set = s.set;
  if (s.group < 0 || s.group >= static_cast<int>(set.groups.size())) return;
  SgfGroup& g = set.groups[static_cast<size_t>(s.group)];
  if (!ImGui::CollapsingHeader("Group", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const float label_w = ImGui::GetFontSize() * 4.2f;
  ImGui::PushItemWidth(-label_w);
  static std::string old_name;
  if (ImGui::IsWindowAppearing()) old_name = g.name;
  ImGui::InputText("name", &g.name);
  if (ImGui::IsItemActivated()) old_name = g.name;
  if (ImGui::IsItemDeactivatedAfterEdit()) {
    if (g.name.empty()) g.name = old_name;
    a.log("sgf group rename name=\"%s\" old=\"%s\"", g.name.c_str(), old_name.c_str());
    s.edited = true;
  }
  ImGui::ColorEdit3("colour", g.color, ImGuiColorEditFlags_Float);
  if (ImGui::IsItemDeactivatedAfterEdit()) {
    a.log("sgf group color name=\"%s\" rgb=(%.3f,%.3f,%.3f)", g.name.c_str(),
          static_cast<double>(g.color[0]), static_cast<double>(g.color[1]),
          static_cast<double>(g.color[2]));
    s.edited = true;
  }
  ImGui::PopItemWidth();

  // IDs.
  std::string ids = format_id_ranges(sorted_ids(g.ids), 160);
  ImGui::Text("%zu particles", g.ids.size());
  ImGui::SameLine();
  if (ImGui::SmallButton("copy")) {
    std::string all = format_id_ranges(sorted_ids(g.ids));
    ImGui::SetClipboardText(all.c_str());
    a.log("sgf group copy name=\"%s\" n=%zu", g.name.c_str(), g.ids.size());
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("select them")) {
    s.selection = sorted_ids(g.ids);
    a.log("select n=%zu ids=%s kind=group op=replace hits=%zu", s.selection.size(),
          format_id_ranges(s.selection).c_str(), s.selection.size());
  }
  ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
  ImGui::TextWrapped("%s", ids.empty() ? "(none)" : ids.c_str());
  ImGui::PopStyleColor();
  const float bw = (ImGui::GetContentRegionAvail().x - 2 * ImGui::GetStyle().ItemSpacing.x) / 3.f;
  ImGui::BeginDisabled(s.selection.empty());
  auto ids_op = [&](const char* label, const char* op, const char* tip) {
    bool clicked = ImGui::Button(label, ImVec2(bw, 0));
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", tip);
    if (!clicked) return;
    std::vector<uint32_t> cur = sorted_ids(g.ids);
    if (op[0] == 's')
      cur = s.selection;
    else
      apply_selection(cur, s.selection, op[0] == 'a' ? SelectOp::Add : SelectOp::Remove);
    g.ids = cur;
    sgf_mark_edited(a);
    a.log("sgf group ids name=\"%s\" op=%s n=%zu", g.name.c_str(), op, g.ids.size());
  };
  ids_op("= selection", "set", "The group's IDs become the selection.");
  ImGui::SameLine();
  ids_op("+ selection", "add", "Add the selected particles to the group.");
  ImGui::SameLine();
  ids_op("- selection", "remove", "Remove the selected particles from the group.");
  ImGui::EndDisabled();
  {
    std::vector<uint32_t> sid = sorted_ids(g.ids);
    size_t ni = 0;
    Vec2 v = mean_velocity(a.table, sid, true, ni);
    ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
    ImGui::Text("mean velocity  (%.4g, %.4g)", static_cast<double>(v.x), static_cast<double>(v.y));
    ImGui::PopStyleColor();
  }

  // Entries.
  section_label("forces per particle, steps inclusive");
  const int64_t step = sgf_current_step(a);
  int erase = -1;
  ImGui::PushItemWidth(-label_w);
  for (size_t e = 0; e < g.entries.size(); ++e) {
    SgfEntry& en = g.entries[e];
    ImGui::PushID(static_cast<int>(e));
    const bool on = en.s0 <= step && step <= en.s1;
    const bool cur = s.entry == static_cast<int>(e);
    ImGui::PushStyleColor(ImGuiCol_Text, on ? kAccent : (cur ? ImVec4(1, 1, 1, 1) : kMuted));
    ImGui::Text("%s %zu%s", cur ? ">" : " ", e + 1, on ? "   on now" : "");
    ImGui::PopStyleColor();
    ImGui::SameLine(ImGui::GetContentRegionAvail().x + ImGui::GetCursorPosX() -
                    ImGui::CalcTextSize("delete").x - 2 * ImGui::GetStyle().FramePadding.x);
    if (ImGui::SmallButton("delete")) erase = static_cast<int>(e);
    int64_t se[2] = {en.s0, en.s1};
    if (ImGui::InputScalarN("steps", ImGuiDataType_S64, se, 2)) {
      en.s0 = std::max<int64_t>(0, se[0]);
      en.s1 = std::max<int64_t>(en.s0, se[1]);
      sgf_mark_edited(a);
    }
    if (ImGui::IsItemActivated()) s.entry = static_cast<int>(e);
    if (ImGui::IsItemDeactivatedAfterEdit())
      a.log("sgf entry s0=%" PRId64 " s1=%" PRId64 " f=%s group=\"%s\" index=%zu action=edit",
            en.s0, en.s1, sgf_force_text(en).c_str(), g.name.c_str(), e);
    double f[3] = {en.fx, en.fy, en.fz};
    if (ImGui::InputScalarN("force", ImGuiDataType_Double, f, 3, nullptr, nullptr, "%.4g")) {
      if (std::isfinite(f[0]) && std::isfinite(f[1]) && std::isfinite(f[2])) {
        en.fx = f[0];
        en.fy = f[1];
        en.fz = f[2];
        sgf_mark_edited(a);
      }
    }
    if (e == 0) ui_mark(a, "sgf_entry0_force");
    if (ImGui::IsItemActivated()) s.entry = static_cast<int>(e);
    if (ImGui::IsItemDeactivatedAfterEdit())
      a.log("sgf entry s0=%" PRId64 " s1=%" PRId64 " f=%s group=\"%s\" index=%zu action=edit",
            en.s0, en.s1, sgf_force_text(en).c_str(), g.name.c_str(), e);
    if (ImGui::IsItemHovered() && !ImGui::IsItemActive())
      ImGui::SetTooltip(
          "fx, fy, fz added to every particle of the group during the steps (z is ignored in 2D)");
    ImGui::PopID();
  }
  ImGui::PopItemWidth();
  if (erase >= 0) {
    const SgfEntry en = g.entries[static_cast<size_t>(erase)];
    g.entries.erase(g.entries.begin() + erase);
    s.entry = -1;
    sgf_mark_edited(a);
    a.log("sgf entry s0=%" PRId64 " s1=%" PRId64 " f=%s group=\"%s\" index=%d action=delete", en.s0,
          en.s1, sgf_force_text(en).c_str(), g.name.c_str(), erase);
  }
  if (ImGui::Button("+ Add entry", ImVec2(-FLT_MIN, 0))) {
    SgfEntry en;
    // From the next step, one second of frames long.
    const int64_t per_frame = a.sim ? std::max(1, a.sim->substeps_per_frame()) : 1;
    en.s0 = step + 1;
    en.s1 = en.s0 + 60 * per_frame - 1;
    g.entries.push_back(en);
    s.entry = static_cast<int>(g.entries.size()) - 1;
    sgf_mark_edited(a);
    a.log("sgf entry s0=%" PRId64 " s1=%" PRId64 " f=%s group=\"%s\" index=%d action=add", en.s0,
          en.s1, sgf_force_text(en).c_str(), g.name.c_str(), s.entry);
  }
  ui_mark(a, "sgf_entry_add");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("A new entry from the next step, 60 frames long; type its force.");
}

}  // namespace

void sgf_right_tabs(App& a) {
  SgfUi& s = a.sgf;
  const ImGuiTabItemFlags f = s.request_tab ? ImGuiTabItemFlags_SetSelected : 0;
  s.request_tab = false;
  const bool open = ImGui::BeginTabItem("SGF forces", nullptr, f);
  ui_mark(a, "sgf_tab");
  if (!open) {
    s.tab_open = false;
    return;
  }
  if (!s.tab_open) s.show_timeline = true;
  s.tab_open = true;
  if (!a.sim) {
    ImGui::TextDisabled("no scene");
    ImGui::EndTabItem();
    return;
  }
  file_bar(a);
  selection_section(a);
  groups_section(a);
  group_section(a);
  ImGui::Spacing();
  if (!s.show_timeline && ImGui::Button("Show the timeline", ImVec2(-FLT_MIN, 0)))
    s.show_timeline = true;
  if (ImGui::Button("Specimen from image...", ImVec2(-FLT_MIN, 0))) s.spec.open = true;
  ui_mark(a, "sgf_specimen");
  ImGui::EndTabItem();
}

// [SECTION] The group table -----------------------------------------------------------------

const GroupTable& App::group_table() {
  // Rebuilt when the host table was (not every frame with the CUDA-GL interop) or the SGF set
  // changed: its edit count, and a fingerprint of what the count does not see (a loaded set,
  // a colour or a name typed in).
  uint64_t key = 1469598103934665603ull;
  auto mix = [&key](uint64_t v) { key = (key ^ v) * 1099511628211ull; };
  mix(sgf.edits);
  mix(sgf.set.groups.size());
  mix(sgf_rows);
  for (const SgfGroup& g : sgf.set.groups) {
    mix(std::hash<std::string>{}(g.name));
    for (float c : g.color) mix(static_cast<uint64_t>(std::lround(c * 1e6f)));
    mix(g.ids.size());
    if (!g.ids.empty()) mix((static_cast<uint64_t>(g.ids.front()) << 32) | g.ids.back());
  }
  if (groups_time != host_table_time || groups_rows != table.size() || groups_key != key) {
    groups.build(sgf.set, table, sgf_rows);
    groups_time = host_table_time;
    groups_rows = table.size();
    groups_key = key;
  }
  return groups;
}

}  // namespace ps
