// Regression tests for DEM defects: SGF forces in double precision (and
// without dropping contact history), viscous rolling damping (Ai et al. 2011
// model C) and the closed-form deflection of a bonded cantilever.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include "sim/dem/dem_build.h"
#include "sim/dem/dem_kernels.h"
#include "sim/dem/dem_world.h"
#include "sim/scene/dem_sgf.h"
#include "sim/sgf/sgf.h"

using namespace ps::dem;

namespace {

ps::SgfFile sgf_file(int64_t s, int64_t e, std::vector<ps::SgfRow> rows) {
  ps::SgfFile f;
  f.start = s;
  f.end = e;
  f.rows = std::move(rows);
  return f;
}

// Equilibrium Hertz overlap of a sphere of mass m resting on a plane.
double rest_overlap(const DemMaterial& mat, double R, double m, double g) {
  const double E_star = pair_props(mat, mat).E_star;
  return std::pow(3.0 * m * g / (4.0 * E_star * std::sqrt(R)), 2.0 / 3.0);
}

}  // namespace

// [SECTION] SGF -> DEM in double precision ---------------------------------------

TEST_CASE("SGF forces reach DEM fext in double precision (0.3 N arrives as 0.3)", "[dem][sgf]") {
  ps::SgfList list;
  list.files.push_back(sgf_file(1, 10, {{1, 0.3, -0.7, 0.0}}));
  auto hook = ps::make_dem_force_hook(list);
  DemParticles p;
  p.add({0.0, 0.0}, {}, 0.01, 1.0, 1.0, 0, 0, 0);
  p.add({1.0, 0.0}, {}, 0.01, 1.0, 1.0, 0, 0, 0);
  p.fext[1] = Vec2d{5.0, 5.0};  // stale value: the hook sets fext, it does not accumulate
  REQUIRE(hook(1, p));
  CHECK(p.fext[0].x == 0.3);  // exactly the double 0.3, not 0.30000001192092896
  CHECK(p.fext[0].y == -0.7);
  CHECK(p.fext[1] == Vec2d{});
  CHECK_FALSE(hook(11, p));     // outside the range: fext does not apply ...
  CHECK(p.fext[0] == Vec2d{});  // ... and holds no stale force

  // The same list through the array-level applier.
  ps::SgfForceApplier apply(list);
  const uint32_t ids[1] = {1};
  Vec2d f[1] = {};
  REQUIRE(apply(3, ids, 1, f));
  CHECK(f[0].x == 0.3);
}

TEST_CASE("SGF forces in a DemWorld give exactly the double-precision impulse", "[dem][sgf]") {
  DemWorld w;
  w.set_backend(make_dem_backend("cpu", 1));
  w.solver.gravity = {0.0, 0.0};
  DemMaterial mat;
  const int m = w.add_material("m", mat);
  add_particle(w, {0.0, 0.0}, 0.01, m);
  add_particle(w, {1.0, 0.0}, 0.01, m);
  w.host_changed();
  w.solver.dt = 1e-4;
  const int K = 25;
  ps::SgfList list;
  list.files.push_back(sgf_file(1, K, {{1, 0.3, -0.7, 0.0}}));
  w.force_hook = ps::make_dem_force_hook(list);
  REQUIRE(w.step(K + 5).ok);
  // Symplectic Euler in double with F = (0.3, -0.7) N for K steps, then none.
  Vec2d v{};
  const double dtm = w.solver.dt / w.particles.mass[0];
  for (int k = 0; k < K; ++k) v += dtm * Vec2d{0.3, -0.7};
  CHECK(w.particles.v[0] == v);
  CHECK(w.particles.v[1] == Vec2d{});
}

TEST_CASE("SGF forces keep the contact history: same run as an equal group load", "[dem][sgf]") {
  // A bonded pair resting on a frictional floor, pushed sideways by 0.1 m g per
  // particle (well below mu m g): static friction must hold it. The SGF push
  // and a DemLoad of the same total force give bit-identical runs.
  auto run = [](bool use_sgf, double& drift) {
    DemWorld w;
    w.set_backend(make_dem_backend("cpu", 1));
    DemMaterial mat;
    mat.friction = 0.5;
    const int m = w.add_material("m", mat);
    const double R = 0.005;
    const double mass = sphere_mass(mat.density, R);
    const double d0 = rest_overlap(mat, R, mass, 9.81);
    add_particle(w, {-R, R - d0}, R, m, 1, {}, 1);
    add_particle(w, {R, R - d0}, R, m, 1, {}, 1);
    add_plane(w, {0.0, 0.0}, {0.0, 1.0}, m);
    w.bond.E = 1e7;
    REQUIRE(w.form_bonds() == 1);
    w.solver.dt = w.estimate_time_step().recommended;
    const double f = 0.1 * mass * 9.81;
    const int steps = 3000;
    if (use_sgf) {
      ps::SgfList list;
      list.files.push_back(sgf_file(1, steps, {{1, f, 0.0, 0.0}, {2, f, 0.0, 0.0}}));
      w.force_hook = ps::make_dem_force_hook(list);
    } else {
      w.loads.push_back(DemLoad{1, {2.0 * f, 0.0}, {0.0, 0.0}});
    }
    const double x0 = w.particles.x[0].x;
    REQUIRE(w.step(steps).ok);
    drift = w.particles.x[0].x - x0;
    return w.diagnostics().hash;
  };
  double drift_sgf = 0.0, drift_load = 0.0;
  const uint64_t h_sgf = run(true, drift_sgf);
  const uint64_t h_load = run(false, drift_load);
  std::printf("[dem] SGF push on a resting pair: drift %.3e m (group load: %.3e m)\n", drift_sgf,
              drift_load);
  CHECK(h_sgf == h_load);
  // The Mindlin springs hold it: elastic shift F / S_t ~ 1e-6 m (twice that at
  // the first swing of a suddenly applied load). With the history dropped at
  // every step the tangential force was only -(S_t dt + gamma_t) v_t, a drag:
  // the pair slid 1.4e-4 m in this time.
  CHECK(std::fabs(drift_sgf) < 5e-6);
}

// [SECTION] Rolling resistance: viscous part (Ai et al. 2011, model C) ------------

namespace {

struct RollRun {
  double period = 0.0;        ///< rolling-mode period 2 pi sqrt(I_r / k_r)
  double w0 = 0.0;            ///< initial spin
  std::vector<double> max_w;  ///< max |omega| over each period
};

// A sphere resting on a floor (rolling friction mu_r), released rolling with a
// small spin: the rolling spring stays below its cap, so it rocks.
RollRun roll_run(double eta_r, int periods) {
  DemWorld w;
  w.set_backend(make_dem_backend("cpu", 1));
  DemMaterial mat;
  mat.restitution = 0.5;
  mat.friction = 0.5;
  mat.rolling_friction = 0.1;
  mat.rolling_damping = eta_r;
  const int m = w.add_material("m", mat);
  const double R = 0.005, g = 9.81;
  const double mass = sphere_mass(mat.density, R);
  const double d0 = rest_overlap(mat, R, mass, g);
  const PairProps pp = pair_props(mat, mat);
  const double Sn = 2.0 * pp.E_star * std::sqrt(R * d0);
  const double kr = 2.25 * Sn * mat.rolling_friction * mat.rolling_friction * R * R;
  const double Ir = rolling_inertia(sphere_inertia(mass, R), mass, R, 0.0, 0.0, 0.0);
  const double wr = std::sqrt(kr / Ir);
  RollRun out;
  out.period = 2.0 * kPi / wr;
  // Spring moment amplitude k_r w0 / w_r = 30 % of the cap mu_r R m g.
  out.w0 = 0.3 * mat.rolling_friction * R * mass * g * wr / kr;
  add_particle(w, {0.0, R - d0}, R, m, 0, {-out.w0 * R, 0.0});
  w.particles.omega[0] = out.w0;
  add_plane(w, {0.0, 0.0}, {0.0, 1.0}, m);
  w.host_changed();
  w.solver.dt = w.estimate_time_step().recommended;
  const int per = static_cast<int>(std::ceil(out.period / w.solver.dt));
  for (int k = 0; k < periods; ++k) {
    double mx = 0.0;
    for (int s = 0; s < per; ++s) {
      REQUIRE(w.step(1).ok);
      mx = std::max(mx, std::fabs(w.particles.omega[0]));
    }
    out.max_w.push_back(mx);
  }
  return out;
}

}  // namespace

TEST_CASE("Rolling damping (Ai et al. 2011 model C) stops a rocking sphere within 4 periods",
          "[dem]") {
  const int periods = 6;
  RollRun damped = roll_run(0.3, periods);
  RollRun free = roll_run(0.0, periods);
  std::printf(
      "[dem] rolling rocking: period %.4e s, w0 %.4e rad/s; max|w|/w0 per period:\n  eta_r 0.3:",
      damped.period, damped.w0);
  for (double x : damped.max_w) std::printf(" %.2e", x / damped.w0);
  std::printf("\n  eta_r 0.0:");
  for (double x : free.max_w) std::printf(" %.2e", x / free.w0);
  std::printf("\n");
  // Damping ratio 0.3: the amplitude falls by exp(-2 pi 0.3 / sqrt(1 - 0.09)) = 0.14
  // per period, so after 4 periods it is below 1e-3 w0; allow 1e-2.
  for (int k = 4; k < periods; ++k) CHECK(damped.max_w[k] < 1e-2 * damped.w0);
  // Without the dashpot the rolling spring keeps rocking.
  for (int k = 4; k < periods; ++k) CHECK(free.max_w[k] > 0.3 * free.w0);
}

TEST_CASE("Rolling damping is off while the rolling spring is fully mobilised", "[dem]") {
  // Kernel level: a spring at its cap gets no dashpot (Ai's f = 0); below the
  // cap the moment is M_k - C_r w_rel with C_r = eta_r 2 sqrt(I_r k_r).
  DemMaterial mat;
  mat.rolling_friction = 0.1;
  mat.rolling_damping = 0.3;
  PairProps pp = pair_props(mat, mat);
  const double R = 0.005, m = 1e-3, delta = 1e-5, dt = 1e-5;
  const double Ir = rolling_inertia(0.4 * m * R * R, m, R, 0.0, 0.0, 0.0);
  CHECK(Ir == Approx(1.4 * m * R * R).epsilon(1e-14));
  CHECK(rolling_inertia(0.4 * m * R * R, m, R, 0.4 * m * R * R, m, R) ==
        Approx(0.7 * m * R * R).epsilon(1e-14));
  const double Sn = 2.0 * pp.E_star * std::sqrt(R * delta);
  const double kr = 2.25 * Sn * 0.01 * R * R;
  const double w = 0.5;
  ContactHistory h;
  ContactForce f = hertz_mindlin(pp, R, m, Ir, delta, 0.0, 0.0, w, dt, h);
  CHECK(h.mr == Approx(-kr * w * dt).epsilon(1e-12));
  CHECK(f.m_roll == Approx(h.mr - 0.3 * 2.0 * std::sqrt(Ir * kr) * w).epsilon(1e-12));
  ContactHistory full;
  full.mr = -1.0;  // far beyond the cap: clipped, fully mobilised
  ContactForce g = hertz_mindlin(pp, R, m, Ir, delta, 0.0, 0.0, w, dt, full);
  const double cap = 0.1 * R * (4.0 / 3.0) * pp.E_star * std::sqrt(R * delta) * delta;
  CHECK(full.mr == Approx(-cap).epsilon(1e-12));
  CHECK(g.m_roll == full.mr);
}

// [SECTION] Cantilever: closed form of the one-point Timoshenko chain --------------

namespace {

// Tip deflection of an N-bond chain (bond length L, span ell = N L) under tip
// load P: node rotations are exact (moments at the bond midpoints), chord
// rotations are trapezoidal, so bending gives P ell^3 / (3EI) - P ell L^2 / (12 EI);
// the shear springs add P ell / (G A).
double chain_deflection(double P, int N, double L, double EI, double GA) {
  const double ell = N * L;
  return P * ell * ell * ell / (3.0 * EI) - P * ell * L * L / (12.0 * EI) + P * ell / GA;
}

}  // namespace

TEST_CASE("Bonded cantilever tip deflection equals the corrected Timoshenko-chain formula",
          "[dem]") {
  const double R = 0.001, E = 1e8, nu = 0.3;
  const double rb = R, I = kPi * rb * rb * rb * rb / 4.0, A = kPi * rb * rb,
               G = E / (2.0 * (1.0 + nu));
  const double L = 2.0 * R;
  for (int N : {4, 10}) {
    DemWorld w;
    w.set_backend(make_dem_backend("cpu", 1));
    DemMaterial mat;
    mat.E = E;
    mat.nu = nu;
    const int m = w.add_material("beam", mat);
    for (int k = 0; k <= N; ++k) add_particle(w, {L * k, 0.0}, R, m, k == N ? 1 : 0, {}, 1);
    w.particles.fixed[0] = 1;
    w.bond.E = E;
    w.bond.nu = nu;
    REQUIRE(w.form_bonds() == static_cast<size_t>(N));
    w.solver.gravity = {0.0, 0.0};
    w.solver.local_damping = 0.7;
    w.solver.dt = w.estimate_time_step().recommended;
    const double ell = N * L;
    const double P = 3.0 * E * I * (0.005 * ell) / (ell * ell * ell);
    w.loads.push_back(DemLoad{1, {0.0, -P}, {0.0, 0.0}});
    int done = 0;
    while (done < 400000) {
      REQUIRE(w.step(500).ok);
      done += 500;
      if (w.diagnostics().max_speed < 1e-6) break;
    }
    REQUIRE(done < 400000);
    const double defl = -w.particles.x[N].y;
    const double closed = chain_deflection(P, N, L, E * I, G * A);
    // The closed form is the exact sum of the element contributions.
    double theta = 0.0, sum = 0.0;
    for (int k = 1; k <= N; ++k) {
      const double prev = theta;
      theta += P * (ell - (k - 0.5) * L) * L / (E * I);
      sum += L * 0.5 * (prev + theta) + L * P / (G * A);
    }
    CHECK(closed == Approx(sum).epsilon(1e-12));
    const double eb = P * ell * ell * ell / (3.0 * E * I);
    const double old_doc = eb + P * ell * L * L / (12.0 * E * I) + P * ell / (G * A);  // wrong sign
    // Relative difference from Euler-Bernoulli: (3 (1 + nu) lambda^2 / 8 - 1/4) / N^2.
    const double rel = (3.0 * (1.0 + nu) / 8.0 - 0.25) / (N * N);
    std::printf(
        "[dem] cantilever N=%d: DEM %.6e m, closed form %.6e m, EB %.6e m (closed/EB - 1 = %.4f %%, "
        "formula %.4f %%), old-doc form %.6e m\n",
        N, defl, closed, eb, 100.0 * (closed / eb - 1.0), 100.0 * rel, old_doc);
    CHECK(closed / eb - 1.0 == Approx(rel).epsilon(1e-9));
    CHECK(defl == Approx(closed).epsilon(0.002));
    if (N == 4) CHECK(std::fabs(defl / old_doc - 1.0) > 0.02);  // the old sign is visibly wrong
  }
}
