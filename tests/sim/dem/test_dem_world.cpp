// Conservation, determinism across thread counts, blow-up detection, export,
// and the shipped DEM scenes.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include "sim/core/assert.h"
#include "sim/dem/dem_build.h"
#include "sim/dem/dem_world.h"
#include "sim/io/dem_p4.h"
#include "sim/scene/dem_scene.h"

using namespace ps::dem;

namespace {

// Deterministic pseudo-random numbers in [0, 1).
struct Lcg {
  uint64_t s = 12345;
  double next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(s >> 11) / 9007199254740992.0;
  }
};

// A dense gas of loose grains of two materials plus two bonded clusters,
// no gravity, no walls, random velocities and spins.
void make_gas(DemWorld& w) {
  w.solver.gravity = {0.0, 0.0};
  DemMaterial a, b;
  a.E = 1e7;
  a.restitution = 0.6;
  a.friction = 0.5;
  a.rolling_friction = 0.05;
  a.density = 2000.0;
  b.E = 3e7;
  b.restitution = 0.9;
  b.friction = 0.3;
  b.rolling_friction = 0.0;
  b.density = 3000.0;
  int ma = w.add_material("a", a), mb = w.add_material("b", b);
  Lcg rng;
  const double r = 0.004;
  for (int yy = 0; yy < 20; ++yy)
    for (int xx = 0; xx < 20; ++xx) {
      const double rad = r * (0.7 + 0.3 * rng.next());
      Vec2d v{rng.next() - 0.5, rng.next() - 0.5};
      size_t i = add_particle(w, {xx * 2.2 * r, yy * 2.2 * r}, rad, (xx + yy) % 2 ? ma : mb, 0, v);
      w.particles.omega[i] = 50.0 * (rng.next() - 0.5);
    }
  BodySpec body;
  body.shape = Shape::Disk;
  body.disk_radius = 5.0 * r;
  body.radius = r;
  body.material = ma;
  body.bonded = true;
  body.center = {-10.0 * r, 20.0 * r};
  body.velocity = {1.0, 0.0};
  add_body(w, body);
  body.center = {60.0 * r, 20.0 * r};
  body.velocity = {-1.0, 0.0};
  add_body(w, body);
  w.bond.E = 1e7;
  w.bond.tensile_strength = 2e5;
  w.bond.shear_strength = 2e5;
  w.form_bonds();
  w.solver.dt = w.estimate_time_step().recommended;
}

void totals(const DemWorld& w, double P[2], double& L, double& scale) {
  P[0] = P[1] = L = scale = 0.0;
  const DemParticles& p = w.particles;
  for (size_t i = 0; i < p.size(); ++i) {
    P[0] += p.mass[i] * p.v[i].x;
    P[1] += p.mass[i] * p.v[i].y;
    L += p.mass[i] * cross(p.x[i], p.v[i]) + p.inertia[i] * p.omega[i];
    scale += p.mass[i] * length(p.v[i]);
  }
}

std::string scene_path(const char* name) {
  return std::string(PS_SOURCE_DIR) + "/assets/scenes/" + name;
}

}  // namespace

TEST_CASE("Particle collisions conserve linear and angular momentum", "[dem]") {
  DemWorld w;
  w.set_backend(make_dem_backend("cpu", 2));
  make_gas(w);
  double P0[2], L0, s0, P1[2], L1, s1;
  totals(w, P0, L0, s0);
  const double ke0 = w.diagnostics().kinetic_energy;
  size_t max_contacts = 0;
  for (int k = 0; k < 40; ++k) {
    w.step(50);
    max_contacts = std::max(max_contacts, w.last_result().contacts);
  }
  REQUIRE(!w.halted());
  totals(w, P1, L1, s1);
  std::printf(
      "[dem] momentum: dP = (%.3e, %.3e) of sum m|v| %.3e; dL = %.3e; %zu contacts at most, %zu bonds broken\n",
      P1[0] - P0[0], P1[1] - P0[1], s0, L1 - L0, max_contacts, w.bonds_broken_total());
  CHECK(max_contacts > 20);
  CHECK(std::fabs(P1[0] - P0[0]) < 1e-12 * s0);
  CHECK(std::fabs(P1[1] - P0[1]) < 1e-12 * s0);
  // Angular momentum (orbital + spin) about the origin: the scale is s0 times a length.
  CHECK(std::fabs(L1 - L0) < 1e-10 * s0 * 0.1);
  // Dissipative contacts lose kinetic energy.
  CHECK(w.diagnostics().kinetic_energy < ke0);
}

TEST_CASE("DEM stepping is bit-identical with 1, 2 and 3 threads", "[dem]") {
  uint64_t hashes[3];
  size_t contacts = 0, broken = 0;
  for (int t = 1; t <= 3; ++t) {
    DemWorld w;
    load_dem_scene_file(scene_path("dem_smash.json"), w);
    w.set_backend(make_dem_backend("cpu", t));
    // Start the ball (the last particle) just above the block so that the
    // run includes the impact and bonds breaking.
    const size_t ball = w.particles.size() - 1;
    w.particles.x[ball] = {0.6, 0.2 + w.particles.radius[ball] + 0.005};
    w.host_changed();
    w.step(600);
    REQUIRE(!w.halted());
    hashes[t - 1] = w.diagnostics().hash;
    contacts = w.last_result().contacts + w.last_result().wall_contacts;
    broken = w.bonds_broken_total();
  }
  std::printf(
      "[dem] determinism: hash %016llx (1 thread) %016llx (2) %016llx (3); %zu contacts, %zu broken bonds\n",
      static_cast<unsigned long long>(hashes[0]), static_cast<unsigned long long>(hashes[1]),
      static_cast<unsigned long long>(hashes[2]), contacts, broken);
  CHECK(contacts > 0);
  CHECK(broken > 0);
  CHECK(hashes[0] == hashes[1]);
  CHECK(hashes[0] == hashes[2]);
}

TEST_CASE("A DEM blow-up stops stepping and names the particle and the step", "[dem]") {
  DemWorld w;
  w.set_backend(make_dem_backend("cpu", 1));
  DemMaterial m;
  m.E = 1e9;
  int mi = w.add_material("m", m);
  add_particle(w, {0.0, 0.0}, 0.01, mi, 0, {1.0, 0.0});
  add_particle(w, {0.0205, 0.0}, 0.01, mi, 0, {-1.0, 0.0});
  w.solver.gravity = {0.0, 0.0};
  w.solver.velocity_limit = 50.0;
  w.solver.dt = 200.0 * w.estimate_time_step().rayleigh;  // far beyond stable
  DemStepStatus st = w.step(100);
  REQUIRE(!st.ok);
  CHECK(w.halted());
  CHECK(st.step >= 1);
  CHECK(st.step <= 100);
  CHECK((st.particle_id == 1 || st.particle_id == 2));
  CHECK(st.message.find("step " + std::to_string(st.step)) != std::string::npos);
  CHECK(st.message.find("particle " + std::to_string(st.particle_id)) != std::string::npos);
  const int64_t at = w.step_count();
  DemStepStatus again = w.step(10);
  CHECK(!again.ok);
  CHECK(again.step == st.step);
  CHECK(w.step_count() == at);
}

TEST_CASE("Contacts and bonds export as P4C records", "[dem]") {
  DemWorld w;
  w.set_backend(make_dem_backend("cpu", 1));
  DemMaterial m;
  int mi = w.add_material("m", m);
  w.solver.gravity = {0.0, -9.81};
  w.solver.dt = 1e-5;
  add_plane(w, {0.0, 0.0}, {0.0, 1.0}, mi);
  // A bonded pair resting on the floor, and a loose particle touching it.
  add_particle(w, {0.0, 0.0099}, 0.01, mi, 0, {}, 1);
  add_particle(w, {0.02, 0.0099}, 0.01, mi, 0, {}, 1);
  add_particle(w, {0.0399, 0.0099}, 0.01, mi, 0, {});
  REQUIRE(w.form_bonds() == 1);
  w.step(1);
  std::vector<ContactRecord> rec;
  w.contacts(rec, true);
  REQUIRE(rec.size() == 5);  // 1 unbonded pair, 1 bond, 3 wall contacts
  CHECK(rec[0].p1 == 2);
  CHECK(rec[0].p2 == 3);
  CHECK(!rec[0].bonded);
  CHECK(rec[0].c[0] == Approx(0.02 + 0.01 - 0.5 * 0.0001).epsilon(1e-3));
  CHECK(rec[0].f[0] < 0.0);
  CHECK(rec[1].bonded);
  CHECK(rec[1].p1 == 1);
  CHECK(rec[1].p2 == 2);
  for (int k = 2; k < 5; ++k) CHECK(rec[k].p2 == 0);
  const std::string text = ps::p4c_text({p4_from_contacts(rec, 1.0)});
  CHECK(
      text.rfind("TIMESTEP  CONTACTS\n1 5\nP1  P2  CX  CY  CZ  FX  FY  FZ  CONTACT_IS_BONDED\n2 3 ",
                 0) == 0);
  // The P4C written from particle-particle contacts reads back to the same
  // records (wall contacts, P2 = 0, are not part of the original format).
  std::vector<ContactRecord> pairs;
  w.contacts(pairs, false);
  REQUIRE(pairs.size() == 2);
  ps::P4cLoad back = ps::parse_p4c(ps::p4c_text({p4_from_contacts(pairs, 1.0)}), "contacts.p4c");
  REQUIRE(back.ok());
  REQUIRE(back.frames.size() == 1);
  REQUIRE(back.frames[0].contacts.size() == pairs.size());
  CHECK(back.frames[0].contacts[1].bonded == 1);
  CHECK(back.frames[0].contacts[0].fx == rec[0].f[0]);
  const std::string pp = ps::p4p_text({p4_from_dem(w.particles, 1.0)});
  CHECK(pp.rfind("TIMESTEP  PARTICLES\n1 3\nID  GROUP  VOLUME  MASS  PX  PY  PZ  VX  VY  VZ\n1 0 ",
                 0) == 0);
}

TEST_CASE("Shipped DEM scenes load and run stably", "[dem]") {
  for (const char* name :
       {"dem_soft_body.json", "dem_beam.json", "dem_hopper.json", "dem_smash.json"}) {
    DemWorld w;
    load_dem_scene_file(scene_path(name), w);
    const DemTimeStep ts = w.estimate_time_step();
    const int frames = 3;
    auto t0 = std::chrono::steady_clock::now();
    w.step(frames * w.solver.substeps);
    auto t1 = std::chrono::steady_clock::now();
    INFO(name << ": " << w.failure().message);
    REQUIRE(!w.halted());
    const double ms =
        std::chrono::duration<double, std::milli>(t1 - t0).count() / (frames * w.solver.substeps);
    std::printf(
        "[dem] %-20s %5zu particles %5zu bonds %3zu walls  dt %.3e s (Rayleigh %.3e, bond %.3e, Hertz %.3e)  "
        "%d steps/frame  %.3f ms/step (%s)\n",
        name, w.particles.size(), w.bonds.size(), w.walls.size(), w.last_dt(), ts.rayleigh, ts.bond,
        ts.hertz, w.solver.substeps, ms, w.backend_name().c_str());
    CHECK(w.particles.size() > 100);
    CHECK(w.last_dt() <= ts.recommended * 1.0000001);
  }
}

namespace {

/// The most recent break as a pass over the host arrays finds it.
DemLastBreak scan_last_break(const DemBonds& b) {
  DemLastBreak lb;
  for (size_t k = 0; k < b.size(); ++k)
    if (b.broken[k] && b.break_step[k] > lb.step)
      lb = DemLastBreak{b.break_step[k], static_cast<int64_t>(k), b.mode[k]};
  return lb;
}

}  // namespace

TEST_CASE("DEM totals are the diagnostics without the hash, and the last break follows each step",
          "[dem]") {
  DemWorld w;
  load_dem_scene_file(scene_path("dem_smash.json"), w);
  w.set_backend(make_dem_backend("cpu", 2));
  const size_t ball = w.particles.size() - 1;
  w.particles.x[ball] = {0.6, 0.2 + w.particles.radius[ball] + 0.005};
  w.host_changed();
  CHECK(w.last_break().step == 0);
  CHECK(w.last_break().bond == -1);
  DemWorld::State mid;
  for (int k = 0; k < 12; ++k) {
    REQUIRE(w.step(50).ok);
    if (k == 6) w.save_state(mid);
    const DemDiagnostics d = w.diagnostics(), t = w.totals();
    // The CPU backend has no device to sum on: the same sums, in the same order.
    CHECK(t.count == d.count);
    CHECK(t.mass == d.mass);
    CHECK(t.momentum[0] == d.momentum[0]);
    CHECK(t.momentum[1] == d.momentum[1]);
    CHECK(t.angular_momentum == d.angular_momentum);
    CHECK(t.kinetic_energy == d.kinetic_energy);
    CHECK(t.rotational_energy == d.rotational_energy);
    CHECK(t.max_speed == d.max_speed);
    CHECK(t.bonds == d.bonds);
    CHECK(t.bonds_broken == d.bonds_broken);
    CHECK(t.hash == 0);
    const DemLastBreak want = scan_last_break(w.bonds);
    CHECK(w.last_break().step == want.step);
    CHECK(w.last_break().bond == want.bond);
    CHECK(w.last_break().mode == want.mode);
  }
  CHECK(w.bonds_broken_total() > 0);
  CHECK(w.last_break().step > 0);
  // A restored state counts its record again from its arrays.
  w.load_state(mid);
  const DemLastBreak want = scan_last_break(w.bonds);
  CHECK(w.last_break().step == want.step);
  CHECK(w.last_break().bond == want.bond);
}

TEST_CASE(
    "A DEM edit that breaks the columns or a bond's indices is an invariant error, not a "
    "wrong step",
    "[dem][assert]") {
  DemWorld w;
  w.set_backend(make_dem_backend("cpu", 1));
  DemMaterial m;
  const int mi = w.add_material("m", m);
  w.solver.dt = 1e-5;
  add_particle(w, {0.0, 0.0}, 0.01, mi, 0, {}, 1);
  add_particle(w, {0.02, 0.0}, 0.01, mi, 0, {}, 1);
  REQUIRE(w.form_bonds() == 1);
  w.host_changed();  // consistent: taken
  REQUIRE(w.step(1).ok);

  w.bonds.j[0] = 7;  // a particle that is not there
  CHECK_THROWS_AS(w.host_changed(), ps::InvariantError);
  w.bonds.j[0] = 1;
  w.host_changed();

  w.particles.mass.pop_back();  // one column a row short
  CHECK_THROWS_AS(w.host_changed(), ps::InvariantError);
  CHECK_THROWS_AS(w.step(1), ps::InvariantError);
  try {
    w.step(1);
  } catch (const ps::InvariantError& e) {
    CHECK(std::string(e.what()).find("dem_world.cpp") != std::string::npos);
  }
}
