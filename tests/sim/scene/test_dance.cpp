// The shipped SGF demo: a soft body from a silhouette dancing to timed forces.
#include <catch2/catch.hpp>
#include <cmath>
#include "sim/dem/dem_world.h"
#include "sim/scene/simulation.h"

using namespace ps;

namespace {

// Mean y of the particles whose IDs are in [lo, hi] of a sorted list.
double mean_y(dem::DemWorld& w, const std::vector<uint32_t>& ids) {
  w.sync();
  double s = 0;
  for (uint32_t id : ids) s += w.particles.x[static_cast<size_t>(w.index_of(id))].y;
  return s / static_cast<double>(ids.size());
}

}  // namespace

TEST_CASE("The dancer follows its SGF choreography, reproducibly", "[scene][sgf][dem]") {
  std::unique_ptr<Simulation> a = load_simulation("dem_dance", {}, "cpu", 1);
  std::unique_ptr<Simulation> b = load_simulation("dem_dance", {}, "cpu", 2);
  REQUIRE(a->dem());
  // The groups the choreography names (assets/scenes/dem_dance/groups.json).
  SgfSetLoadResult set = load_sgf_set(std::string(PS_SOURCE_DIR) + "/assets/scenes/dem_dance");
  REQUIRE(set.ok());
  REQUIRE(set.set.groups.size() == 10);
  const SgfGroup* right_arm = nullptr;
  const SgfGroup* torso = nullptr;
  for (const auto& g : set.set.groups) {
    if (g.name == "right arm") right_arm = &g;
    if (g.name == "torso upper left") torso = &g;
  }
  REQUIRE(right_arm);
  REQUIRE(torso);
  const double arm0 = mean_y(*a->dem(), right_arm->ids) - mean_y(*a->dem(), torso->ids);
  // Move 1 pushes the right arm down (and the left arm up) for its first 7983 steps.
  REQUIRE(a->step(4000).ok);
  REQUIRE(b->step(4000).ok);
  const double arm1 = mean_y(*a->dem(), right_arm->ids) - mean_y(*a->dem(), torso->ids);
  INFO("right arm above the torso: " << arm0 << " -> " << arm1 << " m");
  CHECK(arm1 < arm0 - 0.01);
  // Every move's forces sum to zero: the dancer stays put. (The scene's local
  // damping opposes each particle's own velocity, so momentum is not exactly
  // conserved: the centre of mass may creep by millimetres per second while
  // the limbs move at tenths of a metre per second.)
  Diagnostics d = a->diagnostics();
  CHECK(std::fabs(d.momentum[0]) < 1e-2 * d.mass);
  CHECK(std::fabs(d.momentum[1]) < 1e-2 * d.mass);
  CHECK(d.max_speed > 0.1);
  // Bit-identical whatever the thread count.
  CHECK(d.hash == b->diagnostics().hash);
}
