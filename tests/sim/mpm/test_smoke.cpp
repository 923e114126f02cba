#include <catch2/catch.hpp>
#include "sim/mpm/mpm_world.h"
TEST_CASE("smoke", "[mpm]") {
  ps::MpmWorld w;
  REQUIRE(w.particles.size() == 0);
}
