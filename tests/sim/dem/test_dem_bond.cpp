// EBPM bonds against beam theory and strength criteria.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include "sim/dem/dem_build.h"
#include "sim/dem/dem_kernels.h"
#include "sim/dem/dem_world.h"

using namespace ps::dem;

namespace {

constexpr double kR = 0.001;  // particle radius
constexpr double kE = 1e8;    // bond Young's modulus
constexpr double kNu = 0.3;

// A straight chain of n_bonds + 1 touching particles along +x. Particle 0 is
// fixed (a clamp: no translation, no rotation); the last one is group 1.
void make_chain(DemWorld& w, int n_bonds) {
  w.set_backend(make_dem_backend("cpu", 1));
  DemMaterial mat;
  mat.density = 2500.0;
  mat.E = kE;
  mat.nu = kNu;
  int m = w.add_material("beam", mat);
  for (int k = 0; k <= n_bonds; ++k)
    add_particle(w, {2.0 * kR * k, 0.0}, kR, m, k == n_bonds ? 1 : 0, {}, 1);
  w.particles.fixed[0] = 1;
  w.bond.E = kE;
  w.bond.nu = kNu;
  w.bond.radius_ratio = 1.0;
  w.form_bonds();
  REQUIRE(w.bonds.size() == static_cast<size_t>(n_bonds));
  w.solver.gravity = {0.0, 0.0};
  w.solver.local_damping = 0.7;
  w.solver.dt = w.estimate_time_step().recommended;
}

// Steps until the largest speed stays below `vtol` (static equilibrium).
void settle(DemWorld& w, double vtol, int max_steps) {
  int done = 0;
  while (done < max_steps) {
    w.step(500);
    done += 500;
    REQUIRE(!w.halted());
    if (w.diagnostics().max_speed < vtol) return;
  }
  FAIL("did not reach equilibrium in " << max_steps << " steps");
}

}  // namespace

TEST_CASE("Bonded chain in tension stretches by F L / (E A)", "[dem]") {
  DemWorld w;
  const int N = 10;
  make_chain(w, N);
  const double A = kPi * kR * kR;  // bond cross-section, r_b = lambda R
  const double L0 = 2.0 * kR;
  const double P = 1e-4 * kE * A;  // axial strain 1e-4
  w.loads.push_back(DemLoad{1, {P, 0.0}, {0.0, 0.0}});
  settle(w, 1e-7, 200000);
  const double elong = w.particles.x[N].x - w.particles.x[0].x - N * L0;
  const double theory = P * (N * L0) / (kE * A);
  std::printf("[dem] tension: elongation %.6e m, theory F L/(E A) = %.6e m\n", elong, theory);
  CHECK(elong == Approx(theory).epsilon(0.002));

  SECTION("an edit of bond E acts on the existing bonds at once") {
    // Same displacements, doubled stiffness: the very next step's bond force doubles.
    const double f_before = w.bonds.force[N - 1].x;
    w.bond.E = 2.0 * kE;
    w.step(1);
    const double f_after = w.bonds.force[N - 1].x;
    CHECK(f_after == Approx(2.0 * f_before).epsilon(1e-3));
    settle(w, 1e-7, 200000);
    const double elong2 = w.particles.x[N].x - w.particles.x[0].x - N * L0;
    CHECK(elong2 == Approx(0.5 * theory).epsilon(0.002));
  }
}

TEST_CASE("Bonded cantilever deflects by F L^3 / (3 E I) under a tip load", "[dem]") {
  DemWorld w;
  const int N = 10;
  make_chain(w, N);
  const double rb = kR;  // bond radius (lambda = 1)
  const double I = kPi * rb * rb * rb * rb / 4.0, A = kPi * rb * rb;
  const double G = kE / (2.0 * (1.0 + kNu));
  const double L = 2.0 * kR, ell = N * L;
  const double P =
      3.0 * kE * I * (0.005 * ell) / (ell * ell * ell);  // tip deflection ~ 0.5 % of the span
  w.loads.push_back(DemLoad{1, {0.0, -P}, {0.0, 0.0}});
  settle(w, 1e-6, 400000);
  const double defl = -w.particles.x[N].y;
  const double euler_bernoulli = P * ell * ell * ell / (3.0 * kE * I);
  // The bond chain is exactly a Timoshenko beam discretised with one-point
  // quadrature: moment P (ell - x_mid) at each bond's contact point (exact
  // node rotations), chord rotation (theta_i + theta_j) / 2 + P / (G A).
  double theta = 0.0, model = 0.0;
  for (int k = 1; k <= N; ++k) {
    const double theta_prev = theta;
    theta += P * (ell - (k - 0.5) * L) * L / (kE * I);
    model += L * 0.5 * (theta_prev + theta) + L * P / (G * A);
  }
  std::printf(
      "[dem] cantilever: tip deflection %.6e m, Euler-Bernoulli F L^3/(3 E I) = %.6e m, "
      "bond-chain model %.6e m\n",
      defl, euler_bernoulli, model);
  CHECK(defl == Approx(model).epsilon(0.003));
  CHECK(defl == Approx(euler_bernoulli).epsilon(0.01));
  // Rotation of the tip: P ell^2 / (2 E I).
  CHECK(-w.particles.theta[N] == Approx(P * ell * ell / (2.0 * kE * I)).epsilon(0.01));
}

TEST_CASE("A bond breaks in tension exactly when its stress reaches the tensile strength",
          "[dem]") {
  DemWorld w;
  make_chain(w, 1);
  w.solver.local_damping = 0.0;
  // Both particles kinematic; particle 1 pulled away at constant speed, so
  // the bond stress at the bond pass of step k is E v (k - 1) dt / L0.
  const double v = 0.01, dt = 1e-6, L0 = 2.0 * kR;
  w.solver.dt = dt;
  w.particles.fixed[1] = 1;
  w.particles.v[1] = {v, 0.0};
  const int K = 40;
  w.bond.tensile_strength = kE * v * dt * (K + 0.5) / L0;
  w.bond.shear_strength = 1e30;
  w.host_changed();
  w.step(K + 1);
  CHECK(!w.bonds.broken[0]);
  CHECK(w.bonds.sigma[0] < w.bond.tensile_strength);
  CHECK(w.bonds.sigma[0] == Approx(kE * v * dt * K / L0).epsilon(1e-9));
  w.step(1);
  CHECK(w.bonds.broken[0]);
  CHECK(w.bonds.mode[0] == BondBreak::Tensile);
  CHECK(w.bonds.break_step[0] == K + 2);
  CHECK(w.bonds_broken_total() == 1);

  SECTION("the broken bond never re-forms; the pair then meets by ordinary contact") {
    w.particles.v[1] = {-v, 0.0};
    w.host_changed();
    w.step(2 * K + 20);  // back past the rest distance into overlap
    REQUIRE(w.particles.x[1].x - w.particles.x[0].x < L0);
    CHECK(w.bonds.broken[0]);
    std::vector<ContactRecord> rec;
    w.contacts(rec);
    REQUIRE(rec.size() == 1);
    CHECK(!rec[0].bonded);
    CHECK(rec[0].p1 == 1);
    CHECK(rec[0].p2 == 2);
    CHECK(rec[0].f[0] < 0.0);  // particle 1 pushes particle 0 away (-x)
  }
}

TEST_CASE("A bond breaks in shear when its shear stress reaches the shear strength", "[dem]") {
  DemWorld w;
  make_chain(w, 1);
  w.solver.local_damping = 0.0;
  const double v = 0.01, dt = 1e-6, L0 = 2.0 * kR;
  const double G = kE / (2.0 * (1.0 + kNu));
  w.solver.dt = dt;
  w.particles.fixed[1] = 1;
  w.particles.v[1] = {0.0, v};  // sideways: shear displacement v dt per step
  const int K = 40;
  w.bond.shear_strength = G * v * dt * (K + 0.5) / L0;
  w.bond.tensile_strength = 1e30;
  w.bond.compressive_strength = 1e30;
  w.host_changed();
  w.step(K + 1);
  CHECK(!w.bonds.broken[0]);
  // tau = G delta_s / L0 (the chord turns by only 2e-4 rad: cos = 1 - 2e-8).
  CHECK(w.bonds.tau[0] == Approx(G * v * dt * K / L0).epsilon(1e-6));
  w.step(1);
  CHECK(w.bonds.broken[0]);
  CHECK(w.bonds.mode[0] == BondBreak::Shear);
  CHECK(w.bonds.break_step[0] == K + 2);
}

TEST_CASE(
    "A cantilever under a ramped tip load breaks at the root when M r / I reaches the strength",
    "[dem]") {
  const int N = 6;
  const double rb = kR, I = kPi * rb * rb * rb * rb / 4.0;
  const double L = 2.0 * kR, ell = N * L;
  const double sigma_t = 1e6;  // Pa
  // Root bond: moment P (ell - L/2) at its contact point, bending stress M r_b / I.
  const double P_theory = sigma_t * I / (rb * (ell - 0.5 * L));
  for (int compressive_first = 0; compressive_first < 2; ++compressive_first) {
    DemWorld w;
    make_chain(w, N);
    w.bond.tensile_strength = compressive_first ? 2.0 * sigma_t : sigma_t;
    w.bond.compressive_strength = compressive_first ? sigma_t : 2.0 * sigma_t;
    w.bond.shear_strength = 1e30;
    // Ramp slow compared with the first bending period (about 2 ms here).
    const double rate = P_theory / 0.05;
    w.loads.push_back(DemLoad{1, {0.0, 0.0}, {0.0, -rate}});
    const int max_steps = static_cast<int>(0.06 / w.solver.dt);
    for (int s = 0; s < max_steps && w.bonds_broken_total() == 0; s += 10) w.step(10);
    REQUIRE(w.bonds_broken_total() >= 1);
    REQUIRE(w.bonds.broken[0]);
    const double P_break =
        rate * (w.bonds.break_step[0] - 1) * w.solver.dt;  // load at the start of the step
    std::printf(
        "[dem] cantilever failure (%s strength lower): load %.6e N, theory sigma I / (r (ell - L/2)) = %.6e N, "
        "mode %d\n",
        compressive_first ? "compressive" : "tensile", P_break, P_theory,
        static_cast<int>(w.bonds.mode[0]));
    CHECK(P_break == Approx(P_theory).epsilon(0.02));
    CHECK(w.bonds.mode[0] == (compressive_first ? BondBreak::Compressive : BondBreak::Tensile));
    CHECK(w.bonds.intact() == static_cast<size_t>(N - 1));  // only the root bond
  }
}
