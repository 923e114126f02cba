// Transfers (GAMES201 lecture 7): conservation, PIC vs APIC, presets, FLIP blend.
#include <catch2/catch.hpp>
#include <cmath>
#include "mpm_test_util.h"

using namespace ps;
using test::scene_from;
using test::teaching_block;

TEST_CASE("P2G conserves mass and momentum on the grid to round-off", "[mpm][transfer]") {
  for (const char* transfer : {"pic", "apic", "flip"}) {
    for (const char* kernel : {"linear", "quadratic", "cubic"}) {
      MpmScene s = teaching_block(transfer, "rotation",
                                  (std::string(R"(, "kernel": ")") + kernel + "\"").c_str());
      MpmWorld& w = *s.world;
      // The grid after one substep without forces holds exactly the particles' momentum.
      Diagnostics d0 = w.diagnostics();
      w.solver.boundary = Boundary::Separate;
      REQUIRE(w.step(1).ok);
      const test::GridTotals gt = test::grid_totals(w);
      INFO(transfer << " " << kernel);
      CHECK(gt.mass == Approx(d0.mass).epsilon(1e-6));
      CHECK(gt.px == Approx(d0.momentum[0]).margin(1e-7));
      CHECK(gt.py == Approx(d0.momentum[1]).margin(1e-7));
    }
  }
}

TEST_CASE("Particle momentum is conserved over many substeps with no external force",
          "[mpm][transfer]") {
  for (const char* transfer : {"pic", "apic", "flip"}) {
    MpmScene s = teaching_block(transfer, "translation");
    MpmWorld& w = *s.world;
    w.solver.boundary = Boundary::Separate;
    w.apply_preset(Preset::Translation, 0.3f);
    Diagnostics d0 = w.diagnostics();
    REQUIRE(w.step(100).ok);
    Diagnostics d1 = w.diagnostics();
    INFO(transfer);
    CHECK(d1.mass == d0.mass);  // particles carry mass: exactly constant
    CHECK(d1.momentum[0] == Approx(d0.momentum[0]).epsilon(1e-5));
    CHECK(d1.momentum[1] == Approx(d0.momentum[1]).margin(1e-7));
  }
}

// Kinetic energy left after `steps` substeps, relative to the start.
static double energy_ratio(const char* transfer, const char* preset, int steps) {
  MpmScene s = teaching_block(transfer, preset);
  double e0 = s.world->diagnostics().kinetic_energy;
  REQUIRE(e0 > 0);
  REQUIRE(s.world->step(steps).ok);
  return s.world->diagnostics().kinetic_energy / e0;
}

TEST_CASE("APIC keeps the angular momentum of a rigid rotation - PIC loses it", "[mpm][transfer]") {
  auto angular = [](const char* transfer) {
    MpmScene s = teaching_block(transfer, "rotation");
    double l0 = s.world->diagnostics().angular_momentum;
    REQUIRE(s.world->step(200).ok);
    return s.world->diagnostics().angular_momentum / l0;
  };
  double apic = angular("apic"), pic = angular("pic");
  INFO("APIC L/L0 = " << apic << ", PIC L/L0 = " << pic);
  CHECK(apic > 0.99);
  CHECK(apic < 1.01);
  CHECK(pic < 0.5);
}

TEST_CASE("Velocity presets under PIC and APIC behave as the lecture shows",
          "[mpm][transfer][presets]") {
  // PIC keeps only translation; APIC keeps translation, rotation, shear and dilation.
  const int steps = 100;
  for (const char* preset : {"translation", "rotation", "shear", "dilation"}) {
    double apic = energy_ratio("apic", preset, steps);
    double pic = energy_ratio("pic", preset, steps);
    INFO(preset << ": APIC KE ratio " << apic << ", PIC KE ratio " << pic);
    CHECK(apic > 0.95);
    if (std::string(preset) == "translation") {
      CHECK(pic > 0.99);
    } else {
      CHECK(pic < 0.6);
    }
  }
}

TEST_CASE("FLIP with blend 0 equals PIC exactly", "[mpm][transfer]") {
  MpmScene pic = teaching_block("pic", "rotation");
  MpmScene flip0 = teaching_block("flip", "rotation", R"(, "flip_blend": 0)");
  REQUIRE(pic.world->step(50).ok);
  REQUIRE(flip0.world->step(50).ok);
  CHECK(state_hash(pic.world->particles) == state_hash(flip0.world->particles));
  // And a non-zero blend differs (the test can fail).
  MpmScene flip = teaching_block("flip", "rotation", R"(, "flip_blend": 0.95)");
  REQUIRE(flip.world->step(50).ok);
  CHECK(state_hash(flip.world->particles) != state_hash(pic.world->particles));
  // FLIP keeps far more of the rotation than PIC.
  CHECK(flip.world->diagnostics().kinetic_energy > 1.5 * pic.world->diagnostics().kinetic_energy);
}

TEST_CASE("Transfer scheme switches while running without a reset", "[mpm][transfer]") {
  MpmScene s = teaching_block("pic", "rotation");
  MpmWorld& w = *s.world;
  REQUIRE(w.step(20).ok);
  double e_pic = w.diagnostics().kinetic_energy;
  w.solver.transfer = Transfer::APIC;
  REQUIRE(w.step(100).ok);
  double e_apic = w.diagnostics().kinetic_energy;
  // After the switch, APIC keeps what is left: almost no further loss.
  CHECK(e_apic > 0.95 * e_pic);
  CHECK(w.step_count() == 120);
}
