// The backend interface: batched advance, the substep-size rule, the clock
// and the statistics the Stats panel shows.
#include <catch2/catch.hpp>
#include <cmath>
#include "sim/mpm/mpm_cpu.h"
#include "sim/scene/scene.h"
#include "tests/sim/mpm/mpm_test_util.h"

using namespace ps;

namespace {

MpmScene splash(bool adaptive) {
  std::string s = std::string(R"({
    "domain": {"size": [1, 1], "grid": 64},
    "solver": {"transfer": "apic", "dt": 0.0002, "adaptive_dt": )") +
                  (adaptive ? "true" : "false") + R"(,
               "cfl": 0.4, "gravity": [0, -9.8]},
    "materials": {"w": {"type": "fluid", "bulk_modulus": 800}},
    "bodies": [{"shape": "box", "min": [0.2, 0.5], "max": [0.5, 0.8], "material": "w", "spacing": 0.0078125,
                "velocity": [3, -2]}]
  })";
  return test::scene_from(s);
}

}  // namespace

TEST_CASE("The adaptive substep rule is the CFL bound, clamped", "[mpm][backend]") {
  StepRule r;
  r.adaptive = true;
  r.dt_max = 1e-3f;
  r.dt_min = 1e-6f;
  r.cfl = 0.5f;
  r.dx = 0.01f;
  r.wave_speed = 10.f;
  CHECK(next_substep_dt(r, 0.f) == Approx(0.5f * 0.01f / 10.f));   // 5e-4: the wave speed bounds it
  CHECK(next_substep_dt(r, 40.f) == Approx(0.5f * 0.01f / 50.f));  // 1e-4
  CHECK(next_substep_dt(r, 1e9f) == 1e-6f);                        // floor
  r.wave_speed = 0.f;
  CHECK(next_substep_dt(r, 0.f) == 1e-3f);  // ceiling (no motion)
  r.adaptive = false;
  CHECK(next_substep_dt(r, 1e9f) == 1e-3f);  // fixed step ignores speed
}

TEST_CASE("One batch of substeps equals the same substeps one at a time", "[mpm][backend]") {
  for (bool adaptive : {false, true}) {
    INFO("adaptive " << adaptive);
    MpmScene a = splash(adaptive), b = splash(adaptive);
    a.world->set_backend(std::make_unique<MpmCpuBackend>(2));
    b.world->set_backend(std::make_unique<MpmCpuBackend>(2));
    REQUIRE(a.world->step(120).ok);
    for (int k = 0; k < 120; ++k) REQUIRE(b.world->step(1).ok);
    CHECK(state_hash(a.world->particles) == state_hash(b.world->particles));
    CHECK(a.world->step_count() == 120);
    CHECK(a.world->time() == b.world->time());
    CHECK(a.world->last_dt() == b.world->last_dt());
    if (adaptive) {
      // The splash moves at ~3.6 m/s plus the fluid's wave speed: dt falls below the cap.
      CHECK(a.world->last_dt() < 2e-4f);
      CHECK(a.world->time() < 120 * 2e-4);
      CHECK(a.world->last_dt() ==
            Approx(a.world->step_rule().cfl * a.world->grid.dx /
                   (a.world->diagnostics().max_speed + a.world->step_rule().wave_speed))
                .epsilon(0.05));
    } else {
      CHECK(a.world->time() == Approx(120 * static_cast<double>(2e-4f)).epsilon(1e-12));
    }
  }
}

TEST_CASE("The CPU backend reports where a substep's time goes", "[mpm][backend]") {
  MpmScene s = splash(false);
  s.world->set_backend(std::make_unique<MpmCpuBackend>(2));
  BackendStats before = s.world->backend().stats();
  CHECK(before.ms_per_substep == 0.0);
  REQUIRE(s.world->step(20).ok);
  BackendStats st = s.world->backend().stats();
  CHECK(st.device == "CPU, 2 threads");
  CHECK(st.memory_total == 0);
  REQUIRE(st.phases.size() == 4);
  double sum = 0.0;
  for (const PhaseTiming& p : st.phases) {
    CHECK(p.ms >= 0.0);
    sum += p.ms;
  }
  CHECK(st.phases[1].name.find("P2G") != std::string::npos);
  CHECK(st.phases[1].ms > 0.0);
  CHECK(st.ms_per_substep == Approx(sum));
  // At least the particle columns: x, v, C, F, J, Jp, mass, vol0 per particle.
  CHECK(st.state_bytes >= s.world->particles.size() * 56);
  CHECK(s.world->backend().device_view() == nullptr);
}

TEST_CASE("solver.deterministic is a scene setting that round-trips", "[mpm][backend][scene]") {
  MpmScene s = test::scene_from(R"({
    "domain": {"size": [1, 1], "grid": 32},
    "solver": {"deterministic": true},
    "materials": {"w": {"type": "fluid"}},
    "bodies": [{"shape": "box", "min": [0.3, 0.3], "max": [0.5, 0.5], "material": "w"}]
  })");
  CHECK(s.world->solver.deterministic);
  Json out = mpm_scene_to_json(s);
  CHECK(out.find("solver")->find("deterministic")->as_bool());
  CHECK_THROWS_WITH(
      test::scene_from(R"({"domain": {"size": [1, 1], "grid": 32}, "solver": {"deterministic": 3},
    "materials": {"w": {"type": "fluid"}}, "bodies": []})"),
      Catch::Contains("solver.deterministic"));
}
