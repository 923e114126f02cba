// The CPU backend's quadratic transfers four particles at a time
// (sim/mpm/mpm_simd.h) against the same backend one particle at a time: the
// lanes must give the scalar results bit for bit, in every scene, transfer
// and material, with rigid bodies, and on a blow-up.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>
#include "mpm_test_util.h"
#include "sim/mpm/mpm_cpu.h"
#include "sim/mpm/mpm_simd.h"

using namespace ps;

namespace {

/// Index of the first particle whose state differs in any bit, or -1.
int64_t first_difference(const MpmParticles& a, const MpmParticles& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a.x[i], &b.x[i], sizeof(Vec2)) ||
        std::memcmp(&a.v[i], &b.v[i], sizeof(Vec2)) ||
        std::memcmp(&a.C[i], &b.C[i], sizeof(Mat2)) ||
        std::memcmp(&a.F[i], &b.F[i], sizeof(Mat2)) ||
        std::memcmp(&a.J[i], &b.J[i], sizeof(float)) ||
        std::memcmp(&a.Jp[i], &b.Jp[i], sizeof(float)))
      return static_cast<int64_t>(i);
  }
  if (a.poly.size() != b.poly.size()) return 0;  // PolyPIC's extra modes
  for (size_t i = 0; i < a.poly.size(); ++i)
    if (std::memcmp(&a.poly[i], &b.poly[i], sizeof(PolyModes))) return static_cast<int64_t>(i);
  return -1;
}

/// Steps two copies of a scene, lanes on and off, and compares them.
void compare_lanes(const std::string& scene, const std::vector<std::string>& overrides, int steps,
                   int threads = 2) {
  MpmScene on = load_mpm_scene(resolve_scene_path(scene), overrides);
  MpmScene off = load_mpm_scene(resolve_scene_path(scene), overrides);
  REQUIRE(on.world->solver.kernel ==
          Kernel::Quadratic);  // the lanes' kernel, or the test compares nothing
  on.world->set_backend(std::make_unique<MpmCpuBackend>(threads, true));
  off.world->set_backend(std::make_unique<MpmCpuBackend>(threads, false));
  const StepStatus a = on.world->step(steps);
  const StepStatus b = off.world->step(steps);
  INFO(scene << ": " << a.message << " / " << b.message);
  REQUIRE(a.ok == b.ok);
  CHECK(first_difference(on.world->particles, off.world->particles) == -1);
  CHECK(state_hash(on.world->particles) == state_hash(off.world->particles));
  if (on.world->solver.transfer ==
      Transfer::PolyPIC) {  // the extra modes were carried, not all zero
    double sum = 0.0;
    for (const PolyModes& m : on.world->particles.poly)
      for (const Vec2& c : m.c) sum += std::fabs(c.x) + std::fabs(c.y);
    CHECK(sum > 0.0);
  }
}

}  // namespace

TEST_CASE("Four-lane quadratic transfers equal one particle at a time, bit for bit",
          "[mpm][simd][determinism]") {
  // Water, jelly and snow (APIC); FLIP water; sand; viscoplastic toffee;
  // ice melting in water (heat); a notched plate that fractures.
  SECTION("mpm99") { compare_lanes("mpm99", {}, 300); }
  SECTION("mpm99, PIC") { compare_lanes("mpm99", {"solver.transfer=pic"}, 200); }
  SECTION("mpm99, FLIP 0.97, blended advection") {
    compare_lanes("mpm99",
                  {"solver.transfer=flip", "solver.flip_blend=0.97", "solver.flip_advect=blend"},
                  200);
  }
  SECTION("dam_break (FLIP)") { compare_lanes("dam_break", {}, 150); }
  SECTION("sand_column") { compare_lanes("sand_column", {}, 200); }
  SECTION("toffee") { compare_lanes("toffee", {}, 150); }
  SECTION("ice_in_water") { compare_lanes("ice_in_water", {}, 100); }
  SECTION("notched_plate") { compare_lanes("notched_plate", {}, 150); }
  SECTION("one thread") { compare_lanes("mpm99", {}, 100, 1); }
  SECTION("mpm99, PolyPIC") { compare_lanes("mpm99", {"solver.transfer=polypic"}, 200); }
  SECTION("pic_vs_apic, PolyPIC, one thread") {
    compare_lanes("pic_vs_apic", {"solver.transfer=polypic"}, 200, 1);
  }
}

TEST_CASE("Four-lane transfers with rigid bodies: same particles and same impulses",
          "[mpm][simd][rigid]") {
  // A jelly block spinning into a static box and a moving, spinning disk with
  // friction (the CUDA test's set-up): the push-out runs per particle.
  RigidCollider box, disk;
  test::box_and_disk(box, disk);
  for (const char* transfer : {"apic", "flip", "polypic"}) {
    std::vector<double> impulse[2];
    std::unique_ptr<MpmWorld> worlds[2];
    for (int k = 0; k < 2; ++k) {
      MpmScene s = test::scene_from(std::string(R"({"domain": {"size": [1, 1], "grid": 64},
        "solver": {"transfer": ")") +
                                    transfer + R"(", "dt": 0.0002, "gravity": [0, -9.81]},
        "materials": {"j": {"type": "jelly", "E": 3000, "nu": 0.2}},
        "bodies": [{"shape": "box", "min": [0.3, 0.31], "max": [0.6, 0.4], "material": "j", "spacing": 0.005,
                    "preset": {"kind": "rotation", "speed": 2}}]})");
      worlds[k] = std::move(s.world);
      MpmWorld& w = *worlds[k];
      w.set_backend(std::make_unique<MpmCpuBackend>(2, k == 0));
      w.colliders = {box, disk};
      w.collider_impulse.assign(6, 0.0);
      REQUIRE(w.step(200).ok);
      impulse[k] = w.collider_impulse;
    }
    INFO(transfer);
    // The disk reached the block, so the push-out ran (the test has teeth).
    CHECK(std::fabs(impulse[0][3]) + std::fabs(impulse[0][4]) > 0.0);
    CHECK(first_difference(worlds[0]->particles, worlds[1]->particles) == -1);
    CHECK(impulse[0] == impulse[1]);
  }
}

TEST_CASE("Four-lane transfers report the same blown-up particle", "[mpm][simd][blowup]") {
  StepStatus st[2];
  for (int k = 0; k < 2; ++k) {
    MpmScene s = load_mpm_scene(resolve_scene_path("mpm99"));
    MpmWorld& w = *s.world;
    w.set_backend(std::make_unique<MpmCpuBackend>(2, k == 0));
    REQUIRE(w.step(20).ok);
    // One particle in the middle of a group of four carries a NaN affine
    // field: its momentum poisons its nodes, and every particle gathering
    // from them blows up in the same substep.
    w.particles.C[4242].a01 = std::numeric_limits<float>::quiet_NaN();
    st[k] = w.step(5);
  }
  INFO(st[0].message << " / " << st[1].message);
  REQUIRE_FALSE(st[0].ok);
  REQUIRE_FALSE(st[1].ok);
  CHECK(st[0].step == 21);
  CHECK(st[0].step == st[1].step);
  CHECK(st[0].index == st[1].index);
  CHECK(st[0].particle_id == st[1].particle_id);
}

TEST_CASE("Constitutive lanes equal mpm::constitutive bit for bit, degenerate F included",
          "[mpm][simd][materials]") {
  // Per type, three materials with different parameters, mixed within each
  // group of four lanes (viscous and inviscid fluids side by side), a
  // velocity gradient C of its own per lane, and deformation gradients at
  // rest, diagonal, sheared, inverted (det < 0), rank-deficient, zero, huge
  // and not finite, so every select of polar4 / svd4 takes both sides.
  // type, then (fluid) bulk modulus, viscosity; (jelly) E, nu; (snow) E, theta_c, theta_s, hardening.
  auto make = [](MaterialType t, float a, float b, float c = 0.f, float d = 0.f) {
    MaterialParams m;
    m.type = t;
    if (t == MaterialType::Fluid) {
      m.bulk_modulus = a;
      m.viscosity = b;
    } else if (t == MaterialType::Jelly) {
      m.E = a;
      m.nu = b;
    } else {
      m.E = a;
      m.theta_c = b;
      m.theta_s = c;
      m.hardening = d;
    }
    return m;
  };
  constexpr MaterialType kF = MaterialType::Fluid, kJ = MaterialType::Jelly,
                         kS = MaterialType::Snow;
  const std::vector<std::vector<MaterialParams>> types = {
      {make(kF, 4e3f, 0.f), make(kF, 2e3f, 0.7f), make(kF, 9e3f, 0.05f)},
      {make(kJ, 3e4f, 0.3f), make(kJ, 5e3f, 0.2f), make(kJ, 1e5f, 0.45f)},
      {make(kS, 1.4e5f, 2.5e-2f, 4.5e-3f, 10.f), make(kS, 5e4f, 2e-2f, 6e-3f, 8.f),
       make(kS, 2e5f, 3e-2f, 3e-3f, 12.f)}};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<Mat2> Fs = {Mat2::identity(),           Mat2::diag(1.02f, 0.97f),
                          Mat2::diag(0.9f, 1.2f),     {1.f, 0.3f, -0.2f, 0.95f},
                          {0.f, 1.f, 1.f, 0.f},       {-1.f, 0.f, 0.f, 1.f},
                          {1.f, 2.f, 2.f, 4.f},       Mat2{},
                          {1e-13f, 0.f, 0.f, 1e-13f}, {1e20f, -3e19f, 2e19f, 1e20f},
                          {nan, 0.f, 0.f, 1.f},       {1.f, 5e-13f, 0.f, 1.f}};
  uint32_t rng = 12345u;
  auto uni = [&rng]() {
    rng = rng * 1664525u + 1013904223u;
    return static_cast<float>(rng >> 8) / 16777216.f;
  };
  for (int k = 0; k < 40; ++k)
    Fs.push_back({0.6f + 0.8f * uni(), uni() - 0.5f, uni() - 0.5f, 0.6f + 0.8f * uni()});
  int compared = 0;
  for (const std::vector<MaterialParams>& mats : types)
    for (size_t q = 0; q + 4 <= Fs.size(); ++q) {
      // Lanes q..q+3: material (q + l) mod 3, J, Jp and C varied per lane.
      simd::MaterialLanes m{};
      Mat2 F[4], Fref[4], C[4];
      float J[4], Jp[4], Jpref[4];
      Mat2 tau_ref[4];
      for (int l = 0; l < 4; ++l) {
        const MaterialParams& mat = mats[(q + static_cast<size_t>(l)) % mats.size()];
        const float fl = static_cast<float>(l);
        F[l] = Fref[l] = Fs[q + static_cast<size_t>(l)];
        C[l] = Mat2{0.3f + 0.1f * fl, -1.2f + 0.2f * fl, 0.8f - 0.3f * fl, -0.1f + 0.05f * fl};
        J[l] = 0.9f + 0.05f * (fl + static_cast<float>(q % 3));
        Jp[l] = Jpref[l] = 0.95f + 0.03f * fl;
        tau_ref[l] = mpm::constitutive(mat, Fref[l], J[l], Jpref[l], C[l], 1e-4f);
        m.set(l, mat);
      }
      const uint32_t idx[4] = {0, 1, 2, 3};
      simd::M4 F4 = simd::load_mats(F, idx);
      const simd::M4 C4 = simd::load_mats(C, idx);
      simd::f4 J4{J[0], J[1], J[2], J[3]}, Jp4{Jp[0], Jp[1], Jp[2], Jp[3]};
      const MaterialType type = mats[0].type;
      simd::M4 tau;
      if (type == MaterialType::Fluid)
        tau = simd::fluid_stress4(m, J4, C4);
      else if (type == MaterialType::Jelly)
        tau = simd::jelly_stress4(m, F4);
      else
        tau = simd::snow_update4(m, F4, Jp4);
      simd::store_mats(F4, F, idx);
      Mat2 tau_l[4];
      simd::store_mats(tau, tau_l, idx);
      for (int l = 0; l < 4; ++l) {
        INFO("material type " << static_cast<int>(type) << ", F #" << q + static_cast<size_t>(l)
                              << ", lane " << l);
        CHECK(std::memcmp(&tau_l[l], &tau_ref[l], sizeof(Mat2)) == 0);
        CHECK(std::memcmp(&F[l], &Fref[l], sizeof(Mat2)) == 0);
        const float jp = Jp4[l];
        CHECK(std::memcmp(&jp, &Jpref[l], sizeof(float)) == 0);
        ++compared;
      }
    }
  CHECK(compared == 4 * 3 * (static_cast<int>(Fs.size()) - 3));
}

TEST_CASE("Four-lane transfers with mixed materials, an offset grid and a ragged count",
          "[mpm][simd][determinism]") {
  // Two jellies, two snows and a viscous beside an inviscid water, in strips
  // narrower than a block so the runs of four mix them; the domain does not
  // start at 0; the particle count is not a multiple of four, so runs end in
  // a scalar tail. 1 and 3 threads; APIC and PolyPIC.
  const std::string doc0 = R"({"domain": {"size": [1, 1], "origin": [-0.37, 0.21], "grid": 64},
    "solver": {"transfer": "TRANSFER", "dt": 0.0002, "gravity": [0, -9.81]},
    "materials": {"j1": {"type": "jelly", "E": 4000, "nu": 0.2, "density": 1000},
                  "j2": {"type": "jelly", "E": 9000, "nu": 0.35, "density": 1000},
                  "s1": {"type": "snow", "E": 2e4, "density": 1000},
                  "s2": {"type": "snow", "E": 3e4, "hardening": 7, "density": 1000},
                  "w1": {"type": "fluid", "density": 1000},
                  "w2": {"type": "fluid", "viscosity": 0.05, "bulk_modulus": 6000, "density": 1000}},
    "bodies": [
      {"shape": "box", "min": [-0.25, 0.35], "max": [-0.215, 0.6], "material": "j1", "spacing": 0.0061},
      {"shape": "box", "min": [-0.215, 0.35], "max": [-0.18, 0.6], "material": "j2", "spacing": 0.0061},
      {"shape": "box", "min": [-0.18, 0.35], "max": [-0.145, 0.6], "material": "s1", "spacing": 0.0061},
      {"shape": "box", "min": [-0.145, 0.35], "max": [-0.11, 0.6], "material": "s2", "spacing": 0.0061},
      {"shape": "box", "min": [-0.11, 0.35], "max": [-0.075, 0.6], "material": "w1", "spacing": 0.0061},
      {"shape": "box", "min": [-0.075, 0.35], "max": [-0.04, 0.603], "material": "w2", "spacing": 0.0061,
       "velocity": [0.5, -0.2]}]})";
  for (const char* transfer : {"apic", "polypic"})
    for (int threads : {1, 3}) {
      std::string doc = doc0;
      doc.replace(doc.find("TRANSFER"), 8, transfer);
      MpmScene on = test::scene_from(doc), off = test::scene_from(doc);
      const size_t n = on.world->particles.size();
      REQUIRE(n % 4 != 0);
      on.world->set_backend(std::make_unique<MpmCpuBackend>(threads, true));
      off.world->set_backend(std::make_unique<MpmCpuBackend>(threads, false));
      REQUIRE(on.world->step(500).ok);
      REQUIRE(off.world->step(500).ok);
      INFO(transfer << ", " << threads << " threads, " << n << " particles");
      CHECK(first_difference(on.world->particles, off.world->particles) == -1);
      // The strips moved (the comparison has teeth): the water fell.
      double ymin = 1e9;
      for (const Vec2& x : on.world->particles.x) ymin = std::min(ymin, static_cast<double>(x.y));
      CHECK(ymin < 0.33);
    }
}
