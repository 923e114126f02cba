// The SGF timeline (render/cpu/timeline.*): step <-> x, zoom and pan, ruler
// ticks, hit-testing and dragging entry bars, active groups at a step.
#include <catch2/catch.hpp>

#include "render/cpu/timeline.h"

using namespace ps;

namespace {

SgfSet two_groups() {
  SgfSet s;
  SgfGroup a;
  a.name = "arms";
  a.ids = {1, 2, 3};
  a.entries.push_back(SgfEntry{1, 100, 1.0, 0.0, 0.0});
  a.entries.push_back(SgfEntry{301, 400, -1.0, 0.0, 0.0});
  SgfGroup b;
  b.name = "legs";
  b.ids = {4, 5};
  b.entries.push_back(SgfEntry{51, 250, 0.0, 2.0, 0.0});
  s.groups = {a, b};
  return s;
}

TimelineView view_0_1000() {
  TimelineView v;
  v.step0 = 0.0;
  v.step1 = 1000.0;
  v.x0 = 100.f;
  v.width = 500.f;  // 2 steps per pixel
  return v;
}

}  // namespace

TEST_CASE("timeline maps steps to pixels and back", "[render]") {
  TimelineView v = view_0_1000();
  CHECK(v.step_to_x(0.0) == 100.f);
  CHECK(v.step_to_x(1000.0) == 600.f);
  CHECK(v.step_to_x(500.0) == 350.f);
  CHECK(v.x_to_step(350.f) == Approx(500.0));
  CHECK(v.step_at(350.4f) == 501);
  CHECK(v.step_at(20.f) == 0);  // never below 0
  for (double s : {0.0, 1.0, 123.0, 999.0}) CHECK(v.x_to_step(v.step_to_x(s)) == Approx(s));
}

TEST_CASE("timeline zoom keeps the step under the cursor - pan and fit", "[render]") {
  TimelineView v = view_0_1000();
  const double at = v.x_to_step(350.f);
  v.zoom_about(350.f, 4.f);
  CHECK(v.step1 - v.step0 == Approx(250.0));
  CHECK(v.x_to_step(350.f) == Approx(at));
  // Zooming out near 0 never shows negative steps.
  v.zoom_about(600.f, 0.01f);
  CHECK(v.step0 == 0.0);
  // The span has a floor of 10 steps.
  v.zoom_about(300.f, 1e6f);
  CHECK(v.step1 - v.step0 == Approx(10.0));
  // Pan: dragging right shows earlier steps, stopping at 0.
  TimelineView p = view_0_1000();
  p.step0 = 400.0;
  p.step1 = 1400.0;
  p.pan(100.f);  // 100 px = 200 steps
  CHECK(p.step0 == Approx(200.0));
  p.pan(1000.f);
  CHECK(p.step0 == 0.0);
  CHECK(p.step1 == Approx(1000.0));
  p.fit(2000, 10);
  CHECK(p.step0 == 0.0);
  CHECK(p.step1 == Approx(2100.0));
  p.fit(0, 0);
  CHECK(p.step1 == Approx(105.0));
}

TEST_CASE("ruler ticks are 1, 2 or 5 times a power of ten", "[render]") {
  TimelineView v = view_0_1000();  // 0.5 px per step
  CHECK(tick_spacing(v, 70.f) == 200.0);
  CHECK(tick_spacing(v, 50.f) == 100.0);
  v.step1 = 50.0;  // 10 px per step
  CHECK(tick_spacing(v, 70.f) == 10.0);
  CHECK(tick_spacing(v, 5.f) == 1.0);
}

TEST_CASE("hit-testing bars: rows, ends and bodies", "[render]") {
  SgfSet s = two_groups();
  TimelineView v = view_0_1000();
  const float top = 50.f, row = 20.f, pad = 3.f;
  // arms entry 0 covers steps [0, 100] on the axis: x 100..150.
  float xa, xb;
  bar_extent(v, s.groups[0].entries[0], 4.f, xa, xb);
  CHECK(xa == 100.f);
  CHECK(xb == 150.f);
  BarHit h = hit_test_bar(s, v, top, row, pad, Vec2{125.f, 60.f});
  CHECK(h.group == 0);
  CHECK(h.entry == 0);
  CHECK(h.part == BarPart::Body);
  CHECK(hit_test_bar(s, v, top, row, pad, Vec2{101.f, 60.f}).part == BarPart::Start);
  CHECK(hit_test_bar(s, v, top, row, pad, Vec2{149.f, 60.f}).part == BarPart::End);
  // The second entry of the same row (steps 301-400 -> x 250..300).
  h = hit_test_bar(s, v, top, row, pad, Vec2{275.f, 60.f});
  CHECK(h.group == 0);
  CHECK(h.entry == 1);
  // Between bars, in the padding, below the last row, above the rows: nothing.
  CHECK(hit_test_bar(s, v, top, row, pad, Vec2{200.f, 60.f}).part == BarPart::None);
  CHECK(hit_test_bar(s, v, top, row, pad, Vec2{125.f, 51.f}).part == BarPart::None);
  CHECK(hit_test_bar(s, v, top, row, pad, Vec2{125.f, 95.f}).part == BarPart::None);
  CHECK(hit_test_bar(s, v, top, row, pad, Vec2{125.f, 40.f}).part == BarPart::None);
  // Row 1: legs, steps 51-250 -> x 125..225.
  h = hit_test_bar(s, v, top, row, pad, Vec2{175.f, 80.f});
  CHECK(h.group == 1);
  CHECK(h.entry == 0);
  // A one-step bar is widened to min_px so it can still be grabbed.
  SgfSet one;
  one.groups.resize(1);
  one.groups[0].entries.push_back(SgfEntry{500, 500, 1.0, 0.0, 0.0});
  bar_extent(v, one.groups[0].entries[0], 4.f, xa, xb);
  CHECK(xb - xa == Approx(4.f));
  CHECK(hit_test_bar(one, v, top, row, pad, Vec2{349.75f, 60.f}).entry == 0);
}

TEST_CASE("dragging a bar moves or resizes its entry, within bounds", "[render]") {
  const SgfEntry e{100, 200, 1.0, 2.0, 3.0};
  SgfEntry m = drag_entry(e, BarPart::Body, 50);
  CHECK(m.s0 == 150);
  CHECK(m.s1 == 250);
  CHECK(m.fx == 1.0);
  m = drag_entry(e, BarPart::Body, -500);  // stops at step 0, keeps the length
  CHECK(m.s0 == 0);
  CHECK(m.s1 == 100);
  m = drag_entry(e, BarPart::Start, 150);  // never past the end
  CHECK(m.s0 == 200);
  CHECK(m.s1 == 200);
  m = drag_entry(e, BarPart::Start, -30);
  CHECK(m.s0 == 70);
  m = drag_entry(e, BarPart::End, -500);  // never before the start
  CHECK(m.s1 == 100);
  m = drag_entry(e, BarPart::End, 7);
  CHECK(m.s1 == 207);
}

TEST_CASE("active groups at a step (the highlight)", "[render]") {
  SgfSet s = two_groups();
  CHECK(active_groups(s, 0) == std::vector<uint8_t>{0, 0});
  CHECK(active_groups(s, 1) == std::vector<uint8_t>{1, 0});
  CHECK(active_groups(s, 51) == std::vector<uint8_t>{1, 1});
  CHECK(active_groups(s, 100) == std::vector<uint8_t>{1, 1});
  CHECK(active_groups(s, 101) == std::vector<uint8_t>{0, 1});
  CHECK(active_groups(s, 250) == std::vector<uint8_t>{0, 1});
  CHECK(active_groups(s, 251) == std::vector<uint8_t>{0, 0});
  CHECK(active_groups(s, 350) == std::vector<uint8_t>{1, 0});
  CHECK(active_entry(s.groups[0], 350) == 1);
  CHECK(active_entry(s.groups[0], 200) == -1);
  CHECK(last_sgf_step(s) == 400);
  CHECK(last_sgf_step(SgfSet{}) == 0);
  // The playhead at step k lies on a bar exactly when the entry is active.
  TimelineView v = view_0_1000();
  for (int64_t k : {0, 1, 100, 101, 300, 301, 400, 401}) {
    float xa, xb;
    bar_extent(v, s.groups[0].entries[1], 0.f, xa, xb);
    const float x = v.step_to_x(static_cast<double>(k));
    const bool on_bar = x > xa && x <= xb;
    CHECK(on_bar == (active_entry(s.groups[0], k) == 1));
  }
}
