// Camera2D (render/cpu/camera.*): world <-> screen transforms without a window.
#include <catch2/catch.hpp>

#include "render/cpu/camera.h"

using ps::Camera2D;
using ps::ScreenRect;
using ps::Vec2;

namespace {

// Applies the column-major world->NDC matrix, then NDC -> screen pixels.
Vec2 via_ndc(const Camera2D& c, Vec2 w) {
  float m[16];
  c.world_to_ndc(m);
  float nx = m[0] * w.x + m[4] * w.y + m[12];
  float ny = m[1] * w.x + m[5] * w.y + m[13];
  return {(nx + 1.f) * 0.5f * c.width(), (1.f - ny) * 0.5f * c.height()};
}

}  // namespace

TEST_CASE("camera: screen -> world -> screen round trip at several zooms, aspects and pixel ratios",
          "[render]") {
  const float sizes[][2] = {{1280, 720}, {720, 1280}, {800, 800}, {2560, 1080}};
  const float ratios[] = {1.f, 1.5f, 2.f};
  const float zooms[] = {0.01f, 1.f, 37.f, 5000.f};
  for (auto& s : sizes) {
    for (float r : ratios) {
      for (float z : zooms) {
        Camera2D c;
        c.set_window(s[0], s[1], r);
        c.set_viewport(ScreenRect{0.2f * s[0], 0.f, 0.6f * s[0], s[1]});
        c.fit(Vec2{-1.f, 0.f}, Vec2{3.f, 2.f});
        c.zoom_about(Vec2{0.3f * s[0], 0.7f * s[1]}, z);
        for (Vec2 p : {Vec2{0.f, 0.f}, Vec2{13.5f, 700.25f}, Vec2{s[0] - 1.f, s[1] - 1.f}}) {
          Vec2 back = c.world_to_screen(c.screen_to_world(p));
          // Within a twentieth of a pixel (float world coordinates at high zoom).
          CHECK(back.x == Approx(p.x).margin(0.05));
          CHECK(back.y == Approx(p.y).margin(0.05));
          // Framebuffer pixels scale with the HiDPI ratio.
          Vec2 fb = c.screen_to_framebuffer(p);
          CHECK(fb.x == Approx(p.x * r));
          CHECK(c.framebuffer_to_screen(fb).y == Approx(p.y));
        }
        CHECK(c.framebuffer_scale() == Approx(c.scale() * r));
        // The GL matrix agrees with world_to_screen.
        for (Vec2 w : {Vec2{0.f, 0.f}, Vec2{1.f, 1.f}, Vec2{-0.7f, 2.5f}}) {
          Vec2 a = c.world_to_screen(w), b = via_ndc(c, w);
          CHECK(b.x == Approx(a.x).epsilon(1e-4).margin(1e-2));
          CHECK(b.y == Approx(a.y).epsilon(1e-4).margin(1e-2));
        }
      }
    }
  }
}

TEST_CASE("camera: y points up in the world and down on the screen", "[render]") {
  Camera2D c;
  c.set_window(1000, 500, 1.f);
  c.set_viewport(ScreenRect{0, 0, 1000, 500});
  c.fit(Vec2{0, 0}, Vec2{1, 1}, 0.f);
  Vec2 top = c.world_to_screen(Vec2{0.5f, 1.f}), bottom = c.world_to_screen(Vec2{0.5f, 0.f});
  CHECK(top.y == Approx(0.f).margin(1e-3));
  CHECK(bottom.y == Approx(500.f));
  CHECK(c.world_to_screen(Vec2{0.f, 0.5f}).x == Approx(250.f));
}

TEST_CASE("camera: fit centres the domain in the viewport and keeps all of it visible",
          "[render]") {
  for (ScreenRect vp :
       {ScreenRect{340, 0, 610, 720}, ScreenRect{0, 0, 1280, 300}, ScreenRect{10, 20, 200, 900}}) {
    Camera2D c;
    c.set_window(1280, 1000, 2.f);
    c.set_viewport(vp);
    Vec2 lo{-2.f, 1.f}, hi{6.f, 3.f};
    c.fit(lo, hi, 0.05f);
    Vec2 a = c.world_to_screen(lo), b = c.world_to_screen(hi);
    // Inside the viewport (y flips: hi is the upper-right corner).
    CHECK(a.x >= vp.x - 1e-3f);
    CHECK(b.x <= vp.x + vp.w + 1e-3f);
    CHECK(b.y >= vp.y - 1e-3f);
    CHECK(a.y <= vp.y + vp.h + 1e-3f);
    // Centred, and tight along the limiting axis (90 % of it with a 5 % margin).
    Vec2 mid = c.world_to_screen(0.5f * (lo + hi));
    CHECK(mid.x == Approx(vp.centre().x));
    CHECK(mid.y == Approx(vp.centre().y));
    float used = std::max((b.x - a.x) / vp.w, (a.y - b.y) / vp.h);
    CHECK(used == Approx(0.9f).epsilon(1e-4));
  }
}

TEST_CASE("camera: zoom about the cursor keeps the world point under it fixed", "[render]") {
  Camera2D c;
  c.set_window(1280, 720, 1.25f);
  c.set_viewport(ScreenRect{340, 0, 610, 720});
  c.fit(Vec2{0, 0}, Vec2{1, 1});
  for (Vec2 cursor : {Vec2{400, 100}, Vec2{645, 360}, Vec2{900, 700}}) {
    for (float f : {1.15f, 1.f / 1.15f, 8.f, 0.1f}) {
      Vec2 before = c.screen_to_world(cursor);
      float s0 = c.scale();
      c.zoom_about(cursor, f);
      Vec2 after = c.screen_to_world(cursor);
      CHECK(after.x == Approx(before.x).margin(1e-5));
      CHECK(after.y == Approx(before.y).margin(1e-5));
      CHECK(c.scale() == Approx(s0 * f));
    }
  }
}

TEST_CASE("camera: pan moves the content with the cursor", "[render]") {
  Camera2D c;
  c.set_window(800, 600, 1.f);
  c.set_viewport(ScreenRect{0, 0, 800, 600});
  c.fit(Vec2{0, 0}, Vec2{1, 1});
  Vec2 w{0.3f, 0.8f};
  Vec2 s0 = c.world_to_screen(w);
  c.pan(Vec2{25.f, -40.f});
  Vec2 s1 = c.world_to_screen(w);
  CHECK(s1.x == Approx(s0.x + 25.f));
  CHECK(s1.y == Approx(s0.y - 40.f));
}

TEST_CASE("camera: zoom is clamped and ignores bad factors", "[render]") {
  Camera2D c;
  c.set_window(800, 600, 1.f);
  c.set_viewport(ScreenRect{0, 0, 800, 600});
  c.fit(Vec2{0, 0}, Vec2{1, 1});
  float s = c.scale();
  c.zoom_about(Vec2{10, 10}, 0.f);
  c.zoom_about(Vec2{10, 10}, -3.f);
  CHECK(c.scale() == s);
  for (int i = 0; i < 200; ++i) c.zoom_about(Vec2{10, 10}, 10.f);
  CHECK(c.scale() == Camera2D::kMaxScale);
}
