#include "render/cpu/sprite_layer.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>
#include "render/cpu/colormap.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ps {

namespace {

// Four lanes (GCC and Clang vector extensions; SSE2 on x86-64, NEON on arm64).
typedef float F4 __attribute__((vector_size(16)));
typedef int I4 __attribute__((vector_size(16)));
typedef uint8_t U8x4 __attribute__((vector_size(4)));

/// The vertex shader's colour of particle i, 0..1.
void sprite_colour(const SpriteLayerInput& in, size_t i, float c[3]) {
  if (in.mode == 1 && in.scalar && in.cmap) {
    float t = std::clamp((in.scalar[i] - in.lo) / std::max(in.hi - in.lo, 1e-20f), 0.f, 1.f);
    if (!(t >= 0.f))
      t = 0.f;  // NaN (a blow-up's J or stress) takes the map's low end, not an undefined index
    // The 1D texture's linear filter at t (255/256) + 0.5/256: texel t * 255, interpolated.
    const float u = t * 255.f;
    const int k0 = std::min(static_cast<int>(u), 254);
    const float f = u - static_cast<float>(k0);
    for (int k = 0; k < 3; ++k)
      c[k] = ((1.f - f) * in.cmap[4 * k0 + k] + f * in.cmap[4 * (k0 + 1) + k]) / 255.f;
  } else if (in.mode == 2 && in.vxy) {
    const std::array<float, 3> h =
        direction_rgb(in.vxy[2 * i], in.vxy[2 * i + 1]);  // the shader's hue
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

/// Lane-wise square root (correctly rounded, as std::sqrt).
inline F4 sqrt4(F4 x) {
#if defined(__SSE2__)
  return _mm_sqrt_ps(x);
#else
  F4 r;
  for (int l = 0; l < 4; ++l) r[l] = std::sqrt(x[l]);
  return r;
#endif
}

/// Blends one pixel: each channel min(255, src + keep * dst) + 0.5, truncated
/// (values >= 0: rounds to nearest), the four channels in lanes.
inline void blend_pixel(uint8_t* p, F4 src, float keep) {
  U8x4 d;
  std::memcpy(&d, p, 4);
  const F4 dst = __builtin_convertvector(d, F4);
  F4 out = src + keep * dst;
  out = out < 255.f ? out : F4{255.f, 255.f, 255.f, 255.f};
  const U8x4 q = __builtin_convertvector(__builtin_convertvector(out + 0.5f, I4), U8x4);
  std::memcpy(p, &q, 4);
}

#if defined(__SSE2__)
/// blend_pixel for lane L of four: src = rgb255 * (as, as, as, a) and keep of
/// that lane, dst the pixel's channels; the result's channels as integers.
template <int L>
inline __m128i blend_lane(__m128 rgb255, __m128 a, __m128 as, __m128 keep, __m128 dst) {
  const __m128 t = _mm_shuffle_ps(as, a, _MM_SHUFFLE(L, L, L, L));   // as as a a
  const __m128 asa = _mm_shuffle_ps(t, t, _MM_SHUFFLE(2, 0, 0, 0));  // as as as a
  const __m128 kp = _mm_shuffle_ps(keep, keep, _MM_SHUFFLE(L, L, L, L));
  __m128 out = _mm_add_ps(_mm_mul_ps(rgb255, asa), _mm_mul_ps(kp, dst));
  out = _mm_min_ps(out, _mm_set1_ps(255.f));  // out < 255 ? out : 255, as blend_pixel
  return _mm_cvttps_epi32(_mm_add_ps(out, _mm_set1_ps(0.5f)));
}

/// blend_pixel on four pixels at once without branches: lanes 0 and 1 the
/// pixels p[0..8), lanes 2 and 3 the pixels q[0..8) (q = p + 8 unless
/// `Split`); the pixels of lanes not `lit` are written back as they were.
/// (Pixels of this band's rows only: a band owns whole rows.)
template <bool Split>
inline void blend4(uint8_t* p, uint8_t* q, F4 rgb255, F4 a, F4 as, F4 keep, I4 lit) {
  const __m128i z = _mm_setzero_si128();
  const __m128i old = Split
                          ? _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)),
                                               _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q)))
                          : _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i lo = _mm_unpacklo_epi8(old, z), hi = _mm_unpackhi_epi8(old, z);
  const __m128i q0 = blend_lane<0>(rgb255, a, as, keep, _mm_cvtepi32_ps(_mm_unpacklo_epi16(lo, z)));
  const __m128i q1 = blend_lane<1>(rgb255, a, as, keep, _mm_cvtepi32_ps(_mm_unpackhi_epi16(lo, z)));
  const __m128i q2 = blend_lane<2>(rgb255, a, as, keep, _mm_cvtepi32_ps(_mm_unpacklo_epi16(hi, z)));
  const __m128i q3 = blend_lane<3>(rgb255, a, as, keep, _mm_cvtepi32_ps(_mm_unpackhi_epi16(hi, z)));
  const __m128i now =
      _mm_packus_epi16(_mm_packs_epi32(q0, q1), _mm_packs_epi32(q2, q3));  // 0..255: exact
  const __m128i m = reinterpret_cast<__m128i>(lit);  // a lane's four bytes: all ones or zero
  const __m128i out = _mm_or_si128(_mm_and_si128(m, now), _mm_andnot_si128(m, old));
  if (Split) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), out);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q), _mm_unpackhi_epi64(out, out));
  } else {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), out);
  }
}
#endif

/// Draws the sprites' rows [row_lo, row_hi) of the layer (a band: bands
/// write disjoint pixels, each in sprite order, so any split gives the same image).
void draw_band(uint8_t* img, int w, const SpriteLayerView& v, const SpriteLayerInput& in,
               int row_lo, int row_hi, BandStats& st) {
  const float fw = static_cast<float>(w);
  // ceil(t) for |t| < 2^23 without the library call: the first integer >= t.
  const auto iceil = [](float t) {
    const int k = static_cast<int>(t);  // truncates towards zero
    return k + (static_cast<float>(k) < t ? 1 : 0);
  };
  // The box and the row counts are kept here and written to `st` once at the
  // end: the two bands' BandStats lie side by side, and a store per sprite
  // to a cache line the other thread also writes would cost more than the discs.
  int bx0 = INT_MAX, by0 = INT_MAX, bx1 = -1, by1 = -1;
  uint32_t* const starts = st.starts;
  const float band_lo = static_cast<float>(row_lo), band_hi = static_cast<float>(row_hi);
  const F4 lane{0.f, 1.f, 2.f, 3.f};
  const F4 one = F4{} + 1.f, zero = F4{};
  float last_r = -1.f, inv_r = 1.f, e0 = 0.f, e1sq = 1.f, inv_de = 1.f;
  for (size_t i = 0; i < in.n; ++i) {
    const float x = in.xy[2 * i], y = in.xy[2 * i + 1];
    // Centre in layer pixels, radius in pixels (never below one, as the shader).
    const float cy = v.a10 * x + v.a11 * y + v.b1 - static_cast<float>(v.y0);
    const float r = std::max(in.radius[i] * in.size_scale * in.px_per_world, 1.f);
    if (!(cy + r > band_lo && cy - r < band_hi)) continue;  // not in this band (or NaN)
    const float cx = v.a00 * x + v.a01 * y + v.b0 - static_cast<float>(v.x0);
    if (!(cx + r > 0.f && cx - r < fw) || !(r < 1e6f))
      continue;  // off the layer (or NaN, or absurd)
    // Pixels whose centre lies in the square [c - r, c + r)^2.
    const int i0 = std::max(0, iceil(cx - r - 0.5f));
    const int i1 = std::min(w - 1, iceil(cx + r - 0.5f) - 1);
    const int j0 = std::max(row_lo, iceil(cy - r - 0.5f));
    const int j1 = std::min(row_hi - 1, iceil(cy + r - 0.5f) - 1);
    if (i0 > i1 || j0 > j1) continue;
    bx0 = std::min(bx0, i0);
    bx1 = std::max(bx1, i1);
    by0 = std::min(by0, j0);
    by1 = std::max(by1, j1);
    ++starts[j0];
    if (r != last_r) {  // most scenes have one radius: the constants once
      last_r = r;
      inv_r = 1.f / r;  // also the anti-aliasing width aa (r >= 1: one pixel in radius units)
      e0 = 1.f - inv_r;
      const float e1 = 1.f + 0.5f * inv_r;
      e1sq = e1 * e1;
      inv_de = r * (2.f / 3.f);  // 1 / (e1 - e0)
    }
    float c[3];
    sprite_colour(in, i, c);
    const bool rim = r > 3.f;
    const F4 rgb255{c[0] * 255.f, c[1] * 255.f, c[2] * 255.f, 255.f};
    // Four pixels at a time, each lane the one-pixel arithmetic:
    // d = |p - c| / r; alpha = 1 - smoothstep(e0, e1, d) (1 where d <= e0;
    // where d * d <= e0 * e0, d <= e0 too, as sqrt(fl(e0^2)) = e0); the rim's
    // shade. Lanes outside the disc (or `valid`) are not lit: alpha 0, the shader discards.
    struct Lanes {
      F4 a, as, keep;
      I4 lit;
    };
    const auto shade4 = [&](F4 dx, F4 dy, I4 valid) {
      const F4 d2 = dx * dx + dy * dy;
      Lanes o;
      o.lit = valid & (d2 < e1sq);
      const F4 d = sqrt4(d2);
      F4 t = (d - e0) * inv_de;
      t = t < 1.f ? t : one;
      o.a = d > e0 ? 1.f - t * t * (3.f - 2.f * t) : one;
      F4 shade = one;
      if (rim) {  // 1 - 0.35 smoothstep(0.55, 1, d)
        F4 u = (d - 0.55f) / (1.f - 0.55f);
        u = u < 0.f ? zero : (1.f < u ? one : u);
        shade = 1.f - u * u * (3.f - 2.f * u) * 0.35f;
      }
      o.lit &= o.a > 0.f;
      o.keep = 1.f - o.a;
      o.as = o.a * shade;
      return o;
    };
    const auto blend_lanes = [&](uint8_t* p, const Lanes& o) {  // lane l: pixel p + 4 l, one by one
      for (int l = 0; l < 4; ++l) {
        if (!o.lit[l]) continue;
        const F4 src = rgb255 * F4{o.as[l], o.as[l], o.as[l], o.a[l]};
        blend_pixel(p + l * 4, src, o.keep[l]);
      }
    };
    const F4 cxv = F4{} + cx;
    const float dy0 = (static_cast<float>(j0) + 0.5f - cy) * inv_r;
#if defined(__SSE2__)
    if (i1 == i0 + 1 && j1 == j0 + 1) {
      // Two by two pixels (a sprite of radius 1 pixel: what 100 000
      // particles in a window are) in one set of lanes: (i0, j0), (i0 + 1, j0), (i0, j0 + 1), (i0 + 1, j0 + 1).
      const float dy1 = (static_cast<float>(j1) + 0.5f - cy) * inv_r;
      const F4 dx = ((static_cast<float>(i0) + F4{0.f, 1.f, 0.f, 1.f}) + 0.5f - cxv) * inv_r;
      const Lanes o = shade4(dx, F4{dy0, dy0, dy1, dy1}, I4{} - 1);
      if (_mm_movemask_ps(reinterpret_cast<__m128>(o.lit)) != 0) {
        uint8_t* p = img + (static_cast<size_t>(j0) * w + i0) * 4;
        blend4<true>(p, p + static_cast<size_t>(w) * 4, rgb255, o.a, o.as, o.keep, o.lit);
      }
      continue;
    }
#endif
    for (int j = j0; j <= j1; ++j) {
      const F4 dy = F4{} + (j == j0 ? dy0 : (static_cast<float>(j) + 0.5f - cy) * inv_r);
      uint8_t* row = img + static_cast<size_t>(j) * w * 4;
      for (int k = i0; k <= i1; k += 4) {
        const F4 dx = ((static_cast<float>(k) + lane) + 0.5f - cxv) * inv_r;
        const Lanes o = shade4(dx, dy, static_cast<float>(k) + lane <= static_cast<float>(i1));
        if (!(o.lit[0] | o.lit[1] | o.lit[2] | o.lit[3])) continue;
        uint8_t* p = row + static_cast<size_t>(k) * 4;
#if defined(__SSE2__)
        if (k + 4 <=
            w) {  // the four pixels lie in the row: one load and one store, unlit lanes kept
          blend4<false>(p, p + 8, rgb255, o.a, o.as, o.keep, o.lit);
          continue;
        }
#endif
        blend_lanes(p, o);
      }
    }
  }
  st.x0 = bx0;
  st.y0 = by0;
  st.x1 = bx1;
  st.y1 = by1;
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
      std::memset(&px_[(static_cast<size_t>(j) * w_ + drawn_.x) * 4], 0,
                  static_cast<size_t>(drawn_.w) * 4);
  }
  drawn_ = LayerRect{};
  if (w_ == 0 || h_ == 0 || !in.xy || !in.radius) return;

  // Two bands of rows on two threads when there is enough to draw (the
  // window draws the layer while the simulation's threads wait for the next frame).
  if (bands <= 0)
    bands = in.n >= 20000 && h_ >= 64 && std::thread::hardware_concurrency() > 1 ? 2 : 1;
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
