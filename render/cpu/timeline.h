/// The SGF timeline, GL-free (unit tested without a window): step <-> pixel
/// mapping, ruler ticks, hit-testing entry bars, dragging them, and which
/// groups are active at a step.
///
/// Steps are the simulation's 1-based step indices (SGF files name them). An
/// entry [s0, s1] applies during steps s0..s1; step k runs from time k-1 to
/// k, so its bar covers [s0 - 1, s1] on the step axis and the playhead (at
/// the number of steps done, k) lies on it exactly when s0 <= k <= s1.
#pragma once
#include <cstdint>
#include <vector>
#include "sim/core/vec.h"
#include "sim/sgf/sgf.h"

namespace ps {

/// The visible step range mapped onto a pixel span [x0, x0 + width].
struct TimelineView {
  double step0 = 0.0, step1 = 1000.0;
  float x0 = 0.f, width = 1.f;
  float step_to_x(double s) const;
  double x_to_step(float x) const;
  /// The nearest whole step at pixel x, never below 0.
  int64_t step_at(float x) const;
  /// Zooms by `factor` (> 1 zooms in) keeping the step under pixel x fixed;
  /// the span stays within [10, 1e12] steps and never starts below 0.
  void zoom_about(float x, float factor);
  /// Moves the range by a drag of dx pixels (content follows the cursor).
  void pan(float dx);
  /// Shows [0, 1.05 * max(last, current, 100)].
  void fit(int64_t last_step, int64_t current_step);
};

/// Ruler tick spacing in steps: the smallest 1, 2 or 5 x 10^k (k >= 0) whose
/// ticks are at least `min_px` apart.
double tick_spacing(const TimelineView& v, float min_px);

enum class BarPart : uint8_t { None = 0, Body, Start, End };

struct BarHit {
  int group = -1, entry = -1;
  BarPart part = BarPart::None;
};

/// Pixel extent of an entry's bar, widened to at least `min_px` about its centre.
void bar_extent(const TimelineView& v, const SgfEntry& e, float min_px, float& xa, float& xb);

/// The bar under `mouse`: group rows are `row_h` tall starting at `rows_top`
/// (row g spans [rows_top + g row_h, rows_top + (g+1) row_h)), bars fill a row
/// less `pad` above and below. Within `edge_px` of a bar's end the part is
/// Start / End (resize), else Body (move). Later entries win where bars overlap
/// (they are drawn on top).
BarHit hit_test_bar(const SgfSet& set, const TimelineView& v, float rows_top, float row_h,
                    float pad, Vec2 mouse, float edge_px = 5.f, float min_px = 4.f);

/// The entry after dragging `part` of `orig` by `dsteps` steps: Body moves
/// both ends (keeping the length, never before step 0), Start and End move
/// one end (never past the other, never below 0).
SgfEntry drag_entry(const SgfEntry& orig, BarPart part, int64_t dsteps);

/// Index of the first entry of `g` active at `step` (s0 <= step <= s1), or -1.
int active_entry(const SgfGroup& g, int64_t step);
/// Per group: 1 when one of its entries is active at `step`.
std::vector<uint8_t> active_groups(const SgfSet& set, int64_t step);
/// The last step any entry of the set reaches (0 when there is none).
int64_t last_sgf_step(const SgfSet& set);

}  // namespace ps
