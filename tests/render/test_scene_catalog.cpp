// The scene browser's catalogue (render/cpu/scene_catalog.h): groups decided
// from the scene documents, titles and one-line descriptions of every
// built-in scene and lesson, the thumbnail cache key and path, and thumbnails
// drawn from a scene's initial state (a broken scene: its located error).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include "render/cpu/lesson.h"
#include "render/cpu/scene_catalog.h"
#include "sim/core/error.h"
#include "sim/scene/scene.h"
#include "tests/temp_files.h"

using namespace ps;

namespace {

SceneGroup group_of(const std::string& json) {
  return classify_scene(Json::parse(json, "test.json"));
}

const CatalogEntry* find_stem(const std::vector<CatalogEntry>& all, const std::string& stem) {
  for (const CatalogEntry& e : all)
    if (e.path.find("/" + stem + ".json") != std::string::npos) return &e;
  return nullptr;
}

}  // namespace

TEST_CASE("scene_catalog: groups come from the scene document", "[scene_catalog]") {
  CHECK(
      group_of(
          R"({"kind": "mpm", "materials": {"water": {"type": "fluid"}}, "bodies": [{"material": "water"}]})") ==
      SceneGroup::Mpm);
  CHECK(group_of(R"({})") == SceneGroup::Mpm);
  // Heat: a heat section, or a material that melts or conducts.
  CHECK(group_of(R"({"kind": "mpm", "heat": {}})") == SceneGroup::Heat);
  CHECK(group_of(R"({"materials": {"ice": {"type": "jelly", "melting_point": 0}}})") ==
        SceneGroup::Heat);
  CHECK(group_of(R"({"heat": {"enabled": false}})") == SceneGroup::Mpm);
  // Rigid bodies: the kind, or a rigid section beside particles (heat goes first).
  CHECK(group_of(R"({"kind": "rigid"})") == SceneGroup::Rigid);
  CHECK(group_of(R"({"kind": "dem", "rigid": {"bodies": []}})") == SceneGroup::Rigid);
  CHECK(group_of(R"({"kind": "mpm", "heat": {}, "rigid": {}})") == SceneGroup::Heat);
  // Fracture: a body of a viscoplastic material; a defined but unused one does not count.
  CHECK(group_of(
            R"({"materials": {"t": {"type": "viscoplastic"}}, "bodies": [{"material": "t"}]})") ==
        SceneGroup::Fracture);
  CHECK(group_of(R"({"materials": {"s": {"type": "snow"}, "c": {"type": "viscoplastic"}},
                     "bodies": [{"material": "s"}]})") == SceneGroup::Mpm);
  // DEM: bonds that break below kBondBreakStrain are fracture, unbreakable or no bonds are DEM.
  CHECK(group_of(R"({"kind": "dem", "bond": {"enabled": true, "E": 1e7, "tensile_strength": 4e5,
                     "shear_strength": 4e5}})") == SceneGroup::Fracture);
  CHECK(group_of(R"({"kind": "dem", "bond": {"enabled": true, "E": 1e6, "tensile_strength": 1e7,
                     "shear_strength": 1e7}})") == SceneGroup::Dem);
  CHECK(
      group_of(R"({"kind": "dem", "bond": {"enabled": false, "E": 1e7, "tensile_strength": 1}})") ==
      SceneGroup::Dem);
  CHECK(group_of(R"({"kind": "dem"})") == SceneGroup::Dem);
  // Fields of the wrong type count as absent.
  CHECK(group_of(R"({"kind": 3, "materials": [1, 2], "bodies": {"a": 1}, "bond": "yes"})") ==
        SceneGroup::Mpm);
}

TEST_CASE("scene_catalog: the built-in scenes and lessons, grouped and titled", "[scene_catalog]") {
  const std::vector<CatalogEntry> all = read_catalog(builtin_scene_paths(), builtin_lesson_paths());
  REQUIRE(all.size() == builtin_scene_paths().size() + builtin_lesson_paths().size());
  const std::map<std::string, SceneGroup> want = {
      {"dam_break", SceneGroup::Mpm},       {"mpm99", SceneGroup::Mpm},
      {"sand_column", SceneGroup::Mpm},     {"snowball", SceneGroup::Mpm},
      {"ice_cube", SceneGroup::Heat},       {"ice_in_water", SceneGroup::Heat},
      {"ice_sculpture", SceneGroup::Heat},  {"notched_plate", SceneGroup::Fracture},
      {"cookie", SceneGroup::Fracture},     {"toffee", SceneGroup::Fracture},
      {"dem_beam", SceneGroup::Fracture},   {"dem_smash", SceneGroup::Fracture},
      {"dem_soft_body", SceneGroup::Dem},   {"dem_hopper", SceneGroup::Dem},
      {"dem_dance", SceneGroup::Dem},       {"rigid_dominoes", SceneGroup::Rigid},
      {"rigid_drum", SceneGroup::Rigid},    {"rigid_float", SceneGroup::Rigid},
      {"rigid_balance", SceneGroup::Rigid}, {"rigid_hopper_gate", SceneGroup::Rigid}};
  for (const auto& [stem, group] : want) {
    INFO(stem);
    const CatalogEntry* e = find_stem(all, stem);
    REQUIRE(e);
    CHECK(e->group == group);
  }
  // Lessons first, then the groups in order; every entry titled (not a file name) and described.
  std::set<uint64_t> keys;
  for (size_t i = 0; i < all.size(); ++i) {
    const CatalogEntry& e = all[i];
    INFO(e.path);
    CHECK(e.error.empty());
    CHECK(e.lesson == (e.group == SceneGroup::Lessons));
    if (i > 0) CHECK(all[i - 1].group <= e.group);
    CHECK(!e.title.empty());
    CHECK(e.title.find(".json") == std::string::npos);
    CHECK(!e.description.empty());
    keys.insert(e.key);
  }
  CHECK(keys.size() == all.size());
  const CatalogEntry* dam = find_stem(all, "dam_break");
  CHECK(dam->title == "Dam break");
  // A lesson's description is its text's first sentence.
  const CatalogEntry& first = all.front();
  REQUIRE(first.lesson);
  const Lesson l = load_lesson(first.path);
  CHECK(first.title == l.title);
  CHECK(l.text.front().rfind(first.description, 0) == 0);
  CHECK(first.description.size() < l.text.front().size());
}

TEST_CASE("scene_catalog: first_sentence", "[scene_catalog]") {
  CHECK(first_sentence("A block spins. PIC loses its rotation.") == "A block spins.");
  CHECK(first_sentence("Jiang et al. 2015 showed it.") == "Jiang et al. 2015 showed it.");
  CHECK(first_sentence("") == "");
}

TEST_CASE("scene_catalog: the cache key follows the file's content", "[scene_catalog]") {
  test::TempDir dir("scene_catalog");
  const std::string scene = dir / "mine.json";
  const std::string text = test::slurp(resolve_scene_path("pic_vs_apic"));
  test::put(scene, text);
  const uint64_t k1 = read_catalog({scene}, {}).front().key;
  CHECK(read_catalog({scene}, {}).front().key == k1);  // the same file: the same key
  test::put(scene, text + "\n");                       // edited: a new key
  const uint64_t k2 = read_catalog({scene}, {}).front().key;
  CHECK(k2 != k1);
  CHECK(thumbnail_key({"ab", "c"}) != thumbnail_key({"a", "bc"}));
  const std::string p = thumbnail_cache_path("/cfg/particle-sandbox", 0x0123456789abcdefull);
  CHECK(p == "/cfg/particle-sandbox/thumbnails/0123456789abcdef.png");
}

TEST_CASE("scene_catalog: thumbnails of a scene and a lesson, a broken scene's located error",
          "[scene_catalog]") {
  const std::vector<CatalogEntry> all =
      read_catalog({resolve_scene_path("dam_break")}, {builtin_lesson_paths().front()});
  REQUIRE(all.size() == 2);
  for (const CatalogEntry& e : all) {
    INFO(e.path);
    const Image img = render_thumbnail(e);
    REQUIRE(img.width == kThumbWidth);
    REQUIRE(img.height == kThumbHeight);
    std::set<int> colours;
    for (int y = 0; y < img.height; y += 4)
      for (int x = 0; x < img.width; x += 4) {
        const uint8_t* p = img.at(x, y);
        colours.insert((p[0] >> 4) << 8 | (p[1] >> 4) << 4 | (p[2] >> 4));
      }
    CHECK(colours.size() >= 3);  // background, frame, particles
  }
  // A scene whose document parses but does not build: the loader's located error.
  test::TempDir dir("scene_catalog_bad");
  const std::string bad = dir / "bad.json";
  test::put(
      bad,
      "{\n  \"name\": \"Bad\",\n  \"kind\": \"mpm\",\n  \"materials\": {\"w\": {\"type\": \"lava\"}}\n}\n");
  const std::vector<CatalogEntry> b = read_catalog({bad}, {});
  REQUIRE(b.size() == 1);
  CHECK(b[0].error.empty());
  CHECK(b[0].title == "Bad");
  try {
    render_thumbnail(b[0]);
    FAIL("a bad material type built");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(bad + ":") == 0);
  }
  // A file that does not parse is an entry with its error.
  test::put(bad, "{\n  \"name\": ,\n}\n");
  const std::vector<CatalogEntry> c = read_catalog({bad}, {});
  REQUIRE(c.size() == 1);
  CHECK(c[0].error.find(bad + ":2:") == 0);
  CHECK(c[0].title == "bad");
}
