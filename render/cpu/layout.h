/// The window's layout rules, GL-free: how wide the side panels may be for a
/// window width (applied at start and on every frame, so a settings folder
/// written on a large screen, ImGui keeping the panels' widths in imgui.ini,
/// cannot squeeze the scene on a projector's 1280 x 720), the monitor full
/// screen goes to, and how the comparison's panes tile the scene's viewport.
#pragma once
#include <functional>
#include <string>
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
  float scene_w = 0.f,
        scene_h = 0.f;  ///< the scene drawn whole in one pane, under its label band (px)
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

/// Where the colour legends and the status line go: beside the scene, never
/// over it. The scene's area is split into the content (the scene fitted, or
/// the comparison's panes) and a dock for the overlays, either a column at the
/// right edge (the boxes stacked, bottom up) or a band along the bottom (the
/// boxes side by side, right to left, wrapping upwards), whichever lets the
/// scene be drawn larger. The status line ("H  help", a toast) is the first box:
/// bottom left of the band (a toast cut to the room the legends leave), top of
/// the column (a toast wrapped to its width, downwards).
struct OverlayDock {
  ScreenRect content;   ///< what the scene, or the comparison's panes, is fitted in
  ScreenRect dock;      ///< the overlays' place (zero size: no overlays)
  bool column = false;  ///< a column at the right edge, else a band along the bottom
};

/// The band's height for `boxes` (status line first) laid right to left in rows
/// `width` wide (a box wider than the row gets a row of its own).
float overlay_band_height(const std::vector<Vec2>& boxes, float width, float gap);

/// The split of `area` for `boxes` (width, height each; the status line first),
/// `gap` px around each box. `drawn(content)` is how large the scene is drawn in
/// a content rectangle (e.g. its fitted area in px²): the larger wins, the band
/// on a tie; a column taller than the area, or wider than 60 % of it, is not offered.
OverlayDock split_overlay_dock(const ScreenRect& area, const std::vector<Vec2>& boxes, float gap,
                               const std::function<float(const ScreenRect&)>& drawn);

/// True when `boxes` all fit the dock (placed as OverlayFlow places them): the window
/// keeps its dock while they do, so a legend that shrinks (a colour mode with a smaller
/// one, a note that goes) does not move the scene; only one that needs more room does.
/// `scratch` is reused (the window checks every frame: no allocation once warm).
class OverlayFlow;
bool overlay_boxes_fit(const OverlayDock& dock, const std::vector<Vec2>& boxes, float gap,
                       OverlayFlow& scratch);

/// Places the boxes of one frame, in the order they are drawn (the status line
/// first), in a dock: the status line at the dock's bottom left (band) or top
/// (column), the others right to left wrapping upwards (band) or stacked upwards
/// (column), each right-aligned. A frame's boxes may differ from those the dock
/// was split for (a legend appeared): they are placed all the same, and the
/// next frame's split makes room.
class OverlayFlow {
 public:
  void begin(const OverlayDock& dock, float gap);
  /// Records the boxes only: place() returns a corner far off the screen (the
  /// legends are measured by drawing them there, before the dock is split).
  void begin_measure(float gap);
  bool measuring() const { return measuring_; }
  /// The top-left corner of the next box of `size`.
  Vec2 place(Vec2 size);
  /// This frame's boxes, for the next frame's split.
  const std::vector<Vec2>& boxes() const { return boxes_; }
  /// The room on the status line's row right of it: its left edge and width
  /// (a toast is cut to it); valid after the other boxes are placed.
  float status_room() const;

 private:
  OverlayDock dock_;
  float gap_ = 0.f;
  float x_ = 0.f, y_ = 0.f, row_h_ = 0.f, first_row_left_ = 0.f, first_row_right_ = 0.f;
  bool first_row_ = true;
  bool measuring_ = false;
  std::vector<Vec2> boxes_;
};

/// `text` cut in the middle to at most `max_w` wide (an ellipsis "..." in the
/// cut), keeping its start and its end (a saved file's name): `width` measures
/// a string. Unchanged when it fits; "..." alone when nothing else does.
std::string elide_middle(const std::string& text, float max_w,
                         const std::function<float(const std::string&)>& width);

/// `text` broken into lines at most `max_w` wide, at spaces only: ImGui's own
/// wrapping also breaks after a full stop, which split "0.7 s" into "0." and
/// "7 s" in a lesson's text. A word wider than a line gets a line of its own.
/// The lines are joined with '\n'.
std::string wrap_at_spaces(const std::string& text, float max_w,
                           const std::function<float(const std::string&)>& width);

}  // namespace ps
