// Side-by-side comparison (sim/scene/compare.h): panes start bit-identical
// and differ only by their setting; a setting given to one pane never reaches
// another; the same actions reach every pane; PIC loses the spun block's
// angular momentum while APIC keeps it, from the same initial state.
#include <catch2/catch.hpp>
#include <cmath>
#include "sim/core/error.h"
#include "sim/scene/compare.h"

using namespace ps;

TEST_CASE("Comparison panes start bit-identical and differ only by their setting", "[compare]") {
  Comparison c("pic_vs_apic", {}, {{"solver.transfer=pic"}, {"solver.transfer=apic"}, {"solver.transfer=apic"}}, "cpu", 1);
  REQUIRE(c.size() == 3);
  const uint64_t h0 = c.pane(0).sim->diagnostics().hash;
  CHECK(c.pane(1).sim->diagnostics().hash == h0);  // the transfer does not change the initial state
  CHECK(c.pane(2).sim->diagnostics().hash == h0);
  CHECK(c.pane(0).label == "solver.transfer=pic");
  REQUIRE(c.step(200).ok);
  const uint64_t h1 = c.pane(1).sim->diagnostics().hash;
  CHECK(c.pane(2).sim->diagnostics().hash == h1);  // same setting, same run
  CHECK(c.pane(0).sim->diagnostics().hash != h1);  // PIC differs
  CHECK(c.pane(0).sim->step_count() == c.pane(1).sim->step_count());
}

TEST_CASE("A setting given to one comparison pane never reaches another", "[compare]") {
  Comparison c("pic_vs_apic", {"solver.flip_blend=0.5"}, {{"solver.transfer=flip"}, {"solver.transfer=flip"}}, "cpu", 1);
  c.pane(0).sim->mpm()->solver.flip_blend = 1.f;
  c.pane(0).sim->mpm()->materials[0].density = 7.f;
  CHECK(c.pane(1).sim->mpm()->solver.flip_blend == 0.5f);
  CHECK(c.pane(1).sim->mpm()->materials[0].density != 7.f);
  REQUIRE(c.step(100).ok);
  CHECK(c.pane(0).sim->diagnostics().hash != c.pane(1).sim->diagnostics().hash);
  CHECK(c.pane(1).sim->mpm()->solver.flip_blend == 0.5f);
}

TEST_CASE("Comparison: PIC loses the spun block's angular momentum, APIC keeps it, from one initial state", "[compare]") {
  Comparison c("pic_vs_apic", {}, {{"solver.transfer=pic"}, {"solver.transfer=apic"}}, "cpu", 2);
  c.apply_preset(Preset::Rotation, 1.f);  // every pane alike
  const double L0 = c.pane(0).sim->diagnostics().angular_momentum;
  CHECK(c.pane(1).sim->diagnostics().angular_momentum == L0);
  REQUIRE(std::fabs(L0) > 0.0);
  REQUIRE(c.step(200).ok);  // 0.1 s
  const double Lpic = c.pane(0).sim->diagnostics().angular_momentum;
  const double Lapic = c.pane(1).sim->diagnostics().angular_momentum;
  INFO("L0 " << L0 << ", PIC " << Lpic << ", APIC " << Lapic);
  CHECK(std::fabs(Lpic) < 0.5 * std::fabs(L0));
  CHECK(Lapic == Approx(L0).epsilon(1e-4));
}

TEST_CASE("Comparison: grab and point force act on the same particles in every pane", "[compare]") {
  Comparison c("pic_vs_apic", {}, {{"solver.transfer=apic"}, {"solver.transfer=apic"}}, "cpu", 1);
  const float y0 = c.pane(1).sim->mpm()->particles.x[10].y;
  c.grab_begin({10, 11, 12, 100}, Vec2{0.5f, 0.9f}, 4000.f);
  REQUIRE(c.step(50).ok);
  c.grab_end();
  PointForce f;
  f.active = true;
  f.pos = Vec2{0.3f, 0.3f};
  f.radius = 0.2f;
  f.strength = 50.f;
  c.set_point_force(f);
  REQUIRE(c.step(50).ok);
  CHECK(c.pane(0).sim->diagnostics().hash == c.pane(1).sim->diagnostics().hash);
  CHECK(c.pane(1).sim->mpm()->particles.x[10].y > y0 + 0.01f);  // pulled up towards the target, in both panes
}

TEST_CASE("Comparison: --vary lists and pane counts are checked", "[compare]") {
  CHECK(parse_vary("solver.transfer=pic,apic,flip") ==
        std::vector<std::string>{"solver.transfer=pic", "solver.transfer=apic", "solver.transfer=flip"});
  CHECK_THROWS_AS(parse_vary("solver.transfer"), InputError);
  const auto four = vary_product("solver.transfer=pic,apic  solver.kernel=quadratic,cubic");
  REQUIRE(four.size() == 4);
  CHECK(four[1] == std::vector<std::string>{"solver.transfer=pic", "solver.kernel=cubic"});
  CHECK(four[2] == std::vector<std::string>{"solver.transfer=apic", "solver.kernel=quadratic"});
  CHECK_THROWS_AS(vary_product("solver.transfer=pic,apic,flip solver.kernel=quadratic,cubic"), InputError);  // 6
  CHECK_THROWS_AS(vary_product("solver.transfer=pic"), InputError);                                          // 1
  CHECK_THROWS_AS(parse_vary("solver.transfer=pic,,flip"), InputError);
  CHECK_THROWS_AS(Comparison("pic_vs_apic", {}, {{"solver.transfer=pic"}}, "cpu", 1), InputError);
  try {
    Comparison("pic_vs_apic", {}, {{"solver.transfer=pic"}, {"solver.transfer=bogus"}}, "cpu", 1);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("solver.transfer") != std::string::npos);
  }
}
