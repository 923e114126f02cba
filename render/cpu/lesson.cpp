#include "render/cpu/lesson.h"

#include <algorithm>
#include <filesystem>
#include "render/cpu/tools.h"
#include "sim/core/error.h"
#include "sim/io/json.h"
#include "sim/io/json_read.h"
#include "sim/scene/compare.h"

namespace fs = std::filesystem;

namespace ps {

namespace {

std::string lessons_dir() { return (fs::path(PS_SOURCE_DIR) / "assets" / "lessons").string(); }

std::vector<std::string> string_list(ObjReader& r, const char* key) {
  std::vector<std::string> out;
  const Json* v = r.get(key);
  if (!v) return out;
  if (v->is_string()) return {v->as_string()};
  if (!v->is_array()) throw InputError(v->loc(), r.field(key), "expected a string or an array of strings, got " + describe(*v));
  for (size_t k = 0; k < v->size(); ++k) {
    if (!v->at(k).is_string())
      throw InputError(v->at(k).loc(), r.field(key) + "[" + std::to_string(k) + "]", "expected a string, got " + describe(v->at(k)));
    out.push_back(v->at(k).as_string());
  }
  return out;
}

std::optional<bool> opt_bool(ObjReader& r, const char* key) {
  if (!r.has(key)) return std::nullopt;
  return r.boolean(key, false);
}

}  // namespace

const std::vector<const char*>& lesson_color_names() {
  static const std::vector<const char*> names = {"material", "speed",          "direction",   "J",
                                                 "stress",   "group",          "scalar",      "plastic_strain",
                                                 "temperature", "melt_fraction"};
  return names;
}

Lesson load_lesson(const std::string& path) {
  const Json doc = Json::parse_file(path);
  if (!doc.is_object()) throw InputError(doc.loc(), "", "a lesson is a JSON object, got " + describe(doc));
  ObjReader r(doc, "");
  Lesson l;
  l.path = path;
  l.id = fs::path(path).stem().string();
  l.title = r.string_required("title");
  l.scene = r.string_required("scene");
  l.set = string_list(r, "set");
  for (size_t k = 0; k < l.set.size(); ++k)
    if (l.set[k].find('=') == std::string::npos)
      throw InputError(r.get("set")->loc(), "set[" + std::to_string(k) + "]", "expected path=value, got \"" + l.set[k] + "\"");
  l.text = string_list(r, "text");
  if (l.text.empty()) r.fail("text", "a lesson needs at least one paragraph of text");
  l.look_for = string_list(r, "look_for");
  if (const Json* keys = r.get("keys")) {
    if (!keys->is_array()) throw InputError(keys->loc(), "keys", "expected an array of [key, what it does], got " + describe(*keys));
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
    l.color = vr.choice("color", -1, lesson_color_names());
    l.grid = opt_bool(vr, "grid");
    l.grid_velocity = opt_bool(vr, "grid_velocity");
    l.particle_velocity = opt_bool(vr, "particle_velocity");
    l.affine = opt_bool(vr, "affine");
    l.contacts = opt_bool(vr, "contacts");
    l.forces = opt_bool(vr, "forces");
    std::vector<const char*> tools;
    for (int k = 0; k < kToolCount; ++k) tools.push_back(tool_name(static_cast<Tool>(k)));
    l.tool = vr.choice("tool", -1, tools);
    l.paused = vr.boolean("paused", false);
    l.select_id = static_cast<unsigned>(vr.integer("select", 0, 0, 2000000000));
    vr.finish();
  }
  if (const Json* cmp = r.get("compare")) {
    if (!cmp->is_string()) throw InputError(cmp->loc(), "compare", "expected \"path=a,b,... [path=...]\", got " + describe(*cmp));
    try {
      vary_panes_text(cmp->as_string());
    } catch (const InputError& e) {
      throw InputError(cmp->loc(), "compare", e.message());
    }
    l.compare = cmp->as_string();
  }
  if (const Json* s = r.get("start")) {
    ObjReader sr(*s, "start");
    l.preset = sr.choice("preset", -1, {"translation", "rotation", "shear", "dilation"});
    l.preset_speed = static_cast<float>(sr.number("speed", 1.0, 0.01, 100.0));
    sr.finish();
  }
  r.finish();
  return l;
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
  for (const std::string& p : all) names += (names.empty() ? "" : ", ") + fs::path(p).stem().string();
  throw InputError({name_or_path, 0, 0}, "",
                   std::string(hits.empty() ? "no such lesson file or built-in lesson" : "more than one built-in lesson starts so") +
                       " (built-ins: " + names + ")");
}

std::string lesson_scene_arg(const Lesson& l) {
  if (fs::path(l.scene).extension() != ".json") return l.scene;  // a built-in name
  fs::path p = l.scene;
  if (p.is_relative()) p = fs::path(l.path).parent_path() / p;
  return p.string();
}

}  // namespace ps
