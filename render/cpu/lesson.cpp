#include "render/cpu/lesson.h"

#include "render/cpu/colormap.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include "render/cpu/tools.h"
#include "sim/core/error.h"
#include "sim/io/json.h"
#include "sim/io/json_read.h"
#include "sim/io/text.h"
#include "sim/scene/compare.h"
#include "sim/scene/scene.h"

namespace fs = std::filesystem;

namespace ps {

namespace {

/// A string or an array of strings; `locs` gets where each one is.
std::vector<std::string> string_list(ObjReader& r, const char* key,
                                     std::vector<SourceLoc>* locs = nullptr) {
  std::vector<std::string> out;
  const Json* v = r.get(key);
  if (!v) return out;
  if (v->is_string()) {
    if (locs) locs->push_back(v->loc());
    return {v->as_string()};
  }
  if (!v->is_array())
    throw InputError(v->loc(), r.field(key),
                     "expected a string or an array of strings, got " + describe(*v));
  for (size_t k = 0; k < v->size(); ++k) {
    if (!v->at(k).is_string())
      throw InputError(v->at(k).loc(), r.field(key) + "[" + std::to_string(k) + "]",
                       "expected a string, got " + describe(v->at(k)));
    out.push_back(v->at(k).as_string());
    if (locs) locs->push_back(v->at(k).loc());
  }
  return out;
}

bool same_loc(const SourceLoc& a, const SourceLoc& b) {
  return a.file == b.file && a.line == b.line && a.column == b.column;
}

/// An error of the command line's --set (its own location, kept as is).
bool from_command_line(const InputError& e) {
  return e.loc().line == 0 && e.loc().file.rfind("--set ", 0) == 0;
}

/// An error raised while the lesson's scene was read and built, as the
/// lesson's: at the `set` entry whose value it is about, else at `scene`
/// with the scene file's own location in the message.
InputError lesson_error(const Lesson& l, const InputError& e) {
  if (from_command_line(e)) return e;
  for (size_t k = 0; k < l.set_locs.size(); ++k) {
    if (!same_loc(e.loc(), l.set_locs[k])) continue;
    const std::string entry = "set[" + std::to_string(k) + "]";
    if (e.field() == entry) return e;  // apply_override's own error: already the entry's
    return InputError(e.loc(), entry,
                      "\"" + l.set[k] + "\": scene field '" + e.field() + "': " + e.message());
  }
  if (same_loc(e.loc(), l.scene_loc) && e.field() == "scene") return e;
  return InputError(l.scene_loc, "scene", "\"" + l.scene + "\": " + e.what());
}

std::string path_of(const std::string& assignment) {
  return assignment.substr(0, assignment.find('='));
}

std::optional<bool> opt_bool(ObjReader& r, const char* key) {
  if (!r.has(key)) return std::nullopt;
  return r.boolean(key, false);
}

}  // namespace

std::vector<std::string> split_sentences(const std::string& para) {
  std::vector<std::string> out;
  const size_t n = para.size();
  size_t begin = 0;
  while (begin < n && para[begin] == ' ') ++begin;
  for (size_t k = begin; k < n; ++k) {
    if (para[k] != '.' && para[k] != '!' && para[k] != '?') continue;
    size_t end = k + 1;  // after the punctuation and any closing quote or bracket
    while (end < n && (para[end] == ')' || para[end] == '"' || para[end] == '\'')) ++end;
    size_t next = end;
    while (next < n && para[next] == ' ') ++next;
    if (next == end || next >= n || !std::isupper(static_cast<unsigned char>(para[next]))) continue;
    out.push_back(para.substr(begin, end - begin));
    begin = next;
    k = next - 1;
  }
  if (begin < n) out.push_back(para.substr(begin));
  return out;
}

LessonPage lesson_page(const std::vector<std::string>& text) {
  LessonPage p;
  if (text.empty()) return p;
  const std::vector<std::string> first = split_sentences(text[0]);
  std::string rest;
  for (size_t k = 0; k < first.size(); ++k) {
    std::string& to = k < kLeadSentences ? p.lead : rest;
    to += (to.empty() ? "" : " ") + first[k];
  }
  if (!rest.empty()) p.more.push_back(rest);
  p.more.insert(p.more.end(), text.begin() + 1, text.end());
  return p;
}

Lesson load_lesson(const std::string& path) { return parse_lesson(read_file_text(path), path); }

Lesson parse_lesson(const std::string& text, const std::string& path) {
  const Json doc = Json::parse(text, path);
  if (!doc.is_object())
    throw InputError(doc.loc(), "", "a lesson is a JSON object, got " + describe(doc));
  ObjReader r(doc, "");
  Lesson l;
  l.path = path;
  l.id = fs::path(path).stem().string();
  l.title = r.string_required("title");
  l.scene = r.string_required("scene");
  l.scene_loc = r.get("scene")->loc();
  if (l.scene.empty())
    throw InputError(l.scene_loc, "scene",
                     "empty: name a built-in scene (see `sandbox info`) or a .json file");
  l.set = string_list(r, "set", &l.set_locs);
  for (size_t k = 0; k < l.set.size(); ++k)
    if (l.set[k].find('=') == std::string::npos || l.set[k][0] == '=')
      throw InputError(l.set_locs[k], "set[" + std::to_string(k) + "]",
                       "expected path=value, got \"" + l.set[k] + "\"");
  l.text = string_list(r, "text");
  if (l.text.empty()) r.fail("text", "a lesson needs at least one paragraph of text");
  l.look_for = string_list(r, "look_for");
  if (const Json* keys = r.get("keys")) {
    if (!keys->is_array())
      throw InputError(keys->loc(), "keys",
                       "expected an array of [key, what it does], got " + describe(*keys));
    for (size_t k = 0; k < keys->size(); ++k) {
      const Json& e = keys->at(k);
      const std::string f = "keys[" + std::to_string(k) + "]";
      if (!e.is_array() || e.size() != 2 || !e.at(0).is_string() || !e.at(1).is_string())
        throw InputError(e.loc(), f, "expected [\"key\", \"what it does\"], got " + describe(e));
      l.keys.push_back({e.at(0).as_string(), e.at(1).as_string()});
    }
  }
  if (const Json* v = r.get("view")) {
    ObjReader vr(*v, "view");
    l.color = vr.choice("color", -1, kColorModeNames.names);
    l.colormap = vr.choice("colormap", -1, kColormapNames.names);
    if (l.colormap >= 0 && l.color < 0)
      throw InputError(v->loc(), "view.colormap",
                       "a colour map needs the colour mode it is for: set \"color\" too");
    l.grid = opt_bool(vr, "grid");
    l.grid_velocity = opt_bool(vr, "grid_velocity");
    l.particle_velocity = opt_bool(vr, "particle_velocity");
    l.affine = opt_bool(vr, "affine");
    l.contacts = opt_bool(vr, "contacts");
    l.forces = opt_bool(vr, "forces");
    l.tool = vr.choice("tool", -1, kToolNames.names);
    l.paused =
        vr.boolean("paused", true);  // a lesson waits for the teacher unless it says otherwise
    l.select_id = static_cast<unsigned>(vr.integer("select", 0, 0, 2000000000));
    vr.finish();
  }
  if (const Json* cmp = r.get("compare")) {
    if (!cmp->is_string())
      throw InputError(cmp->loc(), "compare",
                       "expected \"path=a,b,... [path=...]\", got " + describe(*cmp));
    try {
      vary_panes_text(cmp->as_string());  // counts the panes before making them
    } catch (const InputError& e) {
      throw InputError(cmp->loc(), "compare",
                       (e.field().empty() ? "" : "'" + e.field() + "': ") + e.message());
    }
    l.compare = cmp->as_string();
    l.compare_loc = cmp->loc();
  }
  if (const Json* s = r.get("start")) {
    ObjReader sr(*s, "start");
    l.preset = sr.choice("preset", -1, kPresetNames.names);
    l.preset_speed = static_cast<float>(sr.number("speed", 1.0, 0.01, 100.0));
    sr.finish();
  }
  r.finish();
  return l;
}

std::string lessons_dir() {
  const char* env = std::getenv("PS_LESSONS_DIR");
  if (env && *env) return env;
  return (fs::path(PS_SOURCE_DIR) / "assets" / "lessons").string();
}

std::vector<std::string> builtin_lesson_paths() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(lessons_dir(), ec))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string resolve_lesson_path(const std::string& name_or_path) {
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
  const std::vector<std::string> all = builtin_lesson_paths();
  std::vector<std::string> hits;
  for (const std::string& p : all) {
    const std::string stem = fs::path(p).stem().string();
    if (stem == name_or_path) return p;
    if (stem.rfind(name_or_path, 0) == 0) hits.push_back(p);
  }
  if (hits.size() == 1) return hits[0];
  std::string names;
  for (const std::string& p : all)
    names += (names.empty() ? "" : ", ") + fs::path(p).stem().string();
  throw InputError({name_or_path, 0, 0}, "",
                   std::string(hits.empty() ? "no such lesson file or built-in lesson"
                                            : "more than one built-in lesson starts so") +
                       " (built-ins: " + names + ")");
}

std::string lesson_scene_arg(const Lesson& l) {
  if (fs::path(l.scene).extension() != ".json") return l.scene;  // a built-in name
  fs::path p = l.scene;
  if (p.is_relative()) p = fs::path(l.path).parent_path() / p;
  return p.string();
}

LessonBuild build_lesson(const Lesson& l, const LessonOptions& opt) {
  LessonBuild b;
  Json raw;
  try {
    b.scene_path = resolve_scene_path(lesson_scene_arg(l));
  } catch (const InputError& e) {
    throw InputError(l.scene_loc, "scene", "\"" + l.scene + "\": " + e.message());
  }
  try {
    raw = opt.read_scene ? opt.read_scene(b.scene_path) : Json::parse_file(b.scene_path);
    if (!raw.is_object())
      throw InputError(raw.loc(), "", "a scene file must be a JSON object {...}");
  } catch (const InputError& e) {
    throw InputError(l.scene_loc, "scene", "\"" + l.scene + "\": " + e.what());
  }
  if (!l.compare.empty()) b.panes = vary_panes_text(l.compare);  // parse_lesson checked it
  auto varied = [&](const std::string& assignment) {
    for (const PaneSpec& p : b.panes)
      for (const std::string& s : p.settings)
        if (path_of(s) == path_of(assignment)) return true;
    return false;
  };
  // The scene with every override; the panes' base without those they vary.
  Json doc = raw, base = raw;
  try {
    for (size_t k = 0; k < l.set.size(); ++k) {
      const std::string entry = "set[" + std::to_string(k) + "]";
      apply_override(doc, l.set[k], l.set_locs[k], entry);
      if (!varied(l.set[k])) apply_override(base, l.set[k], l.set_locs[k], entry);
    }
    for (const std::string& s : opt.extra_sets) {
      apply_override(doc, s);
      if (!varied(s)) apply_override(base, s);
    }
    b.overrides = l.set;
    b.overrides.insert(b.overrides.end(), opt.extra_sets.begin(), opt.extra_sets.end());
    b.sim = simulation_from_document(doc, b.scene_path, opt.backend, opt.threads);
  } catch (const InputError& e) {
    throw lesson_error(l, e);
  }
  if (!b.panes.empty() && opt.build_comparison)
    b.comparison = std::make_unique<Comparison>(base, b.scene_path, b.panes, opt.compare_backend,
                                                opt.threads, l.compare_loc, "compare");
  return b;
}

std::vector<std::string> LessonCatalog::refresh() {
  std::vector<std::string> fresh;
  const std::string dir = dir_.empty() ? lessons_dir() : dir_;
  std::vector<Entry> next;
  std::error_code ec;
  std::vector<std::string> paths;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".json") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  for (const std::string& p : paths) {
    Entry e;
    e.path = p;
    e.size = fs::file_size(p, ec);
    e.mtime = fs::last_write_time(p, ec);
    const auto old =
        std::find_if(entries_.begin(), entries_.end(), [&](const Entry& o) { return o.path == p; });
    if (old != entries_.end() && old->size == e.size && old->mtime == e.mtime) {
      next.push_back(*old);  // unchanged: neither parsed nor reported again
      continue;
    }
    try {
      e.title = load_lesson(p).title;
    } catch (const std::exception& x) {
      e.error = x.what();
      fresh.push_back(e.error);
    }
    next.push_back(std::move(e));
  }
  entries_ = std::move(next);
  return fresh;
}

void LessonCatalog::mark_failed(const std::string& path, const std::string& error) {
  for (Entry& e : entries_)
    if (e.path == path) e.error = error;
}

std::string LessonCatalog::error_of(const std::string& path) const {
  for (const Entry& e : entries_)
    if (e.path == path) return e.error;
  return "";
}

}  // namespace ps
