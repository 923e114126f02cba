// Bad scene files and bad --set values are rejected with precise messages.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include "sim/core/limits.h"
#include "sim/scene/scene.h"
#include "sim/scene/simulation.h"

using namespace ps;
namespace fs = std::filesystem;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  // One folder per process: ctest runs test cases in parallel processes.
  fs::path dir = fs::temp_directory_path() / ("ps_scene_tests_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

const char* kGood = R"({
  "domain": {"size": [1, 1], "grid": 32},
  "solver": {"transfer": "apic"},
  "materials": {"water": {"type": "fluid"}},
  "bodies": [{"shape": "box", "min": [0.2, 0.2], "max": [0.4, 0.4], "material": "water"}]
})";

std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  std::string path = write_temp("bad.json", text);
  try {
    load_simulation(path, sets, "cpu", 1);  // MPM and DEM scenes alike
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("A good scene loads", "[scene]") {
  MpmScene s = load_mpm_scene(write_temp("good.json", kGood));
  CHECK(s.world->particles.size() ==
        12 * 12);  // spacing dx/2 = 1/64: floor(0.2 * 64) = 12 per axis
}

TEST_CASE("Unknown fields are errors with file, line, column and field", "[scene]") {
  std::string e = error_of(replace(kGood, "\"transfer\"", "\"transfr\""));
  INFO(e);
  CHECK(e.find("bad.json:3:14: field 'solver.transfr': unknown field") != std::string::npos);
}

TEST_CASE("Wrong types, ranges and names are located", "[scene]") {
  std::string e1 = error_of(replace(kGood, "\"apic\"", "\"apik\""));
  INFO(e1);
  CHECK(
      e1.find(
          ":3:26: field 'solver.transfer': expected one of pic, apic, flip, polypic; got string \"apik\"") !=
      std::string::npos);
  std::string e2 = error_of(replace(kGood, "\"grid\": 32", "\"grid\": \"32\""));
  INFO(e2);
  CHECK(e2.find(":2:38: field 'domain.grid': expected a number, got string \"32\"") !=
        std::string::npos);
  std::string e3 = error_of(replace(kGood, "\"material\": \"water\"", "\"material\": \"lava\""));
  INFO(e3);
  CHECK(e3.find("field 'bodies[0].material': no material named 'lava'") != std::string::npos);
  std::string e4 = error_of(replace(kGood, "\"grid\": 32", "\"grid\": 3"));
  CHECK(e4.find("field 'domain.grid': value 3 is out of range [8, 8192]") != std::string::npos);
  std::string e5 = error_of(replace(kGood, "\"type\": \"fluid\"", "\"type\": \"fluid\", \"E\": 5"));
  INFO(e5);
  CHECK(e5.find("field 'materials.water.E': unknown field") !=
        std::string::npos);  // E is not a fluid parameter
}

TEST_CASE("Syntax errors point at the character", "[scene]") {
  std::string e = error_of(replace(kGood, "\"grid\": 32}", "\"grid\": 32,}"));
  INFO(e);
  CHECK(e.find("bad.json:2:41: expected a quoted field name") != std::string::npos);
  std::string e2 = error_of("{\"domain\": {\"size\": [1, 1]");
  CHECK(e2.find("bad.json:1:27:") != std::string::npos);
}

TEST_CASE("Overrides (--set) apply by path and bad values are rejected precisely", "[scene]") {
  std::string path = write_temp("good.json", kGood);
  MpmScene s =
      load_mpm_scene(path, {"solver.transfer=pic", "solver.flip_blend=0.5",
                            "materials.water.bulk_modulus=123", "bodies.0.velocity=[1,2]"});
  CHECK(s.world->solver.transfer == Transfer::PIC);
  CHECK(s.world->solver.flip_blend == 0.5f);
  CHECK(s.world->materials[0].bulk_modulus == 123.f);
  CHECK(s.world->particles.v[0] == Vec2{1.f, 2.f});

  std::string e1 = error_of(kGood, {"solver.flip_blend=1.5"});
  CHECK(
      e1.find(
          "--set solver.flip_blend=1.5: field 'solver.flip_blend': value 1.5 is out of range [0, 1]") !=
      std::string::npos);
  std::string e2 = error_of(kGood, {"solver.transfer=pik"});
  CHECK(
      e2.find(
          "--set solver.transfer=pik: field 'solver.transfer': expected one of pic, apic, flip, polypic") !=
      std::string::npos);
  std::string e3 = error_of(kGood, {"solver.flipblend=0.5"});
  CHECK(e3.find("field 'solver.flipblend': unknown field") != std::string::npos);
  std::string e4 = error_of(kGood, {"bodies.3.velocity=[0,0]"});
  CHECK(e4.find("field 'bodies.3': no array element '3' (the array has 1 elements)") !=
        std::string::npos);
  std::string e5 = error_of(kGood, {"solver.dt"});
  CHECK(e5.find("expected key=value") != std::string::npos);
}

TEST_CASE("Saving a scene keeps edited parameters and reloads identically", "[scene]") {
  MpmScene s = load_mpm_scene(write_temp("good.json", kGood));
  s.world->solver.transfer = Transfer::FLIP;
  s.world->solver.flip_blend = 0.9f;
  s.world->materials[0].bulk_modulus = 777.f;
  std::string out = write_temp("saved.json", "");
  save_json_file(out, mpm_scene_to_json(s));
  MpmScene r = load_mpm_scene(out);
  CHECK(r.world->solver.transfer == Transfer::FLIP);
  CHECK(r.world->solver.flip_blend == 0.9f);
  CHECK(r.world->materials[0].bulk_modulus == 777.f);
  CHECK(state_hash(r.world->particles) == state_hash(s.world->particles));
}

TEST_CASE("Every built-in scene loads", "[scene]") {
  auto paths = builtin_scene_paths();
  REQUIRE(paths.size() >= 6);
  for (const auto& p : paths) {
    INFO(p);
    Json doc = read_scene_document(p, {});
    const std::string kind = scene_kind(doc);
    // Every kind, bodies included, through the same path the runner and window use.
    std::unique_ptr<Simulation> sim = load_simulation(p, {}, "cpu", 1);
    REQUIRE(sim);
    if (kind == "rigid") {
      CHECK(sim->rigid() != nullptr);
      continue;
    }
    CHECK(sim->diagnostics().mass > 0.0);
    if (kind != "mpm") continue;
    Json matter = doc;
    matter.erase("rigid");  // the matter of a coupled scene is an ordinary MPM scene
    matter.erase("dem");    // and so is that of a scene with DEM grains beside it
    MpmScene s = build_mpm_scene(matter, p);
    CHECK(s.world->particles.size() >= 1000);
  }
}

TEST_CASE("An image-mask body fills the dark pixels of a silhouette", "[scene]") {
  // disk.png: 96 x 96 px, a dark disk of radius 40 px centred in the image.
  // Mapped to width 0.48 (5 mm per pixel) at origin (0.26, 0.26): centre (0.5, 0.5), radius 0.2.
  std::string scene = std::string(R"({
    "domain": {"size": [1, 1], "grid": 64},
    "materials": {"j": {"type": "jelly"}},
    "bodies": [{"shape": "image", "file": ")") +
                      PS_SOURCE_DIR + R"(/assets/specimens/disk.png",
                "origin": [0.26, 0.26], "width": 0.48, "material": "j", "spacing": 0.0078125}]
  })";
  MpmScene s = load_mpm_scene(write_temp("image.json", scene));
  const MpmParticles& p = s.world->particles;
  const double area = 3.14159265 * 0.2 * 0.2, cell = 0.0078125 * 0.0078125;
  CHECK(static_cast<double>(p.size()) == Approx(area / cell).epsilon(0.03));
  double cx = 0, cy = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    Vec2 d = p.x[i] - Vec2{0.5f, 0.5f};
    CHECK(length(d) < 0.2f + 0.005f);  // within one pixel of the disk's edge
    cx += p.x[i].x;
    cy += p.x[i].y;
  }
  CHECK(cx / p.size() == Approx(0.5).margin(0.003));
  CHECK(cy / p.size() == Approx(0.5).margin(0.003));
  // A missing image is a located error, not a crash.
  std::string e = error_of(std::string(R"({
    "domain": {"size": [1, 1], "grid": 64},
    "materials": {"j": {"type": "jelly"}},
    "bodies": [{"shape": "image", "file": "missing.png", "width": 0.5, "material": "j"}]
  })"));
  INFO(e);
  CHECK(e.find("bad.json:4:43: field 'bodies[0].file': cannot read image") != std::string::npos);
}

TEST_CASE("Absurd sizes are refused before anything is allocated", "[scene]") {
  // A body far larger than its spacing allows: an error naming the field, not an allocation.
  std::string e1 = error_of(replace(kGood, "\"max\": [0.4, 0.4]", "\"max\": [1e9, 1e9]"));
  INFO(e1);
  CHECK(e1.find("field 'bodies[0].spacing': the body's bounding box holds") != std::string::npos);
  std::string e2 =
      error_of(replace(kGood, "\"grid\": 32", "\"grid\": 8192"), {"domain.size=[1,8]"});
  INFO(e2);
  CHECK(e2.find("field 'domain.grid': grid too large") != std::string::npos);
}

TEST_CASE("A DEM body with a vanishing particle radius is refused with its location",
          "[scene][dem]") {
  std::string e = error_of(R"({
    "kind": "dem",
    "domain": {"min": [0, 0], "max": [1, 1]},
    "materials": {"rock": {"density": 2500, "E": 1e7}},
    "bodies": [{"shape": "box", "center": [0.5, 0.5], "size": [0.5, 0.5], "radius": 1e-7, "material": "rock"}]
  })");
  INFO(e);
  CHECK(e.find(":5:16: field 'bodies[0]': this body would hold more than 2000000 particles") !=
        std::string::npos);
}

TEST_CASE("A DEM body reaching outside the domain is refused, saying how much of it and where",
          "[scene][dem]") {
  // The issue's case: a bonded disk of radius 5.12 in a 1 x 1 domain (949 000 grains, most outside).
  const std::string big = error_of(R"({
    "kind": "dem",
    "domain": {"min": [0, 0], "max": [1, 1]},
    "materials": {"rock": {"density": 2500, "E": 1e7}},
    "bodies": [{"shape": "disk", "center": [0.5, 0.5], "disk_radius": 5.12, "radius": 0.005, "material": "rock", "bonded": true}]
  })");
  INFO(big);
  CHECK(big.find(":5:16: field 'bodies[0]': ") != std::string::npos);
  CHECK(big.find(" grains lie outside the domain [0, 0] to [1, 1] (their centres reach [-4.") !=
        std::string::npos);
  // One grain row past the top is enough; a body inside loads.
  const char* edge = R"({
    "kind": "dem",
    "domain": {"min": [0, 0], "max": [1, 1]},
    "materials": {"rock": {"density": 2500, "E": 1e7}},
    "bodies": [{"shape": "box", "center": [0.5, CY], "size": [0.2, 0.2], "radius": 0.01, "material": "rock"}]
  })";
  const std::string top = error_of(replace(edge, "CY", "0.95"));
  INFO(top);
  CHECK(top.find("grains lie outside the domain [0, 0] to [1, 1]") != std::string::npos);
  CHECK(error_of(replace(edge, "CY", "0.5")) == "no error");
}

TEST_CASE("An MPM scene that would not fit the memory available is refused with the estimate",
          "[scene][limits]") {
  ps::InputLimits& l = ps::input_limits();
  const ps::InputLimits saved = l;
  // A box of 0.8 x 0.8 at spacing 0.002 on a 256^2 grid: 400 x 400 lattice points.
  const std::string scene = R"({
    "domain": {"size": [1, 1], "grid": 256},
    "materials": {"water": {"type": "fluid"}},
    "bodies": [{"shape": "box", "min": [0.1, 0.1], "max": [0.9, 0.9], "material": "water", "spacing": 0.002}]
  })";
  const double need = ps::mpm_memory_estimate(160000.0, 257.0 * 257.0, false);
  CHECK(need == Approx(16.0 * 1024 * 1024 + 160000.0 * 136 + 66049.0 * 24));
  l.max_memory_bytes = static_cast<int64_t>(need) - 1;
  const std::string e = error_of(scene);
  INFO(e);
  CHECK(
      e.find(
          ":4:103: field 'bodies[0].spacing': the scene would need about 0.04 GB of memory while it runs (160000 "
          "particles at about 136 bytes each, 66049 grid nodes at 24); 0.04 GB available") !=
      std::string::npos);
  l.max_memory_bytes = static_cast<int64_t>(need) + 1;
  CHECK(error_of(scene) == "no error");
  l = saved;
  // The machine's own figure when none is set (Linux: /proc/meminfo).
  CHECK(ps::memory_budget_bytes() > 1e8);
}
