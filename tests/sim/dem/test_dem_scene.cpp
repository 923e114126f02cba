// DEM scene input errors name file:line:col and the dotted field path.
#include <catch2/catch.hpp>

#include <string>
#include "sim/core/error.h"
#include "sim/io/json.h"
#include "sim/scene/dem_scene.h"

using namespace ps::dem;

namespace {

const char* kGood = R"({
  "kind": "dem",
  "name": "test",
  "description": "two bodies",
  "domain": {"min": [0, 0], "max": [1, 1], "walls": ["left", "right", "bottom"], "wall_material": "steel"},
  "solver": {"dt": "auto", "dt_safety": 0.2, "substeps": 10, "gravity": [0, -9.81]},
  "materials": {
    "rock": {"density": 2500, "E": 1e7, "nu": 0.25, "restitution": 0.5, "friction": 0.5},
    "steel": {"density": 7800, "E": 2e8, "nu": 0.3, "restitution": 0.8, "friction": 0.3, "rolling_friction": 0.01}
  },
  "bond": {"E": 1e7, "nu": 0.25, "radius_ratio": 1, "contact_radius_multiplier": 1.05, "tensile_strength": 1e6},
  "walls": [{"type": "segment", "a": [0.2, 0.5], "b": [0.4, 0.4], "material": "steel"}],
  "bodies": [
    {"shape": "box", "center": [0.5, 0.2], "size": [0.1, 0.05], "radius": 0.0025, "material": "rock", "bonded": true, "group": 1},
    {"shape": "disk", "center": [0.5, 0.6], "disk_radius": 0.02, "radius": 0.005, "material": "steel", "velocity": [0, -1]}
  ],
  "regions": [{"min": [0.44, 0.17], "max": [0.46, 0.23], "fixed": true, "group": 2}],
  "loads": [{"group": 1, "force": [0, -0.1], "rate": [0, -0.01]}]
})";

// Loads `text` (as "scene.json") and returns the InputError it raises.
ps::InputError load_error(const std::string& text) {
  DemWorld w;
  try {
    load_dem_scene(ps::Json::parse(text, "scene.json"), ".", w);
  } catch (const ps::InputError& e) {
    return e;
  }
  FAIL("no error for:\n" << text);
  return ps::InputError({}, "", "");
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("A valid DEM scene loads with bonds, walls, regions and loads", "[dem]") {
  DemWorld w;
  load_dem_scene(ps::Json::parse(kGood, "scene.json"), ".", w);
  CHECK(w.materials.size() == 2);
  CHECK(w.walls.size() == 4);  // three domain sides and a segment
  CHECK(w.particles.size() > 100);
  CHECK(w.bonds.size() > 200);
  CHECK(w.loads.size() == 1);
  size_t fixed = 0;
  for (uint8_t f : w.particles.fixed) fixed += f;
  CHECK(fixed > 0);
  CHECK(w.solver.dt_safety == 0.2);
  CHECK(w.bond.tensile_strength == 1e6);
  // Bonds only inside the bonded box (group 1/2), never with the disk.
  for (size_t k = 0; k < w.bonds.size(); ++k)
    CHECK(w.particles.body[w.bonds.i[k]] == w.particles.body[w.bonds.j[k]]);
  CHECK(w.step(5).ok);
}

TEST_CASE("Bad DEM scene input gives precise errors", "[dem]") {
  SECTION("unknown field") {
    ps::InputError e =
        load_error(replace(kGood, "\"tensile_strength\": 1e6", "\"tensile_strenght\": 1e6"));
    CHECK(e.field() == "bond.tensile_strenght");
    CHECK(e.loc().file == "scene.json");
    CHECK(e.loc().line == 11);
    CHECK(e.loc().column == 88);
    CHECK(std::string(e.what()) ==
          "scene.json:11:88: field 'bond.tensile_strenght': unknown field");
  }
  SECTION("wrong type") {
    ps::InputError e = load_error(replace(kGood, "\"E\": 1e7, \"nu\": 0.25, \"restitution\"",
                                          "\"E\": \"stiff\", \"nu\": 0.25, \"restitution\""));
    CHECK(e.field() == "materials.rock.E");
    CHECK(e.loc().line == 8);
    CHECK(e.loc().column == 36);
    CHECK(e.message() == "expected a number, got string \"stiff\"");
  }
  SECTION("out of range") {
    ps::InputError e = load_error(replace(kGood, "\"restitution\": 0.8", "\"restitution\": 1.5"));
    CHECK(e.field() == "materials.steel.restitution");
    CHECK(e.loc().line == 9);
    CHECK(e.message().find("out of range") != std::string::npos);
  }
  SECTION("unknown material name") {
    ps::InputError e = load_error(replace(kGood, "\"material\": \"steel\", \"velocity\"",
                                          "\"material\": \"stel\", \"velocity\""));
    CHECK(e.field() == "bodies[1].material");
    CHECK(e.loc().line == 15);
    CHECK(e.message() == "unknown material \"stel\" (defined: rock, steel)");
  }
  SECTION("bad enum") {
    ps::InputError e = load_error(replace(kGood, "\"shape\": \"box\"", "\"shape\": \"boxx\""));
    CHECK(e.field() == "bodies[0].shape");
    CHECK(e.loc().line == 14);
    CHECK(e.message() == "expected one of box, disk, polygon, image; got string \"boxx\"");
  }
  SECTION("bad domain side") {
    ps::InputError e = load_error(replace(kGood, "\"bottom\"]", "\"floor\"]"));
    CHECK(e.field() == "domain.walls[2]");
    CHECK(e.loc().line == 5);
  }
  SECTION("body smaller than one particle") {
    ps::InputError e =
        load_error(replace(kGood, "\"disk_radius\": 0.02", "\"disk_radius\": 0.001"));
    CHECK(e.field() == "bodies[1]");
    CHECK(e.loc().line == 15);
  }
  SECTION("region matching nothing") {
    ps::InputError e = load_error(replace(kGood, "\"min\": [0.44, 0.17], \"max\": [0.46, 0.23]",
                                          "\"min\": [0.9, 0.9], \"max\": [0.95, 0.95]"));
    CHECK(e.field() == "regions[0]");
    CHECK(e.loc().line == 17);
    CHECK(e.message() == "no particle centre lies in this region");
  }
  SECTION("load on an empty group") {
    ps::InputError e =
        load_error(replace(kGood, "\"group\": 1, \"force\"", "\"group\": 7, \"force\""));
    CHECK(e.field() == "loads[0].group");
    CHECK(e.message() == "no particle is in group 7");
  }
  SECTION("wrong kind") {
    ps::InputError e = load_error(replace(kGood, "\"kind\": \"dem\"", "\"kind\": \"mpm\""));
    CHECK(e.field() == "kind");
    CHECK(e.loc().line == 2);
  }
  SECTION("dt must be a number or auto") {
    ps::InputError e =
        load_error(replace(kGood, "\"dt\": \"auto\", \"dt_safety\": 0.2", "\"dt\": \"fast\""));
    CHECK(e.field() == "solver.dt");
    CHECK(e.loc().line == 6);
  }
  SECTION("a failed load leaves the world untouched") {
    DemWorld w;
    load_dem_scene(ps::Json::parse(kGood, "scene.json"), ".", w);
    const size_t n = w.particles.size(), nb = w.bonds.size();
    CHECK_THROWS_AS(
        load_dem_scene(ps::Json::parse(replace(kGood, "\"E\": 1e7, \"nu\": 0.25, \"radius",
                                               "\"E\": -1, \"nu\": 0.25, \"radius"),
                                       "scene.json"),
                       ".", w),
        ps::InputError);
    CHECK(w.particles.size() == n);
    CHECK(w.bonds.size() == nb);
  }
}

TEST_CASE("DEM scene: rolling_damping is read and validated like the other material fields",
          "[dem]") {
  {
    DemWorld w;
    load_dem_scene(
        ps::Json::parse(replace(kGood, "\"rolling_friction\": 0.01}",
                                "\"rolling_friction\": 0.01, \"rolling_damping\": 0.45}"),
                        "scene.json"),
        ".", w);
    const int steel = w.material_index("steel"), rock = w.material_index("rock");
    REQUIRE(steel >= 0);
    REQUIRE(rock >= 0);
    CHECK(w.materials[steel].rolling_damping == 0.45);
    CHECK(w.materials[rock].rolling_damping == DemMaterial{}.rolling_damping);  // default
  }
  ps::InputError e = load_error(replace(kGood, "\"rolling_friction\": 0.01}",
                                        "\"rolling_friction\": 0.01, \"rolling_damping\": 1.5}"));
  CHECK(e.field() == "materials.steel.rolling_damping");
  CHECK(e.loc().file == "scene.json");
  CHECK(e.loc().line == 9);
  CHECK(e.message().find("out of range") != std::string::npos);
  ps::InputError t =
      load_error(replace(kGood, "\"rolling_friction\": 0.01}",
                         "\"rolling_friction\": 0.01, \"rolling_damping\": \"lots\"}"));
  CHECK(t.field() == "materials.steel.rolling_damping");
  CHECK(t.message() == "expected a number, got string \"lots\"");
}
