// Moving parts during a batch of substeps (mpm::collider_moved,
// MpmWorld::colliders_move): the geometry of the rigid motion, the boundary
// sweeping the matter along the body's path, and a floating body batched
// against the per-substep exchange (sim/scene/coupled.h).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <memory>
#include "../mpm/mpm_test_util.h"
#include "sim/mpm/mpm_collider.h"
#include "sim/mpm/mpm_cpu.h"
#include "sim/verify/verify.h"

using namespace ps;

namespace {

/// A box part 0.1 x 0.06 about (0.3, 0.5), turned by 20 degrees, moving and spinning.
RigidCollider moving_box(Vec2 vel, float omega) {
  RigidCollider c;
  c.shape = ColliderShape::Polygon;
  c.count = 4;
  const float a = 20.f * 3.14159265f / 180.f, cs = std::cos(a), sn = std::sin(a);
  const Vec2 half[4] = {{-0.05f, -0.03f}, {0.05f, -0.03f}, {0.05f, 0.03f}, {-0.05f, 0.03f}};
  c.c = {0.3f, 0.5f};
  c.lo = {1.f, 1.f};
  c.hi = {0.f, 0.f};
  for (int k = 0; k < 4; ++k) {
    c.v[k] = c.c + Vec2{cs * half[k].x - sn * half[k].y, sn * half[k].x + cs * half[k].y};
    c.lo = Vec2{std::min(c.lo.x, c.v[k].x), std::min(c.lo.y, c.v[k].y)};
    c.hi = Vec2{std::max(c.hi.x, c.v[k].x), std::max(c.hi.y, c.v[k].y)};
  }
  c.vel = vel;
  c.omega = omega;
  c.friction = 0.3f;
  return c;
}

/// Particles whose centre lies inside the part.
size_t inside(const MpmParticles& p, const RigidCollider& c) {
  size_t n = 0;
  Vec2 nrm;
  for (size_t i = 0; i < p.size(); ++i)
    if (mpm::collider_distance(c, p.x[i], nrm) < 0.f) ++n;
  return n;
}

}  // namespace

TEST_CASE("A moved part is the placed one after its rigid motion: centre + v t, turned by omega t",
          "[rigid][batch]") {
  const RigidCollider c0 = moving_box(Vec2{0.8f, -0.3f}, 2.5f);
  // tau = 0 is the part itself, bit for bit (K = 1 and a batch's first substep).
  const RigidCollider same = mpm::collider_moved(c0, 0.f);
  CHECK(std::memcmp(same.v, c0.v, sizeof c0.v) == 0);
  CHECK(std::memcmp(&same.c, &c0.c, sizeof c0.c) == 0);
  CHECK(std::memcmp(&same.lo, &c0.lo, sizeof c0.lo) == 0);
  CHECK(std::memcmp(&same.hi, &c0.hi, sizeof c0.hi) == 0);
  const float tau = 0.04f;
  const RigidCollider c = mpm::collider_moved(c0, tau);
  CHECK(c.c.x == Approx(0.3 + 0.8 * 0.04).margin(1e-6));
  CHECK(c.c.y == Approx(0.5 - 0.3 * 0.04).margin(1e-6));
  const double th = 2.5 * 0.04;
  for (int k = 0; k < 4; ++k) {
    const double rx = c0.v[k].x - c0.c.x, ry = c0.v[k].y - c0.c.y;
    CHECK(c.v[k].x == Approx(c.c.x + std::cos(th) * rx - std::sin(th) * ry).margin(1e-6));
    CHECK(c.v[k].y == Approx(c.c.y + std::sin(th) * rx + std::cos(th) * ry).margin(1e-6));
    CHECK(mpm::collider_bbox_contains(c, c.v[k]));
  }
  // The velocity field and everything else ride along.
  CHECK(c.vel.x == c0.vel.x);
  CHECK(c.omega == c0.omega);
  CHECK(c.friction == c0.friction);
  // Substep by substep is the same motion: 40 moves of 1 ms, 1e-6 apart.
  RigidCollider step = c0;
  for (int s = 0; s < 40; ++s) step = mpm::collider_moved(step, 1e-3f);
  for (int k = 0; k < 4; ++k) {
    CHECK(step.v[k].x == Approx(c.v[k].x).margin(1e-6));
    CHECK(step.v[k].y == Approx(c.v[k].y).margin(1e-6));
  }
  // A disk: its centre turns about the body's centre of mass.
  RigidCollider d;
  d.shape = ColliderShape::Disk;
  d.v[0] = {0.6f, 0.5f};
  d.radius = 0.05f;
  d.c = {0.5f, 0.5f};
  d.omega = 3.14159265f;  // half a turn in a second
  const RigidCollider dm = mpm::collider_moved(d, 1.f);
  CHECK(dm.v[0].x == Approx(0.4).margin(1e-6));
  CHECK(dm.v[0].y == Approx(0.5).margin(1e-6));
  CHECK(dm.lo.x == Approx(0.35).margin(1e-6));
  CHECK(dm.hi.y == Approx(0.55).margin(1e-6));
}

TEST_CASE("The reach test before moving a part never skips a node the moved part touches",
          "[rigid][batch]") {
  // The CUDA collide kernel skips nodes with moved_collider_may_reach false;
  // that must only be nodes out of the moved part's skin. A box, a disk, and a
  // paddle whose body's centre of mass lies far outside it (a wheel's hub).
  RigidCollider paddle = moving_box(Vec2{-0.5f, 0.7f}, 4.f);
  paddle.c = Vec2{0.05f, 0.3f};
  RigidCollider disk;
  disk.shape = ColliderShape::Disk;
  disk.v[0] = {0.6f, 0.4f};
  disk.radius = 0.05f;
  disk.lo = {0.55f, 0.35f};
  disk.hi = {0.65f, 0.45f};
  disk.c = {0.58f, 0.41f};
  disk.vel = {0.3f, -0.2f};
  disk.omega = -6.f;
  const float dx = 1.f / 128.f, skin = mpm::kColliderSkin * dx;
  size_t reached = 0, skipped = 0;
  for (const RigidCollider& c0 : {moving_box(Vec2{0.8f, -0.3f}, 2.5f), paddle, disk})
    for (float tau : {0.f, 0.0016f, 0.05f, 0.3f}) {
      const RigidCollider c = mpm::collider_moved(c0, tau);
      for (int j = 0; j <= 128; ++j)
        for (int i = 0; i <= 128; ++i) {
          const Vec2 x{i * dx, j * dx};
          Vec2 n;
          if (mpm::moved_collider_may_reach(c0, tau, x, skin + 1e-3f * dx)) {
            ++reached;
            continue;
          }
          ++skipped;
          REQUIRE(mpm::collider_distance(c, x, n) > skin);
        }
    }
  CHECK(reached > 1000);
  CHECK(skipped > 100000);
}

TEST_CASE("A part moving through one call of many substeps pushes the matter along its path",
          "[rigid][batch]") {
  // A box at 2 m/s into a resting water column, no gravity, 500 substeps of
  // 1e-4 s in one step() call (one batch): it travels 0.1 m, 6.4 cells. The
  // moving boundary sweeps the water ahead of it and nothing ends inside the
  // box where it is at the end; a boundary frozen where the call began would
  // leave the box's end pose full of water.
  const char* text = R"({"domain": {"size": [1, 1], "grid": 64},
    "solver": {"transfer": "apic", "dt": 1e-4, "boundary": "slip", "gravity": [0, 0]},
    "materials": {"w": {"type": "fluid", "density": 1000, "bulk_modulus": 2e4, "viscosity": 0.01}},
    "bodies": [{"shape": "box", "min": [0.36, 0.35], "max": [0.6, 0.65], "material": "w"}]})";
  const RigidCollider box = moving_box(Vec2{2.f, 0.f}, 1.5f);
  const int steps = 500;
  const RigidCollider end =
      mpm::collider_moved(box, static_cast<float>(steps * static_cast<double>(1e-4f)));
  MpmScene moving = test::scene_from(text), held = test::scene_from(text),
           split = test::scene_from(text);
  for (MpmScene* s : {&moving, &held, &split}) {
    MpmWorld& w = *s->world;
    w.set_backend(std::make_unique<MpmCpuBackend>(2));
    w.colliders = {box};
    w.collider_impulse.assign(3, 0.0);
    w.colliders_move = s != &held;
    w.colliders_time = w.time();
  }
  const Diagnostics p0 = moving.world->diagnostics(false);
  REQUIRE(moving.world->step(steps).ok);
  REQUIRE(held.world->step(steps).ok);
  // The pose follows the clock, not the calls: 123 + 377 substeps give the same bits.
  REQUIRE(split.world->step(123).ok);
  REQUIRE(split.world->step(steps - 123).ok);
  CHECK(state_hash(split.world->particles) == state_hash(moving.world->particles));
  CHECK(split.world->collider_impulse == moving.world->collider_impulse);

  const size_t in_moving = inside(moving.world->particles, end),
               in_held = inside(held.world->particles, end);
  INFO("particles inside the box's end pose: moving boundary " << in_moving << ", frozen boundary "
                                                               << in_held);
  CHECK(in_moving == 0);
  CHECK(in_held > 30);
  // The water was pushed along +x, and the box paid for it to round-off.
  const Diagnostics p1 = moving.world->diagnostics(false);
  const double dpx = p1.momentum[0] - p0.momentum[0], dpy = p1.momentum[1] - p0.momentum[1];
  const std::vector<double>& J = moving.world->collider_impulse;
  INFO("water gained (" << dpx << ", " << dpy << ") N s, the box's impulse (" << J[0] << ", "
                        << J[1] << ")");
  CHECK(dpx > 0.5);  // of order rho v A: the column's front moves at about the box's speed
  CHECK(std::fabs(dpx + J[0]) < 1e-5 * dpx);
  CHECK(std::fabs(dpy + J[1]) < 1e-5 * dpx);
}

TEST_CASE("A floating box batched every 16 substeps settles at the per-substep exchange's draft",
          "[rigid][batch]") {
  // rigid.archimedes' lightest box (s = 0.3: the largest ratio of the water's
  // push to the box's mass, so the one most sensitive to the exchange's lag),
  // 4 s, dt 2e-4: a batch of 16 lasts 3.2 ms.
  verify::Options opt;
  opt.quick = true;
  opt.threads = 2;
  const verify::ArchimedesRun k1 = verify::archimedes_run(0.3, opt, 1);
  const verify::ArchimedesRun k16 = verify::archimedes_run(0.3, opt, 16);
  REQUIRE(k1.error.empty());
  REQUIRE(k16.error.empty());
  INFO("mean draft / (s h): K = 1 " << k1.mean_draft / k1.reference << ", K = 16 "
                                    << k16.mean_draft / k16.reference << "; largest tilt "
                                    << k1.tilt_deg << " and " << k16.tilt_deg << " deg");
  CHECK(k16.mean_draft == Approx(k1.mean_draft).epsilon(0.03));
  CHECK(k16.mean_draft ==
        Approx(k16.reference).epsilon(0.05));  // Archimedes, as the verify case asks
  CHECK(k16.tilt_deg < 10.0);
}
