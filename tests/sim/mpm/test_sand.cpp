// Sand: the plane-strain Mohr-Coulomb return map (sim/mpm/mpm_kernels.h,
// sand_return_map and constitutive's Sand branch) and the angle of a poured pile.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include "sim/mpm/mpm_kernels.h"
#include "sim/verify/mpm_flow.h"

using namespace ps;

namespace {

constexpr double kPi = 3.14159265358979323846;

MaterialParams sand(float phi, float c) {
  MaterialParams m;
  m.type = MaterialType::Sand;
  m.E = 2e5f;
  m.nu = 0.3f;
  m.density = 1500.f;
  m.friction_angle = phi;
  m.cohesion = c;
  return m;
}

/// Principal Cauchy stresses (sigma = tau / J) of a symmetric tau.
void principal(const Mat2& tau, float J, double& s1, double& s2) {
  double a = tau(0, 0) / J, b = tau(0, 1) / J, d = tau(1, 1) / J;
  double m = 0.5 * (a + d), r = std::sqrt(0.25 * (a - d) * (a - d) + b * b);
  s1 = m + r;
  s2 = m - r;
}

Mat2 rot(float t) { return Mat2{std::cos(t), -std::sin(t), std::sin(t), std::cos(t)}; }

struct Result {
  Mat2 F, tau;
  double s1, s2;  // principal Cauchy stresses
  float J;
};

/// Runs constitutive() on F = R diag(exp e1, exp e2) Q^T.
Result apply(const MaterialParams& m, double e1, double e2, float ra = 0.3f, float rb = -1.1f) {
  Result r;
  r.F = rot(ra) * Mat2::diag(std::exp(static_cast<float>(e1)), std::exp(static_cast<float>(e2))) * transpose(rot(rb));
  float Jp = 1.f;
  r.tau = mpm::constitutive(m, r.F, 1.f, Jp, Mat2{}, 1e-4f);
  r.J = det(r.F);
  principal(r.tau, r.J, r.s1, r.s2);
  return r;
}

/// Mohr-Coulomb residual, tension positive: |s1 - s2| / 2 + (s1 + s2) / 2 sin(phi) - c cos(phi) (<= 0 admissible).
double mc(const MaterialParams& m, double s1, double s2) {
  double phi = m.friction_angle * kPi / 180.0;
  return std::fabs(s1 - s2) / 2 + (s1 + s2) / 2 * std::sin(phi) - m.cohesion * std::cos(phi);
}

}  // namespace

TEST_CASE("Sand return map: projected states lie on the plane-strain Mohr-Coulomb cone", "[sand][mpm]") {
  for (float phi : {25.f, 30.f, 35.f}) {
    for (float c : {0.f, 500.f}) {
      MaterialParams m = sand(phi, c);
      float mu, la;
      lame(m, mu, la);
      // Compressive trial states with large shear: outside the cone, returned to it.
      for (double tr : {-0.02, -0.005, -0.001}) {
        for (double shear : {0.02, 0.05, 0.1}) {
          Result r = apply(m, 0.5 * tr + shear, 0.5 * tr - shear);
          // The trial (elastic) Cauchy stresses.
          const double J0 = std::exp(tr), t1 = (2 * mu * (0.5 * tr + shear) + la * tr) / J0,
                       t2 = (2 * mu * (0.5 * tr - shear) + la * tr) / J0;
          double scale = std::fabs(r.s1) + std::fabs(r.s2) + c;
          INFO("phi " << phi << " c " << c << " tr " << tr << " shear " << shear << ": s1 " << r.s1 << " s2 " << r.s2
                      << " trial residual " << mc(m, t1, t2));
          REQUIRE(mc(m, t1, t2) > 0.0);                          // the trial is outside the cone
          CHECK(std::fabs(mc(m, r.s1, r.s2)) <= 2e-5 * scale);  // on the cone to float round-off
          CHECK(r.s2 < 0.0);
          // The return is deviatoric: the volume (J) is kept.
          CHECK(r.J == Approx(std::exp(tr)).epsilon(1e-5));
        }
      }
    }
  }
}

TEST_CASE("Sand return map: states inside the cone are untouched", "[sand][mpm]") {
  for (float c : {0.f, 500.f}) {
    MaterialParams m = sand(30.f, c);
    float mu, la;
    lame(m, mu, la);
    // Pure hydrostatic compression, and compression with a small deviator.
    for (double shear : {0.0, 0.002}) {
      const double e1 = -0.01 + shear, e2 = -0.01 - shear;
      Result r = apply(m, e1, e2);
      Mat2 F0 = rot(0.3f) * Mat2::diag(std::exp(static_cast<float>(e1)), std::exp(static_cast<float>(e2))) * transpose(rot(-1.1f));
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) CHECK(r.F(i, j) == Approx(F0(i, j)).margin(1e-6));
      // tau = 2 mu e + lambda tr e in the principal frame.
      const double t1 = 2 * mu * e1 + la * (e1 + e2), t2 = 2 * mu * e2 + la * (e1 + e2);
      double k1, k2;
      principal(r.tau, 1.f, k1, k2);
      CHECK(k1 == Approx(std::max(t1, t2)).epsilon(1e-4));
      CHECK(k2 == Approx(std::min(t1, t2)).epsilon(1e-4));
      CHECK(mc(m, r.s1, r.s2) < 0.0);
    }
  }
}

TEST_CASE("Sand return map: tension goes to the apex", "[sand][mpm]") {
  // Cohesionless: any tensile mean stress -> stress free (F a rotation).
  MaterialParams m = sand(30.f, 0.f);
  for (double e : {1e-4, 0.01, 0.2}) {
    Result r = apply(m, e, e);
    CHECK(r.tau(0, 0) == 0.f);
    CHECK(r.tau(1, 1) == 0.f);
    CHECK(r.tau(0, 1) == 0.f);
    CHECK(r.J == Approx(1.f).epsilon(1e-6));
  }
  // Uniaxial extension (both trial stresses tensile) as well.
  Result u = apply(m, 0.01, 0.0);
  CHECK(u.s1 == 0.0);
  CHECK(u.s2 == 0.0);
  // With cohesion the apex is the hydrostatic Cauchy stress c cot(phi).
  for (float phi : {25.f, 30.f, 35.f}) {
    MaterialParams mc_ = sand(phi, 800.f);
    const double apex = 800.0 / std::tan(phi * kPi / 180.0);
    for (double e : {0.01, 0.2}) {
      Result r = apply(mc_, e, e);
      INFO("phi " << phi << " e " << e << ": s1 " << r.s1 << " s2 " << r.s2 << " apex " << apex);
      CHECK(r.s1 == Approx(apex).epsilon(1e-4));
      CHECK(r.s2 == Approx(apex).epsilon(1e-4));
    }
    // Tension below the apex with a deviator: on the cone (cohesion carries it).
    Result t = apply(mc_, 0.0202, -0.0198);
    CHECK(std::fabs(mc(mc_, t.s1, t.s2)) <= 2e-5 * (std::fabs(t.s1) + std::fabs(t.s2) + 800.0));
    CHECK(t.s1 > 0.0);
  }
}

TEST_CASE("A poured sand pile stands at the friction angle", "[sand][mpm][pile]") {
  // The angle_of_repose verification case's protocol at one angle (the case
  // runs 25, 30 and 35 degrees): pour onto a rough (sticky) floor, let it
  // settle, fit the flank between 20 % and 80 % of the pile height.
  verify::flow::PileOptions opt;
  opt.threads = 2;
  const double phi = 30.0;
  verify::flow::PileRun r = verify::flow::run_pile(phi, 0.0, opt);
  INFO("phi " << phi << ": pile angle " << r.fit.angle << " deg (left " << r.fit.angle_left << ", right "
              << r.fit.angle_right << ", " << r.fit.n_left << "+" << r.fit.n_right << " columns), height "
              << r.fit.height << ", " << r.particles << " particles, " << r.sim_time << " s simulated in " << r.seconds
              << " s");
  REQUIRE(r.error.empty());
  CHECK(r.ke_per_mass < 1e-5);
  CHECK(r.fit.n_left >= 6);
  CHECK(r.fit.n_right >= 6);
  std::printf("[sand] pile phi %.0f: angle %.2f deg (left %.2f, right %.2f), height %.4f, %zu particles, %.2f s simulated, %.1f s wall\n",
              phi, r.fit.angle, r.fit.angle_left, r.fit.angle_right, r.fit.height, r.particles, r.sim_time, r.seconds);
  CHECK(std::fabs(r.fit.angle - phi) <= 3.0);
}

TEST_CASE("A sand layer on a tilting table stands below the friction angle and flows above it", "[sand][mpm][pile]") {
  // The angle_of_repose case's static check at 30 deg: an infinite slope
  // (a layer filling the box from wall to wall) tilted to phi - 3 deg stands,
  // tilted to phi + 1 deg flows.
  const double phi = 30.0;
  std::string err;
  const double still = verify::flow::tilted_layer_speed(phi, phi - 3.0, 128, 2, 0.03, 1.0, &err);
  REQUIRE(err.empty());
  const double moving = verify::flow::tilted_layer_speed(phi, phi + 1.0, 128, 2, 0.03, 1.0, &err);
  REQUIRE(err.empty());
  std::printf("[sand] tilted layer phi %.0f: mean speed %.3g m/s at %.0f deg, %.3g m/s at %.0f deg\n", phi, still,
              phi - 3.0, moving, phi + 1.0);
  CHECK(still < 0.01);
  CHECK(moving > 0.05);
}
