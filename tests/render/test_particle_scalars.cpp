// The colour modes' per-particle fields (render/cpu/particle_scalars.h): the
// host snapshot and the CUDA-GL interop kernel both evaluate these, so the
// snapshot's columns must be exactly these functions of the particle state.
#include <catch2/catch.hpp>

#include "render/cpu/particle_fields.h"
#include "render/cpu/particle_scalars.h"
#include "sim/scene/simulation.h"

using namespace ps;

TEST_CASE("fluid stress: pressure K (1 - J), no deviator", "[render]") {
  MaterialParams m;
  m.type = MaterialType::Fluid;
  m.bulk_modulus = 4000.f;
  m.viscosity = 0.f;
  const Mat2 F = Mat2::identity();
  const Mat2 s = display_cauchy_stress(m, F, 0.9f, 1.f, Mat2{});
  float p = 0.f, vm = -1.f;
  display_pressure_mises(s, p, vm);
  CHECK(p == Approx(400.f).epsilon(1e-5));
  CHECK(vm == Approx(0.f).margin(1e-3));
  CHECK(display_volume_ratio(m, Mat2::diag(2.f, 2.f), 0.9f) == 0.9f);  // fluids track J, not det F
}

TEST_CASE("solid stress: zero at rest, shear gives von Mises without pressure", "[render]") {
  MaterialParams m;
  m.type = MaterialType::Jelly;
  float p = 1.f, vm = 1.f;
  display_pressure_mises(display_cauchy_stress(m, Mat2::identity(), 1.f, 1.f, Mat2{}), p, vm);
  CHECK(p == Approx(0.f).margin(1e-6));
  CHECK(vm == Approx(0.f).margin(1e-6));
  const Mat2 F{1.f, 0.05f, 0.f, 1.f};  // simple shear, det F = 1
  CHECK(display_volume_ratio(m, F, 0.5f) == det(F));
  display_pressure_mises(display_cauchy_stress(m, F, 1.f, 1.f, Mat2{}), p, vm);
  CHECK(vm > 0.f);
  CHECK(std::fabs(p) < 0.05f * vm);
  // Degenerate J: no stress rather than a division by zero.
  const Mat2 s = display_cauchy_stress(m, Mat2{}, 1.f, 1.f, Mat2{});
  CHECK(s == Mat2{});
}

TEST_CASE("the snapshot's J, Jp, pressure and von Mises columns are the shared formulas",
          "[render]") {
  auto sim = load_simulation("mpm99", {}, "cpu", 1);
  REQUIRE(sim->mpm());
  sim->step(40);  // some deformation, plasticity and motion
  MpmWorld& w = *sim->mpm();
  ParticleTable t;
  mpm_snapshot(w, t, true);
  const MpmParticles& p = w.particles;
  REQUIRE(t.size() == p.size());
  REQUIRE(t.extra.size() == static_cast<size_t>(kMpmColumnCount));
  size_t stressed = 0;
  for (size_t i = 0; i < p.size(); i += 7) {
    const MaterialParams& m = w.materials[p.material[i]];
    REQUIRE(t.extra[kColJ][i] == display_volume_ratio(m, p.F[i], p.J[i]));
    REQUIRE(t.extra[kColJp][i] == p.Jp[i]);
    float pr = 0.f, vm = 0.f;
    display_pressure_mises(display_cauchy_stress(m, p.F[i], p.J[i], p.Jp[i], p.C[i]), pr, vm);
    REQUIRE(t.extra[kColPressure][i] == pr);
    REQUIRE(t.extra[kColVonMises][i] == vm);
    REQUIRE(t.radius[i] == 0.5f * std::sqrt(p.vol0[i]));  // the interop's radius
    stressed += vm > 0.f;
  }
  CHECK(stressed > 0);
  // Without the stress flag those two columns stay zero.
  mpm_snapshot(w, t, false);
  CHECK(t.extra[kColPressure][0] == 0.f);
  CHECK(t.extra[kColVonMises][0] == 0.f);
}
