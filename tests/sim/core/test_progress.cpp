// Progress and cancel of long builds (sim/core/progress.h): the loaders report
// how far they are to this thread's listener, and a listener that says stop
// unwinds the build with ps::Cancelled before the scene exists.
#include <catch2/catch.hpp>

#include <string>
#include <vector>
#include "sim/core/progress.h"
#include "sim/dem/dem_world.h"
#include "sim/io/json.h"
#include "sim/scene/simulation.h"

namespace {

// A fluid box of 160 000 particles (400 x 400 lattice rows: seven reports of 64 rows).
const char* kBox = R"({"kind": "mpm", "domain": {"size": [1, 1], "grid": 128},
  "materials": {"water": {"type": "fluid"}},
  "bodies": [{"shape": "box", "min": [0.1, 0.1], "max": [0.5, 0.5], "material": "water", "spacing": 0.001},
             {"shape": "box", "min": [0.6, 0.1], "max": [0.9, 0.3], "material": "water", "spacing": 0.002}]})";

// A bonded DEM block beside a large unbonded ball.
const char* kBonded = R"({"kind": "dem", "domain": {"min": [0, 0], "max": [1, 1]},
  "materials": {"brick": {"density": 2000, "E": 1e7}, "steel": {"density": 7800, "E": 1e8}},
  "bond": {"enabled": true},
  "bodies": [{"shape": "box", "center": [0.5, 0.2], "size": [0.3, 0.2], "radius": 0.002, "material": "brick", "bonded": true},
             {"shape": "disk", "center": [0.5, 0.7], "disk_radius": 0.05, "radius": 0.05, "material": "steel"}]})";

struct Report {
  std::string stage;
  double fraction;
};

std::unique_ptr<ps::Simulation> build(const char* text) {
  ps::Json doc = ps::Json::parse(text, "progress.json");
  return ps::build_simulation(doc, "progress.json", ps::scene_kind(doc), "cpu", 1);
}

}  // namespace

TEST_CASE("A scene build reports rising progress per body to this thread's listener",
          "[progress]") {
  std::vector<Report> seen;
  {
    ps::ProgressScope scope([&](const std::string& stage, double f) {
      seen.push_back({stage, f});
      return true;
    });
    auto sim = build(kBox);
    REQUIRE(sim->diagnostics().count > 0);
  }
  REQUIRE(seen.size() >= 9);  // body 1: 7 reports, body 2: 2, then the stepper
  CHECK(seen.front().stage == "body 1 of 2");
  CHECK(seen.front().fraction == 0.0);
  CHECK(seen.back().stage == "starting the stepper");
  CHECK(seen.back().fraction == Approx(0.9));
  bool second = false;
  for (size_t k = 1; k < seen.size(); ++k) {
    CHECK(seen[k].fraction >= seen[k - 1].fraction);
    second |= seen[k].stage == "body 2 of 2";
    if (seen[k].stage == "body 2 of 2")
      CHECK(seen[k].fraction >= 0.45 - 1e-12);  // two bodies share 90 %
  }
  CHECK(second);
  // Without a listener nothing is reported and nothing throws.
  seen.clear();
  CHECK_FALSE(ps::progress_listened());
  CHECK(build(kBox)->diagnostics().count > 0);
  CHECK(seen.empty());
}

TEST_CASE("A listener that says stop cancels the build before the scene exists", "[progress]") {
  int calls = 0;
  std::unique_ptr<ps::Simulation> sim;
  ps::ProgressScope scope([&](const std::string&, double f) {
    ++calls;
    return f < 0.2;
  });
  CHECK_THROWS_AS(sim = build(kBox), ps::Cancelled);
  CHECK(sim == nullptr);
  CHECK(calls >= 2);
  calls = 0;
  CHECK_THROWS_AS(sim = build(kBonded), ps::Cancelled);  // the DEM loader reports too
  CHECK(calls >= 1);
  {
    ps::ProgressScope inner([](const std::string&, double) { return true; });  // scopes nest
    CHECK(build(kBox) != nullptr);
  }
  CHECK_THROWS_AS(build(kBox), ps::Cancelled);  // the outer listener is back
}

TEST_CASE("Bonds are formed among a bonded body's grains only, the same beside a large ball",
          "[progress][dem]") {
  std::vector<Report> seen;
  ps::ProgressScope scope([&](const std::string& stage, double f) {
    seen.push_back({stage, f});
    return true;
  });
  auto with_ball = build(kBonded);
  std::string alone = kBonded;
  alone.erase(alone.find(",\n             {\"shape\": \"disk\""), std::string::npos);
  alone += "]}";
  auto without = build(alone.c_str());
  REQUIRE(with_ball->dem() != nullptr);
  REQUIRE(without->dem() != nullptr);
  const auto& a = with_ball->dem()->bonds;
  const auto& b = without->dem()->bonds;
  // The ball (unbonded) takes no bond; the block's bonds are the same pairs in the same order.
  REQUIRE(a.size() == b.size());
  REQUIRE(a.size() > 10000);
  bool same = true;
  for (size_t k = 0; k < a.size(); ++k) same &= a.i[k] == b.i[k] && a.j[k] == b.j[k];
  CHECK(same);
  bool bonding = false;
  for (const Report& r : seen) bonding |= r.stage == "bonding the grains";
  CHECK(bonding);
}
