// Guided lessons (render/cpu/lesson.h): every built-in lesson loads and its
// scene loads with its overrides (so a lesson cannot rot when a scene
// changes); ids resolve by prefix; bad lesson files get located errors.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include "render/cpu/lesson.h"
#include "sim/core/error.h"
#include "sim/scene/simulation.h"

using namespace ps;
namespace fs = std::filesystem;

namespace {

std::string write_lesson(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / ("ps_lesson_tests_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

std::string error_of(const std::string& text) {
  try {
    load_lesson(write_lesson("bad.json", text));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("Every built-in lesson loads and opens its scene with its overrides", "[lesson]") {
  const auto paths = builtin_lesson_paths();
  REQUIRE(paths.size() >= 6);
  for (const std::string& p : paths) {
    INFO(p);
    const Lesson l = load_lesson(p);
    CHECK(!l.title.empty());
    CHECK(!l.text.empty());
    std::unique_ptr<Simulation> sim = load_simulation(lesson_scene_arg(l), l.set, "cpu", 1);
    REQUIRE(sim);
    CHECK(sim->diagnostics().mass > 0.0);
    // A selected particle must exist in the scene.
    if (l.select_id > 0) {
      ParticleTable t;
      sim->table(t);
      CHECK(std::find(t.id.begin(), t.id.end(), l.select_id) != t.id.end());
    }
  }
}

TEST_CASE("The first two lessons set PIC and APIC on the same block and spin it", "[lesson]") {
  const Lesson pic = load_lesson(resolve_lesson_path("01"));
  const Lesson apic = load_lesson(resolve_lesson_path("02"));
  CHECK(pic.scene == apic.scene);
  CHECK(pic.set == std::vector<std::string>{"solver.transfer=pic"});
  CHECK(apic.set == std::vector<std::string>{"solver.transfer=apic"});
  CHECK(pic.preset == 1);  // rotation
  CHECK(apic.preset == 1);
}

TEST_CASE("Lesson names resolve by id or unique prefix, unknown names list the built-ins", "[lesson]") {
  CHECK(fs::path(resolve_lesson_path("01_pic_loses_rotation")).stem() == "01_pic_loses_rotation");
  CHECK(fs::path(resolve_lesson_path("04")).stem() == "04_flip_noise_pic_damping");
  try {
    resolve_lesson_path("nope");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("01_pic_loses_rotation") != std::string::npos);
  }
  try {
    resolve_lesson_path("0");  // every built-in starts with 0
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("more than one") != std::string::npos);
  }
}

TEST_CASE("Bad lesson files get located errors", "[lesson]") {
  const std::string e1 = error_of(R"({"title": "t", "scene": "pic_vs_apic", "text": "x", "colour": "speed"})");
  CHECK(e1.find("bad.json:1:") != std::string::npos);
  CHECK(e1.find("'colour'") != std::string::npos);
  const std::string e2 = error_of("{\"title\": \"t\", \"scene\": \"pic_vs_apic\", \"text\": \"x\",\n \"view\": {\"color\": \"hue\"}}");
  CHECK(e2.find("bad.json:2:") != std::string::npos);
  CHECK(e2.find("view.color") != std::string::npos);
  const std::string e3 = error_of(R"({"title": "t", "scene": "pic_vs_apic"})");
  CHECK(e3.find("'text'") != std::string::npos);
  const std::string e4 = error_of(R"({"title": "t", "scene": "pic_vs_apic", "text": "x", "set": ["solver.transfer"]})");
  CHECK(e4.find("path=value") != std::string::npos);
  const std::string e5 = error_of(R"({"title": "t", "scene": "pic_vs_apic", "text": "x", "keys": [["R"]]})");
  CHECK(e5.find("keys[0]") != std::string::npos);
  const std::string e7 = error_of(R"({"title": "t", "scene": "pic_vs_apic", "text": "x", "compare": "solver.transfer=pic"})");
  CHECK(e7.find("'compare'") != std::string::npos);
  CHECK(e7.find("2 to 4") != std::string::npos);
  const std::string e6 = error_of(R"({"title": "t", "scene": "pic_vs_apic", "text": "x", "start": {"preset": "spin"}})");
  CHECK(e6.find("start.preset") != std::string::npos);
}
