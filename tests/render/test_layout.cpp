// The window's layout rules (render/cpu/layout.h): the side panels within their
// share of the window, whatever imgui.ini brought from a larger screen, the
// monitor full screen (F11) goes to, and the comparison's tiling by the scene's
// aspect (a 2:1 dam break stacked in rows, not three thin columns).
#include <catch2/catch.hpp>

#include <algorithm>

#include "render/cpu/layout.h"

using namespace ps;

TEST_CASE("side panels from a 1600 px screen leave a 1280 px projector 60 % of the width", "[render][layout]") {
  // imgui.ini written on a 1600x900 screen: 620 px each; projector mode at 1280x720 (UI x1.35: 324 px minimum).
  const SidePanels p = clamp_side_panels(620.f, 620.f, 1280.f, side_panel_share(true), 240.f * 1.35f);
  CHECK(p.left + p.right <= 0.4f * 1280.f + 1e-3f);
  CHECK(p.left > 0.f);
  CHECK(p.right > 0.f);
  CHECK(p.left == Approx(256.f));  // the minimum gives way to the share: half of it each
  CHECK(p.right == Approx(256.f));
}

TEST_CASE("side panels that fit are left alone, wide ones shrink in proportion", "[render][layout]") {
  const SidePanels fit = clamp_side_panels(340.f, 330.f, 1280.f, side_panel_share(false), 240.f);
  CHECK(fit.left == 340.f);
  CHECK(fit.right == 330.f);
  const SidePanels wide = clamp_side_panels(600.f, 300.f, 1000.f, 0.6f, 100.f);
  CHECK(wide.left + wide.right == Approx(600.f));
  CHECK(wide.left == Approx(400.f));
  CHECK(wide.right == Approx(200.f));
}

TEST_CASE("a side panel below its minimum takes its room from the other", "[render][layout]") {
  const SidePanels p = clamp_side_panels(700.f, 20.f, 1000.f, 0.6f, 240.f);
  CHECK(p.right == Approx(240.f));
  CHECK(p.left == Approx(360.f));
  CHECK(p.left + p.right <= 600.f + 1e-3f);
  // A window too small for both minimums: half the share each.
  const SidePanels tiny = clamp_side_panels(340.f, 330.f, 500.f, 0.6f, 240.f);
  CHECK(tiny.left == Approx(150.f));
  CHECK(tiny.right == Approx(150.f));
}

TEST_CASE("full screen goes to the monitor holding the window's centre", "[render][layout]") {
  const std::vector<DesktopRect> two = {{0, 0, 1920, 1080}, {1920, 0, 1280, 720}};
  CHECK(monitor_of_window({100, 100, 800, 600}, two) == 0);
  CHECK(monitor_of_window({2000, 100, 800, 500}, two) == 1);
  CHECK(monitor_of_window({1700, 100, 800, 500}, two) == 1);  // centre at x = 2100
  // Centre off every monitor: the one it overlaps most; none: the first.
  CHECK(monitor_of_window({1800, 600, 400, 400}, two) == 0);
  CHECK(monitor_of_window({5000, 5000, 100, 100}, two) == 0);
  CHECK(monitor_of_window({0, 0, 100, 100}, {}) == -1);
}

namespace {
/// The scene's drawn area in one pane of rows x cols (as choose_tiling measures it).
float drawn_area(int rows, int cols, float w, float h, float aspect, float gap, float band) {
  const float pw = (w - gap * static_cast<float>(cols - 1)) / static_cast<float>(cols);
  const float ph = (h - gap * static_cast<float>(rows - 1)) / static_cast<float>(rows) - band;
  const float sw = std::min(pw, ph * aspect);
  return sw * sw / aspect;
}
}  // namespace

TEST_CASE("a wide scene's panes are stacked in rows, a square one's 2 x 2", "[render][layout]") {
  // The window at 1280 x 720: the scene's viewport between the panels is 610 x 690.
  const Tiling dam = choose_tiling(3, 610.f, 690.f, 2.f, 4.f, 52.f);  // dam_break, 2:1
  CHECK(dam.rows == 3);
  CHECK(dam.cols == 1);
  CHECK(dam.scene_w == Approx(2.f * dam.scene_h));
  CHECK(dam.scene_w > 300.f);  // three columns would draw it 200 px wide
  const Tiling two_wide = choose_tiling(2, 610.f, 690.f, 2.f, 4.f, 52.f);
  CHECK(two_wide.rows == 2);
  CHECK(two_wide.cols == 1);
  const Tiling square4 = choose_tiling(4, 610.f, 690.f, 1.f, 4.f, 52.f);  // lesson 03
  CHECK(square4.rows == 2);
  CHECK(square4.cols == 2);
  // Presenter view (the panels hidden): a wide window puts a square scene's panes side by side.
  const Tiling square2 = choose_tiling(2, 1280.f, 690.f, 1.f, 4.f, 52.f);
  CHECK(square2.rows == 1);
  CHECK(square2.cols == 2);
  // A tall scene in a wide area: one row.
  const Tiling tall = choose_tiling(3, 1000.f, 500.f, 0.5f, 4.f, 30.f);
  CHECK(tall.rows == 1);
  CHECK(tall.cols == 3);
  // Equal sizes: the fewer empty cells, then the more columns (a square scene, a square area).
  const Tiling tie = choose_tiling(2, 600.f, 600.f, 1.f, 0.f, 0.f);
  CHECK(tie.rows == 1);
  CHECK(tie.cols == 2);
}

TEST_CASE("the tiling chosen draws the scene at least as large as any other", "[render][layout]") {
  for (int n = 1; n <= 4; ++n)
    for (float aspect : {0.25f, 0.5f, 1.f, 2.f, 4.f})
      for (float w : {300.f, 610.f, 1280.f})
        for (float h : {300.f, 690.f}) {
          const Tiling t = choose_tiling(n, w, h, aspect, 4.f, 40.f);
          CAPTURE(n, aspect, w, h, t.rows, t.cols);
          CHECK(t.rows * t.cols >= n);
          CHECK((t.rows - 1) * t.cols < n);  // no empty row
          CHECK(t.cols <= n);  // the first row full: no empty column
          const float best = drawn_area(t.rows, t.cols, w, h, aspect, 4.f, 40.f);
          for (int cols = 1; cols <= n; ++cols) {
            const int rows = (n + cols - 1) / cols;
            CHECK(best >= 0.999f * drawn_area(rows, cols, w, h, aspect, 4.f, 40.f));
          }
        }
}

TEST_CASE("tile_rect lays the panes out row by row with the gap between them", "[render][layout]") {
  const Tiling t = choose_tiling(3, 610.f, 690.f, 2.f, 4.f, 52.f);
  const ScreenRect area{340.f, 0.f, 610.f, 690.f};
  const ScreenRect a = tile_rect(t, area, 4.f, 0), b = tile_rect(t, area, 4.f, 1), c = tile_rect(t, area, 4.f, 2);
  CHECK(a.x == 340.f);
  CHECK(a.w == 610.f);
  CHECK(b.y == Approx(a.y + a.h + 4.f));
  CHECK(c.y + c.h == Approx(690.f));
  const Tiling q = choose_tiling(4, 610.f, 690.f, 1.f, 4.f, 52.f);
  const ScreenRect q1 = tile_rect(q, area, 4.f, 1), q2 = tile_rect(q, area, 4.f, 2);
  CHECK(q1.x == Approx(340.f + 303.f + 4.f));
  CHECK(q1.y == 0.f);
  CHECK(q2.x == 340.f);
  CHECK(q2.y > 300.f);
}
