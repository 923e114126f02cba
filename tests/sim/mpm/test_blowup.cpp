// Numerical blow-up is detected and reported (particle, step), and stepping stops.
#include <catch2/catch.hpp>
#include "mpm_test_util.h"

using namespace ps;

TEST_CASE("A blow-up is reported with the particle and the step, then stepping stops",
          "[mpm][blowup]") {
  // Stiff jelly with a time step far beyond the CFL limit explodes.
  MpmScene s = test::scene_from(R"({
    "domain": {"size": [1, 1], "grid": 64},
    "solver": {"dt": 0.01, "gravity": [0, -9.8], "velocity_limit": 100},
    "materials": {"j": {"type": "jelly", "E": 1e6}},
    "bodies": [{"shape": "box", "min": [0.3, 0.3], "max": [0.6, 0.6], "material": "j", "spacing": 0.0078125,
                "preset": {"kind": "dilation", "speed": 1}}]
  })");
  MpmWorld& w = *s.world;
  StepStatus st = w.step(200);
  REQUIRE_FALSE(st.ok);
  CHECK(st.step > 0);
  CHECK(st.step <= 200);
  CHECK(st.particle_id == w.particles.id[static_cast<size_t>(st.index)]);
  CHECK(st.message.find("step " + std::to_string(st.step)) != std::string::npos);
  CHECK(st.message.find("particle " + std::to_string(st.particle_id)) != std::string::npos);
  CHECK(w.halted());
  int64_t at = w.step_count();
  StepStatus again = w.step(10);
  CHECK_FALSE(again.ok);
  CHECK(w.step_count() == at);  // no further stepping
}

TEST_CASE("Adaptive time step keeps the same scene stable", "[mpm][blowup]") {
  MpmScene s = test::scene_from(R"({
    "domain": {"size": [1, 1], "grid": 64},
    "solver": {"dt": 0.01, "adaptive_dt": true, "cfl": 0.4, "gravity": [0, -9.8], "velocity_limit": 100},
    "materials": {"j": {"type": "jelly", "E": 1e6}},
    "bodies": [{"shape": "box", "min": [0.3, 0.3], "max": [0.6, 0.6], "material": "j", "spacing": 0.0078125,
                "preset": {"kind": "dilation", "speed": 1}}]
  })");
  MpmWorld& w = *s.world;
  StepStatus st = w.step(200);
  CHECK(st.ok);
  // c = sqrt((lambda + 2 mu) / rho) ~ 1080: dt ~ 0.4 dx / c.
  CHECK(w.last_dt() < 1e-5f);
  CHECK(w.last_dt() > 1e-6f);
}
