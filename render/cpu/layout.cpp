#include "render/cpu/layout.h"

#include <algorithm>
#include <cstddef>

namespace ps {

SidePanels clamp_side_panels(float left, float right, float window_w, float share, float min_each) {
  const float cap = std::max(0.f, share * window_w);
  const float lo = std::min(std::max(0.f, min_each), 0.5f * cap);
  left = std::max(0.f, left);
  right = std::max(0.f, right);
  if (left + right > cap) {
    const float k = cap / (left + right);
    left *= k;
    right *= k;
  }
  left = std::max(left, lo);
  right = std::max(right, lo);
  // A panel raised to its minimum takes its room from the other one.
  if (left + right > cap) {
    if (left > right) left = cap - right;
    else right = cap - left;
  }
  return SidePanels{left, right};
}

int monitor_of_window(const DesktopRect& window, const std::vector<DesktopRect>& monitors) {
  if (monitors.empty()) return -1;
  const long cx = window.x + window.w / 2, cy = window.y + window.h / 2;
  for (size_t k = 0; k < monitors.size(); ++k) {
    const DesktopRect& m = monitors[k];
    if (cx >= m.x && cx < m.x + m.w && cy >= m.y && cy < m.y + m.h) return static_cast<int>(k);
  }
  int best = 0;
  long best_area = 0;
  for (size_t k = 0; k < monitors.size(); ++k) {
    const DesktopRect& m = monitors[k];
    const long w = std::min<long>(window.x + window.w, m.x + m.w) - std::max(window.x, m.x);
    const long h = std::min<long>(window.y + window.h, m.y + m.h) - std::max(window.y, m.y);
    if (w > 0 && h > 0 && w * h > best_area) {
      best_area = w * h;
      best = static_cast<int>(k);
    }
  }
  return best;
}

}  // namespace ps
