#include "render/cpu/raster.h"

#include <algorithm>
#include <cmath>

namespace ps {

namespace {

/// The world rectangle [lo, hi] onto the image: aspect kept, centred, 8 px margin.
struct ViewMap {
  float scale = 0.f, ox = 0.f, oy = 0.f;
  int H = 0;
  Vec2 lo;
  bool ok = false;
  ViewMap(const Image& img, Vec2 lo_, Vec2 hi) : H(img.height), lo(lo_) {
    const float ww = hi.x - lo.x, wh = hi.y - lo.y;
    const int W = img.width;
    if (ww <= 0.f || wh <= 0.f || W <= 0 || H <= 0) return;
    const float margin = 8.f;
    scale = std::min((W - 2 * margin) / ww, (H - 2 * margin) / wh);
    ox = 0.5f * (W - scale * ww);
    oy = 0.5f * (H - scale * wh);
    ok = true;
  }
  void to_px(Vec2 p, float& px, float& py) const {
    px = ox + (p.x - lo.x) * scale;
    py = H - (oy + (p.y - lo.y) * scale);  // y up in the world, down in the image
  }
};

}  // namespace

void draw_polygons(Image& img, Vec2 lo, Vec2 hi, const std::vector<FilledPolygon>& polys) {
  const ViewMap m(img, lo, hi);
  if (!m.ok) return;
  const int W = img.width, H = img.height;
  for (const FilledPolygon& poly : polys) {
    const size_t n = poly.pts.size();
    if (n < 3) continue;
    std::vector<float> px(n), py(n);
    float x0 = 1e30f, x1 = -1e30f, y0 = 1e30f, y1 = -1e30f;
    for (size_t k = 0; k < n; ++k) {
      m.to_px(poly.pts[k], px[k], py[k]);
      x0 = std::min(x0, px[k]);
      x1 = std::max(x1, px[k]);
      y0 = std::min(y0, py[k]);
      y1 = std::max(y1, py[k]);
    }
    // Orientation in pixel space (y flips it).
    float area = 0.f;
    for (size_t k = 0; k < n; ++k) area += px[k] * py[(k + 1) % n] - py[k] * px[(k + 1) % n];
    const float sgn = area > 0.f ? 1.f : -1.f;
    const int ix0 = std::max(0, static_cast<int>(std::floor(x0))),
              ix1 = std::min(W - 1, static_cast<int>(std::ceil(x1)));
    const int iy0 = std::max(0, static_cast<int>(std::floor(y0))),
              iy1 = std::min(H - 1, static_cast<int>(std::ceil(y1)));
    for (int y = iy0; y <= iy1; ++y)
      for (int x = ix0; x <= ix1; ++x) {
        const float qx = x + 0.5f, qy = y + 0.5f;
        float dmin = 1e30f;  // distance inside, to the nearest edge (pixels)
        for (size_t k = 0; k < n; ++k) {
          const size_t k1 = (k + 1) % n;
          const float ex = px[k1] - px[k], ey = py[k1] - py[k];
          const float L = std::sqrt(ex * ex + ey * ey);
          if (L <= 0.f) continue;
          dmin = std::min(dmin, sgn * (ex * (qy - py[k]) - ey * (qx - px[k])) / L);
        }
        const float cover = std::clamp(dmin + 0.5f, 0.f, 1.f);
        if (cover <= 0.f) continue;
        const float shade = dmin < 2.f ? 0.45f : 1.f;  // a dark rim
        uint8_t* p = &img.rgb[(static_cast<size_t>(y) * W + x) * 3];
        for (int c = 0; c < 3; ++c) {
          const float src = std::clamp(poly.rgb[c] * shade, 0.f, 1.f) * 255.f;
          p[c] = static_cast<uint8_t>(p[c] + cover * (src - p[c]) + 0.5f);
        }
      }
  }
}

void rasterize(Image& img, Vec2 lo, Vec2 hi, const std::vector<Splat>& splats,
               const float background[3], bool draw_frame) {
  const int W = img.width, H = img.height;
  for (int i = 0; i < W * H; ++i)
    for (int c = 0; c < 3; ++c)
      img.rgb[static_cast<size_t>(i) * 3 + c] =
          static_cast<uint8_t>(std::clamp(background[c], 0.f, 1.f) * 255.f + 0.5f);
  const ViewMap m(img, lo, hi);
  if (!m.ok) return;
  const float scale = m.scale;
  auto to_px = [&](Vec2 p, float& px, float& py) { m.to_px(p, px, py); };
  if (draw_frame) {
    float x0, y0, x1, y1;
    to_px(lo, x0, y1);
    to_px(hi, x1, y0);
    auto put = [&](int x, int y) {
      if (x < 0 || y < 0 || x >= W || y >= H) return;
      uint8_t* p = &img.rgb[(static_cast<size_t>(y) * W + x) * 3];
      p[0] = p[1] = p[2] = 110;
    };
    for (int x = static_cast<int>(x0); x <= static_cast<int>(x1); ++x) {
      put(x, static_cast<int>(y0));
      put(x, static_cast<int>(y1));
    }
    for (int y = static_cast<int>(y0); y <= static_cast<int>(y1); ++y) {
      put(static_cast<int>(x0), y);
      put(static_cast<int>(x1), y);
    }
  }
  for (const Splat& s : splats) {
    float cx, cy;
    to_px(s.x, cx, cy);
    float r = std::max(0.75f, s.radius * scale);
    int x0 = std::max(0, static_cast<int>(std::floor(cx - r))),
        x1 = std::min(W - 1, static_cast<int>(std::ceil(cx + r)));
    int y0 = std::max(0, static_cast<int>(std::floor(cy - r))),
        y1 = std::min(H - 1, static_cast<int>(std::ceil(cy + r)));
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) {
        float dx = x + 0.5f - cx, dy = y + 0.5f - cy;
        float d = std::sqrt(dx * dx + dy * dy);
        float cover = std::clamp(r + 0.5f - d, 0.f, 1.f);  // 1-pixel anti-aliased edge
        if (cover <= 0.f) continue;
        float shade = 1.f - 0.25f * (d / r) * (d / r);  // slight sphere shading
        uint8_t* p = &img.rgb[(static_cast<size_t>(y) * W + x) * 3];
        for (int c = 0; c < 3; ++c) {
          float src = std::clamp(s.rgb[c] * shade, 0.f, 1.f) * 255.f;
          p[c] = static_cast<uint8_t>(p[c] + cover * (src - p[c]) + 0.5f);
        }
      }
  }
}

bool write_png(const std::string& path, const Image& img, std::string* error) {
  try {
    save_png(path, img);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
  return true;
}

}  // namespace ps
