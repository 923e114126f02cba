#include "render/cpu/scene_catalog.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <filesystem>
#include "render/cpu/frame_render.h"
#include "render/cpu/lesson.h"
#include "sim/core/error.h"
#include "sim/core/file.h"
#include "sim/core/hash.h"
#include "sim/scene/scene.h"

namespace fs = std::filesystem;

namespace ps {

namespace {

/// Bumped when the thumbnails' drawing changes: every cached one is drawn again.
constexpr char kThumbVersion[] = "scene-thumbnail 1";

const Json* member(const Json& o, const char* key) { return o.is_object() ? o.find(key) : nullptr; }

std::string string_of(const Json& o, const char* key) {
  const Json* v = member(o, key);
  return v && v->is_string() ? v->as_string() : std::string();
}

double number_of(const Json& o, const char* key, double def) {
  const Json* v = member(o, key);
  return v && v->is_number() ? v->as_number() : def;
}

bool has_heat(const Json& doc) {
  if (const Json* h = member(doc, "heat")) {
    const Json* on = member(*h, "enabled");
    if (!(on && on->is_bool() && !on->as_bool()))
      return true;  // "heat": {...} switches heat on unless disabled
  }
  if (const Json* mats = member(doc, "materials"); mats && mats->is_object())
    for (const auto& [name, m] : mats->members())
      if (member(m, "melting_point") || member(m, "latent_heat") || member(m, "conductivity"))
        return true;
  return false;
}

/// An MPM body made of a viscoplastic material (the materials an unused entry names do not count:
/// snowball's clay is there to switch to).
bool mpm_tears(const Json& doc) {
  const Json* mats = member(doc, "materials");
  const Json* bodies = member(doc, "bodies");
  if (!mats || !mats->is_object() || !bodies || !bodies->is_array()) return false;
  for (size_t i = 0; i < bodies->size(); ++i) {
    const std::string mat = string_of(bodies->at(i), "material");
    if (const Json* m = mats->find(mat); m && string_of(*m, "type") == "viscoplastic") return true;
  }
  return false;
}

/// Enabled DEM bonds whose weakest strength over their modulus is below kBondBreakStrain.
bool bonds_break(const Json& doc) {
  const Json* bond = member(doc, "bond");
  if (!bond || !bond->is_object()) return false;
  const Json* on = member(*bond, "enabled");
  if (!on || !on->is_bool() || !on->as_bool()) return false;
  const double E = number_of(*bond, "E", 0.0);
  const double strength = std::min(number_of(*bond, "tensile_strength", 1e300),
                                   number_of(*bond, "shear_strength", 1e300));
  return E > 0.0 && strength / E < kBondBreakStrain;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

const char* scene_group_title(SceneGroup g) {
  switch (g) {
    case SceneGroup::Lessons: return "Lessons";
    case SceneGroup::Mpm: return "MPM (fluids & solids)";
    case SceneGroup::Heat: return "Heat (melting & ice)";
    case SceneGroup::Fracture: return "Fracture (tearing & breaking)";
    case SceneGroup::Dem: return "DEM (grains & bonded bodies)";
    case SceneGroup::Rigid: return "Rigid bodies";
  }
  return "?";
}

SceneGroup classify_scene(const Json& doc) {
  const std::string kind = string_of(doc, "kind");
  if (has_heat(doc)) return SceneGroup::Heat;
  if (kind == "rigid" || member(doc, "rigid")) return SceneGroup::Rigid;
  if ((kind != "dem" && mpm_tears(doc)) || (kind == "dem" && bonds_break(doc)))
    return SceneGroup::Fracture;
  if (kind == "dem") return SceneGroup::Dem;
  return SceneGroup::Mpm;
}

std::string first_sentence(const std::string& text) {
  const std::vector<std::string> s = split_sentences(text);
  return s.empty() ? std::string() : s.front();
}

uint64_t thumbnail_key(const std::vector<std::string>& contents) {
  Fnv1a h;
  h.add(kThumbVersion, sizeof kThumbVersion);
  const int size[2] = {kThumbWidth, kThumbHeight};
  h.add(size, sizeof size);
  for (const std::string& c : contents) {
    const uint64_t n = c.size();  // a length before each: ("ab", "c") and ("a", "bc") differ
    h.add(&n, sizeof n);
    h.add(c.data(), c.size());
  }
  return h.h;
}

std::string thumbnail_cache_path(const std::string& dir, uint64_t key) {
  char name[32];
  std::snprintf(name, sizeof name, "%016" PRIx64 ".png", key);
  return (fs::path(dir) / "thumbnails" / name).string();
}

std::vector<CatalogEntry> read_catalog(const std::vector<std::string>& scene_paths,
                                       const std::vector<std::string>& lesson_paths) {
  std::vector<CatalogEntry> lessons, scenes;
  for (const std::string& p : lesson_paths) {
    CatalogEntry e;
    e.path = p;
    e.lesson = true;
    e.group = SceneGroup::Lessons;
    e.title = fs::path(p).stem().string();
    try {
      const std::string bytes = read_file_bytes(p);
      const Lesson l = parse_lesson(bytes, p);
      if (!l.title.empty()) e.title = l.title;
      if (!l.text.empty()) e.description = first_sentence(l.text.front());
      std::vector<std::string> contents{bytes};
      try {
        contents.push_back(read_file_bytes(resolve_scene_path(lesson_scene_arg(l))));
      } catch (const std::exception&) {
        // The scene is missing: building the thumbnail reports it (located).
      }
      e.key = thumbnail_key(contents);
    } catch (const std::exception& ex) {
      e.error = ex.what();
    }
    lessons.push_back(std::move(e));
  }
  for (const std::string& p : scene_paths) {
    CatalogEntry e;
    e.path = p;
    e.title = fs::path(p).stem().string();
    try {
      const std::string bytes = read_file_bytes(p);
      e.key = thumbnail_key({bytes});
      const Json doc = Json::parse(bytes, p);
      e.group = classify_scene(doc);
      if (const std::string name = string_of(doc, "name"); !name.empty()) e.title = name;
      e.description = string_of(doc, "description");
    } catch (const std::exception& ex) {
      e.error = ex.what();
    }
    scenes.push_back(std::move(e));
  }
  std::stable_sort(scenes.begin(), scenes.end(), [](const CatalogEntry& a, const CatalogEntry& b) {
    if (a.group != b.group) return a.group < b.group;
    return lower(a.title) < lower(b.title);
  });
  lessons.insert(lessons.end(), std::make_move_iterator(scenes.begin()),
                 std::make_move_iterator(scenes.end()));
  return lessons;
}

Image render_thumbnail(const CatalogEntry& e) {
  std::unique_ptr<Simulation> sim;
  if (e.lesson) {
    LessonOptions o;
    o.backend = "cpu";
    o.threads = 1;
    o.build_comparison = false;
    sim = build_lesson(load_lesson(e.path), o).sim;
  } else {
    sim = load_simulation(e.path, {}, "cpu", 1);
  }
  Image img;
  img.resize(kThumbWidth, kThumbHeight);
  ParticleTable table;
  render_frame(*sim, table, ImageColor{}, img);
  return img;
}

}  // namespace ps
