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

Tiling choose_tiling(int n, float w, float h, float aspect, float gap, float band) {
  n = std::max(1, n);
  aspect = aspect > 0.f ? aspect : 1.f;
  Tiling best;
  bool have = false;
  for (int cols = 1; cols <= n; ++cols) {
    const int rows = (n + cols - 1) / cols;
    if ((rows - 1) * cols >= n) continue;  // an empty row: the same as fewer rows, smaller
    const float pw = std::max(0.f, (w - gap * static_cast<float>(cols - 1)) / static_cast<float>(cols));
    const float ph = std::max(0.f, (h - gap * static_cast<float>(rows - 1)) / static_cast<float>(rows) - band);
    // The scene fitted into the pane below its band: limited by the width or the height.
    Tiling t;
    t.rows = rows;
    t.cols = cols;
    t.scene_w = std::min(pw, ph * aspect);
    t.scene_h = t.scene_w / aspect;
    if (!have) {
      best = t;
      have = true;
      continue;
    }
    const float a = t.scene_w * t.scene_h, b = best.scene_w * best.scene_h;
    const float tol = 1e-3f * std::max(a, b);
    const int empty = rows * cols - n, best_empty = best.rows * best.cols - n;
    if (a > b + tol || (a >= b - tol && (empty < best_empty || (empty == best_empty && cols > best.cols)))) best = t;
  }
  return best;
}

ScreenRect tile_rect(const Tiling& t, const ScreenRect& area, float gap, int k) {
  const int cols = std::max(1, t.cols), rows = std::max(1, t.rows);
  const int cx = k % cols, cy = k / cols;
  const float w = (area.w - gap * static_cast<float>(cols - 1)) / static_cast<float>(cols);
  const float h = (area.h - gap * static_cast<float>(rows - 1)) / static_cast<float>(rows);
  return ScreenRect{area.x + static_cast<float>(cx) * (w + gap), area.y + static_cast<float>(cy) * (h + gap), w, h};
}

}  // namespace ps
