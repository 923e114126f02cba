// The window's layout rules (render/cpu/layout.h): the side panels within their
// share of the window, whatever imgui.ini brought from a larger screen, and the
// monitor full screen (F11) goes to.
#include <catch2/catch.hpp>

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
