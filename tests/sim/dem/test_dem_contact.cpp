// Hertz-Mindlin contact against closed forms: normal impact (Hertz theory),
// restitution, and friction on an inclined wall.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include "sim/dem/dem_build.h"
#include "sim/dem/dem_kernels.h"
#include "sim/dem/dem_world.h"

using namespace ps::dem;

namespace {

struct Impact {
  double max_overlap = 0.0, peak_force = 0.0, duration = 0.0, restitution = 0.0;
};

// Two equal spheres meet head-on at relative speed v (no gravity, no walls).
Impact run_impact(const DemMaterial& mat, double R, double v, double dt_fraction) {
  DemWorld w;
  w.set_backend(make_dem_backend("cpu", 1));
  w.solver.gravity = {0.0, 0.0};
  int m = w.add_material("m", mat);
  add_particle(w, {-R - 1e-5, 0.0}, R, m, 0, {0.5 * v, 0.0});
  add_particle(w, {R + 1e-5, 0.0}, R, m, 0, {-0.5 * v, 0.0});
  w.host_changed();
  const double mass = w.particles.mass[0];
  const double E_star = pair_props(mat, mat).E_star;
  const double tc = hertz_duration(0.5 * mass, 0.5 * R, E_star, v);
  w.solver.dt = tc * dt_fraction;
  Impact out;
  int steps_in_contact = 0;
  bool started = false;
  std::vector<ContactRecord> rec;
  for (int s = 0; s < 100000; ++s) {
    w.step(1);
    REQUIRE(!w.halted());
    const double d = w.particles.x[1].x - w.particles.x[0].x;
    out.max_overlap = std::max(out.max_overlap, 2.0 * R - d);
    if (w.last_result().contacts > 0) {
      started = true;
      ++steps_in_contact;
      w.contacts(rec);
      REQUIRE(rec.size() == 1);
      out.peak_force = std::max(out.peak_force, std::fabs(rec[0].f[0]));
    } else if (started) {
      break;
    }
  }
  out.duration = steps_in_contact * w.solver.dt;
  out.restitution = (w.particles.v[1].x - w.particles.v[0].x) / v;
  return out;
}

}  // namespace

TEST_CASE("Hertz normal impact of two equal spheres matches Hertz theory", "[dem]") {
  DemMaterial mat;
  mat.density = 2500.0;
  mat.E = 5e7;
  mat.nu = 0.3;
  mat.restitution = 1.0;  // undamped: Hertz's elastic solution
  mat.friction = 0.5;
  const double R = 0.01, v = 1.0;
  Impact r = run_impact(mat, R, v, 1.0 / 2000.0);

  const double mass = sphere_mass(mat.density, R);
  const double m_eff = 0.5 * mass, R_eff = 0.5 * R;
  const double E_star = mat.E / (2.0 * (1.0 - mat.nu * mat.nu));
  // Johnson 1985 sec. 11.4; t_c = 2 (delta_max / v) int_0^1 (1 - x^2.5)^-1/2 dx.
  const double dmax = std::pow(15.0 * m_eff * v * v / (16.0 * E_star * std::sqrt(R_eff)), 0.4);
  const double fmax = 4.0 / 3.0 * E_star * std::sqrt(R_eff) * std::pow(dmax, 1.5);
  const double integral = std::tgamma(0.4) * std::tgamma(0.5) / (2.5 * std::tgamma(0.9));
  const double tc = 2.0 * integral * dmax / v;
  std::printf(
      "[dem] Hertz impact: overlap %.6e (theory %.6e), peak force %.6f N (theory %.6f), "
      "duration %.6e s (theory %.6e), e = %.5f (set 1)\n",
      r.max_overlap, dmax, r.peak_force, fmax, r.duration, tc, r.restitution);
  CHECK(r.max_overlap == Approx(dmax).epsilon(0.005));
  CHECK(r.peak_force == Approx(fmax).epsilon(0.005));
  CHECK(r.duration == Approx(tc).epsilon(0.005));
  CHECK(r.restitution == Approx(1.0).epsilon(0.005));
}

TEST_CASE("Measured restitution equals the set coefficient at any impact speed", "[dem]") {
  DemMaterial mat;
  mat.density = 2500.0;
  mat.E = 5e7;
  mat.nu = 0.3;
  const double R = 0.01;
  for (double e : {0.2, 0.5, 0.8, 0.95}) {
    for (double v : {0.1, 2.0}) {
      mat.restitution = e;
      Impact r = run_impact(mat, R, v, 1.0 / 1000.0);
      std::printf("[dem] restitution set %.2f, impact %.1f m/s: measured %.5f\n", e, v,
                  r.restitution);
      CHECK(r.restitution == Approx(e).epsilon(0.01));
    }
  }
}

namespace {

// A bonded 8 x 2 block (square packing) resting on a plane wall inclined at
// theta; returns the block's centre-of-mass displacement and velocity along
// the slope (downhill positive) at t1 and t2.
struct SlideResult {
  double s1, s2, v1, v2, t1, t2;
};

SlideResult run_incline(double theta_deg, double mu, double t1, double t2) {
  const double th = theta_deg * kPi / 180.0;
  DemWorld w;
  w.set_backend(make_dem_backend("cpu", 1));
  DemMaterial mat;
  mat.density = 2500.0;
  mat.E = 1e7;
  mat.nu = 0.25;
  mat.restitution = 0.3;
  mat.friction = mu;
  int m = w.add_material("grain", mat);
  const double r = 0.005;
  const Vec2d n{-std::sin(th), std::cos(th)};      // wall normal
  const Vec2d down{-std::cos(th), -std::sin(th)};  // downhill direction
  add_plane(w, {0.0, 0.0}, n, m);
  BodySpec b;
  b.shape = Shape::Box;
  b.size = {16.0 * r, 4.0 * r};
  b.radius = r;
  b.packing = Packing::Square;
  b.angle = th;
  b.center = (2.0 * r) * n;  // bottom row touching the wall
  b.material = m;
  b.bonded = true;
  add_body(w, b);
  w.bond.E = 1e7;
  w.bond.nu = 0.25;
  w.bond.damping = 0.3;
  w.form_bonds();
  REQUIRE(w.bonds.size() == 8 + 2 * 7);
  w.solver.gravity = {0.0, -9.81};
  w.solver.dt = w.estimate_time_step().recommended;
  auto com = [&](double& s, double& v) {
    double M = 0, sx = 0, vx = 0;
    for (size_t i = 0; i < w.particles.size(); ++i) {
      M += w.particles.mass[i];
      sx += w.particles.mass[i] * dot(w.particles.x[i], down);
      vx += w.particles.mass[i] * dot(w.particles.v[i], down);
    }
    s = sx / M;
    v = vx / M;
  };
  double s0, v0;
  com(s0, v0);
  SlideResult out{};
  const int n1 = static_cast<int>(t1 / w.solver.dt), n2 = static_cast<int>(t2 / w.solver.dt);
  w.step(n1);
  com(out.s1, out.v1);
  w.step(n2 - n1);
  REQUIRE(!w.halted());
  com(out.s2, out.v2);
  out.t1 = n1 * w.solver.dt;
  out.t2 = n2 * w.solver.dt;
  out.s1 -= s0;
  out.s2 -= s0;
  REQUIRE(w.bonds.intact() == w.bonds.size());
  return out;
}

}  // namespace

TEST_CASE(
    "Block on an inclined wall sticks below the friction angle and slides with g(sin - mu cos) above",
    "[dem]") {
  const double mu = 0.4;  // friction angle atan(0.4) = 21.8 degrees
  SECTION("15 degrees: sticks") {
    SlideResult r = run_incline(15.0, mu, 0.1, 0.4);
    const double free_slide = 0.5 * 9.81 * std::sin(15.0 * kPi / 180.0) * 0.4 * 0.4;
    std::printf(
        "[dem] incline 15 deg, mu 0.4: creep %.3e m between 0.1 and 0.4 s (frictionless slide %.3f m)\n",
        r.s2 - r.s1, free_slide);
    CHECK(std::fabs(r.s2 - r.s1) < 1e-5);
    CHECK(std::fabs(r.v2) < 1e-3);
  }
  SECTION("35 degrees: slides") {
    const double th = 35.0 * kPi / 180.0;
    const double a_theory = 9.81 * (std::sin(th) - mu * std::cos(th));
    SlideResult r = run_incline(35.0, mu, 0.1, 0.4);
    const double a = (r.v2 - r.v1) / (r.t2 - r.t1);
    std::printf("[dem] incline 35 deg, mu 0.4: a = %.4f m/s^2 (theory g(sin - mu cos) = %.4f)\n", a,
                a_theory);
    CHECK(a == Approx(a_theory).epsilon(0.02));
  }
}
