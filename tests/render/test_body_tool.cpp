// The Body tool (render/cpu/body_tool.h): a drag becomes a Box2D body with the
// dragged size, the tool's density, a fresh name; too small or outside the
// domain is refused with a reason; the force readout is impulse / time.
#include <catch2/catch.hpp>
#include "render/cpu/body_tool.h"

using namespace ps;

TEST_CASE("Body tool: a drag makes a box or disk of the dragged size and the tool's density", "[render][rigid]") {
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

TEST_CASE("Body tool: too small, outside the domain or massless drags are refused with the reason", "[render][rigid]") {
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
