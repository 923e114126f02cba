#include "render/cpu/sprite_layer.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <thread>
#include "render/cpu/colormap.h"

namespace ps {

namespace {

// Four lanes (GCC and Clang vector extensions; SSE2 on x86-64, NEON on arm64).
typedef float F4 __attribute__((vector_size(16)));
typedef int I4 __attribute__((vector_size(16)));

float smoothstep(float e0, float e1, float x) {
  const float t = std::clamp((x - e0) / (e1 - e0), 0.f, 1.f);
  return t * t * (3.f - 2.f * t);
}

/// The vertex shader's colour of particle i, 0..1.
void sprite_colour(const SpriteLayerInput& in, size_t i, float c[3]) {
  if (in.mode == 1 && in.scalar && in.cmap) {
    float t = std::clamp((in.scalar[i] - in.lo) / std::max(in.hi - in.lo, 1e-20f), 0.f, 1.f);
    if (!(t >= 0.f)) t = 0.f;  // NaN (a blow-up's J or stress) takes the map's low end, not an undefined index
    // The 1D texture's linear filter at t (255/256) + 0.5/256: texel t * 255, interpolated.
    const float u = t * 255.f;
    const int k0 = std::min(static_cast<int>(u), 254);
    const float f = u - static_cast<float>(k0);
    for (int k = 0; k < 3; ++k)
      c[k] = ((1.f - f) * in.cmap[4 * k0 + k] + f * in.cmap[4 * (k0 + 1) + k]) / 255.f;
  } else if (in.mode == 2 && in.vxy) {
    const std::array<float, 3> h = direction_rgb(in.vxy[2 * i], in.vxy[2 * i + 1]);  // the shader's hue
    c[0] = h[0];
    c[1] = h[1];
    c[2] = h[2];
  } else if (in.rgba) {
    constexpr float kInv255 = 1.f / 255.f;
    for (int k = 0; k < 3; ++k) c[k] = static_cast<float>(in.rgba[4 * i + k]) * kInv255;
  } else {
    c[0] = c[1] = c[2] = 1.f;
  }
}

}  // namespace

namespace {

/// What a band drew: the pixels' bounding box and, per row, how many sprites start there.
struct BandStats {
  int x0 = INT_MAX, y0 = INT_MAX, x1 = -1, y1 = -1;
  uint32_t* starts = nullptr;  ///< the layer's rows, this band's written only
};

/// Draws the sprites' rows [row_lo, row_hi) of the layer (a band: bands
/// write disjoint pixels, each in sprite order, so any split gives the same image).
void draw_band(uint8_t* img, int w, const SpriteLayerView& v, const SpriteLayerInput& in, int row_lo, int row_hi,
               BandStats& st) {
  const float fw = static_cast<float>(w);
  // ceil(t) for |t| < 2^23 without the library call: the first integer >= t.
  const auto iceil = [](float t) {
    const int k = static_cast<int>(t);  // truncates towards zero
    return k + (static_cast<float>(k) < t ? 1 : 0);
  };
  const float band_lo = static_cast<float>(row_lo), band_hi = static_cast<float>(row_hi);
  float last_r = -1.f, inv_r = 1.f, e0 = 0.f, e0sq = 0.f, e1sq = 1.f, inv_de = 1.f;
  for (size_t i = 0; i < in.n; ++i) {
    const float x = in.xy[2 * i], y = in.xy[2 * i + 1];
    // Centre in layer pixels, radius in pixels (never below one, as the shader).
    const float cy = v.a10 * x + v.a11 * y + v.b1 - static_cast<float>(v.y0);
    const float r = std::max(in.radius[i] * in.size_scale * in.px_per_world, 1.f);
    if (!(cy + r > band_lo && cy - r < band_hi)) continue;  // not in this band (or NaN)
    const float cx = v.a00 * x + v.a01 * y + v.b0 - static_cast<float>(v.x0);
    if (!(cx + r > 0.f && cx - r < fw) || !(r < 1e6f)) continue;  // off the layer (or NaN, or absurd)
    // Pixels whose centre lies in the square [c - r, c + r)^2.
    const int i0 = std::max(0, iceil(cx - r - 0.5f));
    const int i1 = std::min(w - 1, iceil(cx + r - 0.5f) - 1);
    const int j0 = std::max(row_lo, iceil(cy - r - 0.5f));
    const int j1 = std::min(row_hi - 1, iceil(cy + r - 0.5f) - 1);
    if (i0 > i1 || j0 > j1) continue;
    st.x0 = std::min(st.x0, i0);
    st.x1 = std::max(st.x1, i1);
    st.y0 = std::min(st.y0, j0);
    st.y1 = std::max(st.y1, j1);
    ++st.starts[j0];
    if (r != last_r) {  // most scenes have one radius: the constants once
      last_r = r;
      inv_r = 1.f / r;  // also the anti-aliasing width aa (r >= 1: one pixel in radius units)
      e0 = 1.f - inv_r;
      const float e1 = 1.f + 0.5f * inv_r;
      e0sq = e0 > 0.f ? e0 * e0 : 0.f;
      e1sq = e1 * e1;
      inv_de = r * (2.f / 3.f);  // 1 / (e1 - e0)
    }
    float c[3];
    sprite_colour(in, i, c);
    const bool rim = r > 3.f;
    const float c0 = c[0] * 255.f, c1 = c[1] * 255.f, c2 = c[2] * 255.f;
    for (int j = j0; j <= j1; ++j) {
      const float dy = (static_cast<float>(j) + 0.5f - cy) * inv_r;
      uint8_t* p = img + (static_cast<size_t>(j) * w + i0) * 4;
      for (int k = i0; k <= i1; ++k, p += 4) {
        const float dx = (static_cast<float>(k) + 0.5f - cx) * inv_r;
        const float d2 = dx * dx + dy * dy;
        if (d2 >= e1sq) continue;  // alpha 0: the shader discards
        float a = 1.f, shade = 1.f;
        if (d2 > e0sq || rim) {
          const float d = std::sqrt(d2);
          if (d > e0) {
            const float t = std::min((d - e0) * inv_de, 1.f);
            a = 1.f - t * t * (3.f - 2.f * t);
          }
          if (rim) shade = 1.f - smoothstep(0.55f, 1.f, d) * 0.35f;
        }
        if (a <= 0.f) continue;
        const float keep = 1.f - a, as = a * shade;
        // The four channels at once, each lane the scalar arithmetic:
        // min(255, src + keep * dst) + 0.5, truncated (values >= 0: rounds to nearest).
        const F4 dst = __builtin_convertvector((I4{p[0], p[1], p[2], p[3]}), F4);
        const F4 src = F4{as * c0, as * c1, as * c2, a * 255.f};
        F4 out = src + keep * dst;
        out = out < 255.f ? out : F4{255.f, 255.f, 255.f, 255.f};
        const I4 q = __builtin_convertvector(out + 0.5f, I4);
        for (int ch = 0; ch < 4; ++ch) p[ch] = static_cast<uint8_t>(q[ch]);
      }
    }
  }
}

}  // namespace

void SpriteLayer::draw(const SpriteLayerView& v, const SpriteLayerInput& in, int bands) {
  const int w = std::max(v.w, 0), h = std::max(v.h, 0);
  if (w != w_ || h != h_ || px_.size() != static_cast<size_t>(w) * h * 4) {
    w_ = w;
    h_ = h;
    px_.assign(static_cast<size_t>(w_) * h_ * 4, 0);
    starts_.clear();
  } else {
    // Only the last drawn rectangle holds anything.
    for (int j = drawn_.y; j < drawn_.y + drawn_.h; ++j)
      std::memset(&px_[(static_cast<size_t>(j) * w_ + drawn_.x) * 4], 0, static_cast<size_t>(drawn_.w) * 4);
  }
  drawn_ = LayerRect{};
  if (w_ == 0 || h_ == 0 || !in.xy || !in.radius) return;

  // Two bands of rows on two threads when there is enough to draw (the
  // window draws the layer while the simulation's threads wait for the next frame).
  if (bands <= 0) bands = in.n >= 20000 && h_ >= 64 && std::thread::hardware_concurrency() > 1 ? 2 : 1;
  // The split: where half of the last draw's sprites had started (the water
  // of a dam break lies in the bottom rows: halving the rows would leave one
  // thread idle). The image does not depend on it.
  int mid = h_ / 2;
  if (starts_.size() == static_cast<size_t>(h_)) {
    uint64_t total = 0, seen = 0;
    for (uint32_t c : starts_) total += c;
    for (int j = 0; j < h_ && total > 0; ++j) {
      seen += starts_[static_cast<size_t>(j)];
      if (2 * seen >= total) {
        mid = j + 1;
        break;
      }
    }
  }
  mid = std::clamp(mid, 1, std::max(1, h_ - 1));
  starts_.assign(static_cast<size_t>(h_), 0);
  BandStats lo, hi;
  lo.starts = hi.starts = starts_.data();
  if (bands == 1 || h_ < 2) {
    draw_band(px_.data(), w_, v, in, 0, h_, lo);
  } else {
    std::thread top([&] { draw_band(px_.data(), w_, v, in, mid, h_, hi); });
    draw_band(px_.data(), w_, v, in, 0, mid, lo);
    top.join();
  }
  const int x0 = std::min(lo.x0, hi.x0), y0 = std::min(lo.y0, hi.y0);
  const int x1 = std::max(lo.x1, hi.x1), y1 = std::max(lo.y1, hi.y1);
  if (x0 <= x1 && y0 <= y1) drawn_ = LayerRect{x0, y0, x1 - x0 + 1, y1 - y0 + 1};
}

}  // namespace ps
