// Scene handles (the toffee's grabbed ends): particles follow their path.
#include <catch2/catch.hpp>
#include <cmath>
#include "mpm_test_util.h"

using namespace ps;

namespace {
double mean_x(const MpmWorld& w, const MpmHandle& h) {
  double s = 0.0;
  int n = 0;
  for (uint32_t id : h.ids)
    for (size_t i = 0; i < w.particles.size(); ++i)
      if (w.particles.id[i] == id) {
        s += w.particles.x[i].x;
        ++n;
        break;
      }
  return s / n;
}
}  // namespace

TEST_CASE("Handles pull their particles along the path and hold them after stop",
          "[mpm][handles]") {
  MpmScene s = test::scene_from(R"({
    "domain": {"size": [1, 0.5], "grid": 64},
    "solver": {"transfer": "apic", "dt": 0.0001, "boundary": "slip", "gravity": [0, 0]},
    "materials": {"j": {"type": "jelly", "E": 2000, "nu": 0.3}},
    "bodies": [{"shape": "box", "min": [0.3, 0.2], "max": [0.7, 0.3], "material": "j"}],
    "handles": [{"shape": "box", "min": [0.29, 0.19], "max": [0.34, 0.31], "velocity": [-0.2, 0], "stop": 0.1},
                {"shape": "box", "min": [0.66, 0.19], "max": [0.71, 0.31]}]
  })");
  MpmWorld& w = *s.world;
  REQUIRE(w.handles.size() == 2);
  REQUIRE(w.handles[0].ids.size() > 10);
  const double x0 = mean_x(w, w.handles[0]), x1 = mean_x(w, w.handles[1]);
  // 0.2 s: the left handle moves 0.2 * 0.1 = 0.02 then holds; the right one is a clamp.
  for (int f = 0; f < 100; ++f) REQUIRE(w.step(20).ok);
  CHECK(mean_x(w, w.handles[0]) - x0 == Approx(-0.02).margin(0.002));
  CHECK(mean_x(w, w.handles[1]) - x1 == Approx(0.0).margin(0.002));
  // An empty handle is an error naming it.
  CHECK_THROWS_WITH(test::scene_from(R"({"domain": {"size": [1, 1], "grid": 32},
      "materials": {"j": {"type": "jelly"}},
      "bodies": [{"shape": "box", "min": [0.3, 0.3], "max": [0.5, 0.5], "material": "j"}],
      "handles": [{"shape": "disk", "center": [0.8, 0.8], "radius": 0.05}]})"),
                    Catch::Contains("handles[0]") && Catch::Contains("holds no particle"));
}
