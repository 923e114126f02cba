// DEM view helpers (render/cpu/dem_view.*): bond stress normalised by the
// strengths and its colour, force-line widths, walls clipped to the view,
// a particle's bonds, the last break, and table rows -> DEM indices (pick/grab).
#include <catch2/catch.hpp>

#include <cmath>
#include "render/cpu/dem_view.h"
#include "render/cpu/picking.h"
#include "sim/dem/dem_build.h"
#include "sim/dem/dem_kernels.h"

using namespace ps;
using namespace ps::dem;

namespace {

// Two equal particles 2R apart, bonded, in a world without gravity.
void bonded_pair(DemWorld& w, double R = 0.01) {
  w.set_backend(make_dem_backend("cpu", 1));
  int m = w.add_material("rock", DemMaterial{2500, 1e7, 0.25, 0.5, 0.5, 0.0});
  w.solver.gravity = {0.0, 0.0};
  w.bond.E = 1e7;
  w.bond.nu = 0.25;
  w.bond.tensile_strength = 1e5;
  w.bond.compressive_strength = 4e5;
  w.bond.shear_strength = 2e5;
  for (int k = 0; k < 2; ++k) {
    double mass = sphere_mass(2500, R);
    size_t i = w.particles.add(Vec2d{0.5 + 2 * R * k, 0.5}, Vec2d{}, R, mass,
                               sphere_inertia(mass, R), static_cast<uint8_t>(m), 0, 1);
    (void)i;
  }
  REQUIRE(w.form_bonds() == 1);
}

}  // namespace

TEST_CASE("bond stress ratio is the largest stress over its strength", "[render]") {
  DemBondParams bp;
  bp.tensile_strength = 100.0;
  bp.compressive_strength = 400.0;
  bp.shear_strength = 200.0;
  BondStress s = normalise_bond_stress(bp, 50.0, -10.0, 20.0);
  CHECK(s.ratio == Approx(0.5));
  CHECK(s.critical == BondBreak::Tensile);
  s = normalise_bond_stress(bp, -100.0, 300.0, 20.0);
  CHECK(s.ratio == Approx(0.75));
  CHECK(s.critical == BondBreak::Compressive);
  s = normalise_bond_stress(bp, 10.0, -10.0, 180.0);
  CHECK(s.ratio == Approx(0.9));
  CHECK(s.critical == BondBreak::Shear);
  // Nothing positive: ratio 0, no critical mode.
  s = normalise_bond_stress(bp, -5.0, -5.0, 0.0);
  CHECK(s.ratio == 0.0);
  CHECK(s.critical == BondBreak::None);
  // At the strength the ratio is 1, as the solver's break check.
  s = normalise_bond_stress(bp, 100.0, 0.0, 0.0);
  CHECK(s.ratio == Approx(1.0));
  CHECK(bond_break_mode(bp, 100.0, 0.0, 0.0) == 1);
}

TEST_CASE("bond stress follows the stretch and the current bond E at once", "[render]") {
  DemWorld w;
  bonded_pair(w);
  CHECK(bond_stress(w, 0).ratio == Approx(0.0).margin(1e-12));
  // Stretch by 1e-4 m: sigma = E (d - L0) / L0 = 1e7 * 1e-4 / 0.02 = 5e4 Pa.
  w.particles.x[1].x += 1e-4;
  BondStress s = bond_stress(w, 0);
  CHECK(s.sigma == Approx(5e4).epsilon(1e-9));
  CHECK(s.sigma_c == Approx(-5e4).epsilon(1e-9));
  CHECK(s.tau == Approx(0.0).margin(1e-9));
  CHECK(s.ratio == Approx(0.5).epsilon(1e-9));
  CHECK(s.critical == BondBreak::Tensile);
  // Doubling E doubles the stress shown, with no step in between.
  w.bond.E = 2e7;
  CHECK(bond_stress(w, 0).ratio == Approx(1.0).epsilon(1e-9));
  // Compression is normalised by the compressive strength.
  w.bond.E = 1e7;
  w.particles.x[1].x -= 2e-4;
  s = bond_stress(w, 0);
  CHECK(s.sigma_c == Approx(5e4).epsilon(1e-9));
  CHECK(s.ratio == Approx(5e4 / 4e5).epsilon(1e-9));
  CHECK(s.critical == BondBreak::Compressive);
  // A broken bond carries nothing; the ratios list marks it with -1.
  std::vector<float> ratios;
  bond_stress_ratios(w, ratios);
  REQUIRE(ratios.size() == 1);
  CHECK(ratios[0] == Approx(0.125f));
  w.bonds.broken[0] = 1;
  CHECK(bond_stress(w, 0).ratio == 0.0);
  bond_stress_ratios(w, ratios);
  CHECK(ratios[0] == -1.f);
}

TEST_CASE("stretching a bond past its strength breaks it, and the last break is reported",
          "[render]") {
  DemWorld w;
  bonded_pair(w);
  CHECK(last_bond_break(w).step == 0);
  CHECK(last_bond_break(w).broken == 0);
  w.solver.dt = 1e-6;
  w.particles.x[1].x += 4.1e-4;  // sigma = 2.05e5 > 1e5 tensile strength
  REQUIRE(bond_stress(w, 0).ratio > 1.0);
  w.step(1);
  LastBreak lb = last_bond_break(w);
  CHECK(lb.broken == 1);
  CHECK(lb.step == 1);
  CHECK(lb.mode == BondBreak::Tensile);
  CHECK(lb.id_i == 1);
  CHECK(lb.id_j == 2);
  std::vector<uint32_t> b;
  bonds_of(w.bonds, 1, b);
  REQUIRE(b.size() == 1);
  CHECK(b[0] == 0);
  bonds_of(w.bonds, 5, b);
  CHECK(b.empty());
}

TEST_CASE("bond stress colours span the colour map over [0, hi]", "[render]") {
  auto eq = [](std::array<float, 3> a, std::array<float, 3> b) {
    return std::fabs(a[0] - b[0]) < 1e-6f && std::fabs(a[1] - b[1]) < 1e-6f &&
           std::fabs(a[2] - b[2]) < 1e-6f;
  };
  CHECK(eq(bond_stress_rgb(Colormap::Turbo, 0.f, 1.f), colormap_rgb(Colormap::Turbo, 0.f)));
  CHECK(eq(bond_stress_rgb(Colormap::Turbo, 1.f, 1.f), colormap_rgb(Colormap::Turbo, 1.f)));
  CHECK(eq(bond_stress_rgb(Colormap::Turbo, 0.05f, 0.1f), colormap_rgb(Colormap::Turbo, 0.5f)));
  // Above the top and below zero clamp; a zero range shows the bottom colour.
  CHECK(eq(bond_stress_rgb(Colormap::Turbo, 3.f, 1.f), colormap_rgb(Colormap::Turbo, 1.f)));
  CHECK(eq(bond_stress_rgb(Colormap::Turbo, -1.f, 1.f), colormap_rgb(Colormap::Turbo, 0.f)));
  CHECK(eq(bond_stress_rgb(Colormap::Turbo, 0.5f, 0.f), colormap_rgb(Colormap::Turbo, 0.f)));
}

TEST_CASE("contact-force widths are proportional to |F| up to the reference", "[render]") {
  ForceScale s;
  std::vector<float> scratch;
  CHECK(s.width_px(1.f, 6.f) == 0.f);  // no reference yet: nothing drawn
  std::vector<float> f;
  for (int k = 1; k <= 100; ++k) f.push_back(static_cast<float>(k));
  s.update(f, scratch);
  CHECK(s.ref == Approx(99.f));  // 99th percentile: one outlier does not set the scale
  CHECK(s.width_px(99.f, 6.f) == Approx(6.f));
  CHECK(s.width_px(500.f, 6.f) == Approx(6.f));  // capped
  const float w25 = s.width_px(24.75f, 6.f), w50 = s.width_px(49.5f, 6.f);
  CHECK(w50 - 0.5f == Approx(2.f * (w25 - 0.5f)));  // linear in |F|
  CHECK(s.width_px(1.f, 6.f) == 0.f);               // below 2 % of the reference: not drawn
  // Grows at once, shrinks slowly, ignores an empty frame.
  std::vector<float> big{1000.f};
  s.update(big, scratch);
  CHECK(s.ref == Approx(1000.f));
  std::vector<float> small{10.f};
  s.update(small, scratch);
  CHECK(s.ref < 1000.f);
  CHECK(s.ref > 900.f);
  std::vector<float> none;
  float before = s.ref;
  s.update(none, scratch);
  CHECK(s.ref == before);
}

TEST_CASE("walls: planes are clipped to the view box, segments kept", "[render]") {
  DemWall floor;
  floor.type = WallType::Plane;
  floor.a = {0.0, 0.0};
  floor.n = {0.0, 1.0};
  Vec2 a, b;
  REQUIRE(wall_segment(floor, Vec2{-0.1f, -0.1f}, Vec2{1.1f, 1.1f}, a, b));
  CHECK(std::fmin(a.x, b.x) == Approx(-0.1f));
  CHECK(std::fmax(a.x, b.x) == Approx(1.1f));
  CHECK(a.y == Approx(0.f).margin(1e-6));
  CHECK(b.y == Approx(0.f).margin(1e-6));
  DemWall slope;
  slope.type = WallType::Plane;
  slope.a = {0.5, 0.5};
  slope.n = {-std::sqrt(0.5), std::sqrt(0.5)};  // the line y = x
  REQUIRE(wall_segment(slope, Vec2{0.f, 0.f}, Vec2{1.f, 1.f}, a, b));
  CHECK(length(a - b) == Approx(std::sqrt(2.f)));
  CHECK(a.x == Approx(a.y).margin(1e-6));
  // Outside the box: nothing to draw.
  DemWall far = floor;
  far.a = {0.0, 5.0};
  CHECK_FALSE(wall_segment(far, Vec2{0.f, 0.f}, Vec2{1.f, 1.f}, a, b));
  DemWall seg;
  seg.type = WallType::Segment;
  seg.a = {0.2, 0.9};
  seg.b = {0.45, 0.55};
  REQUIRE(wall_segment(seg, Vec2{0.f, 0.f}, Vec2{1.f, 1.f}, a, b));
  CHECK(a.x == Approx(0.2f));
  CHECK(b.y == Approx(0.55f));
}

TEST_CASE("picked and brushed table rows map to DEM particles by ID", "[render]") {
  DemWorld w;
  int m = w.add_material("rock", DemMaterial{});
  w.domain_min = {0, 0};
  w.domain_max = {1, 1};
  BodySpec body;
  body.shape = Shape::Box;
  body.center = {0.5, 0.5};
  body.size = {0.2, 0.1};
  body.radius = 0.01;
  body.material = m;
  add_body(w, body);
  ParticleTable t;
  w.sync();
  // The table the window draws and picks from.
  t.id.assign(w.particles.id.begin(), w.particles.id.end());
  for (size_t i = 0; i < w.particles.size(); ++i) {
    t.x.push_back(static_cast<float>(w.particles.x[i].x));
    t.y.push_back(static_cast<float>(w.particles.x[i].y));
    t.radius.push_back(static_cast<float>(w.particles.radius[i]));
  }
  std::vector<uint32_t> rows{0, 3, 7}, idx;
  dem_rows_to_indices(t, w, rows, idx);
  REQUIRE(idx.size() == 3);
  for (size_t k = 0; k < 3; ++k) CHECK(w.particles.id[idx[k]] == t.id[rows[k]]);
  // A table in another order (or a stale row): found by ID; rows past the end dropped.
  std::swap(t.id[0], t.id[3]);
  rows = {0, 3, 100000};
  dem_rows_to_indices(t, w, rows, idx);
  REQUIRE(idx.size() == 2);
  CHECK(idx[0] == 3);
  CHECK(idx[1] == 0);
  // Centroid of the grabbed particles.
  idx = {0, 1};
  Vec2 c = dem_centroid(w, idx);
  CHECK(c.x == Approx(0.5 * (w.particles.x[0].x + w.particles.x[1].x)));
  CHECK(c.y == Approx(0.5 * (w.particles.x[0].y + w.particles.x[1].y)));
  idx.clear();
  CHECK(dem_centroid(w, idx).x == 0.f);
}

TEST_CASE("grabbing DEM particles through the mapped indices drags them along", "[render]") {
  DemWorld w;
  w.set_backend(make_dem_backend("cpu", 1));
  int m = w.add_material("rock", DemMaterial{});
  w.solver.gravity = {0.0, 0.0};
  BodySpec body;
  body.shape = Shape::Box;
  body.center = {0.5, 0.5};
  body.size = {0.1, 0.1};
  body.radius = 0.01;
  body.material = m;
  body.bonded = true;
  add_body(w, body);
  w.bond.E = 1e7;
  w.form_bonds();
  w.solver.dt = 0.5 * w.estimate_time_step().recommended;
  ParticleTable t;
  t.id.assign(w.particles.id.begin(), w.particles.id.end());
  for (size_t i = 0; i < w.particles.size(); ++i) {
    t.x.push_back(static_cast<float>(w.particles.x[i].x));
    t.y.push_back(static_cast<float>(w.particles.x[i].y));
    t.radius.push_back(static_cast<float>(w.particles.radius[i]));
  }
  std::vector<uint32_t> rows, idx;
  particles_within(t, Vec2{0.5f, 0.5f}, 0.03f, rows);  // the grab brush
  REQUIRE(rows.size() >= 3);
  dem_rows_to_indices(t, w, rows, idx);
  Vec2 c0 = dem_centroid(w, idx);
  w.grab_begin(idx, Vec2d{0.5, 0.5});
  w.grab_move(Vec2d{0.55, 0.5});
  for (int k = 0; k < 60 && !w.halted(); ++k) w.step(200);
  REQUIRE_FALSE(w.halted());
  w.grab_end();
  Vec2 c1 = dem_centroid(w, idx);
  CHECK(c1.x - c0.x > 0.03f);
  CHECK(std::fabs(c1.y - c0.y) < 0.02f);
}
