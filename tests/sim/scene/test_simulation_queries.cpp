// What callers ask of any Simulation (sim/scene/simulation.h, run_report.h):
// the answers follow the scene's worlds, so the window and the runner need not
// branch on MPM, DEM or rigid bodies themselves.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include "../selfcheck/fake_backends.h"
#include "sim/dem/dem_world.h"
#include "sim/io/json.h"
#include "sim/rigid/rigid_world.h"
#include "sim/scene/run_report.h"
#include "sim/scene/simulation.h"

using namespace ps;

namespace {

std::unique_ptr<Simulation> build(const std::string& text) {
  const Json doc = Json::parse(text, "scene.json");
  return build_simulation(doc, "scene.json", scene_kind(doc), "cpu", 1);
}

// Stiff jelly with a time step far beyond the CFL limit (tests/sim/mpm/test_blowup.cpp).
const char* kBlowUp = R"({
  "domain": {"size": [1, 1], "grid": 64},
  "solver": {"dt": 0.01, "gravity": [0, -9.8], "velocity_limit": 100},
  "materials": {"j": {"type": "jelly", "E": 1e6}},
  "bodies": [{"shape": "box", "min": [0.3, 0.3], "max": [0.6, 0.6], "material": "j",
              "spacing": 0.0078125, "preset": {"kind": "dilation", "speed": 1}}]
})";

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("Simulation::halted gives the blow-up that stopped an MPM scene, and the MPM advice",
          "[scene][queries]") {
  std::unique_ptr<Simulation> sim = build(kBlowUp);
  CHECK(sim->halted() == nullptr);
  const StepStatus st = sim->step(200);
  REQUIRE_FALSE(st.ok);
  const StepStatus* h = sim->halted();
  REQUIRE(h != nullptr);
  CHECK(h->message == st.message);
  CHECK(h->particle_id == st.particle_id);
  CHECK(contains(sim->halt_advice(), "more substeps"));
}

TEST_CASE("Simulation queries answer for the world a scene has (MPM, DEM, bodies)",
          "[scene][queries]") {
  PointForce f;
  f.active = true;
  f.pos = Vec2{0.4f, 0.5f};
  f.strength = -7.f;
  f.radius = 0.2f;

  std::unique_ptr<Simulation> mpm = load_simulation("mpm88", {}, "cpu", 1);
  REQUIRE(mpm->mpm());
  CHECK(mpm->p4_precision() == P4Precision::Float);
  CHECK_FALSE(mpm->counts_interactions());
  CHECK(mpm->scheme_note() == ", apic transfer, quadratic kernel");
  BackendStats bs;
  CHECK(mpm->step_phases(bs));
  CHECK_FALSE(mpm->has_device_view());  // the CPU backend has no device copy to draw
  mpm->set_point_force(f);
  CHECK(mpm->mpm()->point_force.active);
  CHECK(mpm->mpm()->point_force.pos.x == 0.4f);
  CHECK(mpm->mpm()->point_force.strength == -7.f);
  CHECK(body_lines(*mpm, "final").empty());
  CHECK(heat_state_lines(*mpm, "final").empty());

  std::unique_ptr<Simulation> dem = load_simulation("dem_beam", {}, "cpu", 1);
  REQUIRE(dem->dem());
  CHECK(dem->p4_precision() == P4Precision::Double);
  CHECK(dem->counts_interactions());
  CHECK(dem->scheme_note().empty());
  CHECK_FALSE(dem->step_phases(bs));
  dem->set_point_force(f);
  CHECK(dem->dem()->point_force.active);
  CHECK(dem->dem()->point_force.radius == 0.2f);
  CHECK(dem->halted() == nullptr);
  CHECK(contains(dem->halt_advice(), "safety factor"));

  std::unique_ptr<Simulation> bodies = load_simulation("rigid_float", {}, "cpu", 1);
  REQUIRE(bodies->rigid());
  const std::vector<std::string> lines = body_lines(*bodies, "start");
  REQUIRE(lines.size() == bodies->rigid()->body_count());
  CHECK(lines[0].rfind("body start 1 ", 0) == 0);
  REQUIRE(bodies->step(32).ok);
  const std::vector<std::string> cost = cost_lines(*bodies, 1.0, 32);
  REQUIRE_FALSE(cost.empty());
  CHECK(cost[0].rfind("coupling ", 0) == 0);
}

TEST_CASE("Simulation::fell_back_to_cpu says when a device backend failed", "[scene][queries]") {
  reset_backend_failures_for_tests();
  std::unique_ptr<Simulation> sim = load_simulation("mpm88", {}, "cpu", 1);
  CHECK_FALSE(sim->fell_back_to_cpu());
  fake::MpmFaults faults;
  faults.fail_after = 5;
  fake::Calls calls;
  sim->mpm()->set_backend(std::make_unique<fake::DeviceMpm>(faults, &calls));
  REQUIRE(sim->step(20).ok);
  CHECK(sim->fell_back_to_cpu());
  CHECK(contains(sim->take_notice(), "continuing on the CPU backend"));
  reset_backend_failures_for_tests();
}

TEST_CASE("The runner's heat line reports the heat ledger of a scene with heat",
          "[scene][queries]") {
  std::unique_ptr<Simulation> sim = load_simulation("ice_cube", {}, "cpu", 1);
  REQUIRE(sim->mpm());
  REQUIRE(sim->mpm()->heat.enabled);
  const std::vector<std::string> start = heat_state_lines(*sim, "start");
  REQUIRE(start.size() == 1);
  CHECK(start[0].rfind("heat start t=0 s", 0) == 0);
  CHECK(contains(start[0], " drift=0 J"));
}
