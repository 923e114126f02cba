// PS_ASSERT (sim/core/assert.h): a broken invariant throws an InvariantError
// naming the file, the line and the condition, and the world checks its
// particle arrays where it takes edits and where a step starts.
#include <catch2/catch.hpp>
#include <string>
#include "sim/core/assert.h"
#include "tests/sim/mpm/mpm_test_util.h"

using namespace ps;

TEST_CASE("PS_ASSERT throws an InvariantError that says where", "[core][assert]") {
  CHECK_NOTHROW(PS_ASSERT(1 + 1 == 2, "arithmetic"));
  try {
    PS_ASSERT(1 + 1 == 3, "arithmetic");
    FAIL("no throw");
  } catch (const InvariantError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("test_assert.cpp:") != std::string::npos);
    CHECK(what.find("1 + 1 == 3") != std::string::npos);
    CHECK(what.find("(arithmetic)") != std::string::npos);
  }
}

TEST_CASE("An MPM world refuses particle arrays of different lengths", "[core][assert][mpm]") {
  MpmScene s = test::scene_from(R"({
    "domain": {"size": [1, 1], "grid": 16},
    "materials": {"water": {"type": "fluid"}},
    "bodies": [{"shape": "box", "min": [0.4, 0.4], "max": [0.6, 0.6], "material": "water"}]
  })");
  MpmWorld& w = *s.world;
  REQUIRE(w.particles.consistent());
  REQUIRE(w.step(2).ok);
  w.particles.temp.pop_back();  // an edit that forgot one column
  CHECK_FALSE(w.particles.consistent());
  CHECK_THROWS_AS(w.host_changed(), InvariantError);
  CHECK_THROWS_AS(w.step(1), InvariantError);
}
