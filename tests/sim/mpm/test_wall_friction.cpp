// Coulomb friction on the walls' surface (solver.wall_friction; sim/mpm/mpm_kernels.h,
// coulomb_wall and wall_contact): the node rule, the scene field, and a sliding
// block that decelerates at mu g (the verify case mpm.wall_friction_slide runs
// the full version against the stopping distance).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include "sim/core/error.h"
#include "sim/io/json.h"
#include "sim/mpm/mpm_cpu.h"
#include "sim/mpm/mpm_kernels.h"
#include "sim/scene/scene.h"

using namespace ps;

TEST_CASE(
    "Coulomb wall rule: the motion into the wall goes, the tangential speed falls by mu times it",
    "[mpm][wall_friction]") {
  float vn = -1.f, vt = 2.f;
  mpm::coulomb_wall(vn, vt, 1.f, 0.5f);
  CHECK(vn == 0.f);
  CHECK(vt == Approx(1.5f));
  vn = -1.f, vt = -2.f;  // sliding the other way: slowed, not reversed in sign
  mpm::coulomb_wall(vn, vt, 1.f, 0.5f);
  CHECK(vt == Approx(-1.5f));
  vn = -1.f, vt = 0.3f;  // friction stops it, never pushes it back
  mpm::coulomb_wall(vn, vt, 1.f, 3.f);
  CHECK(vt == 0.f);
  vn = 0.5f, vt = 2.f;  // leaving the wall: untouched
  mpm::coulomb_wall(vn, vt, 1.f, 0.5f);
  CHECK(vn == 0.5f);
  CHECK(vt == 2.f);
  vn = 0.5f, vt = 2.f;  // a wall facing down (the ceiling): +vn is into it
  mpm::coulomb_wall(vn, vt, -1.f, 0.5f);
  CHECK(vn == 0.f);
  CHECK(vt == Approx(1.75f));

  // wall_contact picks the surface nodes only (i or j == b, nx - b, ny - b), and nothing when off.
  mpm::GridUpdateParams p{};
  p.grid.nx = p.grid.ny = 32;
  p.boundary_nodes = 3;
  p.wall_friction = 0.5f;
  const Vec2 down{2.f, -1.f};
  CHECK(mpm::wall_contact(10, 3, down, p).y == 0.f);  // on the floor
  CHECK(mpm::wall_contact(10, 3, down, p).x == Approx(1.5f));
  CHECK(mpm::wall_contact(10, 4, down, p).x == 2.f);             // above it: free
  CHECK(mpm::wall_contact(29, 10, Vec2{1.f, 2.f}, p).x == 0.f);  // right wall, moving into it
  CHECK(mpm::wall_contact(29, 10, Vec2{1.f, 2.f}, p).y == Approx(1.5f));
  p.wall_friction = -1.f;
  CHECK(mpm::wall_contact(10, 3, down, p).y == -1.f);
}

namespace {

std::string slide_doc(const char* friction) {
  return std::string(R"({"domain": {"size": [1, 0.5], "grid": 64},
    "solver": {"transfer": "apic", "dt": 4e-5, "boundary": "separate", "gravity": [0, -9.8])") +
         friction + R"(},
    "materials": {"m": {"type": "jelly", "density": 1000, "E": 1e5, "nu": 0.2}},
    "bodies": [{"shape": "box", "min": [0.1, 0.046875], "max": [0.2, 0.096875], "material": "m", "velocity": [1, 0]}]})";
}

double com_velocity_after(const std::string& doc, double t) {
  MpmScene s = build_mpm_scene(Json::parse(doc, "slide.json"), "slide.json");
  s.world->set_backend(std::make_unique<MpmCpuBackend>(2));
  REQUIRE(s.world->step(static_cast<int>(std::lround(t / 4e-5))).ok);
  const Diagnostics d = s.world->diagnostics();
  return d.momentum[0] / d.mass;
}

}  // namespace

TEST_CASE(
    "A block sliding on a floor with wall friction mu decelerates at mu g, and without it keeps its speed",
    "[mpm][wall_friction]") {
  // v(t) = v0 - mu g t while sliding: mu = 0.5, t = 0.1 s gives 1 - 0.49 = 0.51 m/s.
  const double v_rough = com_velocity_after(slide_doc(R"(, "wall_friction": 0.5)"), 0.1);
  INFO("v(0.1 s) with mu = 0.5: " << v_rough);
  CHECK(std::fabs(v_rough - 0.51) < 0.03);
  // Off (the field absent): the floor's surface nodes are free, nothing slows the block.
  const double v_free = com_velocity_after(slide_doc(""), 0.1);
  INFO("v(0.1 s) without wall friction: " << v_free);
  CHECK(v_free > 0.99);
  // mu = 0: no penetration, still no slowing.
  CHECK(com_velocity_after(slide_doc(R"(, "wall_friction": 0)"), 0.1) > 0.99);
}

TEST_CASE("solver.wall_friction: a negative value is a located error, and saving writes it back",
          "[mpm][wall_friction][scene]") {
  try {
    build_mpm_scene(Json::parse(slide_doc(R"(, "wall_friction": -0.2)"), "slide.json"),
                    "slide.json");
    FAIL("a negative wall friction was accepted");
  } catch (const InputError& e) {
    INFO(e.what());
    CHECK(e.field() == "solver.wall_friction");
  }
  MpmScene s = build_mpm_scene(Json::parse(slide_doc(R"(, "wall_friction": 0.25)"), "slide.json"),
                               "slide.json");
  CHECK(s.world->solver.wall_friction == 0.25f);
  CHECK(mpm_scene_to_json(s).find("solver")->find("wall_friction")->as_number() == Approx(0.25));
  s.world->solver.wall_friction = -1.f;  // switched off in the window
  CHECK(mpm_scene_to_json(s).find("solver")->find("wall_friction") == nullptr);
}
