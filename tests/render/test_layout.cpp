// The window's layout rules (render/cpu/layout.h): the side panels within their
// share of the window, whatever imgui.ini brought from a larger screen, the
// monitor full screen (F11) goes to, and the comparison's tiling by the scene's
// aspect (a 2:1 dam break stacked in rows, not three thin columns).
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "render/cpu/layout.h"

using namespace ps;

TEST_CASE("side panels from a 1600 px screen leave a 1280 px projector 60 % of the width",
          "[render][layout]") {
  // imgui.ini written on a 1600x900 screen: 620 px each; projector mode at 1280x720 (UI x1.35: 324 px minimum).
  const SidePanels p =
      clamp_side_panels(620.f, 620.f, 1280.f, side_panel_share(true), 240.f * 1.35f);
  CHECK(p.left + p.right <= 0.4f * 1280.f + 1e-3f);
  CHECK(p.left > 0.f);
  CHECK(p.right > 0.f);
  CHECK(p.left == Approx(256.f));  // the minimum gives way to the share: half of it each
  CHECK(p.right == Approx(256.f));
}

TEST_CASE("side panels that fit are left alone, wide ones shrink in proportion",
          "[render][layout]") {
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
          CHECK(t.cols <= n);                // the first row full: no empty column
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
  const ScreenRect a = tile_rect(t, area, 4.f, 0), b = tile_rect(t, area, 4.f, 1),
                   c = tile_rect(t, area, 4.f, 2);
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

namespace {
// How large a scene of `aspect` is drawn when fitted into a rectangle: its area in px².
std::function<float(const ScreenRect&)> fitted(float aspect) {
  return [aspect](const ScreenRect& r) {
    const float w = std::min(r.w, r.h * aspect);
    return w * (w / aspect);
  };
}
bool overlaps(Vec2 p, Vec2 s, const ScreenRect& r) {
  return p.x < r.x + r.w && p.x + s.x > r.x && p.y < r.y + r.h && p.y + s.y > r.y;
}
bool inside(Vec2 p, Vec2 s, const ScreenRect& r) {
  return p.x >= r.x - 1e-3f && p.y >= r.y - 1e-3f && p.x + s.x <= r.x + r.w + 1e-3f &&
         p.y + s.y <= r.y + r.h + 1e-3f;
}
}  // namespace

TEST_CASE(
    "Legends go beside the scene, never over it: a column beside a square scene, a band under a wide one",
    "[render][layout]") {
  const ScreenRect area{0.f, 0.f, 1280.f,
                        680.f};  // the scene's area with the panels hidden at 1280x720
  const std::vector<Vec2> boxes = {
      {90.f, 30.f}, {260.f, 70.f}, {160.f, 110.f}};  // status, colour bar, materials
  const float gap = 10.f;
  // A square scene in a wide area: the right edge is free, the column costs it nothing.
  const OverlayDock sq = split_overlay_dock(area, boxes, gap, fitted(1.f));
  CHECK(sq.column);
  CHECK(sq.content.h == area.h);
  CHECK(sq.content.w + sq.dock.w == Approx(area.w));
  // dam_break (2:1, as wide as the area allows): a band below costs less than a column beside.
  const OverlayDock wide = split_overlay_dock(area, boxes, gap, fitted(2.f));
  CHECK_FALSE(wide.column);
  CHECK(wide.content.w == area.w);
  CHECK(wide.dock.y == Approx(wide.content.y + wide.content.h));
  CHECK(wide.dock.h == Approx(110.f + 2.f * gap));  // one row: the tallest box and its gaps
  // Every box lands in the dock and none over the content or another box, in both.
  for (const OverlayDock& d : {sq, wide}) {
    OverlayFlow flow;
    flow.begin(d, gap);
    std::vector<std::pair<Vec2, Vec2>> placed;
    for (const Vec2& b : boxes) placed.emplace_back(flow.place(b), b);
    for (size_t k = 0; k < placed.size(); ++k) {
      INFO("box " << k << (d.column ? " column" : " band"));
      CHECK(inside(placed[k].first, placed[k].second, d.dock));
      CHECK_FALSE(overlaps(placed[k].first, placed[k].second, d.content));
      for (size_t j = 0; j < k; ++j) {
        const ScreenRect other{placed[j].first.x, placed[j].first.y, placed[j].second.x,
                               placed[j].second.y};
        CHECK_FALSE(overlaps(placed[k].first, placed[k].second, other));
      }
    }
    CHECK(flow.boxes().size() == boxes.size());
  }
  // The band's status line is at the bottom left; the room right of it ends at the legends.
  OverlayFlow flow;
  flow.begin(wide, gap);
  const Vec2 status = flow.place(boxes[0]);
  CHECK(status.x == Approx(area.x + gap));
  flow.place(boxes[1]);
  flow.place(boxes[2]);
  CHECK(flow.status_room() == Approx(area.w - 4.f * gap - 260.f - 160.f));
}

TEST_CASE("A band too narrow for its boxes wraps them into rows above, and grows by the rows",
          "[render][layout]") {
  const std::vector<Vec2> boxes = {{90.f, 30.f}, {300.f, 60.f}, {300.f, 40.f}};
  const float gap = 8.f;
  CHECK(overlay_band_height(boxes, 1000.f, gap) == Approx(60.f + 2.f * gap));
  CHECK(overlay_band_height(boxes, 500.f, gap) == Approx(60.f + 40.f + 3.f * gap));
  CHECK(overlay_band_height({}, 500.f, gap) == 0.f);
  // A narrow, tall area (a portrait window): no column half its width; the band wraps.
  const ScreenRect area{100.f, 0.f, 500.f, 900.f};
  const OverlayDock d = split_overlay_dock(area, boxes, gap, fitted(1.f));
  CHECK_FALSE(d.column);
  CHECK(d.dock.h == Approx(60.f + 40.f + 3.f * gap));
  OverlayFlow flow;
  flow.begin(d, gap);
  const Vec2 s = flow.place(boxes[0]), a = flow.place(boxes[1]), b = flow.place(boxes[2]);
  CHECK(a.y + 60.f <= d.dock.y + d.dock.h);
  CHECK(b.y + 40.f <= a.y);  // the second legend went up a row
  CHECK(inside(b, boxes[2], d.dock));
  CHECK(s.y + 30.f == Approx(d.dock.y + d.dock.h - gap));
}

TEST_CASE("A long status message is cut in the middle, keeping the file's name",
          "[render][layout]") {
  const auto chars = [](const std::string& t) {
    return static_cast<float>(t.size());
  };  // one px a character
  const std::string msg = "screenshot saved: /tmp/captures/screenshot-20261128-021052-02.png";
  CHECK(elide_middle(msg, 200.f, chars) == msg);
  const std::string cut = elide_middle(msg, 40.f, chars);
  CHECK(cut.size() == 40);
  CHECK(cut.find("...") != std::string::npos);
  CHECK(cut.substr(0, 5) == "scree");
  CHECK(cut.substr(cut.size() - 10) == "052-02.png");
  CHECK(elide_middle(msg, 2.f, chars) == "...");
}

TEST_CASE("Lesson text wraps at spaces only: \"0.7 s\" stays on one line", "[render][layout]") {
  const auto chars = [](const std::string& t) { return static_cast<float>(t.size()); };
  // ImGui would break after "0." where the line is full; here the number moves down whole.
  CHECK(wrap_at_spaces("PolyPIC after about 0.7 s: stripes", 22.f, chars) ==
        "PolyPIC after about\n0.7 s: stripes");
  CHECK(wrap_at_spaces("short", 22.f, chars) == "short");
  CHECK(wrap_at_spaces("a verylongwordthatdoesnotfit b", 10.f, chars) ==
        "a\nverylongwordthatdoesnotfit\nb");
  CHECK(wrap_at_spaces("one\ntwo three", 7.f, chars) == "one\ntwo\nthree");
}

TEST_CASE("Measuring the legends records their boxes and draws them off the screen",
          "[render][layout]") {
  OverlayFlow flow;
  flow.begin_measure(10.f);
  CHECK(flow.measuring());
  const Vec2 at = flow.place(Vec2{100.f, 40.f});
  CHECK(at.x < -1e5f);
  flow.place(Vec2{200.f, 60.f});
  REQUIRE(flow.boxes().size() == 2);
  CHECK(flow.boxes()[1].x == 200.f);
  // The dock split from them, then drawing: the same boxes, now in the dock.
  const OverlayDock d =
      split_overlay_dock(ScreenRect{0.f, 0.f, 800.f, 600.f}, flow.boxes(), 10.f, fitted(2.f));
  flow.begin(d, 10.f);
  CHECK_FALSE(flow.measuring());
  CHECK(inside(flow.place(Vec2{100.f, 40.f}), Vec2{100.f, 40.f}, d.dock));
}

TEST_CASE("A dock is kept while the legends fit it: a smaller legend does not move the scene",
          "[render][layout]") {
  const ScreenRect area{0.f, 0.f, 1280.f, 680.f};
  const float gap = 10.f;
  const std::vector<Vec2> big = {{90.f, 30.f}, {300.f, 120.f}},
                          small = {{90.f, 30.f}, {300.f, 60.f}},
                          taller = {{90.f, 30.f}, {300.f, 200.f}};
  const OverlayDock d = split_overlay_dock(area, big, gap, fitted(2.f));
  OverlayFlow scratch;
  CHECK_FALSE(d.column);
  CHECK(overlay_boxes_fit(d, big, gap, scratch));
  CHECK(overlay_boxes_fit(d, small, gap, scratch));         // kept: the scene stays where it is
  CHECK_FALSE(overlay_boxes_fit(d, taller, gap, scratch));  // a taller legend: split again
  CHECK(overlay_boxes_fit(d, {}, gap, scratch));
  CHECK_FALSE(overlay_boxes_fit(OverlayDock{area, ScreenRect{0.f, 680.f, 1280.f, 0.f}, false},
                                small, gap, scratch));
}
