/// The particle groups the window shows, as one table: the "group" colour
/// mode's particle colours and its legend, and the SGF tab's list of groups,
/// all take their names and colours from here (sgf_group_row), so a class
/// sees "head" in the same colour in the legend, on the body and in the SGF
/// tab. GL-free (tests/render/test_group_table.cpp).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>
#include "sim/core/particle_table.h"
#include "sim/sgf/sgf.h"

namespace ps {

struct GroupRow {
  std::string name;
  std::array<float, 3> rgb{};  ///< linear 0..1
  size_t particles = 0;        ///< particles of the table in this group
};

/// An SGF group as every view shows it: its name and its colour.
GroupRow sgf_group_row(const SgfGroup& g);

/// Colour of the particles in no SGF group (a neutral grey).
constexpr std::array<float, 3> kNoGroupRgb = {0.42f, 0.43f, 0.46f};

class GroupTable {
 public:
  /// With SGF groups in `set`: one row per SGF group (its name and colour, in
  /// the set's order), then "no SGF group" for the particles in none (only
  /// when there are such). A particle in several groups takes the first. Only
  /// the first `sgf_rows` table rows can be in an SGF group (the rows the SGF
  /// lists act on; a mixed scene's grains after them are in none).
  /// Without SGF groups: the scene's group numbers, "group 0", "group 1", ...
  /// in group_rgb's palette.
  void build(const SgfSet& set, const ParticleTable& t, size_t sgf_rows = SIZE_MAX);
  const std::vector<GroupRow>& rows() const { return rows_; }
  bool from_sgf() const { return sgf_; }
  /// The colour of particle row i of the table it was built from.
  std::array<float, 3> rgb(size_t i) const { return rows_[row_of_[i]].rgb; }
  /// Index into rows() of particle row i.
  size_t row_of(size_t i) const { return row_of_[i]; }
  size_t size() const { return row_of_.size(); }

 private:
  std::vector<GroupRow> rows_;
  std::vector<uint32_t> row_of_;  ///< per particle row
  std::vector<uint32_t> by_id_;   ///< scratch: ID -> SGF group + 1
  bool sgf_ = false;
};

/// What the legend lists: the table's rows with particles (all of an SGF set's
/// groups, as the SGF tab lists them), at most `max_rows`, the last one then
/// saying how many more there are ("... 3 more groups"; for scene groups, whose
/// palette cycles, "... (colours repeat)").
std::vector<GroupRow> group_legend(const GroupTable& t, size_t max_rows = 12);

/// "head #f2bf4d|right arm #e6594d|...": rows as the verbose log gives them
/// (the legend's and the SGF tab's, which tests compare).
std::string group_rows_text(const std::vector<GroupRow>& rows);

}  // namespace ps
