// The coupled scene's batched rigid-body exchange (sim/scene/coupled.h):
// K = 1 is the per-substep exchange bit for bit, batches do not depend on how
// the substeps are split into calls, and matter + bodies keep their momentum
// across batches (also while a batch is open).
#include <catch2/catch.hpp>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include "sim/io/json.h"
#include "sim/rigid/rigid_world.h"
#include "sim/scene/coupled.h"
#include "sim/scene/simulation.h"

using namespace ps;

namespace {

std::unique_ptr<Simulation> build(const std::string& text, int threads = 2) {
  const Json doc = Json::parse(text, "scene.json");
  return build_simulation(doc, "scene.json", scene_kind(doc), "cpu", threads);
}

CoupledSimulation& coupled(Simulation& s) {
  auto* c = dynamic_cast<CoupledSimulation*>(&s);
  REQUIRE(c);
  return *c;
}

std::string hex(uint64_t h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

/// A water blob with a box already touching it and thrown into it (spinning);
/// `gravity` as JSON, `extra` more "rigid" members. No walls within reach for
/// the first few hundred substeps.
std::string thrown(const char* gravity = "[0, 0]", const std::string& extra = "") {
  return std::string(R"({"kind": "mpm", "domain": {"size": [1, 1], "grid": 64},
    "solver": {"transfer": "apic", "dt": 1e-4, "substeps": 10, "boundary": "slip", "gravity": )") +
         gravity + R"(},
    "materials": {"w": {"type": "fluid", "density": 1000, "bulk_modulus": 5e4, "viscosity": 0.01}},
    "bodies": [{"shape": "disk", "center": [0.6, 0.5], "radius": 0.16, "material": "w"}],
    "rigid": {"walls": false, )" +
         extra +
         R"("bodies": [{"name": "box", "shape": "box", "size": [0.08, 0.06], "position": [0.41, 0.52],
      "angle": 15, "velocity": [1.5, 0.2], "angular_velocity": 3, "density": 700, "friction": 0.3}]}})";
}

/// MPM jelly under a dynamic box and DEM grains under a dynamic disk, both
/// bodies landing from the start; gravity and walls.
const char* kMixedContact = R"({
  "kind": "mpm", "name": "mixed contact",
  "domain": {"size": [1, 1], "grid": 64},
  "solver": {"transfer": "apic", "dt": 2e-4, "substeps": 10, "boundary": "slip", "gravity": [0, -9.81]},
  "materials": {"jelly": {"type": "jelly", "density": 1000, "E": 3e4, "nu": 0.3}},
  "bodies": [{"shape": "box", "min": [0.1, 0.05], "max": [0.4, 0.2], "material": "jelly"}],
  "dem": {
    "solver": {"dt": "auto", "dt_safety": 0.2, "gravity": [0, -9.81], "expected_speed": 2},
    "materials": {"grain": {"density": 2000, "E": 1e7, "nu": 0.25, "restitution": 0.2, "friction": 0.5,
                            "rolling_friction": 0.1}},
    "bond": {"enabled": false},
    "bodies": [{"shape": "box", "center": [0.75, 0.1], "size": [0.2, 0.1], "radius": 0.006, "packing": "hex",
                "material": "grain"}]
  },
  "rigid": {"bodies": [
    {"name": "box", "shape": "box", "size": [0.12, 0.06], "position": [0.25, 0.24], "velocity": [0.3, -0.5], "angular_velocity": 2, "density": 600},
    {"name": "disk", "shape": "disk", "radius": 0.04, "position": [0.75, 0.2], "velocity": [-0.2, -0.8], "density": 2500}
  ]}
})";

/// The bodies' poses and velocities as bits.
std::vector<double> body_states(Simulation& s) {
  std::vector<double> out;
  for (size_t b = 0; b < s.rigid()->body_count(); ++b) {
    const rigid::BodyState st = s.rigid()->state(static_cast<int>(b));
    out.insert(out.end(), {st.com.x, st.com.y, st.angle, st.velocity.x, st.velocity.y, st.omega});
  }
  return out;
}

}  // namespace

TEST_CASE("Coupled MPM with rigid.exchange_substeps 1 is the per-substep exchange, bit for bit",
          "[rigid][scene][batch]") {
  // The exchange as it ran before batching, written out against the worlds'
  // own interfaces: parts in, one substep, impulses to the bodies, Box2D by
  // that substep's dt. K = 1 must give the same bits, whatever the calls.
  const std::string text = thrown("[0, -9.81]", R"("exchange_substeps": 1, )");
  std::unique_ptr<Simulation> ref = build(text), sim = build(text), chunked = build(text);
  MpmWorld& w = *ref->mpm();
  rigid::RigidWorld& rw = *ref->rigid();
  const int steps = 300;
  for (int s = 0; s < steps; ++s) {
    place_mpm_colliders(rw, w);
    w.collider_impulse.assign(3 * w.colliders.size(), 0.0);
    REQUIRE(w.step(1).ok);
    for (size_t k = 0; k < w.colliders.size(); ++k) {
      const double* j = &w.collider_impulse[3 * k];
      rw.apply_impulse(w.colliders[k].body, dem::Vec2d{j[0], j[1]}, j[2]);
    }
    rw.step(w.last_dt());
  }
  REQUIRE(sim->step(steps).ok);
  for (int s = 0; s < steps; s += 7) REQUIRE(chunked->step(std::min(7, steps - s)).ok);
  const uint64_t h = ref->diagnostics().hash;
  INFO("reference " << hex(h) << ", K = 1 " << hex(sim->diagnostics().hash));
  CHECK(sim->diagnostics().hash == h);
  CHECK(chunked->diagnostics().hash == h);
  CHECK(body_states(*sim) == body_states(*ref));
  // The test has teeth: the box was slowed by the water.
  CHECK(rw.state(0).velocity.x < 1.4);

  // MPM, DEM grains and bodies together: the hash the per-substep exchange
  // gave this scene before batching (recorded at commit 586c646 with g++ 12,
  // -O2 -ffp-contract=off, x86-64: `sandbox run` of this scene, 300 steps).
  // A change here means the physics changed: update it only on purpose.
  const std::string mixed = std::string(kMixedContact)
                                .replace(std::string(kMixedContact).find(R"("rigid": {)"), 10,
                                         R"("rigid": {"exchange_substeps": 1, )");
  std::unique_ptr<Simulation> m = build(mixed);
  REQUIRE(coupled(*m).grains());
  REQUIRE(m->step(300).ok);
  INFO("mixed scene after 300 steps: " << hex(m->diagnostics().hash));
  CHECK(m->diagnostics().hash == 0x0d443e00dcddf20aull);
}

TEST_CASE(
    "Batches end at multiples of K: 37 substeps in one call equal 10 + 20 + 7 and 37 single ones",
    "[rigid][scene][batch][determinism]") {
  for (const std::string& text : {thrown("[0, -9.81]", R"("exchange_substeps": 8, )"),
                                  std::string(kMixedContact)
                                      .replace(std::string(kMixedContact).find(R"("rigid": {)"), 10,
                                               R"("rigid": {"exchange_substeps": 8, )")}) {
    std::unique_ptr<Simulation> one = build(text), three = build(text), single = build(text);
    REQUIRE(coupled(*one).exchange_substeps() == 8);
    // Twice over, so the second round starts inside a batch (37 = 4 x 8 + 5).
    for (int round = 0; round < 2; ++round) {
      REQUIRE(one->step(37).ok);
      for (int n : {10, 20, 7}) REQUIRE(three->step(n).ok);
      for (int n = 0; n < 37; ++n) REQUIRE(single->step(1).ok);
      INFO("round " << round << ": " << hex(one->diagnostics().hash) << " "
                    << hex(three->diagnostics().hash) << " " << hex(single->diagnostics().hash));
      CHECK(coupled(*one).batch_open());  // 37 and 74 are not multiples of 8
      CHECK(coupled(*three).batch_open() == coupled(*one).batch_open());
      CHECK(three->diagnostics().hash == one->diagnostics().hash);
      CHECK(single->diagnostics().hash == one->diagnostics().hash);
      CHECK(body_states(*three) == body_states(*one));
      CHECK(body_states(*single) == body_states(*one));
    }
    // And K = 8 is not K = 1 (the batching took effect).
    std::unique_ptr<Simulation> k1 = build(text);
    coupled(*k1).set_exchange_substeps(1);
    REQUIRE(k1->step(74).ok);
    CHECK(k1->diagnostics().hash != one->diagnostics().hash);
  }
}

TEST_CASE("The latest closed exchange is kept through step() calls that close none",
          "[rigid][scene][batch]") {
  // A window under its frame budget steps a few substeps per call: with K = 8 most calls close no
  // batch and report no impulse, and a force readout (the Bodies panel, the force arrows) taken
  // after such a call showed nothing. last_exchange_* keep the latest batch's.
  const int K = 8;
  std::unique_ptr<Simulation> sim =
      build(thrown("[0, -9.81]", "\"exchange_substeps\": " + std::to_string(K) + ", "));
  auto& c = coupled(*sim);
  CHECK(c.last_exchange_impulse().empty());
  CHECK(c.last_exchange_seconds() == 0.0);
  std::vector<double> closed;
  int silent = 0;
  for (int s = 0; s < 5 * K; s += 3) {
    REQUIRE(sim->step(3).ok);
    if (c.last_step_seconds() > 0.0) {
      closed = c.last_body_impulse();
      CHECK(c.last_exchange_seconds() == c.last_step_seconds());
    } else {
      ++silent;
      CHECK(c.last_body_impulse()[0] == 0.0);  // the call's own impulse: none
    }
    if (!closed.empty()) {
      CHECK(c.last_exchange_impulse() == closed);  // the latest closed batch's, held
      CHECK(c.last_exchange_seconds() == Approx(K * static_cast<double>(1e-4f)).epsilon(1e-9));
    }
  }
  CHECK(silent > 0);
  REQUIRE_FALSE(closed.empty());
}

TEST_CASE("Batched exchange: matter + bodies keep their momentum, or change it by gravity alone",
          "[rigid][scene][batch]") {
  for (int K : {16, 5}) {
    // No gravity, nothing else in reach: the total is constant, sampled after
    // calls of 7 substeps (mostly inside a batch: the impulse in transit counts).
    std::unique_ptr<Simulation> sim =
        build(thrown("[0, 0]", "\"exchange_substeps\": " + std::to_string(K) + ", "));
    const Diagnostics d0 = sim->diagnostics();
    const double p0 = std::hypot(d0.momentum[0], d0.momentum[1]);
    const rigid::BodyState b0 = sim->rigid()->state(0);
    double worst = 0.0;
    bool saw_open = false;
    for (int s = 0; s < 420; s += 7) {
      REQUIRE(sim->step(7).ok);
      saw_open = saw_open || coupled(*sim).batch_open();
      const Diagnostics d = sim->diagnostics();
      worst = std::max(
          worst, std::hypot(d.momentum[0] - d0.momentum[0], d.momentum[1] - d0.momentum[1]) / p0);
    }
    const rigid::BodyState b1 = sim->rigid()->state(0);
    const double given =
        b0.mass * std::hypot(b1.velocity.x - b0.velocity.x, b1.velocity.y - b0.velocity.y) / p0;
    INFO("K = " << K << ": max |p - p0| / |p0| = " << worst << ", the body gave the water " << given
                << " of |p0|");
    CHECK(saw_open);
    CHECK(given > 0.1);
    CHECK(worst < 1e-5);  // rigid.momentum_mpm's bound: float round-off over the run

    // Per batch: the matter's momentum change and the impulse the bodies got
    // cancel (Newton's third law on the grid), to the matter's float round-off.
    std::unique_ptr<Simulation> b =
        build(thrown("[0, 0]", "\"exchange_substeps\": " + std::to_string(K) + ", "));
    auto& c = coupled(*b);
    double worst_batch = 0.0, largest_J = 0.0;
    for (int batch = 0; batch < 20; ++batch) {
      const Diagnostics m0 = c.matter()->diagnostics();
      REQUIRE(b->step(K).ok);
      REQUIRE_FALSE(c.batch_open());
      const Diagnostics m1 = c.matter()->diagnostics();
      const std::vector<double>& J = c.last_body_impulse();
      largest_J = std::max(largest_J, std::hypot(J[0], J[1]));
      worst_batch = std::max(worst_batch, std::hypot(m1.momentum[0] - m0.momentum[0] + J[0],
                                                     m1.momentum[1] - m0.momentum[1] + J[1]) /
                                              p0);
      CHECK(c.last_step_seconds() == Approx(K * static_cast<double>(1e-4f)).epsilon(1e-9));
    }
    INFO("K = " << K << ": largest batch impulse " << largest_J / p0
                << " of |p0|, worst |dp_matter + J| " << worst_batch << " of |p0|");
    CHECK(largest_J > 1e-3 * p0);
    CHECK(worst_batch < 1e-6);
  }
  // With gravity: the total grows by (matter + body) g t, nothing else.
  // Sampled where batches end: inside one, Box2D (and the body's weight)
  // has not yet caught up with the matter.
  std::unique_ptr<Simulation> g = build(thrown("[0, -9.81]"));
  const Diagnostics d0 = g->diagnostics();
  const double M = d0.mass;  // matter and the dynamic body
  const int K = coupled(*g).exchange_substeps();
  double worst = 0.0;
  for (int s = 0; s < 320; s += K) {
    REQUIRE(g->step(K).ok);
    REQUIRE_FALSE(coupled(*g).batch_open());
    const Diagnostics d = g->diagnostics();
    const double t = g->time();
    worst = std::max(worst, std::hypot(d.momentum[0] - d0.momentum[0],
                                       d.momentum[1] - d0.momentum[1] + M * 9.81 * t) /
                                (std::hypot(d0.momentum[0], d0.momentum[1]) + M * 9.81 * t));
  }
  INFO("with gravity: max |p - p0 - M g t| / (|p0| + M g t) = " << worst);
  CHECK(worst < 1e-5);
}

TEST_CASE(
    "rigid.exchange_substeps: default, range and where it applies, and rigid null is no section",
    "[rigid][scene][batch]") {
  std::unique_ptr<Simulation> d = build(thrown());
  CHECK(coupled(*d).exchange_substeps() == CoupledSimulation::kDefaultExchangeSubsteps);
  auto error_of = [](const std::string& text) -> std::string {
    try {
      build(text);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK_THAT(error_of(thrown("[0, 0]", R"("exchange_substeps": 0, )")),
             Catch::Contains("rigid.exchange_substeps") && Catch::Contains("out of range"));
  CHECK_THAT(error_of(R"({"kind": "rigid", "domain": {"size": [1, 1]},
                          "rigid": {"exchange_substeps": 4, "bodies": []}})"),
             Catch::Contains("rigid.exchange_substeps") && Catch::Contains("MPM matter only"));
  // "rigid": null builds the scene without its bodies (what `--set rigid=null` times).
  Json doc = Json::parse(thrown(), "scene.json");
  Json bare = doc;
  bare.erase("rigid");
  doc.set("rigid", Json());
  std::unique_ptr<Simulation> a = build_simulation(doc, "scene.json", "mpm", "cpu", 2);
  std::unique_ptr<Simulation> b = build_simulation(bare, "scene.json", "mpm", "cpu", 2);
  CHECK(a->rigid() == nullptr);
  REQUIRE(a->step(20).ok);
  REQUIRE(b->step(20).ok);
  CHECK(a->diagnostics().hash == b->diagnostics().hash);
}
