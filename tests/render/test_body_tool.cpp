// The Body tool (render/cpu/body_tool.h): a drag becomes a Box2D body with the
// dragged size, the tool's density, a fresh name; too small or outside the
// domain is refused with a reason; the force readout is impulse / time.
#include <catch2/catch.hpp>
#include "render/cpu/body_tool.h"

#include <algorithm>
#include <cmath>

using namespace ps;

TEST_CASE("Body tool: a drag makes a box or disk of the dragged size and the tool's density",
          "[render][rigid]") {
  rigid::RigidWorld w(rigid::Vec2d{0.0, -9.81}, 1.0, 10.0);
  BodyDraft d;
  d.shape = 0;
  d.a = {0.6f, 0.5f};
  d.b = {0.4f, 0.6f};  // dragged up and left: the corners are sorted
  d.density = 800.f;
  rigid::BodyDef box;
  std::string why;
  REQUIRE(body_from_drag(d, w, {0.f, 0.f}, {1.f, 1.f}, 0.01f, box, &why));
  CHECK(box.name == "drawn 1");
  const int b = w.add_body(box);
  CHECK(w.state(b).mass == Approx(800.0 * 0.2 * 0.1).epsilon(1e-5));
  CHECK(w.state(b).com.x == Approx(0.5).margin(1e-6));
  CHECK(w.state(b).com.y == Approx(0.55).margin(1e-6));
  // The next one gets the next free name; a disk's mass is rho pi r^2.
  d.shape = 1;
  d.a = {0.3f, 0.3f};
  d.b = {0.3f, 0.35f};
  rigid::BodyDef disk;
  REQUIRE(body_from_drag(d, w, {0.f, 0.f}, {1.f, 1.f}, 0.01f, disk, &why));
  CHECK(disk.name == "drawn 2");
  CHECK(w.state(w.add_body(disk)).mass == Approx(800.0 * 3.14159265 * 0.05 * 0.05).epsilon(1e-4));
  // Heavier bodies are drawn darker (steel) than light ones (wood).
  d.density = 7850.f;
  rigid::BodyDef steel;
  REQUIRE(body_from_drag(d, w, {0.f, 0.f}, {1.f, 1.f}, 0.01f, steel, &why));
  CHECK(steel.color[0] < disk.color[0]);
}

TEST_CASE("Body tool: too small, outside the domain or massless drags are refused with the reason",
          "[render][rigid]") {
  rigid::RigidWorld w(rigid::Vec2d{0.0, -9.81}, 1.0, 10.0);
  BodyDraft d;
  rigid::BodyDef out;
  std::string why;
  d.a = {0.5f, 0.5f};
  d.b = {0.505f, 0.6f};
  CHECK_FALSE(body_from_drag(d, w, {0.f, 0.f}, {1.f, 1.f}, 0.02f, out, &why));
  CHECK(why.find("too small") != std::string::npos);
  d.b = {1.2f, 0.6f};
  CHECK_FALSE(body_from_drag(d, w, {0.f, 0.f}, {1.f, 1.f}, 0.02f, out, &why));
  CHECK(why.find("inside the domain") != std::string::npos);
  d.shape = 1;
  d.a = {0.05f, 0.5f};
  d.b = {0.05f, 0.6f};  // radius 0.1 reaches x = -0.05
  CHECK_FALSE(body_from_drag(d, w, {0.f, 0.f}, {1.f, 1.f}, 0.02f, out, &why));
  d.a = {0.5f, 0.5f};
  d.density = 0.f;
  CHECK_FALSE(body_from_drag(d, w, {0.f, 0.f}, {1.f, 1.f}, 0.02f, out, &why));
  CHECK(why.find("density") != std::string::npos);
}

TEST_CASE("Body force readout is the impulse over the time it took", "[render][rigid]") {
  const double j[3] = {0.2, -0.5, 0.01};
  const BodyForce f = mean_force(j, 0.01);
  CHECK(f.fx == Approx(20.0));
  CHECK(f.fy == Approx(-50.0));
  CHECK(f.torque == Approx(1.0));
  const BodyForce z = mean_force(j, 0.0);
  CHECK(z.fx == 0.0);
}

namespace {

float point_segment(Vec2 p, Vec2 a, Vec2 b) {
  const Vec2 d = b - a;
  const float l2 = dot(d, d);
  const float t = l2 > 0.f ? std::clamp(dot(p - a, d) / l2, 0.f, 1.f) : 0.f;
  return length(p - (a + t * d));
}

/// Distance between two segments (0 when they cross).
float segment_distance(Vec2 a, Vec2 b, Vec2 c, Vec2 d) {
  auto cross = [](Vec2 u, Vec2 v) { return u.x * v.y - u.y * v.x; };
  const float d1 = cross(b - a, c - a), d2 = cross(b - a, d - a), d3 = cross(d - c, a - c),
              d4 = cross(d - c, b - c);
  if (((d1 > 0.f && d2 < 0.f) || (d1 < 0.f && d2 > 0.f)) &&
      ((d3 > 0.f && d4 < 0.f) || (d3 < 0.f && d4 > 0.f)))
    return 0.f;
  return std::min({point_segment(a, c, d), point_segment(b, c, d), point_segment(c, a, b),
                   point_segment(d, a, b)});
}

}  // namespace

TEST_CASE(
    "Body force arrows: weight and force each straight from its own anchor, never overlapping",
    "[render][rigid]") {
  // Both used to start at the centre of mass: a force at an angle to the weight read as one
  // kinked line drawn over the weight arrow.
  const Vec2 com{2.f, 1.f};
  const float gap = 0.05f;
  for (const Vec2 weight : {Vec2{0.f, -0.6f}, Vec2{0.3f, -0.4f}, Vec2{0.f, 0.f}}) {
    for (int deg = 0; deg < 360; deg += 5) {
      for (const float len : {0.1f, 0.6f, 2.4f}) {
        INFO("weight (" << weight.x << ", " << weight.y << "), force at " << deg << " deg, length "
                        << len);
        const float r = static_cast<float>(deg) * 3.14159265f / 180.f;
        const Vec2 force{len * std::cos(r), len * std::sin(r)};
        const ForceArrows a = force_arrows(com, weight, force, gap);
        // Straight arrows with the given vectors.
        CHECK(length(a.weight.to - a.weight.from - weight) < 1e-6f);
        CHECK(length(a.force.to - a.force.from - force) < 1e-6f);
        // Anchors 2 gap apart across gravity, either side of the centre of mass, level with it.
        const Vec2 down = length(weight) > 0.f ? weight / length(weight) : Vec2{0.f, -1.f};
        CHECK(length(a.force.from - a.weight.from) == Approx(2.f * gap).epsilon(1e-4));
        CHECK(std::abs(dot(a.force.from - com, down)) < 1e-6f);
        CHECK(std::abs(dot(a.weight.from - com, down)) < 1e-6f);
        CHECK(length(0.5f * (a.force.from + a.weight.from) - com) < 1e-6f);
        // Never on top of each other: at least the gap between anchors apart everywhere.
        CHECK(segment_distance(a.weight.from, a.weight.to, a.force.from, a.force.to) >=
              2.f * gap - 1e-5f);
      }
    }
  }
  // A floating body: equal and opposite arrows side by side, the same length from the same level.
  const ForceArrows f = force_arrows(com, Vec2{0.f, -0.6f}, Vec2{0.f, 0.6f}, gap);
  CHECK(f.weight.from.y == f.force.from.y);
  CHECK(f.weight.to.y == Approx(com.y - 0.6f));
  CHECK(f.force.to.y == Approx(com.y + 0.6f));
}
