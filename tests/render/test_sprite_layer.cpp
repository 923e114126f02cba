// The software sprite layer (render/cpu/sprite_layer.h): the disc the
// particle shader draws, premultiplied "over" in sprite order, the colour
// modes, and bands of rows that do not change the image.
#include <algorithm>
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

const uint8_t* px(const SpriteLayer& l, int x, int y) {
  return &l.pixels()[(static_cast<size_t>(y) * l.width() + x) * 4];
}

/// n sprites of random colours at random places in [x_lo, x_hi) x [y_lo, y_hi),
/// radii from `radius(g)`.
struct RandomSprites {
  std::vector<float> xy, radius;
  std::vector<uint8_t> rgba;
  template <class RadiusFn>
  RandomSprites(size_t n, unsigned seed, float x_lo, float x_hi, float y_lo, float y_hi,
                RadiusFn radius_of) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> ux(x_lo, x_hi), uy(y_lo, y_hi);
    std::uniform_int_distribution<int> c(0, 255);
    xy.resize(2 * n);
    radius.resize(n);
    rgba.resize(4 * n);
    for (size_t i = 0; i < n; ++i) {
      xy[2 * i] = ux(g);
      xy[2 * i + 1] = uy(g);
      radius[i] = radius_of(g);
      for (int k = 0; k < 4; ++k) rgba[4 * i + k] = static_cast<uint8_t>(c(g));
    }
  }
  SpriteLayerInput input() const {
    SpriteLayerInput in;
    in.n = radius.size();
    in.xy = xy.data();
    in.radius = radius.data();
    in.rgba = rgba.data();
    return in;
  }
};

}  // namespace

TEST_CASE("Sprite layer: one disc, opaque inside, clipped to its square, transparent elsewhere",
          "[render][sprites]") {
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

TEST_CASE("Sprite layer: later sprites go over earlier ones, and the colour modes",
          "[render][sprites]") {
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
  const RandomSprites sprites(3000, 7, -5.f, 45.f, -5.f, 45.f, [](std::mt19937& g) {
    return std::uniform_real_distribution<float>(0.5f, 5.f)(g);
  });
  const SpriteLayerInput in = sprites.input();
  SpriteLayer one, two;
  one.draw(unit_view(), in, 1);
  two.draw(unit_view(), in, 2);
  CHECK(one.pixels() == two.pixels());
  size_t lit = 0;
  for (size_t k = 3; k < one.pixels().size(); k += 4) lit += one.pixels()[k] > 0;
  CHECK(lit > one.pixels().size() / 8);  // the test draws something
}

TEST_CASE("Sprite layer: only the sprites' box is drawn, and the next draw clears it",
          "[render][sprites]") {
  // The window uploads and composites drawn() alone: every lit pixel must lie
  // in it, and a layer reused frame after frame must equal a fresh one (no
  // trails where the sprites were), whatever the bands.
  std::mt19937 g(11);
  std::uniform_real_distribution<float> u(-3.f, 43.f), r(0.3f, 4.f);
  SpriteLayer reused;
  for (int frame = 0; frame < 6; ++frame) {
    const size_t n =
        frame == 4 ? 0 : 50 + 40 * static_cast<size_t>(frame);  // frame 4: nothing to draw
    std::vector<float> xy(2 * n), radius(n);
    std::vector<uint8_t> rgba(4 * n, 180);
    // Each frame a cluster somewhere else: the last frame's box must be cleared.
    const float cx = 8.f + 5.f * static_cast<float>(frame),
                cy = 6.f + 3.f * static_cast<float>(frame % 3);
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

namespace {

/// The layer's formula one pixel at a time, as the header states it (base
/// colour mode): the reference the lanes of sprite_layer.cpp must equal byte
/// for byte. For each pixel centre p in the sprite's square [c - r, c + r)^2
/// (half-open), d = |p - c| / r; alpha = 1 - smoothstep(1 - 1/r, 1 + 1/(2r), d)
/// (0: untouched); a darker rim 1 - 0.35 smoothstep(0.55, 1, d) when r > 3;
/// each channel min(255, src + (1 - alpha) dst) rounded.
std::vector<uint8_t> reference_layer(const SpriteLayerView& v, const SpriteLayerInput& in) {
  std::vector<uint8_t> img(static_cast<size_t>(v.w) * v.h * 4, 0);
  const auto sstep = [](float e0, float e1, float x) {
    const float t = std::clamp((x - e0) / (e1 - e0), 0.f, 1.f);
    return t * t * (3.f - 2.f * t);
  };
  for (size_t i = 0; i < in.n; ++i) {
    const float x = in.xy[2 * i], y = in.xy[2 * i + 1];
    const float cx = v.a00 * x + v.a01 * y + v.b0 - static_cast<float>(v.x0);
    const float cy = v.a10 * x + v.a11 * y + v.b1 - static_cast<float>(v.y0);
    const float r = std::max(in.radius[i] * in.size_scale * in.px_per_world, 1.f);
    const float inv_r = 1.f / r, e0 = 1.f - inv_r, e1 = 1.f + 0.5f * inv_r;
    for (int j = 0; j < v.h; ++j)
      for (int k = 0; k < v.w; ++k) {
        const float px = static_cast<float>(k) + 0.5f, py = static_cast<float>(j) + 0.5f;
        if (!(px >= cx - r && px < cx + r && py >= cy - r && py < cy + r)) continue;
        const float dx = (px - cx) * inv_r, dy = (py - cy) * inv_r;
        const float d2 = dx * dx + dy * dy;
        if (d2 >= e1 * e1) continue;
        const float d = std::sqrt(d2);
        const float a = d > e0 ? 1.f - std::min((d - e0) * (r * (2.f / 3.f)), 1.f) *
                                           std::min((d - e0) * (r * (2.f / 3.f)), 1.f) *
                                           (3.f - 2.f * std::min((d - e0) * (r * (2.f / 3.f)), 1.f))
                               : 1.f;
        if (a <= 0.f) continue;
        const float shade = r > 3.f ? 1.f - sstep(0.55f, 1.f, d) * 0.35f : 1.f;
        uint8_t* p = &img[(static_cast<size_t>(j) * v.w + k) * 4];
        const float src[4] = {a * shade * (in.rgba[4 * i] / 255.f * 255.f),
                              a * shade * (in.rgba[4 * i + 1] / 255.f * 255.f),
                              a * shade * (in.rgba[4 * i + 2] / 255.f * 255.f), a * 255.f};
        for (int ch = 0; ch < 4; ++ch)
          p[ch] = static_cast<uint8_t>(
              std::min(255.f, src[ch] + (1.f - a) * static_cast<float>(p[ch])) + 0.5f);
      }
  }
  return img;
}

}  // namespace

TEST_CASE("Sprite layer: four pixels at a time draw what the formula draws one pixel at a time",
          "[render][sprites]") {
  // Sprites of every size the lanes treat apart: radius 1 pixel (the 2 x 2
  // block of a window of 100 000 particles), below 1 (drawn at 1), up to 3,
  // and over 3 (the rim), at any sub-pixel position, overlapping, and on
  // every edge of the layer (the right edge, where four pixels do not fit in the row).
  for (int w : {37, 40, 3}) {
    SpriteLayerView v;
    v.w = w;
    v.h = 29;
    const RandomSprites sprites(2500, 11 + static_cast<unsigned>(w), -3.f,
                                static_cast<float>(w) + 3.f, -3.f, 32.f, [](std::mt19937& g) {
                                  std::uniform_real_distribution<float> r01(0.f, 1.f);
                                  const float t = r01(g);
                                  return t < 0.4f    ? 1.f
                                         : t < 0.55f ? 0.3f + r01(g) * 0.7f
                                         : t < 0.8f  ? 1.f + 2.f * r01(g)
                                                     : 3.f + 5.f * r01(g);
                                });
    const SpriteLayerInput in = sprites.input();
    const std::vector<uint8_t> ref = reference_layer(v, in);
    for (int bands : {1, 2}) {
      SpriteLayer l;
      l.draw(v, in, bands);
      REQUIRE(l.pixels().size() == ref.size());
      size_t differ = 0, lit = 0;
      for (size_t k = 0; k < ref.size(); ++k) {
        differ += l.pixels()[k] != ref[k];
        lit += k % 4 == 3 && ref[k] > 0;
      }
      INFO("width " << w << ", bands " << bands << ": " << differ << " bytes differ");
      CHECK(differ == 0);
      CHECK(lit > ref.size() / 4 / 2);  // most of the layer is drawn on
    }
  }
}
