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
    if (left > right)
      left = cap - right;
    else
      right = cap - left;
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
    const float pw =
        std::max(0.f, (w - gap * static_cast<float>(cols - 1)) / static_cast<float>(cols));
    const float ph =
        std::max(0.f, (h - gap * static_cast<float>(rows - 1)) / static_cast<float>(rows) - band);
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
    if (a > b + tol ||
        (a >= b - tol && (empty < best_empty || (empty == best_empty && cols > best.cols))))
      best = t;
  }
  return best;
}

ScreenRect tile_rect(const Tiling& t, const ScreenRect& area, float gap, int k) {
  const int cols = std::max(1, t.cols), rows = std::max(1, t.rows);
  const int cx = k % cols, cy = k / cols;
  const float w = (area.w - gap * static_cast<float>(cols - 1)) / static_cast<float>(cols);
  const float h = (area.h - gap * static_cast<float>(rows - 1)) / static_cast<float>(rows);
  return ScreenRect{area.x + static_cast<float>(cx) * (w + gap),
                    area.y + static_cast<float>(cy) * (h + gap), w, h};
}

float overlay_band_height(const std::vector<Vec2>& boxes, float width, float gap) {
  if (boxes.empty()) return 0.f;
  // Row by row from the bottom: the status line at the left of the first.
  float total = 0.f, row_h = boxes[0].y, used = boxes[0].x + 2.f * gap;
  for (size_t k = 1; k < boxes.size(); ++k) {
    const Vec2 b = boxes[k];
    if (used + b.x + gap > width && used > 0.f) {
      total += row_h + gap;
      row_h = 0.f;
      used = gap;
    }
    used += b.x + gap;
    row_h = std::max(row_h, b.y);
  }
  return total + row_h + 2.f * gap;
}

OverlayDock split_overlay_dock(const ScreenRect& area, const std::vector<Vec2>& boxes, float gap,
                               const std::function<float(const ScreenRect&)>& drawn) {
  OverlayDock band;
  band.content = area;
  band.dock = ScreenRect{area.x, area.y + area.h, area.w, 0.f};
  if (boxes.empty()) return band;
  const float bh = std::min(overlay_band_height(boxes, area.w, gap), 0.5f * area.h);
  band.content.h = area.h - bh;
  band.dock = ScreenRect{area.x, area.y + band.content.h, area.w, bh};
  // The column: as wide as the widest box, as tall as the boxes stacked.
  float cw = 0.f, ch = gap;
  for (const Vec2& b : boxes) {
    cw = std::max(cw, b.x);
    ch += b.y + gap;
  }
  cw += 2.f * gap;
  if (ch > area.h || cw > 0.6f * area.w) return band;
  OverlayDock col;
  col.column = true;
  col.content = ScreenRect{area.x, area.y, area.w - cw, area.h};
  col.dock = ScreenRect{area.x + area.w - cw, area.y, cw, area.h};
  return drawn(col.content) > drawn(band.content) ? col : band;
}

void OverlayFlow::begin_measure(float gap) {
  begin(OverlayDock{}, gap);
  measuring_ = true;
}

void OverlayFlow::begin(const OverlayDock& dock, float gap) {
  measuring_ = false;
  dock_ = dock;
  gap_ = gap;
  boxes_.clear();
  first_row_ = true;
  row_h_ = 0.f;
  first_row_left_ = dock.dock.x + gap;
  x_ = dock.dock.x + dock.dock.w - gap;  // the row's free right edge (band)
  y_ = dock.dock.y + dock.dock.h - gap;  // the bottom of the next box (column), of the row (band)
}

Vec2 OverlayFlow::place(Vec2 size) {
  const ScreenRect& d = dock_.dock;
  boxes_.push_back(size);
  if (measuring_) return Vec2{-1e6f, -1e6f};
  if (boxes_.size() == 1) {  // the status line: bottom left of the band, top of the column
    if (dock_.column) return Vec2{d.x + gap_, d.y + gap_};
    const Vec2 at{d.x + gap_, y_ - size.y};
    row_h_ = size.y;
    first_row_left_ = at.x + size.x + gap_;
    return at;
  }
  if (dock_.column) {
    const Vec2 at{d.x + d.w - gap_ - size.x, y_ - size.y};
    y_ -= size.y + gap_;
    return at;
  }
  const float left = first_row_ ? first_row_left_ : d.x + gap_;
  if (x_ - size.x < left && x_ < d.x + d.w - gap_) {  // a new row above (unless the row is empty)
    y_ -= row_h_ + gap_;
    row_h_ = 0.f;
    if (first_row_) first_row_right_ = x_;
    first_row_ = false;
    x_ = d.x + d.w - gap_;
  }
  const Vec2 at{x_ - size.x, y_ - size.y};
  x_ -= size.x + gap_;
  row_h_ = std::max(row_h_, size.y);
  return at;
}

float OverlayFlow::status_room() const {
  const ScreenRect& d = dock_.dock;
  if (dock_.column) return d.w - 2.f * gap_;
  // Up to the leftmost box on the first row.
  const float right = first_row_ ? x_ : first_row_right_;
  return std::max(0.f, right - (d.x + gap_));
}

std::string elide_middle(const std::string& text, float max_w,
                         const std::function<float(const std::string&)>& width) {
  if (width(text) <= max_w) return text;
  // Keep `keep` characters, a third at the start and two thirds at the end (the name
  // of a file is at the end of its path); the largest that fits, by bisection.
  const auto cut = [&text](size_t keep) {
    const size_t head = keep / 3, tail = keep - head;
    return text.substr(0, head) + "..." + text.substr(text.size() - tail);
  };
  size_t lo = 0, hi = text.size();
  while (lo < hi) {
    const size_t mid = (lo + hi + 1) / 2;
    if (width(cut(mid)) <= max_w)
      lo = mid;
    else
      hi = mid - 1;
  }
  return cut(lo);
}

std::string wrap_at_spaces(const std::string& text, float max_w,
                           const std::function<float(const std::string&)>& width) {
  std::string out, line;
  size_t k = 0;
  while (k < text.size()) {
    if (text[k] == '\n') {  // a line break of the text's own
      out += line + '\n';
      line.clear();
      ++k;
      continue;
    }
    const size_t end = std::min(text.find_first_of(" \n", k), text.size());
    const std::string word = text.substr(k, end - k);
    const std::string longer = line.empty() ? word : line + " " + word;
    if (!line.empty() && width(longer) > max_w) {
      out += line + '\n';
      line = word;
    } else {
      line = longer;
    }
    k = end < text.size() && text[end] == ' ' ? end + 1 : end;
  }
  return out + line;
}

bool overlay_boxes_fit(const OverlayDock& dock, const std::vector<Vec2>& boxes, float gap,
                       OverlayFlow& flow) {
  if (boxes.empty()) return true;
  if (dock.dock.w <= 0.f || dock.dock.h <= 0.f) return false;
  flow.begin(dock, gap);
  const ScreenRect& d = dock.dock;
  for (const Vec2& b : boxes) {
    const Vec2 at = flow.place(b);
    if (at.x < d.x - 0.5f || at.y < d.y - 0.5f || at.x + b.x > d.x + d.w + 0.5f ||
        at.y + b.y > d.y + d.h + 0.5f)
      return false;
  }
  return true;
}

}  // namespace ps
