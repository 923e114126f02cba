/// Selecting particles for SGF groups, GL-free (unit tested without a window):
/// point pick, box and lasso in world coordinates, add / remove modifiers, and
/// compact ID ranges ("12-40, 57") for listing and copying.
///
/// A selection is a sorted list of unique stable particle IDs (1-based, the
/// IDs SGF files name), so it survives deformation and reordering.
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "sim/core/names.h"
#include "sim/core/vec.h"
#include "sim/scene/simulation.h"

namespace ps {

/// How a new hit set combines with the current selection.
enum class SelectOp : uint8_t { Replace = 0, Add = 1, Remove = 2 };
inline constexpr NameTable<SelectOp, 3> kSelectOpNames{0, {"replace", "add", "remove"}};
const char* select_op_name(SelectOp op);
/// Shift adds, Ctrl (or Cmd) removes, neither replaces; Shift wins over Ctrl.
SelectOp select_op_from_mods(bool shift, bool ctrl);

/// IDs of particles whose centres lie in the rectangle spanned by corners a
/// and b (any order, edges included), sorted and unique.
/// Only the first `rows` rows count (a scene's MPM rows, before its grains'; the SGF
/// lists act on MPM particles).
std::vector<uint32_t> select_box(const ParticleTable& t, Vec2 a, Vec2 b, size_t rows = SIZE_MAX);

/// True when p is inside the closed polygon (crossing test, even-odd rule:
/// each loop of a lasso that crosses itself is inside). Edges are half-open
/// in y, so a point on a shared edge belongs to exactly one of two lassos.
bool point_in_polygon(const std::vector<Vec2>& poly, Vec2 p);

/// IDs of particles whose centres lie inside the lasso polygon (fewer than 3
/// points: none), sorted and unique.
std::vector<uint32_t> select_lasso(const ParticleTable& t, const std::vector<Vec2>& poly,
                                   size_t rows = SIZE_MAX);

/// Combines: Replace -> hits; Add -> union; Remove -> selection minus hits.
/// Both inputs sorted and unique; so is the result.
void apply_selection(std::vector<uint32_t>& selection, const std::vector<uint32_t>& hits,
                     SelectOp op);

/// Sorts and removes duplicates and the invalid ID 0.
void normalize_ids(std::vector<uint32_t>& ids);

/// "12-40, 57" for sorted unique IDs (runs of two or more consecutive IDs
/// become a range "a-b"; a run of exactly two is written "a, b").
/// `max_chars` > 0 cuts the text at a range boundary and appends
/// " ... (N more)" so long selections stay one readable line.
std::string format_id_ranges(const std::vector<uint32_t>& ids, size_t max_chars = 0);

/// Parses "12-40, 57" (commas and/or blanks between items; "a-b" inclusive,
/// a <= b; IDs 1 .. 2^32-2). Returns false and sets `error` (naming the item
/// and its 1-based character position) on bad input; `out` is sorted and unique.
bool parse_id_ranges(const std::string& text, std::vector<uint32_t>& out, std::string& error);

/// Rows of `t` whose ID is in the sorted list `ids` (in row order).
void rows_of_ids(const ParticleTable& t, const std::vector<uint32_t>& ids,
                 std::vector<uint32_t>& rows);

/// Mean velocity of the particles whose ID is (`inside` true) or is not
/// (`inside` false) in the sorted list `ids`; `count` receives how many.
Vec2 mean_velocity(const ParticleTable& t, const std::vector<uint32_t>& ids, bool inside,
                   size_t& count);

}  // namespace ps
