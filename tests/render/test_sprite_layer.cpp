// The software sprite layer (render/cpu/sprite_layer.h): the disc the
// particle shader draws, premultiplied "over" in sprite order, the colour
// modes, and bands of rows that do not change the image.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>
#include "render/cpu/sprite_layer.h"

using namespace ps;

namespace {

/// A 40 x 30 layer at the framebuffer's origin, one world unit = one pixel.
SpriteLayerView unit_view() {
  SpriteLayerView v;
  v.w = 40;
  v.h = 30;
  return v;
}

const uint8_t* px(const SpriteLayer& l, int x, int y) { return &l.pixels()[(static_cast<size_t>(y) * l.width() + x) * 4]; }

}  // namespace

TEST_CASE("Sprite layer: one disc, opaque inside, clipped to its square, transparent elsewhere", "[render][sprites]") {
  const float xy[2] = {10.f, 12.f};  // a pixel corner: pixel centres at +-0.5, +-1.5, +-2.5
  const float radius[1] = {2.5f};
  const uint8_t rgba[4] = {200, 100, 50, 255};
  SpriteLayerInput in;
  in.n = 1;
  in.xy = xy;
  in.radius = radius;
  in.rgba = rgba;
  SpriteLayer l;
  l.draw(unit_view(), in);
  REQUIRE(l.width() == 40);
  REQUIRE(l.height() == 30);
  // The pixel (9, 11) has its centre at (9.5, 11.5): d = 0.28 of the radius, opaque.
  CHECK(px(l, 9, 11)[0] == 200);
  CHECK(px(l, 9, 11)[1] == 100);
  CHECK(px(l, 9, 11)[2] == 50);
  CHECK(px(l, 9, 11)[3] == 255);
  // Symmetric about the centre.
  for (int k = 0; k < 4; ++k) {
    CHECK(px(l, 9, 11)[k] == px(l, 10, 12)[k]);
    CHECK(px(l, 8, 12)[k] == px(l, 11, 12)[k]);
    CHECK(px(l, 8, 10)[k] == px(l, 11, 13)[k]);
  }
  // (7.5, 12.5): d = sqrt(2.5^2 + 0.5^2) / 2.5 = 1.02, in the anti-aliased rim: partly covered.
  CHECK(px(l, 7, 12)[3] > 0);
  CHECK(px(l, 7, 12)[3] < 255);
  // Premultiplied: colour <= alpha * colour (+ rounding).
  CHECK(px(l, 7, 12)[0] <= px(l, 7, 12)[3] * 200 / 255 + 1);
  // Outside the square [7.5, 12.5)^2 (half-open, as a rasteriser's edge rule): untouched, and far away too.
  CHECK(px(l, 12, 12)[3] == 0);
  CHECK(px(l, 6, 12)[3] == 0);
  CHECK(px(l, 30, 20)[3] == 0);
}

TEST_CASE("Sprite layer: later sprites go over earlier ones, and the colour modes", "[render][sprites]") {
  const float xy[4] = {10.f, 10.f, 10.f, 10.f};
  const float radius[2] = {3.f, 3.f};
  const uint8_t rgba[8] = {255, 0, 0, 255, 0, 0, 255, 255};
  SpriteLayerInput in;
  in.n = 2;
  in.xy = xy;
  in.radius = radius;
  in.rgba = rgba;
  SpriteLayer l;
  l.draw(unit_view(), in);
  // Opaque centre: the second (blue) sprite only.
  CHECK(px(l, 9, 9)[0] == 0);
  CHECK(px(l, 9, 9)[2] > 150);  // the rim darkens sprites over 3 px a little: blue, not red

  // Scalar mode: the colour map's ends at lo and hi.
  std::vector<uint8_t> cmap(256 * 4);
  for (int i = 0; i < 256; ++i) {
    cmap[4 * i] = static_cast<uint8_t>(i);
    cmap[4 * i + 1] = static_cast<uint8_t>(255 - i);
    cmap[4 * i + 2] = 0;
    cmap[4 * i + 3] = 255;
  }
  const float scalar[2] = {0.f, 1.f};
  const float xy2[4] = {5.f, 5.f, 20.f, 5.f};
  const float small[2] = {1.f, 1.f};
  in.xy = xy2;
  in.radius = small;
  in.scalar = scalar;
  in.cmap = cmap.data();
  in.mode = 1;
  in.lo = 0.f;
  in.hi = 1.f;
  l.draw(unit_view(), in);
  const uint8_t* a = px(l, 4, 4);
  const uint8_t* b = px(l, 19, 4);
  CHECK(a[1] > a[0]);  // low end: green
  CHECK(b[0] > b[1]);  // high end: red
  // Direction mode: moving east is red, north is yellow-green (the shader's hue).
  const float vxy[4] = {1.f, 0.f, 0.f, 1.f};
  in.vxy = vxy;
  in.mode = 2;
  l.draw(unit_view(), in);
  CHECK(px(l, 4, 4)[0] > 100);
  CHECK(px(l, 4, 4)[1] == 0);
  CHECK(px(l, 19, 4)[1] > px(l, 19, 4)[2]);
}

TEST_CASE("Sprite layer: two bands of rows draw the same image as one", "[render][sprites]") {
  const size_t n = 3000;
  std::vector<float> xy(2 * n), radius(n);
  std::vector<uint8_t> rgba(4 * n);
  std::mt19937 g(7);
  std::uniform_real_distribution<float> u(-5.f, 45.f), r(0.5f, 5.f);
  std::uniform_int_distribution<int> c(0, 255);
  for (size_t i = 0; i < n; ++i) {
    xy[2 * i] = u(g);
    xy[2 * i + 1] = u(g);
    radius[i] = r(g);
    for (int k = 0; k < 4; ++k) rgba[4 * i + k] = static_cast<uint8_t>(c(g));
  }
  SpriteLayerInput in;
  in.n = n;
  in.xy = xy.data();
  in.radius = radius.data();
  in.rgba = rgba.data();
  SpriteLayer one, two;
  one.draw(unit_view(), in, 1);
  two.draw(unit_view(), in, 2);
  CHECK(one.pixels() == two.pixels());
  size_t lit = 0;
  for (size_t k = 3; k < one.pixels().size(); k += 4) lit += one.pixels()[k] > 0;
  CHECK(lit > one.pixels().size() / 8);  // the test draws something
}

TEST_CASE("Sprite layer: only the sprites' box is drawn, and the next draw clears it", "[render][sprites]") {
  // The window uploads and composites drawn() alone: every lit pixel must lie
  // in it, and a layer reused frame after frame must equal a fresh one (no
  // trails where the sprites were), whatever the bands.
  std::mt19937 g(11);
  std::uniform_real_distribution<float> u(-3.f, 43.f), r(0.3f, 4.f);
  SpriteLayer reused;
  for (int frame = 0; frame < 6; ++frame) {
    const size_t n = frame == 4 ? 0 : 50 + 40 * static_cast<size_t>(frame);  // frame 4: nothing to draw
    std::vector<float> xy(2 * n), radius(n);
    std::vector<uint8_t> rgba(4 * n, 180);
    // Each frame a cluster somewhere else: the last frame's box must be cleared.
    const float cx = 8.f + 5.f * static_cast<float>(frame), cy = 6.f + 3.f * static_cast<float>(frame % 3);
    for (size_t i = 0; i < n; ++i) {
      xy[2 * i] = cx + 0.15f * (u(g) - 20.f);
      xy[2 * i + 1] = cy + 0.1f * (u(g) - 20.f);
      radius[i] = r(g);
    }
    SpriteLayerInput in;
    in.n = n;
    in.xy = xy.data();
    in.radius = radius.data();
    in.rgba = rgba.data();
    reused.draw(unit_view(), in, 1 + frame % 2);
    SpriteLayer fresh;
    fresh.draw(unit_view(), in, 1);
    REQUIRE(reused.pixels() == fresh.pixels());
    const LayerRect d = reused.drawn();
    size_t lit = 0, outside = 0;
    for (int y = 0; y < 30; ++y)
      for (int x = 0; x < 40; ++x) {
        if (px(reused, x, y)[3] == 0) continue;
        ++lit;
        if (x < d.x || x >= d.x + d.w || y < d.y || y >= d.y + d.h) ++outside;
      }
    CHECK(outside == 0);
    if (n == 0) {
      CHECK(d.empty());
      CHECK(lit == 0);
    } else {
      CHECK(lit > 20);
      CHECK(d.w < 40);  // a box, not the whole layer
    }
  }
}
