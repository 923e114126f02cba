// The window's real-time factor and slow-motion banner (render/cpu/time_rate.h):
// a stiff scene whose automatic dt is a tenth of a microsecond runs at 1/700
// of real time although every frame's substeps fit the budget; the banner
// must say so, with the dt.
#include <catch2/catch.hpp>

#include <string>

#include "render/cpu/time_rate.h"

using namespace ps;

namespace {

/// `seconds` of frames at 60 per second, each `substeps` steps of `dt`.
void run(SimRate& r, double& wall, double& t, int64_t& step, double seconds, double dt,
         int substeps, bool running = true) {
  for (int f = 0; f < static_cast<int>(seconds * 60); ++f) {
    wall += 1.0 / 60;
    if (running) {
      t += dt * substeps;
      step += substeps;
    }
    r.sample(wall, t, step, running);
  }
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("The real-time factor is simulated time per wall time over the last second",
          "[render][time_rate]") {
  SimRate r;
  double wall = 0, t = 0;
  int64_t step = 0;
  run(r, wall, t, step, 0.3, 2e-4, 20);
  CHECK_FALSE(r.known());  // under half a second
  CHECK(r.rate() == 0.0);
  run(r, wall, t, step, 2.0, 2e-4, 20);  // dam_break: 20 substeps of 0.2 ms a frame
  REQUIRE(r.known());
  CHECK(r.rate() == Approx(0.24).epsilon(1e-6));
  CHECK(r.dt() == Approx(2e-4).epsilon(1e-6));
  // Pausing forgets it; the rate after a pause is measured afresh.
  run(r, wall, t, step, 0.5, 2e-4, 20, false);
  CHECK_FALSE(r.known());
  run(r, wall, t, step, 1.5, 1e-4, 20);
  CHECK(r.rate() == Approx(0.12).epsilon(1e-6));
  // Time going back (a reset, a rewind) starts over.
  r.sample(wall + 0.01, 0.0, 0, true);
  CHECK_FALSE(r.known());
}

TEST_CASE("Rates print as factors, slow ones as fractions", "[render][time_rate]") {
  CHECK(rate_text(1.0) == "x1");
  CHECK(rate_text(2.0) == "x2");
  CHECK(rate_text(0.54) == "x0.54");
  CHECK(rate_text(0.24) == "x1/4");
  CHECK(rate_text(1.0 / 700) == "x1/700");
  CHECK(rate_text(1.0 / 757.6) == "x1/760");
  CHECK(rate_text(1.0 / 23.4) == "x1/23");
  CHECK(duration_text(1.1e-7) == "0.11 \u00b5s");
  CHECK(duration_text(2.2e-5) == "22 \u00b5s");
  CHECK(duration_text(1.5e-3) == "1.5 ms");
  CHECK(duration_text(2.0) == "2 s");
}

TEST_CASE("Slow motion is shown when simulated time crawls, even with every substep run",
          "[render][time_rate]") {
  double wall = 0, t = 0;
  int64_t step = 0;
  SECTION("a built-in scene at its own pace: no banner") {
    SimRate r;
    run(r, wall, t, step, 2.0, 2e-4, 20);
    CHECK(slow_motion_text(r, 20, 1.0, 12.0).empty());
  }
  SECTION(
      "dem_beam with bond E at its maximum: dt 0.11 us, 200 substeps a frame, all of them run") {
    SimRate r;
    run(r, wall, t, step, 2.0, 1.1e-7, 200);
    const std::string s = slow_motion_text(r, 200, 1.0, 12.0);
    INFO(s);
    CHECK(has(s, "slow motion x1/760 of real time"));
    CHECK(has(s, "dt 0.11 \u00b5s"));
    CHECK(has(s, "200 substeps a frame (22 \u00b5s of motion per frame)"));
    CHECK_FALSE(has(s, "budget"));  // the budget is not the reason
  }
  SECTION("substeps cut by the frame budget: said, with the measured rate") {
    SimRate r;
    run(r, wall, t, step, 2.0, 2e-4, 10);  // 10 of the 20 wanted fit
    const std::string s = slow_motion_text(r, 20, 0.5, 12.0);
    INFO(s);
    CHECK(has(s, "slow motion x1/8 of real time"));
    CHECK(has(s, "10 of 20 substeps per frame fit the 12 ms budget"));
  }
  SECTION("a cut named from the smoothed share, not the last frame (which may have fitted)") {
    SimRate r;
    run(r, wall, t, step, 2.0, 1.1e-7, 200);
    const std::string s = slow_motion_text(r, 200, 0.9, 12.0);
    INFO(s);
    CHECK(has(s, "; 180 of 200 substeps per frame fit the 12 ms budget"));
    CHECK_FALSE(has(s, "200 of 200 substeps per frame fit"));
  }
  SECTION("before the rate is known, a budget cut shows the share of substeps") {
    SimRate r;
    CHECK(slow_motion_text(r, 20, 0.5, 12.0) ==
          "slow motion x0.50  (10 of 20 substeps per frame fit the 12 ms budget)");
    CHECK(slow_motion_text(r, 20, 1.0, 12.0).empty());
  }
}
