// Tool logic (render/cpu/tools.*): attract / repel forces, paint strokes and
// painted particles, without a window.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "render/cpu/picking.h"
#include "render/cpu/tools.h"
#include "sim/scene/simulation.h"

using namespace ps;

TEST_CASE("attract and repel tools give a point force only while pressed", "[render]") {
  ToolSettings s;
  s.radius = 0.1f;
  s.force = 80.f;
  s.tool = Tool::Attract;
  PointForce f = tool_point_force(s, Vec2{0.3f, 0.4f}, true);
  CHECK(f.active);
  CHECK(f.strength == 80.f);
  CHECK(f.radius == 0.1f);
  CHECK(f.pos == Vec2{0.3f, 0.4f});
  CHECK_FALSE(tool_point_force(s, Vec2{}, false).active);
  s.tool = Tool::Repel;
  CHECK(tool_point_force(s, Vec2{}, true).strength == -80.f);
  for (Tool t : {Tool::Pick, Tool::Grab, Tool::Paint}) {
    s.tool = t;
    CHECK_FALSE(tool_point_force(s, Vec2{}, true).active);
  }
}

TEST_CASE("a paint stroke fills the swept band on a lattice, once per site", "[render]") {
  PaintStroke st;
  std::vector<Vec2> out;
  const float h = 0.01f, r = 0.035f;
  const Vec2 a{0.2f, 0.5f}, b{0.6f, 0.55f};
  st.begin(a, h, r, Vec2{0.f, 0.f}, Vec2{1.f, 1.f}, nullptr, out);
  size_t first = out.size();
  // A disc of radius 3.5h holds about pi 3.5^2 = 38 lattice sites.
  CHECK(first >= 33);
  CHECK(first <= 45);
  // A fast mouse: two big jumps, then standing still (adds nothing).
  st.extend(0.5f * (a + b), out);
  st.extend(b, out);
  size_t n = out.size();
  st.extend(b, out);
  CHECK(out.size() == n);
  st.end();
  CHECK(st.emitted() == out.size());
  auto dist = [&](Vec2 p) {
    Vec2 d = b - a;
    float t = std::clamp(dot(p - a, d) / dot(d, d), 0.f, 1.f);
    return length(p - (a + t * d));
  };
  std::set<std::pair<long, long>> seen;
  for (Vec2 p : out) {
    long i = std::lround(p.x / h), j = std::lround(p.y / h);
    CHECK(std::fabs(p.x - i * h) < 1e-6f);  // on the lattice
    CHECK(seen.insert({i, j}).second);      // no duplicates
    CHECK(dist(p) <= r + 1e-5f);            // inside the swept band
  }
  // Gap-free: every lattice site well inside the band was emitted.
  size_t inside = 0;
  for (long j = 0; j <= 100; ++j)
    for (long i = 0; i <= 100; ++i)
      if (dist(Vec2{i * h, j * h}) < r - 1e-4f) {
        ++inside;
        CHECK(seen.count({i, j}) == 1);
      }
  CHECK(inside > 250);
}

TEST_CASE("painting skips occupied sites and stays inside the paintable region", "[render]") {
  ParticleTable existing;
  for (int i = 0; i < 5; ++i) {
    existing.x.push_back(0.5f + 0.01f * i);
    existing.y.push_back(0.5f);
  }
  existing.id = {1, 2, 3, 4, 5};
  PaintStroke st;
  std::vector<Vec2> out;
  st.begin(Vec2{0.5f, 0.5f}, 0.01f, 0.05f, Vec2{0.48f, 0.f}, Vec2{1.f, 0.52f}, &existing, out);
  for (Vec2 p : out) {
    CHECK(p.x >= 0.48f);
    CHECK(p.y <= 0.52f);
    for (size_t k = 0; k < existing.size(); ++k)
      CHECK(std::hypot(p.x - existing.x[k], p.y - existing.y[k]) > 0.005f);
  }
  CHECK_FALSE(out.empty());
}

TEST_CASE("painted particles join the world with new IDs and rest state", "[render]") {
  auto sim = load_simulation("mpm99", {}, "cpu", 1);
  MpmWorld& w = *sim->mpm();
  const size_t n0 = w.particles.size();
  const uint32_t last_id = w.particles.id.back();
  Vec2 lo, hi;
  paintable_region(w, lo, hi);
  CHECK(lo.x == Approx(w.grid.origin.x + w.grid.dx * w.solver.boundary_nodes));
  PaintStroke st;
  std::vector<Vec2> sites;
  float h = default_paint_spacing(w);
  st.begin(Vec2{0.5f, 0.9f}, h, 0.03f, lo, hi, nullptr, sites);
  st.extend(Vec2{0.7f, 0.9f}, sites);
  REQUIRE_FALSE(sites.empty());
  size_t added = add_painted_particles(w, sites, 0, h, Vec2{0.f, -1.f}, 7);
  CHECK(added == sites.size());
  REQUIRE(w.particles.size() == n0 + added);
  CHECK(w.particles.id[n0] == last_id + 1);
  CHECK(w.particles.id.back() == last_id + added);
  CHECK(w.particles.group[n0] == 7);
  CHECK(w.particles.mass[n0] == Approx(w.materials[0].density * h * h));
  CHECK(w.particles.v[n0].y == -1.f);
  // The world steps on with them.
  CHECK(sim->step(5).ok);
  CHECK(add_painted_particles(w, sites, 99, h, Vec2{}, 0) == 0);  // bad material: nothing added
}

TEST_CASE("grab tool: the selection follows the target", "[render]") {
  auto sim = load_simulation("pic_vs_apic", {}, "cpu", 1);
  MpmWorld& w = *sim->mpm();
  w.apply_preset(Preset::Translation, 0.f);
  ParticleTable t;
  sim->table(t);
  std::vector<uint32_t> rows;
  particles_within(t, Vec2{0.5f, 0.5f}, 0.05f, rows);
  REQUIRE(rows.size() > 50);
  w.grab_begin(rows, Vec2{0.5f, 0.5f});
  w.grab_move(Vec2{0.55f, 0.5f});
  REQUIRE(sim->step(100).ok);
  double cx = 0;
  for (uint32_t r : rows) cx += w.particles.x[r].x;
  cx /= rows.size();
  w.grab_end();
  CHECK(cx > 0.51);
}
