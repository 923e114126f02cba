#include "render/cpu/timeline.h"

#include <algorithm>
#include <cmath>

namespace ps {

float TimelineView::step_to_x(double s) const {
  const double span = step1 - step0;
  return x0 + static_cast<float>((s - step0) / (span > 0.0 ? span : 1.0) * width);
}

double TimelineView::x_to_step(float x) const {
  return step0 + static_cast<double>(x - x0) / (width > 0.f ? width : 1.f) * (step1 - step0);
}

int64_t TimelineView::step_at(float x) const {
  double s = std::round(x_to_step(x));
  return s < 0.0 ? 0 : static_cast<int64_t>(s);
}

void TimelineView::zoom_about(float x, float factor) {
  if (!(factor > 0.f)) return;
  const double at = x_to_step(x);
  double span = (step1 - step0) / factor;
  span = std::clamp(span, 10.0, 1e12);
  const double t = width > 0.f ? static_cast<double>(x - x0) / width : 0.0;
  step0 = at - t * span;
  if (step0 < 0.0) step0 = 0.0;
  step1 = step0 + span;
}

void TimelineView::pan(float dx) {
  const double span = step1 - step0;
  double d = -static_cast<double>(dx) / (width > 0.f ? width : 1.f) * span;
  if (step0 + d < 0.0) d = -step0;
  step0 += d;
  step1 = step0 + span;
}

void TimelineView::fit(int64_t last_step, int64_t current_step) {
  const int64_t m = std::max<int64_t>({last_step, current_step, 100});
  step0 = 0.0;
  step1 = 1.05 * static_cast<double>(m);
}

double tick_spacing(const TimelineView& v, float min_px) {
  const double span = std::max(1e-9, v.step1 - v.step0);
  const double px_per_step = v.width / span;
  double base = 1.0;
  while (true) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double s = m * base;
      if (s * px_per_step >= min_px) return s;
    }
    base *= 10.0;
    if (base > 1e15) return base;
  }
}

void bar_extent(const TimelineView& v, const SgfEntry& e, float min_px, float& xa, float& xb) {
  xa = v.step_to_x(static_cast<double>(e.s0) - 1.0);
  xb = v.step_to_x(static_cast<double>(e.s1));
  if (xb - xa < min_px) {
    const float c = 0.5f * (xa + xb);
    xa = c - 0.5f * min_px;
    xb = c + 0.5f * min_px;
  }
}

BarHit hit_test_bar(const SgfSet& set, const TimelineView& v, float rows_top, float row_h,
                    float pad, Vec2 mouse, float edge_px, float min_px) {
  BarHit hit;
  if (row_h <= 0.f || mouse.y < rows_top) return hit;
  const int g = static_cast<int>(std::floor((mouse.y - rows_top) / row_h));
  if (g < 0 || g >= static_cast<int>(set.groups.size())) return hit;
  const float y0 = rows_top + g * row_h + pad, y1 = rows_top + (g + 1) * row_h - pad;
  if (mouse.y < y0 || mouse.y >= y1) return hit;
  const SgfGroup& grp = set.groups[static_cast<size_t>(g)];
  for (int e = static_cast<int>(grp.entries.size()) - 1; e >= 0; --e) {
    float xa, xb;
    bar_extent(v, grp.entries[static_cast<size_t>(e)], min_px, xa, xb);
    if (mouse.x < xa - 1.f || mouse.x > xb + 1.f) continue;
    hit.group = g;
    hit.entry = e;
    // Narrow bars: the edge zones must leave room to move the bar.
    const float edge = std::min(edge_px, 0.3f * (xb - xa));
    if (mouse.x <= xa + edge)
      hit.part = BarPart::Start;
    else if (mouse.x >= xb - edge)
      hit.part = BarPart::End;
    else
      hit.part = BarPart::Body;
    return hit;
  }
  return hit;
}

SgfEntry drag_entry(const SgfEntry& orig, BarPart part, int64_t dsteps) {
  SgfEntry e = orig;
  switch (part) {
    case BarPart::Body: {
      int64_t d = std::max(dsteps, -orig.s0);
      e.s0 = orig.s0 + d;
      e.s1 = orig.s1 + d;
      break;
    }
    case BarPart::Start: e.s0 = std::clamp<int64_t>(orig.s0 + dsteps, 0, orig.s1); break;
    case BarPart::End: e.s1 = std::max<int64_t>(orig.s1 + dsteps, orig.s0); break;
    case BarPart::None: break;
  }
  return e;
}

int active_entry(const SgfGroup& g, int64_t step) {
  for (size_t e = 0; e < g.entries.size(); ++e)
    if (g.entries[e].s0 <= step && step <= g.entries[e].s1) return static_cast<int>(e);
  return -1;
}

std::vector<uint8_t> active_groups(const SgfSet& set, int64_t step) {
  std::vector<uint8_t> out(set.groups.size(), 0);
  for (size_t g = 0; g < set.groups.size(); ++g)
    out[g] = active_entry(set.groups[g], step) >= 0 ? 1 : 0;
  return out;
}

int64_t last_sgf_step(const SgfSet& set) {
  int64_t m = 0;
  for (const SgfGroup& g : set.groups)
    for (const SgfEntry& e : g.entries) m = std::max(m, e.s1);
  return m;
}

}  // namespace ps
