// Selection for the SGF editor (render/cpu/selection.*): box, lasso (also
// concave), modifiers, ID range text both ways, velocities by group.
#include <catch2/catch.hpp>

#include <algorithm>
#include "render/cpu/selection.h"

using namespace ps;

namespace {

/// A 10 x 10 lattice of unit spacing, IDs 1 + i + 10 j, rows stored top row
/// first so that row order and ID order differ.
ParticleTable lattice() {
  ParticleTable t;
  for (int j = 9; j >= 0; --j)
    for (int i = 0; i < 10; ++i) {
      t.id.push_back(static_cast<uint32_t>(1 + i + 10 * j));
      t.x.push_back(static_cast<float>(i));
      t.y.push_back(static_cast<float>(j));
      t.vx.push_back(0.f);
      t.vy.push_back(0.f);
      t.radius.push_back(0.5f);
    }
  return t;
}

uint32_t id_at(int i, int j) { return static_cast<uint32_t>(1 + i + 10 * j); }

std::vector<uint32_t> sorted(std::vector<uint32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("box selection takes the centres inside, corners in any order", "[render]") {
  ParticleTable t = lattice();
  std::vector<uint32_t> a = select_box(t, Vec2{1.5f, 2.5f}, Vec2{3.5f, 4.5f});
  std::vector<uint32_t> b = select_box(t, Vec2{3.5f, 4.5f}, Vec2{1.5f, 2.5f});
  CHECK(a == b);
  CHECK(a == sorted({id_at(2, 3), id_at(3, 3), id_at(2, 4), id_at(3, 4)}));
  // Edges are included; a box off the body selects nothing.
  CHECK(select_box(t, Vec2{2.f, 2.f}, Vec2{2.f, 2.f}) == std::vector<uint32_t>{id_at(2, 2)});
  CHECK(select_box(t, Vec2{-5.f, -5.f}, Vec2{-1.f, -1.f}).empty());
}

TEST_CASE("point in polygon: convex, concave and self-crossing lassos", "[render]") {
  // Square.
  std::vector<Vec2> sq{{0.f, 0.f}, {4.f, 0.f}, {4.f, 4.f}, {0.f, 4.f}};
  CHECK(point_in_polygon(sq, Vec2{2.f, 2.f}));
  CHECK_FALSE(point_in_polygon(sq, Vec2{5.f, 2.f}));
  CHECK_FALSE(point_in_polygon(sq, Vec2{2.f, -0.5f}));
  // A "U" (concave): the notch between the arms is outside.
  std::vector<Vec2> u{{0.f, 0.f}, {6.f, 0.f}, {6.f, 6.f}, {4.f, 6.f},
                      {4.f, 2.f}, {2.f, 2.f}, {2.f, 6.f}, {0.f, 6.f}};
  CHECK(point_in_polygon(u, Vec2{1.f, 5.f}));        // left arm
  CHECK(point_in_polygon(u, Vec2{5.f, 5.f}));        // right arm
  CHECK(point_in_polygon(u, Vec2{3.f, 1.f}));        // base
  CHECK_FALSE(point_in_polygon(u, Vec2{3.f, 4.f}));  // the notch
  // Either orientation.
  std::vector<Vec2> ur(u.rbegin(), u.rend());
  CHECK_FALSE(point_in_polygon(ur, Vec2{3.f, 4.f}));
  CHECK(point_in_polygon(ur, Vec2{1.f, 5.f}));
  // A figure eight (self-crossing): both loops inside, even-odd.
  std::vector<Vec2> eight{{0.f, 0.f}, {2.f, 2.f}, {4.f, 0.f}, {4.f, 2.f}, {2.f, 0.f}, {0.f, 2.f}};
  CHECK(point_in_polygon(eight, Vec2{0.5f, 1.f}));
  CHECK(point_in_polygon(eight, Vec2{3.5f, 1.f}));
  // Degenerate lassos select nothing.
  CHECK_FALSE(point_in_polygon({{0.f, 0.f}, {1.f, 1.f}}, Vec2{0.5f, 0.5f}));
}

TEST_CASE("lasso selection with a concave lasso leaves the notch out", "[render]") {
  ParticleTable t = lattice();
  // A U over the lattice: arms x in (0.5, 2.5) and (6.5, 8.5), base y in (0.5, 2.5), top at y 8.5.
  std::vector<Vec2> u{{0.5f, 0.5f}, {8.5f, 0.5f}, {8.5f, 8.5f}, {6.5f, 8.5f},
                      {6.5f, 2.5f}, {2.5f, 2.5f}, {2.5f, 8.5f}, {0.5f, 8.5f}};
  std::vector<uint32_t> ids = select_lasso(t, u);
  CHECK(std::is_sorted(ids.begin(), ids.end()));
  auto has = [&](int i, int j) { return std::binary_search(ids.begin(), ids.end(), id_at(i, j)); };
  CHECK(has(1, 7));        // left arm
  CHECK(has(7, 7));        // right arm
  CHECK(has(4, 1));        // base
  CHECK_FALSE(has(4, 5));  // notch
  CHECK_FALSE(has(9, 9));  // outside
  // 2 arms of 2 x 6 plus the base 8 x 2.
  CHECK(ids.size() == 2 * 2 * 6 + 8 * 2);
  CHECK(select_lasso(t, {{0.f, 0.f}, {5.f, 5.f}}).empty());
}

TEST_CASE("modifiers: replace, add (shift), remove (ctrl)", "[render]") {
  CHECK(select_op_from_mods(false, false) == SelectOp::Replace);
  CHECK(select_op_from_mods(true, false) == SelectOp::Add);
  CHECK(select_op_from_mods(false, true) == SelectOp::Remove);
  CHECK(select_op_from_mods(true, true) == SelectOp::Add);
  std::vector<uint32_t> sel{1, 2, 3, 10};
  apply_selection(sel, {3, 4, 5}, SelectOp::Add);
  CHECK(sel == std::vector<uint32_t>{1, 2, 3, 4, 5, 10});
  apply_selection(sel, {2, 3, 99}, SelectOp::Remove);
  CHECK(sel == std::vector<uint32_t>{1, 4, 5, 10});
  apply_selection(sel, {7}, SelectOp::Replace);
  CHECK(sel == std::vector<uint32_t>{7});
  apply_selection(sel, {}, SelectOp::Replace);
  CHECK(sel.empty());
  // Box then shift-box then ctrl-box on the lattice.
  ParticleTable t = lattice();
  std::vector<uint32_t> s;
  apply_selection(s, select_box(t, Vec2{-0.5f, -0.5f}, Vec2{1.5f, 0.5f}),
                  SelectOp::Replace);  // 1, 2
  apply_selection(s, select_box(t, Vec2{-0.5f, 0.5f}, Vec2{1.5f, 1.5f}),
                  SelectOp::Add);  // + 11, 12
  apply_selection(s, select_box(t, Vec2{0.5f, -0.5f}, Vec2{1.5f, 1.5f}),
                  SelectOp::Remove);  // - 2, 12
  CHECK(s == std::vector<uint32_t>{1, 11});
}

TEST_CASE("ID ranges: compact text and parsing back", "[render]") {
  CHECK(format_id_ranges({}) == "");
  CHECK(format_id_ranges({57}) == "57");
  CHECK(format_id_ranges({12, 13}) == "12, 13");
  std::vector<uint32_t> ids;
  for (uint32_t i = 12; i <= 40; ++i) ids.push_back(i);
  ids.push_back(57);
  CHECK(format_id_ranges(ids) == "12-40, 57");
  CHECK(format_id_ranges({1, 2, 3, 5, 7, 8, 9, 10}) == "1-3, 5, 7-10");
  // Cut at a range boundary with a count of what is left.
  CHECK(format_id_ranges({1, 2, 3, 5, 7, 8, 9, 10}, 6) == "1-3, 5 ... (4 more)");

  std::vector<uint32_t> out;
  std::string err;
  REQUIRE(parse_id_ranges("12-40, 57", out, err));
  CHECK(out == ids);
  REQUIRE(parse_id_ranges("  5 3,3;1 - 2\n 9", out, err));
  CHECK(out == std::vector<uint32_t>{1, 2, 3, 5, 9});
  REQUIRE(parse_id_ranges("", out, err));
  CHECK(out.empty());
  // Round trip.
  std::vector<uint32_t> odd{1, 2, 3, 5, 7, 8, 9, 10, 4000000000u};
  REQUIRE(parse_id_ranges(format_id_ranges(odd), out, err));
  CHECK(out == odd);
  // Errors name the place.
  CHECK_FALSE(parse_id_ranges("12-x", out, err));
  CHECK(err.find("character 4") != std::string::npos);
  CHECK_FALSE(parse_id_ranges("40-12", out, err));
  CHECK(err.find("40-12") != std::string::npos);
  CHECK_FALSE(parse_id_ranges("0", out, err));
  CHECK_FALSE(parse_id_ranges("abc", out, err));
  CHECK(err.find("character 1") != std::string::npos);
  CHECK_FALSE(parse_id_ranges("1-4294967295", out, err));
}

TEST_CASE("rows of IDs and mean velocity inside / outside a group", "[render]") {
  ParticleTable t = lattice();
  for (size_t r = 0; r < t.size(); ++r) {
    t.vx[r] = t.id[r] <= 10 ? -2.f : 0.f;  // the bottom row moves left
    t.vy[r] = 0.f;
  }
  std::vector<uint32_t> group;
  for (uint32_t id = 1; id <= 10; ++id) group.push_back(id);
  std::vector<uint32_t> rows;
  rows_of_ids(t, group, rows);
  REQUIRE(rows.size() == 10);
  for (uint32_t r : rows) CHECK(t.id[r] <= 10);
  size_t n_in = 0, n_out = 0;
  Vec2 vin = mean_velocity(t, group, true, n_in);
  Vec2 vout = mean_velocity(t, group, false, n_out);
  CHECK(n_in == 10);
  CHECK(n_out == 90);
  CHECK(vin.x == Approx(-2.f));
  CHECK(vout.x == 0.f);
}

TEST_CASE(
    "box and lasso selection take only the first rows when told (MPM rows before a scene's grains)",
    "[render]") {
  // Rows are stored top row first: the first 50 rows are j = 9..5.
  ParticleTable t = lattice();
  const std::vector<uint32_t> all = select_box(t, Vec2{-1.f, -1.f}, Vec2{10.f, 10.f});
  CHECK(all.size() == 100);
  const std::vector<uint32_t> top = select_box(t, Vec2{-1.f, -1.f}, Vec2{10.f, 10.f}, 50);
  REQUIRE(top.size() == 50);
  for (uint32_t id : top) CHECK((id - 1) / 10 >= 5);
  const std::vector<Vec2> lasso{{-1.f, -1.f}, {10.f, -1.f}, {10.f, 10.f}, {-1.f, 10.f}};
  CHECK(select_lasso(t, lasso, 50) == top);
  CHECK(select_lasso(t, lasso, 0).empty());
}
