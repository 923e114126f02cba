/// The window's layout rules, GL-free: how wide the side panels may be for a
/// window width (applied at start and on every frame, so a settings folder
/// written on a large screen, ImGui keeping the panels' widths in imgui.ini,
/// cannot squeeze the scene on a projector's 1280 x 720), the monitor full
/// screen goes to, and how the comparison's panes tile the scene's viewport.
#pragma once
#include <vector>
#include "render/cpu/camera.h"

namespace ps {

/// The share of the window's width both side panels may take together:
/// 0.4 in projector mode (the scene keeps at least 60 % of the width, for the
/// back row), 0.6 otherwise (the panels' default 340 + 330 px fit a 1280 px window).
inline float side_panel_share(bool projector) { return projector ? 0.4f : 0.6f; }

struct SidePanels {
  float left = 0.f, right = 0.f;
};

/// The panels' widths `left`, `right` clamped to a window `window_w` wide:
/// together at most `share` of it (both shrunk in proportion when wider),
/// each at least `min_each` (the panel's usual minimum, e.g. 240 px scaled)
/// where that fits the share, else each at least half the share.
SidePanels clamp_side_panels(float left, float right, float window_w, float share, float min_each);

/// A rectangle in the desktop's coordinates (pixels): a window or a monitor.
struct DesktopRect {
  int x = 0, y = 0, w = 0, h = 0;
};

/// The monitor a window is on, for full screen (F11): the one holding the window's centre,
/// else the one it overlaps most, else the first (the primary). -1 when there is none.
int monitor_of_window(const DesktopRect& window, const std::vector<DesktopRect>& monitors);

/// The comparison's panes in rows x cols (row-major: left to right, then down).
struct Tiling {
  int rows = 1, cols = 1;
  float scene_w = 0.f, scene_h = 0.f;  ///< the scene drawn whole in one pane, under its label band (px)
  bool operator==(const Tiling& o) const { return rows == o.rows && cols == o.cols; }
  bool operator!=(const Tiling& o) const { return !(*this == o); }
};

/// The tiling of `n` panes over a `w` x `h` area, `gap` px between panes, each pane
/// keeping a band `band` px tall at its top for its label, that draws a scene of
/// `aspect` (width / height) largest: a wide scene (dam_break, 2:1) in a tall area is
/// stacked in rows, not put in thin columns. Every row and column holds a pane. Equal
/// sizes (within 0.1 %): the fewer empty cells, then the more columns.
Tiling choose_tiling(int n, float w, float h, float aspect, float gap, float band);

/// Pane k's rectangle in `area` under a tiling.
ScreenRect tile_rect(const Tiling& t, const ScreenRect& area, float gap, int k);

}  // namespace ps
