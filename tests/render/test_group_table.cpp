// The window's group table (render/cpu/group_table.h): the "group" colour mode's
// particle colours and legend and the SGF tab's list of groups take their names
// and colours from one place. Lesson 07 showed the scene's groups 0/1/2 in the
// palette's colours in the legend while the SGF tab listed "head", "right arm",
// ... in the set's colours.
#include <catch2/catch.hpp>

#include <filesystem>
#include "render/cpu/colormap.h"
#include "render/cpu/group_table.h"
#include "sim/scene/simulation.h"
#include "sim/sgf/sgf.h"

using namespace ps;
namespace fs = std::filesystem;

namespace {

ParticleTable table_of(const std::vector<uint32_t>& ids, const std::vector<uint16_t>& groups) {
  ParticleTable t;
  t.id = ids;
  t.group = groups;
  t.x.assign(ids.size(), 0.f);
  t.y.assign(ids.size(), 0.f);
  return t;
}

SgfGroup group(const char* name, std::array<float, 3> rgb, std::vector<uint32_t> ids) {
  SgfGroup g;
  g.name = name;
  for (int k = 0; k < 3; ++k) g.color[k] = rgb[static_cast<size_t>(k)];
  g.ids = std::move(ids);
  return g;
}

}  // namespace

TEST_CASE(
    "The group table: an SGF set's groups by name and colour, the first group of a particle, the rest in none",
    "[render][groups]") {
  SgfSet set;
  set.groups.push_back(group("head", {0.95f, 0.75f, 0.3f}, {1, 2}));
  set.groups.push_back(
      group("arm", {0.9f, 0.35f, 0.3f}, {2, 3, 99}));  // 2 is the head's; 99 is not in the scene
  set.groups.push_back(group("empty", {0.1f, 0.2f, 0.3f}, {}));
  const ParticleTable t = table_of({1, 2, 3, 4, 5}, {1, 1, 1, 2, 0});
  GroupTable g;
  g.build(set, t, 4);  // row 4 (ID 5) is after the rows the SGF lists act on
  REQUIRE(g.from_sgf());
  REQUIRE(g.rows().size() == 4);
  for (size_t k = 0; k < 3; ++k) {
    CHECK(g.rows()[k].name == sgf_group_row(set.groups[k]).name);
    CHECK(g.rows()[k].rgb == sgf_group_row(set.groups[k]).rgb);
  }
  CHECK(g.rows()[0].particles == 2);
  CHECK(g.rows()[1].particles == 1);
  CHECK(g.rows()[2].particles == 0);
  CHECK(g.rows()[3].name == "no SGF group");
  CHECK(g.rows()[3].particles == 2);
  CHECK(g.rgb(0) == g.rows()[0].rgb);
  CHECK(g.rgb(1) == g.rows()[0].rgb);  // the first group listing ID 2
  CHECK(g.rgb(2) == g.rows()[1].rgb);
  CHECK(g.rgb(3) == kNoGroupRgb);
  CHECK(g.rgb(4) == kNoGroupRgb);
  // The legend lists every SGF group as the SGF tab does (the empty one too), then "no SGF group".
  const std::vector<GroupRow> legend = group_legend(g);
  CHECK(group_rows_text(legend) == "head #f2bf4d|arm #e6594d|empty #1a334d|no SGF group #6b6e75");
  const std::vector<GroupRow> short_legend = group_legend(g, 3);
  REQUIRE(short_legend.size() == 3);
  CHECK(short_legend[2].name == "... 2 more groups");
}

TEST_CASE("The group table without SGF groups: the scene's group numbers in the palette",
          "[render][groups]") {
  const ParticleTable t = table_of({1, 2, 3, 4}, {1, 1, 2, 14});
  GroupTable g;
  g.build(SgfSet{}, t);
  REQUIRE_FALSE(g.from_sgf());
  REQUIRE(g.rows().size() == 15);
  CHECK(g.rows()[2].name == "group 2");
  CHECK(g.rgb(0) == group_rgb(1));
  CHECK(g.rgb(2) == group_rgb(2));
  CHECK(g.rgb(3) == group_rgb(14));
  // Only the groups with particles; the palette cycles at ten.
  const std::vector<GroupRow> legend = group_legend(g);
  REQUIRE(legend.size() == 3);
  CHECK(legend[0].name == "group 1");
  CHECK(legend[2].name == "group 14");
  // One palette: the scene's groups, groups inferred from CSVs and groups made in the window.
  for (unsigned k = 0; k < 12; ++k) CHECK(group_rgb(k) == group_palette_rgb(k));
  SgfList flat;
  SgfFile f;
  f.start = 1;
  f.end = 5;
  f.rows = {{1, 1.0, 0.0, 0.0}, {2, 0.0, 1.0, 0.0}};
  flat.files.push_back(f);
  const SgfSet inferred = sgf_infer_groups(flat);
  REQUIRE(inferred.groups.size() == 2);
  for (size_t k = 0; k < 2; ++k)
    CHECK(sgf_group_row(inferred.groups[k]).rgb == group_palette_rgb(k + 1));
}

TEST_CASE(
    "Lesson 07's dancer: the particle colours, the legend and the SGF tab's list are one table",
    "[render][groups]") {
  // The scene's own SGF folder, as the window's SGF tab loads it, and its particles.
  const std::string dir = (fs::path(PS_SOURCE_DIR) / "assets" / "scenes" / "dem_dance").string();
  const SgfSetLoadResult r = load_sgf_set(dir);
  REQUIRE(r.ok());
  REQUIRE(r.set.groups.size() >= 5);
  std::unique_ptr<Simulation> sim = load_simulation("dem_dance", {}, "cpu", 1);
  ParticleTable t;
  sim->table(t);
  GroupTable g;
  g.build(r.set, t);
  // The legend's rows are the SGF tab's rows (sgf_group_row of each group: "head", "right arm", ...).
  std::vector<GroupRow> tab;
  for (const SgfGroup& grp : r.set.groups) tab.push_back(sgf_group_row(grp));
  std::vector<GroupRow> legend = group_legend(g);
  if (!legend.empty() && legend.back().name == "no SGF group") legend.pop_back();
  CHECK(group_rows_text(legend) == group_rows_text(tab));
  CHECK(legend.front().name == "head");
  // Every particle of a group is drawn in its group's colour, not in a scene group's.
  size_t in_groups = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const size_t row = g.row_of(i);
    REQUIRE(row < g.rows().size());
    if (row < r.set.groups.size()) {
      ++in_groups;
      const SgfGroup& grp = r.set.groups[row];
      CHECK(std::find(grp.ids.begin(), grp.ids.end(), t.id[i]) != grp.ids.end());
      CHECK(g.rgb(i) == sgf_group_row(grp).rgb);
    }
  }
  CHECK(in_groups > t.size() / 2);
}
