// Guided lessons in the window: the Lessons list in the Scene
// panel, opening a lesson (its scene with its overrides, then its view: colour
// mode, overlays, tool, selection, a velocity preset, paused or running), and
// the Lesson panel at the top of the left column (what happens, what to look
// at, which keys to press; restart, previous, next, close). The file format
// is render/cpu/lesson.h (docs/lessons.md).
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "imgui.h"
#include "render/build_progress.h"
#include "render/ui_widgets.h"
#include "render/window_state.h"
#include "sim/core/error.h"
#include "sim/core/progress.h"
#include "sim/scene/scene.h"

namespace fs = std::filesystem;

namespace ps {

namespace {
using ui::kAccent;
using ui::kMuted;
using ui::section_label;

/// The lead (one or two sentences: what happens), what to look for, the rest of
/// the text behind "More" (collapsed when the lesson opens), and the keys to
/// try. The lead and the look-for lines fit the first page at 1280x720, so a
/// class sees what to watch without the teacher scrolling. Returns the bottom
/// of the last look-for line (screen y).
float lesson_body(App& a, const Lesson& l, bool opened) {
  const LessonPage page = lesson_page(l.text);
  ui::text_wrapped_words(page.lead);
  ImGui::Spacing();
  float look_bottom = ImGui::GetItemRectMax().y;
  if (!l.look_for.empty()) {
    section_label("look for");
    // A dot and a narrow indent (ImGui's Bullet indents by a whole frame: in projector mode's
    // narrow column that cost the look-for lines a line each).
    const float indent = 0.9f * ImGui::GetFontSize();
    for (const std::string& s : l.look_for) {
      const ImVec2 at = ImGui::GetCursorScreenPos();
      ImGui::GetWindowDrawList()->AddCircleFilled(
          ImVec2(at.x + 0.35f * indent, at.y + 0.5f * ImGui::GetTextLineHeight()),
          0.15f * ImGui::GetFontSize(), ImGui::GetColorU32(ImGuiCol_Text), 8);
      ImGui::Indent(indent);
      ui::text_wrapped_words(s);
      ImGui::Unindent(indent);
    }
    look_bottom = ImGui::GetItemRectMax().y;
    ui_mark(a, "lesson_look_for");
  }
  if (!page.more.empty()) {
    ImGui::Spacing();
    if (opened) ImGui::SetNextItemOpen(false);
    const bool was = ImGui::GetStateStorage()->GetInt(ImGui::GetID("More##lesson_more"), 0) != 0;
    const bool open = ImGui::TreeNodeEx("More##lesson_more", ImGuiTreeNodeFlags_SpanAvailWidth);
    ui_mark(a, "lesson_more");
    if (open != was && !opened) a.log("lesson more open=%d id=%s", open ? 1 : 0, l.id.c_str());
    if (open) {
      for (const std::string& para : page.more) {
        ui::text_wrapped_words(para);
        ImGui::Spacing();
      }
      ImGui::TreePop();
    }
  }
  if (!l.keys.empty()) {
    section_label("try");
    if (ImGui::BeginTable("##lesson_keys", 2, ImGuiTableFlags_SizingStretchProp)) {
      // The key column takes what its longest entry needs, at most 45 % (wrapped beyond).
      float kw = 0.f;
      for (const LessonKey& k : l.keys) kw = std::max(kw, ImGui::CalcTextSize(k.key.c_str()).x);
      const float avail = ImGui::GetContentRegionAvail().x;
      ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed, std::min(kw, 0.45f * avail));
      ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch);
      for (const LessonKey& k : l.keys) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::PushStyleColor(ImGuiCol_Text, kAccent);
        ImGui::TextWrapped("%s", k.key.c_str());
        ImGui::PopStyleColor();
        ImGui::TableSetColumnIndex(1);
        ImGui::TextWrapped("%s", k.what.c_str());
      }
      ImGui::EndTable();
    }
  }
  return look_bottom;
}

}  // namespace

bool App::open_lesson(const std::string& name_or_path) {
  Lesson l;
  LessonBuild built;
  load_cancelled = false;
  // Everything a lesson asks for is built before anything changes: a lesson that does not load
  // (its file, scene, "set" or "compare" entry: the error names the file, line, column and
  // field) leaves the running scene, its comparison and the open lesson as they were.
  try {
    l = load_lesson(resolve_lesson_path(name_or_path));
    LessonOptions o;
    o.extra_sets = opt.overrides;  // the command line's --set still applies
    o.backend = backend;
    o.compare_backend = "cpu";  // as start_compare
    o.threads = opt.threads;
    build_with_progress(*this, l.title.empty() ? l.id : l.title,
                        [&] { built = build_lesson(l, o); });
  } catch (const Cancelled&) {
    load_cancelled = true;
    log("lesson cancelled id=%s", l.id.c_str());
    set_status("Opening the lesson was cancelled" +
               std::string(sim ? "; the scene before it runs on" : ""));
    return false;
  } catch (const InputError& e) {
    load_error = e.what();
  } catch (const std::exception& e) {
    load_error = name_or_path + ": " + e.what();
  }
  if (!built.sim) {
    log("lesson error %s", load_error.c_str());
    std::fprintf(stderr, "sandbox: %s\n", load_error.c_str());
    return false;
  }
  const std::string arg = lesson_scene_arg(l);
  if (opt.refine > 1 && arg == opt.scene) {
    // The command line's scene keeps its refinement (load_scene builds it refined).
    if (!load_scene(arg, built.overrides, false)) return false;
  } else {
    adopt_scene(std::move(built.sim), arg, built.overrides, false);
  }
  // The lesson's view (the one before the first lesson is kept, to give back).
  if (!view_before_lesson) view_before_lesson = current_view();
  if (l.color >= 0) {
    color_mode = static_cast<ColorMode>(l.color);
    range_lo = range_hi = 0.f;
    if (l.colormap >= 0) cmap[static_cast<size_t>(l.color)] = static_cast<Colormap>(l.colormap);
  }
  if (l.grid) show_grid = *l.grid;
  if (l.grid_velocity) show_grid_velocity = *l.grid_velocity;
  if (l.particle_velocity) show_particle_velocity = *l.particle_velocity;
  if (l.affine) show_affine = *l.affine;
  if (l.contacts) show_contacts = *l.contacts;
  if (l.forces) show_forces = *l.forces;
  if (l.tool >= 0) tools.tool = static_cast<Tool>(l.tool);
  running = !l.paused && !(opt.paused && frame == 0);  // --paused holds the first lesson too
  if (l.select_id > 0) {
    if (MpmWorld* w = world()) {
      const auto& ids = w->particles.id;
      const auto it = std::find(ids.begin(), ids.end(), static_cast<uint32_t>(l.select_id));
      if (it != ids.end()) {
        selected_id = l.select_id;
        selected_row = it - ids.begin();
      }
    }
  }
  if (l.preset >= 0) {
    preset_speed = l.preset_speed;
    pending.preset = static_cast<Preset>(l.preset);
  }
  lesson = l;
  lesson_compare_ended = false;
  lesson_panel_request = true;
  log("lesson open id=%s scene=%s title=\"%s\" paused=%d", l.id.c_str(), sim->info().path.c_str(),
      l.title.c_str(), running ? 0 : 1);
  if (MpmWorld* w = world()) log("transfer %s", transfer_name(w->solver.transfer));
  set_status("lesson: " + l.title);
  // A lesson with a comparison opens it (the preset then acts on every pane); one without ends any.
  if (built.comparison)
    adopt_compare(std::move(built.comparison), l.compare, built.panes);
  else
    pending.compare_end = true;
  return true;
}

App::LessonView App::current_view() const {
  LessonView v;
  v.color_mode = color_mode;
  v.cmap = cmap;
  v.range_lo = range_lo;
  v.range_hi = range_hi;
  v.grid = show_grid;
  v.grid_velocity = show_grid_velocity;
  v.particle_velocity = show_particle_velocity;
  v.affine = show_affine;
  v.contacts = show_contacts;
  v.forces = show_forces;
  v.tool = tools.tool;
  v.preset_speed = preset_speed;
  return v;
}

void App::set_view(const LessonView& v) {
  color_mode = v.color_mode;
  cmap = v.cmap;
  range_lo = v.range_lo;
  range_hi = v.range_hi;
  show_grid = v.grid;
  show_grid_velocity = v.grid_velocity;
  show_particle_velocity = v.particle_velocity;
  show_affine = v.affine;
  show_contacts = v.contacts;
  show_forces = v.forces;
  tools.tool = v.tool;
  preset_speed = v.preset_speed;
}

void App::close_lesson() {
  if (lesson) log("lesson close id=%s", lesson->id.c_str());
  lesson.reset();
  lesson_compare_ended = false;
  if (view_before_lesson) {
    set_view(*view_before_lesson);
    view_before_lesson.reset();
    log("color %s", color_mode_name(color_mode));
  }
}

void App::step_lesson(int delta) {
  LessonCatalog& cat = lesson_titles.catalog;
  if (lesson_titles.time < 0.0) {
    report_lesson_errors(cat.refresh());
    lesson_titles.time = ImGui::GetTime();
  }
  const auto& all = cat.entries();
  if (all.empty()) return;
  long k = -1;
  for (size_t i = 0; lesson && i < all.size(); ++i)
    if (all[i].path == lesson->path) k = static_cast<long>(i);
  if (k < 0) {
    delta = +1;  // no built-in lesson open: start with the first that loads
    k = -1;
  }
  // A file that does not load is skipped (it was reported when the list read it).
  for (k += delta; k >= 0 && k < static_cast<long>(all.size()); k += delta)
    if (all[static_cast<size_t>(k)].error.empty()) {
      pending.open_lesson = all[static_cast<size_t>(k)].path;
      pending.lesson_step = delta;
      return;
    }
}

void App::report_lesson_errors(const std::vector<std::string>& errors) {
  for (const std::string& e : errors) {
    log("lesson error %s", e.c_str());
    std::fprintf(stderr, "sandbox: lesson skipped: %s\n", e.c_str());
  }
}

void App::lessons_list() {
  LessonTitles& c = lesson_titles;
  const double now = ImGui::GetTime();
  if (c.time < 0.0 || now - c.time >= 2.0) {  // a teacher's edit shows within 2 s
    c.time = now;
    report_lesson_errors(c.catalog.refresh());  // a bad file once per change, then skipped
  }
  const auto& all = c.catalog.entries();
  if (all.empty()) return;
  if (!ImGui::TreeNodeEx("Lessons", ImGuiTreeNodeFlags_DefaultOpen)) return;
  for (const LessonCatalog::Entry& e : all) {
    const bool current = lesson && lesson->path == e.path;
    if (!e.error.empty()) {
      ImGui::TextDisabled("%s  (does not load)", fs::path(e.path).stem().string().c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", e.error.c_str());
      continue;
    }
    ImGui::PushID(e.path.c_str());
    if (ImGui::Selectable(e.title.c_str(), current)) pending.open_lesson = e.path;
    ImGui::PopID();
  }
  ImGui::TreePop();
}

void App::panel_lesson() {
  if (!lesson) return;
  const Lesson& l = *lesson;
  const bool opened = lesson_panel_request;
  if (lesson_panel_request) {
    // A lesson opens at the top of the column (the Lessons list below may have been scrolled to).
    ImGui::SetScrollY(0.f);
    ImGui::SetNextItemOpen(true);
    lesson_panel_request = false;
    lesson_page_frames = 2;  // logged once the scroll has been applied
  }
  const std::string header = "Lesson: " + l.title + "###lesson";
  if (!ImGui::CollapsingHeader(header.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) return;
  if (ImFont* big = ui::title_font()) ImGui::PushFont(big);
  ImGui::PushStyleColor(ImGuiCol_Text, kAccent);
  ImGui::TextWrapped("%s", l.title.c_str());
  ImGui::PopStyleColor();
  if (ui::title_font()) ImGui::PopFont();
  if (!running) {
    // A lesson opens paused: the teacher introduces it, then runs it.
    ImGui::PushStyleColor(ImGuiCol_Text, kAccent);
    ImGui::TextWrapped("PAUSED: Space starts it");
    ImGui::PopStyleColor();
  }
  if (lesson_compare_ended) {
    // The text, what to look for and the keys are about the panes, which Esc has ended: a
    // class reading "Four copies of ..." over one block would be misled.
    ImGui::TextWrapped(
        "The comparison has ended (Esc): this is the single scene. Restart opens the panes again; "
        "Next goes on to the next lesson.");
    ui_mark(*this, "lesson_compare_ended");
  } else {
    const float look_bottom = lesson_body(*this, l, opened);
    if (lesson_page_frames > 0 && --lesson_page_frames == 0) {
      // What the first page shows, for the GUI tests: the look-for lines above the column's
      // bottom edge (the scroll at the top) are read without scrolling.
      const LessonPage page = lesson_page(l.text);
      const float bottom = ImGui::GetWindowPos().y + ImGui::GetWindowSize().y;
      log("lesson page id=%s lead_sentences=%zu look_for=%zu more=%zu look_for_bottom=%.0f panel_bottom=%.0f "
          "scroll=%.0f visible=%d lead=\"%s\"",
          l.id.c_str(), split_sentences(page.lead).size(), l.look_for.size(), page.more.size(),
          static_cast<double>(look_bottom), static_cast<double>(bottom),
          static_cast<double>(ImGui::GetScrollY()),
          look_bottom <= bottom && ImGui::GetScrollY() == 0.f ? 1 : 0, page.lead.c_str());
    }
  }
  ImGui::Spacing();
  const std::vector<std::string> paths = builtin_lesson_paths();
  const auto it = std::find(paths.begin(), paths.end(), l.path);
  const float bw = (ImGui::GetContentRegionAvail().x - 3 * ImGui::GetStyle().ItemSpacing.x) / 4.f;
  if (ImGui::Button("Restart", ImVec2(bw, 0))) pending.open_lesson = l.path;
  ui_mark(*this, "lesson_restart");
  ImGui::SameLine();
  ImGui::BeginDisabled(it == paths.end() || it == paths.begin());
  if (ImGui::Button("< Prev", ImVec2(bw, 0))) step_lesson(-1);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Page Up (a presenter's remote sends it)");
  ImGui::SameLine();
  ImGui::BeginDisabled(it == paths.end() || it + 1 == paths.end());
  if (ImGui::Button("Next >", ImVec2(bw, 0))) step_lesson(+1);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Page Down (a presenter's remote sends it)");
  ImGui::SameLine();
  if (ImGui::Button("Close", ImVec2(bw, 0))) close_lesson();
}

}  // namespace ps
