// Disk and convex Polygon walls, moving walls and the reactions the
// particles exert on walls (the DEM side of rigid-body coupling).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>
#include "sim/dem/dem_build.h"
#include "sim/dem/dem_kernels.h"
#include "sim/dem/dem_world.h"
#include "tests/sim/dem/moving_wall_scene.h"

using namespace ps::dem;

namespace {

DemMaterial grain() {
  DemMaterial m;
  m.density = 2500.0;
  m.E = 5e7;
  m.nu = 0.3;
  m.restitution = 0.5;
  m.friction = 0.4;
  m.rolling_friction = 0.05;
  return m;
}

struct Drop {
  double max_overlap = 0.0, peak_force = 0.0, duration = 0.0;
  Vec2d v_after;
  double omega_after = 0.0;
  int steps_in_contact = 0;
};

// A spinning sphere hits the top y = 0 of `wall` obliquely (1 m/s down,
// 0.3 m/s sideways) in gravity; records the contact until it ends.
Drop drop_on(const DemWall& wall) {
  DemWorld w;
  w.set_backend(make_dem_backend("cpu", 1));
  const int m = w.add_material("m", grain());
  DemWall wl = wall;
  wl.material = m;
  w.walls.push_back(wl);
  const double R = 0.01;
  add_particle(w, {0.0, R + 1e-4}, R, m, 0, {0.3, -1.0});
  w.particles.omega[0] = 5.0;
  w.host_changed();
  const double E_star = pair_props(grain(), grain()).E_star;
  w.solver.dt = hertz_duration(w.particles.mass[0], R, E_star, 1.0) / 500.0;
  Drop out;
  std::vector<ContactRecord> rec;
  bool started = false;
  for (int s = 0; s < 100000; ++s) {
    w.step(1);
    REQUIRE(!w.halted());
    if (w.last_result().wall_contacts > 0) {
      REQUIRE(w.last_result().wall_contacts == 1);
      started = true;
      ++out.steps_in_contact;
      w.contacts(rec, true);
      REQUIRE(rec.size() == 1);
      out.peak_force = std::max(out.peak_force, std::hypot(rec[0].f[0], rec[0].f[1]));
      std::vector<DemContact> pairs, walls;
      w.backend().read_contacts(pairs, walls);
      out.max_overlap = std::max(out.max_overlap, walls[0].overlap);
    } else if (started) {
      break;
    }
  }
  out.duration = out.steps_in_contact * w.solver.dt;
  out.v_after = w.particles.v[0];
  out.omega_after = w.particles.omega[0];
  return out;
}

// One sphere of radius R at `pos` on `wall` (its material set to `mat`) in
// gravity, stepped for `seconds` at the recommended step, reactions on;
// returns its one wall contact.
DemContact settle_on(DemWorld& w, const DemMaterial& mat, DemWall wall, double R, Vec2d pos,
                     double seconds) {
  w.set_backend(make_dem_backend("cpu", 1));
  wall.material = w.add_material("m", mat);
  w.walls.push_back(wall);
  add_particle(w, pos, R, wall.material);
  w.host_changed();
  w.want_wall_reaction = true;
  w.solver.dt = w.estimate_time_step().recommended;
  w.step(static_cast<int>(seconds / w.solver.dt));
  REQUIRE(!w.halted());
  std::vector<DemContact> pairs, walls;
  w.backend().read_contacts(pairs, walls);
  REQUIRE(walls.size() == 1);
  return walls[0];
}

double rel(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(a), std::fabs(b)); }

// Closest point of segment p0-p1 to x.
Vec2d closest_on_segment(Vec2d x, Vec2d p0, Vec2d p1) {
  const Vec2d e = p1 - p0;
  double s = dot(x - p0, e) / length2(e);
  s = std::min(1.0, std::max(0.0, s));
  return p0 + s * e;
}

}  // namespace

TEST_CASE("A sphere hits a Polygon wall's face exactly as it hits a Plane wall", "[dem][walls]") {
  // The box's top face is the plane y = 0; same contact law, same history.
  DemWall plane;  // y = 0, normal +y
  const DemWall box = make_box_wall({0.0, -0.05}, {0.2, 0.05}, 0.0, 0);
  const Drop a = drop_on(plane), b = drop_on(box);
  std::printf(
      "[dem] drop on plane: overlap %.9e m, peak force %.9e N, contact %.9e s (%d steps); on polygon: "
      "%.9e m, %.9e N, %.9e s; rel. diff %.1e %.1e %.1e\n",
      a.max_overlap, a.peak_force, a.duration, a.steps_in_contact, b.max_overlap, b.peak_force,
      b.duration, rel(a.max_overlap, b.max_overlap), rel(a.peak_force, b.peak_force),
      rel(a.duration, b.duration));
  REQUIRE(a.steps_in_contact > 100);
  CHECK(rel(a.max_overlap, b.max_overlap) <= 1e-9);
  CHECK(rel(a.peak_force, b.peak_force) <= 1e-9);
  CHECK(rel(a.duration, b.duration) <= 1e-9);
  // Friction and rolling acted (the history mattered) and gave the same rebound.
  CHECK(std::fabs(a.v_after.x - 0.3) > 1e-3);
  CHECK(rel(a.v_after.x, b.v_after.x) <= 1e-9);
  CHECK(rel(a.v_after.y, b.v_after.y) <= 1e-9);
  CHECK(rel(a.omega_after, b.omega_after) <= 1e-9);
  // And the impact is Hertz's (damped: below the elastic overlap for 1 m/s).
  const double E_star = pair_props(grain(), grain()).E_star;
  const double m = sphere_mass(grain().density, 0.01);
  CHECK(a.max_overlap < hertz_max_overlap(m, 0.01, E_star, 1.0));
  CHECK(a.max_overlap > 0.5 * hertz_max_overlap(m, 0.01, E_star, 1.0));
}

TEST_CASE("Polygon wall geometry: closest boundary point outside, nearest edge inside",
          "[dem][walls]") {
  // A turned, irregular convex hexagon against brute force over its edges.
  std::vector<Vec2d> v;
  const double radii[6] = {0.10, 0.12, 0.09, 0.11, 0.13, 0.08};
  for (int k = 0; k < 6; ++k) {
    const double a = 0.3 + k * (2.0 * kPi / 6.0) + 0.1 * std::sin(3.0 * k);
    v.push_back(Vec2d{0.02 + radii[k] * std::cos(a), -0.01 + radii[k] * std::sin(a)});
  }
  const DemWall wall = make_polygon_wall(v, 0);
  REQUIRE(wall.count == 6);
  const double r = 0.03;
  int outside = 0, inside = 0, corner = 0, none = 0;
  for (int iy = -40; iy <= 40; ++iy)
    for (int ix = -40; ix <= 40; ++ix) {
      const Vec2d x{0.02 + 0.004 * ix + 1e-4, -0.01 + 0.004 * iy + 2e-4};
      // Brute force: distance to the boundary and whether x is inside.
      double dmin = 1e300;
      Vec2d qmin;
      bool in = true;
      double depth = 1e300;
      Vec2d nin;
      for (int k = 0; k < 6; ++k) {
        const Vec2d p0 = wall.v[k], p1 = wall.v[(k + 1) % 6];
        const Vec2d q = closest_on_segment(x, p0, p1);
        if (length(x - q) < dmin) {
          dmin = length(x - q);
          qmin = q;
        }
        const Vec2d e = p1 - p0;
        const Vec2d nk = Vec2d{e.y, -e.x} / length(e);
        const double s = dot(x - p0, nk);
        if (s > 0.0) in = false;
        if (-s < depth) {
          depth = -s;
          nin = nk;
        }
      }
      Vec2d n;
      double delta = 0.0;
      const bool touch = wall_contact(wall, x, r, n, delta);
      if (in) {
        REQUIRE(touch);
        CHECK(delta == Approx(r + depth).epsilon(1e-12));
        CHECK(length(n - nin) < 1e-12);
        ++inside;
      } else if (dmin < r) {
        REQUIRE(touch);
        CHECK(delta == Approx(r - dmin).epsilon(1e-12));
        CHECK(length(n - (x - qmin) / dmin) < 1e-9);
        ++outside;
        corner += length(qmin - wall.v[0]) < 1e-15 || length(qmin - wall.v[3]) < 1e-15;
      } else {
        CHECK_FALSE(touch);
        ++none;
      }
    }
  std::printf(
      "[dem] polygon geometry: %d points inside, %d touching outside (%d at vertices 0 and 3), %d apart\n",
      inside, outside, corner, none);
  CHECK(inside > 100);
  CHECK(outside > 100);
  CHECK(corner > 20);
  CHECK(none > 100);
}

TEST_CASE("A sphere pressed onto a box corner gets one contact along the corner-to-centre line",
          "[dem][walls]") {
  const double R = 0.01, d0 = 2e-4;       // overlap at the corner
  const double ang = 30.0 * kPi / 180.0;  // off the diagonal: the corner, not an edge, decides
  const Vec2d dir{std::cos(ang), std::sin(ang)};  // from the corner (0.05, 0.05) to the centre
  auto press = [&](bool segments, Vec2d& f, size_t& contacts) {
    DemWorld w;
    w.set_backend(make_dem_backend("cpu", 1));
    const int m = w.add_material("m", grain());
    w.solver.gravity = {0.0, 0.0};
    w.solver.dt = 1e-7;
    if (segments) {  // the same box as four segments
      const Vec2d c[4] = {{-0.05, -0.05}, {0.05, -0.05}, {0.05, 0.05}, {-0.05, 0.05}};
      for (int k = 0; k < 4; ++k) add_segment(w, c[k], c[(k + 1) % 4], m);
    } else {
      w.walls.push_back(make_box_wall({0.0, 0.0}, {0.05, 0.05}, 0.0, m));
    }
    add_particle(w, Vec2d{0.05, 0.05} + (R - d0) * dir, R, m);
    w.want_wall_reaction = true;
    w.step(1);
    contacts = w.last_result().wall_contacts;
    std::vector<DemContact> pairs, walls;
    w.backend().read_contacts(pairs, walls);
    f = Vec2d{};
    for (const DemContact& c : walls) f += c.f_i;
  };
  Vec2d f, fs;
  size_t n = 0, ns = 0;
  press(false, f, n);
  press(true, fs, ns);
  const double E_star = pair_props(grain(), grain()).E_star;
  const double hertz =
      4.0 / 3.0 * E_star * std::sqrt(R) * std::pow(d0, 1.5);  // at rest: no damping force
  std::printf(
      "[dem] corner: polygon %zu contact, |F| = %.9e N (Hertz %.9e), angle to the corner line %.1e rad; "
      "four segments: %zu contacts, |F| = %.6e N\n",
      n, length(f), hertz, std::fabs(cross(f, dir)) / length(f), ns, length(fs));
  CHECK(n == 1);
  CHECK(length(f) == Approx(hertz).epsilon(1e-9));
  CHECK(std::fabs(cross(f, dir)) < 1e-12 * length(f));
  CHECK(dot(f, dir) > 0.0);
  CHECK(ns == 2);  // what a polygon avoids: two overlapping edge contacts at one corner
}

TEST_CASE("A sphere deep inside a Polygon wall is pushed out through the nearest edge",
          "[dem][walls]") {
  DemWorld w;
  w.set_backend(make_dem_backend("cpu", 1));
  const int m = w.add_material("m", grain());
  w.solver.gravity = {0.0, 0.0};
  w.solver.dt = 1e-8;
  w.walls.push_back(make_box_wall({0.0, 0.0}, {0.05, 0.03}, 0.0, m));
  const double R = 0.01, depth = 0.002;
  add_particle(w, {0.01, 0.03 - depth}, R, m);  // centre inside, nearest to the top edge
  w.step(1);
  std::vector<DemContact> pairs, walls;
  w.backend().read_contacts(pairs, walls);
  REQUIRE(walls.size() == 1);
  const double E_star = pair_props(grain(), grain()).E_star;
  const double delta = R + depth;
  CHECK(walls[0].overlap == Approx(delta).epsilon(1e-12));
  CHECK(walls[0].f_i.x == 0.0);
  CHECK(walls[0].f_i.y ==
        Approx(4.0 / 3.0 * E_star * std::sqrt(R) * std::pow(delta, 1.5)).epsilon(1e-12));
}

TEST_CASE("A sphere resting on a big Disk wall settles at Hertz's overlap for m g",
          "[dem][walls]") {
  DemWorld w;
  DemMaterial mat = grain();
  mat.restitution = 0.3;
  const double R = 0.01, Rw = 1.0, g = 9.81;
  w.solver.gravity = {0.0, -g};
  const DemContact c =
      settle_on(w, mat, make_disk_wall({0.0, -Rw}, Rw, 0), R, {0.0, R + 1e-5}, 0.3);
  const double mg = w.particles.mass[0] * g;
  const double E_star = pair_props(mat, mat).E_star;
  const double expect = std::pow(3.0 * mg / (4.0 * E_star * std::sqrt(R)), 2.0 / 3.0);
  std::printf("[dem] disk wall: overlap %.9e m, Hertz for m g %.9e m (rel. %.1e), |v| %.1e m/s\n",
              c.overlap, expect, rel(c.overlap, expect), length(w.particles.v[0]));
  CHECK(c.overlap == Approx(expect).epsilon(1e-9));
  CHECK(c.f_i.y == Approx(mg).epsilon(1e-9));
  CHECK(w.wall_reaction()[1] == Approx(-mg).epsilon(1e-9));
  CHECK(std::fabs(w.particles.x[0].x) < 1e-12);
}

TEST_CASE("A sphere on a conveyor (a moving Polygon wall) ends rolling at 2/7 of the belt speed",
          "[dem][walls]") {
  // The belt's surface moves at U (the wall's velocity; it is not advanced):
  // friction drives the sphere until its contact point moves with the belt.
  // Angular momentum about the contact line is conserved: m v a = I omega,
  // and no slip, v + a omega = U, give v = U / (1 + m a^2 / I) = 2 U / 7.
  DemWorld w;
  DemMaterial mat = grain();
  mat.rolling_friction = 0.0;
  const double R = 0.01, U = 0.5;
  DemWall belt = make_box_wall({0.0, -0.05}, {10.0, 0.05}, 0.0, 0);
  belt.vel = {U, 0.0};
  const DemContact c = settle_on(w, mat, belt, R, {0.0, R - 1e-6}, 0.4);
  const double a = R - 0.5 * c.overlap;
  const double v = w.particles.v[0].x, om = w.particles.omega[0];
  const double I = w.particles.inertia[0], mass = w.particles.mass[0];
  std::printf(
      "[dem] conveyor U = %.2f m/s: v = %.9f m/s (2U/7 = %.9f), contact slip %.1e m/s, belt reaction Fx %.2e N\n",
      U, v, U / (1.0 + mass * a * a / I), v + a * om - U, w.wall_reaction()[0]);
  CHECK(v == Approx(U / (1.0 + mass * a * a / I)).epsilon(1e-4));
  CHECK(v == Approx(2.0 * U / 7.0).epsilon(1e-3));
  CHECK(std::fabs(v + a * om - U) < 1e-4 * U);
  // Rolling with the belt: no friction is left (the reaction is the weight only).
  CHECK(std::fabs(w.wall_reaction()[0]) < 1e-4 * mass * 9.81);
  CHECK(w.wall_reaction()[1] == Approx(-mass * 9.81).epsilon(1e-4));
}

TEST_CASE("Wall reactions balance the particles' momentum and angular momentum every step",
          "[dem][walls]") {
  // No gravity: every change of the particles' momentum comes from the wall,
  // so sum m dv = -F_wall dt, and about the wall's c (fixed during a step),
  // sum [m (x - c) x dv + I dw] = -T_wall dt, per step (symplectic Euler
  // makes the orbital part exact: x^{n+1} - x^n is parallel to v^{n+1}).
  DemWorld w;
  w.set_backend(make_dem_backend("cpu", 2));
  test::make_moving_wall_scene(w, 12, 8);
  const DemParticles& p = w.particles;
  const size_t n = p.size();
  std::vector<Vec2d> x0(n), v0(n);
  std::vector<double> w0(n);
  double worst_f = 0.0, worst_t = 0.0, worst_newton = 0.0, peak = 0.0, rel_f = 0.0, rel_t = 0.0;
  int steps_touching = 0;
  size_t most = 0;
  std::vector<DemContact> pairs, walls;
  const int steps = static_cast<int>(0.04 / w.solver.dt);
  for (int s = 0; s < steps; ++s) {
    x0 = p.x;
    v0 = p.v;
    w0 = p.omega;
    const Vec2d c = w.walls[0].c;
    w.step(1);
    REQUIRE(!w.halted());
    const double dt = w.last_dt();
    const std::vector<double>& r = w.wall_reaction();
    REQUIRE(r.size() == 3);
    Vec2d dP{}, scaleP{};
    double dL = 0.0, scaleL = 0.0;
    for (size_t i = 0; i < n; ++i) {
      const Vec2d dv = p.v[i] - v0[i];
      const Vec2d arm = x0[i] - c;
      dP += p.mass[i] * dv;
      dL += p.mass[i] * cross(arm, dv) + p.inertia[i] * (p.omega[i] - w0[i]);
      // Tolerance: 1e-12 of each change, plus the round-off of measuring it
      // as v^{n+1} - v^n (1e-15 |v|, about 4 ulp).
      const double tol_v = 1e-12 * length(dv) + 1e-15 * length(v0[i]);
      scaleP.x += p.mass[i] * tol_v;
      scaleL += p.mass[i] * length(arm) * tol_v +
                p.inertia[i] * (1e-12 * std::fabs(p.omega[i] - w0[i]) + 1e-15 * std::fabs(w0[i]));
    }
    const Vec2d F{r[0], r[1]};
    const double errF = length(dP + dt * F), errT = std::fabs(dL + dt * r[2]);
    worst_f = std::max(worst_f, errF / scaleP.x);
    worst_t = std::max(worst_t, errT / scaleL);
    if (length(F) > 1e-2) {  // plain relative errors while the wall pushes
      rel_f = std::max(rel_f, errF / (dt * length(F)));
      rel_t = std::max(rel_t, errT / (dt * std::fabs(r[2])));
    }
    // Newton's third law per step: reaction + the particles' wall forces.
    w.backend().read_contacts(pairs, walls);
    Vec2d sum = F;
    double mag = 0.0;
    for (const DemContact& k : walls) {
      sum += k.f_i;
      mag += length(k.f_i);
    }
    if (!walls.empty()) worst_newton = std::max(worst_newton, length(sum) / mag);
    steps_touching += walls.empty() ? 0 : 1;
    most = std::max(most, walls.size());
    peak = std::max(peak, length(F));
  }
  std::printf(
      "[dem] moving wall: %d steps (%d touching, up to %zu contacts), peak reaction %.3e N; "
      "|dP + F dt| / tol %.1e, |dL + T dt| / tol %.1e (tol: 1e-12 relative + 1e-15 |v| per grain); "
      "while |F| > 0.01 N: |dP + F dt| / |F dt| %.1e, |dL + T dt| / |T dt| %.1e; "
      "Newton |sum| / sum |f| %.1e\n",
      steps, steps_touching, most, peak, worst_f, worst_t, rel_f, rel_t, worst_newton);
  CHECK(steps_touching > steps / 2);
  CHECK(most >= 5);
  CHECK(worst_f <= 1.0);
  CHECK(worst_t <= 1.0);
  CHECK(worst_newton < 1e-14);
  // The wall pushed the grains left and they pushed it back.
  double Px = 0.0;
  for (size_t i = 0; i < n; ++i) Px += p.mass[i] * p.v[i].x;
  CHECK(Px < 0.0);
}

TEST_CASE("Wall reactions and particle state are bit-identical with 1 and 4 threads",
          "[dem][walls]") {
  // 40 x 30 grains: several index chunks per worker (kParticleGrain = 256).
  std::vector<double> reactions[2];
  uint64_t hash[2];
  std::vector<uint8_t> touched;
  std::vector<DemContact> pairs, walls;
  for (int run = 0; run < 2; ++run) {
    DemWorld w;
    w.set_backend(make_dem_backend("cpu", run == 0 ? 1 : 4));
    test::make_moving_wall_scene(w, 40, 30);
    const int steps = static_cast<int>(0.03 / w.solver.dt);
    for (int s = 0; s < steps; ++s) {
      w.step(1);
      REQUIRE(!w.halted());
      reactions[run].insert(reactions[run].end(), w.wall_reaction().begin(),
                            w.wall_reaction().end());
      touched.resize(w.particles.size());
      w.backend().read_contacts(pairs, walls);
      for (const DemContact& c : walls) touched[c.i] = 1;
    }
    hash[run] = w.diagnostics().hash;
  }
  size_t grains = 0, chunks = 0;
  for (size_t i = 0; i < touched.size(); ++i) grains += touched[i];
  for (size_t c = 0; c * 256 < touched.size(); ++c)
    chunks += std::find(touched.begin() + c * 256,
                        touched.begin() + std::min(touched.size(), (c + 1) * 256),
                        1) != touched.begin() + std::min(touched.size(), (c + 1) * 256);
  std::printf(
      "[dem] moving wall determinism: hash %016llx (1 thread) %016llx (4 threads), %zu reaction values; "
      "%zu grains touched the wall, from %zu index ranges of 256\n",
      static_cast<unsigned long long>(hash[0]), static_cast<unsigned long long>(hash[1]),
      reactions[0].size(), grains, chunks);
  CHECK(grains >= 20);
  CHECK(chunks >= 4);
  CHECK(hash[0] == hash[1]);
  CHECK(reactions[0] == reactions[1]);
}

TEST_CASE("Walls replaced or moved between steps keep their contact history", "[dem][walls]") {
  // A sphere held on a slope by its Mindlin spring (tilt below the friction
  // angle): wiping the history would let it creep. Overwriting the floor with
  // an equal copy each step, or sliding it along its own top face, must
  // change nothing, nor the time step.
  auto run = [](int mode) {
    DemWorld w;
    w.set_backend(make_dem_backend("cpu", 1));
    DemMaterial mat = grain();
    mat.friction = 0.5;
    mat.rolling_friction = 0.5;  // above tan 15 degrees: the rolling spring holds it too
    const int m = w.add_material("m", mat);
    w.walls.push_back(make_disk_wall({1.0, 1.0}, 0.1, m));  // another wall, untouched
    w.walls.push_back(make_box_wall({0.0, -0.05}, {0.3, 0.05}, 0.0, m));
    add_particle(w, {0.0, 0.01 - 1e-6}, 0.01, m);
    const double tilt = 15.0 * kPi / 180.0;
    w.solver.gravity = {9.81 * std::sin(tilt), -9.81 * std::cos(tilt)};
    w.host_changed();
    const double dt = w.estimate_time_step().recommended;
    w.solver.dt = dt;
    for (int s = 0; s < 4000; ++s) {
      if (mode == 1) w.walls[1] = make_box_wall({0.0, -0.05}, {0.3, 0.05}, 0.0, m);
      if (mode == 2) w.walls[1] = make_box_wall({1e-5 * s, -0.05}, {0.3, 0.05}, 0.0, m);
      if (mode == 3) w.host_changed();  // the control: this does drop the history
      w.step(1);
      REQUIRE(!w.halted());
    }
    CHECK(w.estimate_time_step().recommended == dt);
    return w.particles.x[0];
  };
  const Vec2d still = run(0), replaced = run(1), slid = run(2), wiped = run(3);
  std::printf(
      "[dem] history kept: sphere on a 15 degree slope at x = %.6e m (floor untouched), %.6e m "
      "(overwritten each step), %.6e m (slid 4 cm along its face); %.6e m with host_changed() each step\n",
      still.x, replaced.x, slid.x, wiped.x);
  CHECK(replaced.x == still.x);
  CHECK(replaced.y == still.y);
  CHECK(slid.x == still.x);
  CHECK(slid.y == still.y);
  // It held: the Mindlin and rolling springs carried the load (only their
  // elastic deflection, micrometres); without history it slides away.
  CHECK(std::fabs(still.x) < 2e-5);
  CHECK(std::fabs(wiped.x) > 100.0 * std::fabs(still.x));
}

TEST_CASE("Bad walls are refused with the wall named", "[dem][walls]") {
  CHECK_THROWS(make_polygon_wall({{0, 0}, {1, 0}}, 0));
  CHECK_THROWS(make_polygon_wall({{0, 0}, {1, 0}, {1, 1}, {0.5, 0.2}}, 0));  // not convex
  CHECK_THROWS(make_disk_wall({0, 0}, -1.0, 0));
  const DemWall cw = make_polygon_wall({{0, 0}, {0, 1}, {1, 1}, {1, 0}},
                                       0);  // clockwise in, stored counter-clockwise
  CHECK(check_wall(cw).empty());
  CHECK(cross(cw.v[1] - cw.v[0], cw.v[2] - cw.v[1]) > 0.0);
  CHECK(cw.c.x == Approx(0.5));
  CHECK(cw.c.y == Approx(0.5));
  DemWorld w;
  w.add_material("m", grain());
  add_particle(w, {0.0, 0.0}, 0.01, 0);
  DemWall bad = cw;
  bad.count = 9;
  w.walls.push_back(DemWall{});
  w.walls.push_back(bad);
  try {
    w.step(1);
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("DEM wall 1") != std::string::npos);
  }
}
