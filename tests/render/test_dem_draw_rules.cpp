// The DEM drawing rules shared by the host path and the CUDA-GL interop
// (render/cpu/dem_draw_rules.h), the bond index and the selected particle
// (render/cpu/dem_view.h), and the bond colour table the device uses.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include "render/cpu/camera.h"
#include "render/cpu/dem_draw_rules.h"
#include "render/cpu/dem_view.h"
#include "sim/scene/dem_scene.h"

using namespace ps;
using namespace ps::dem;

namespace {

std::string scene_path(const char* name) {
  return std::string(PS_SOURCE_DIR) + "/assets/scenes/" + name;
}

/// A shipped bonded scene on the CPU, stepped a little.
void soft_body(DemWorld& w, int steps) {
  load_dem_scene_file(scene_path("dem_soft_body.json"), w);
  w.set_backend(make_dem_backend("cpu", 2));
  REQUIRE(w.step(steps).ok);
}

}  // namespace

TEST_CASE("a line's two triangles are ShapeBatch's", "[render]") {
  // The formula ShapeBatch::line had before it called line_triangles.
  const Vec2 a{0.25f, 0.5f}, b{0.75f, 0.625f};
  const float width = 2.5f, px = 1.f / 640.f;
  Vec2 d = b - a;
  float len = length(d);
  Vec2 n = perp(d / len) * (0.5f * width * px);
  const Vec2 want[6] = {a - n, b - n, b + n, a - n, b + n, a + n};
  Vec2 got[6];
  REQUIRE(line_triangles(a, b, width, px, got));
  for (int k = 0; k < 6; ++k) {
    CHECK(got[k].x == want[k].x);
    CHECK(got[k].y == want[k].y);
  }
  CHECK_FALSE(line_triangles(a, a, width, px, got));  // nothing for a zero-length line
}

TEST_CASE("bonds are drawn only from kBondMinPx pixels of rest length on screen", "[render]") {
  // A bond 0.01 m long: 1 px at 100 px/m (hidden), 1.5 px at 150 px/m (drawn).
  CHECK_FALSE(bond_long_enough(0.01, 100.f));
  CHECK_FALSE(bond_long_enough(0.01, 149.f));
  CHECK(bond_long_enough(0.01, 150.f));
  CHECK(bond_long_enough(0.01, 2000.f));
  // A million-particle specimen framed whole: its bonds are under a pixel.
  const double L0_1M = 0.01 / 45.0;  // dem_soft_body --refine 45
  CHECK_FALSE(bond_long_enough(L0_1M, 600.f));
  CHECK(bond_long_enough(L0_1M, 600.f * 12.f));  // zoomed in 12 times: 1.6 px
}

TEST_CASE("a segment is skipped only when it lies wholly beyond one edge of the window",
          "[render]") {
  BondView v;
  v.lo = Vec2{0.f, 0.f};
  v.hi = Vec2{1.f, 1.f};
  const float m = 0.01f;
  CHECK(segment_in_view(Vec2{0.2f, 0.2f}, Vec2{0.3f, 0.3f}, m, v));        // inside
  CHECK(segment_in_view(Vec2{-0.5f, 0.5f}, Vec2{1.5f, 0.5f}, m, v));       // across
  CHECK(segment_in_view(Vec2{-0.5f, -0.5f}, Vec2{1.5f, 1.5f}, m, v));      // diagonal across
  CHECK(segment_in_view(Vec2{-0.005f, 0.5f}, Vec2{-0.008f, 0.6f}, m, v));  // within the margin
  CHECK_FALSE(segment_in_view(Vec2{-0.5f, 0.5f}, Vec2{-0.1f, 0.6f}, m, v));
  CHECK_FALSE(segment_in_view(Vec2{1.5f, 0.5f}, Vec2{1.1f, 0.6f}, m, v));
  CHECK_FALSE(segment_in_view(Vec2{0.5f, -0.5f}, Vec2{0.6f, -0.1f}, m, v));
  CHECK_FALSE(segment_in_view(Vec2{0.5f, 1.5f}, Vec2{0.6f, 1.1f}, m, v));
}

TEST_CASE("bond widths and a broken bond's dashes are the overlay's formulas", "[render]") {
  const double Ri = 0.005, Rj = 0.004;
  for (float scale : {50.f, 400.f, 700.f, 3000.f}) {
    // As dem_draw.cpp computed them before the rules were shared.
    const float w = std::clamp(0.3f * static_cast<float>(std::min(Ri, Rj)) * scale, 1.f, 3.5f);
    CHECK(bond_width_px(Ri, Rj, scale) == w);
    CHECK(broken_bond_width_px(Ri, Rj, scale) == std::max(1.f, 0.8f * w));
  }
  const Vec2 a{0.1f, 0.2f}, e{0.125f, 0.21f};
  const float len = length(e - a), scale = 3000.f;
  const double L0 = 0.01;
  const int dashes = std::max(1, static_cast<int>(len * scale / 9.f));
  REQUIRE(broken_bond_dashes(len, L0, scale) == dashes);
  REQUIRE(dashes > 1);
  const Vec2 step = (e - a) / static_cast<float>(dashes);
  for (int q = 0; q < dashes; ++q) {
    Vec2 s0, s1;
    broken_bond_dash(a, e, dashes, q, s0, s1);
    const Vec2 w0 = a + static_cast<float>(q) * step + 0.f * step;
    CHECK(s0.x == w0.x);
    CHECK(s0.y == w0.y);
    const Vec2 w1 = w0 + (5.f / 9.f) * step;
    CHECK(s1.x == w1.x);
    CHECK(s1.y == w1.y);
  }
  // One dash for a short bond, none once the particles are three rest lengths apart.
  CHECK(broken_bond_dashes(len, L0, 10.f) == 1);
  CHECK(broken_bond_dashes(0.031f, L0, scale) == 0);
  CHECK(broken_bond_dashes(0.f, L0, scale) == 0);
}

TEST_CASE("the bond colour table is the colour map within one level", "[render]") {
  for (int c = 0; c < kColormapCount; ++c) {
    std::vector<uint32_t> lut;
    bond_color_lut(static_cast<Colormap>(c), lut);
    REQUIRE(lut.size() == static_cast<size_t>(kDemBondLut));
    int worst = 0;
    for (int s = 0; s <= 1000; ++s) {
      const float ratio = 0.37f * static_cast<float>(s) / 1000.f, hi = 0.37f;
      const float t = bond_stress_t(ratio, hi);
      const uint32_t dev = lut[static_cast<size_t>(
          static_cast<int>(t * static_cast<float>(kDemBondLut - 1) + 0.5f))];
      const std::array<float, 3> host = bond_stress_rgb(static_cast<Colormap>(c), ratio, hi);
      for (int k = 0; k < 3; ++k) {
        const int h = static_cast<int>(
            std::lround(std::clamp(host[static_cast<size_t>(k)], 0.f, 1.f) * 255.f));
        worst = std::max(worst, std::abs(h - static_cast<int>((dev >> (8 * k)) & 255u)));
      }
      CHECK((dev >> 24) == 255u);
    }
    INFO(colormap_name(static_cast<Colormap>(c)));
    CHECK(worst <= 1);
  }
  // Out of range, infinite and NaN ratios sit at the ends, as on the host.
  CHECK(bond_stress_t(2.f, 1.f) == 1.f);
  CHECK(bond_stress_t(-1.f, 1.f) == 0.f);
  CHECK(bond_stress_t(1e30f, 1e-30f) == 1.f);
  CHECK(bond_stress_t(std::nanf(""), 1.f) == 0.f);
}

TEST_CASE("the bond index gives each particle's bonds as the full pass does", "[render]") {
  DemWorld w;
  soft_body(w, 20);
  DemBondIndex idx;
  idx.update(w);
  double max_l0 = 0.0;
  for (double l : w.bonds.length0) max_l0 = std::max(max_l0, l);
  CHECK(idx.max_length0 == max_l0);
  std::vector<uint32_t> a, b;
  for (uint32_t i = 0; i < w.particles.size(); ++i) {
    bonds_of(w.bonds, i, a);
    idx.bonds_of(i, b);
    REQUIRE(a == b);
  }
  idx.bonds_of(static_cast<uint32_t>(w.particles.size()), b);
  CHECK(b.empty());
  // A new topology (the host arrays became the state) is picked up.
  w.bond.contact_radius_multiplier = 1.2;
  w.form_bonds();
  idx.update(w);
  for (uint32_t i = 0; i < w.particles.size(); i += 7) {
    bonds_of(w.bonds, i, a);
    idx.bonds_of(i, b);
    REQUIRE(a == b);
  }
}

TEST_CASE("the selected particle from the host arrays carries its bonds' stresses", "[render]") {
  DemWorld w;
  soft_body(w, 200);
  DemBondIndex idx;
  idx.update(w);
  const uint32_t i = static_cast<uint32_t>(w.particles.size() / 2);
  DemSelected sel;
  dem_selected_from_host(w, idx, i, sel);
  REQUIRE(sel.valid);
  CHECK(sel.index == i);
  CHECK(sel.x == w.particles.x[i]);
  CHECK(sel.v == w.particles.v[i]);
  CHECK(sel.omega == w.particles.omega[i]);
  std::vector<uint32_t> ks;
  bonds_of(w.bonds, i, ks);
  REQUIRE(sel.bonds.size() == ks.size());
  REQUIRE(!ks.empty());
  CHECK(sel.bond_total == static_cast<int>(ks.size()));
  for (size_t q = 0; q < ks.size(); ++q) {
    const DemSelectedBond& sb = sel.bonds[q];
    CHECK(sb.bond == ks[q]);
    CHECK(sb.other == (w.bonds.i[ks[q]] == i ? w.bonds.j[ks[q]] : w.bonds.i[ks[q]]));
    CHECK(sb.other_x == w.particles.x[sb.other]);
    const BondStress st = bond_stress(w, ks[q]);
    CHECK(sb.stress.ratio == st.ratio);
    CHECK(sb.stress.sigma == st.sigma);
    CHECK(sb.stress.tau == st.tau);
  }
  dem_selected_from_host(w, idx, static_cast<uint32_t>(w.particles.size()), sel);
  CHECK_FALSE(sel.valid);
}

TEST_CASE("a classroom-sized specimen framed whole draws every bond, as before the on-screen rule",
          "[render]") {
  // dem_soft_body (475 particles, 1344 bonds) framed in a 1280x720 window with
  // the side panels (the scene about 560 px wide): every intact bond passes
  // both tests, so the overlay holds what it held before the rule.
  DemWorld w;
  soft_body(w, 100);
  Camera2D cam;
  cam.set_window(1280.f, 720.f, 1.f);
  cam.set_viewport(ScreenRect{360.f, 0.f, 560.f, 720.f});
  cam.fit(Vec2{0.f, 0.f}, Vec2{1.f, 1.f});
  BondView v;
  v.scale = cam.scale();
  v.px = 1.f / v.scale;
  const Vec2 p0 = cam.screen_to_world(Vec2{0.f, 0.f}),
             p1 = cam.screen_to_world(Vec2{1280.f, 720.f});
  v.lo = Vec2{std::min(p0.x, p1.x), std::min(p0.y, p1.y)};
  v.hi = Vec2{std::max(p0.x, p1.x), std::max(p0.y, p1.y)};
  size_t drawn = 0;
  for (size_t k = 0; k < w.bonds.size(); ++k) {
    const uint32_t i = w.bonds.i[k], j = w.bonds.j[k];
    const Vec2 a = to_f(w.particles.x[i]), e = to_f(w.particles.x[j]);
    const float wpx = bond_width_px(w.particles.radius[i], w.particles.radius[j], v.scale);
    if (bond_long_enough(w.bonds.length0[k], v.scale) &&
        segment_in_view(a, e, (0.5f * wpx + 1.f) * v.px, v))
      ++drawn;
  }
  INFO("scale " << v.scale << " px/m, bond " << w.bonds.length0[0] * v.scale << " px");
  CHECK(drawn == w.bonds.size());
  // The same specimen refined 45 times, framed the same way: no bond is long enough.
  CHECK_FALSE(bond_long_enough(w.bonds.length0[0] / 45.0, v.scale));
}

TEST_CASE("a DEM particle's speed is the host table's", "[render]") {
  const Vec2d v{0.123456789012345, -2.98765432109876};
  const float vx = static_cast<float>(v.x), vy = static_cast<float>(v.y);
  CHECK(dem_display_speed(v) == std::sqrt(vx * vx + vy * vy));
}
