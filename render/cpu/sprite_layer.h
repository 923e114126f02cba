/// Software sprites: the particle discs of shaders/particles.frag drawn on the
/// CPU into a premultiplied RGBA8 layer, which the window then puts over the
/// scene with one textured quad (render/gl_draw.h, SpritePath::Software).
///
/// Why: with software OpenGL (Mesa's llvmpipe, what a machine without a GPU
/// driver has) every sprite pays for its vertex, its setup and its binning,
/// about 0.15 us each on 2 cores, while the same disc costs a few pixel
/// writes here. The formula is the shader's: for a pixel centre inside the
/// sprite's square [c - r, c + r]^2, d = |p - c| / r, alpha = 1 -
/// smoothstep(1 - aa, 1 + aa / 2, d) with aa = 1 / max(r, 1), a darker rim
/// (1 - 0.35 smoothstep(0.55, 1, d)) when r > 3 pixels; colours by mode as the
/// vertex shader picks them. Sprites are blended in order ("over"), so the
/// layer composited with (ONE, ONE_MINUS_SRC_ALPHA) gives what drawing them one
/// by one with (SRC_ALPHA, ONE_MINUS_SRC_ALPHA) gives, up to 8-bit rounding.
/// Pixels are shaded and blended four at a time (SSE2 lanes: a row's four, or
/// the 2 x 2 block of a one-pixel sprite), each lane the one-pixel arithmetic,
/// so the image equals the formula evaluated pixel by pixel, byte for byte
/// (tests/render/test_sprite_layer.cpp holds that reference).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ps {

/// Where the layer lies and how the world maps onto it.
struct SpriteLayerView {
  /// World -> framebuffer pixels (GL convention: y up, pixel (i, j) covers
  /// [i, i + 1] x [j, j + 1]): px = a00 x + a01 y + b0, py = a10 x + a11 y + b1.
  float a00 = 1.f, a01 = 0.f, a10 = 0.f, a11 = 1.f, b0 = 0.f, b1 = 0.f;
  int x0 = 0, y0 = 0, w = 0, h = 0;  ///< the framebuffer rectangle the layer covers
};

/// The particles' columns (as ParticleRenderer::upload takes them) and how to colour them.
struct SpriteLayerInput {
  size_t n = 0;
  const float* xy = nullptr;      ///< 2n world positions
  const float* vxy = nullptr;     ///< 2n velocities (mode 2), may be null otherwise
  const float* scalar = nullptr;  ///< n values (mode 1), may be null otherwise
  const uint8_t* rgba = nullptr;  ///< 4n base colours (mode 0), may be null otherwise
  const float* radius = nullptr;  ///< n world radii
  float px_per_world = 1.f;       ///< framebuffer pixels per world unit
  float size_scale = 1.f;
  int mode = 0;  ///< ParticleShade: 0 base colour, 1 scalar + colour map, 2 velocity direction
  float lo = 0.f, hi = 1.f;  ///< scalar range mapped to the colour map's ends
  const uint8_t* cmap =
      nullptr;  ///< 256 RGBA8 texels (mode 1), sampled linearly as the 1D texture is
};

/// A rectangle of layer pixels: columns [x, x + w), rows [y, y + h).
struct LayerRect {
  int x = 0, y = 0, w = 0, h = 0;
  bool empty() const { return w <= 0 || h <= 0; }
};

class SpriteLayer {
 public:
  /// Clears the layer to transparent and draws the sprites in order. Rows are
  /// bottom-up (row 0 = framebuffer row view.y0), 4 bytes a pixel, premultiplied.
  /// `bands`: threads, each drawing a band of rows (the image does not depend
  /// on it); 0 picks 2 for 20 000 sprites or more on a multi-core machine, else 1.
  /// The bands split the rows where the last draw's sprites were halved.
  ///
  /// `drawn()` is the drawn pixels' bounding box; only it is cleared on the
  /// next draw, and the rest of the layer stays transparent, so a caller may
  /// upload and composite that box alone. (A dam break fills a sixth of the window:
  /// clearing, uploading and blending the whole layer cost more than the discs.)
  void draw(const SpriteLayerView& view, const SpriteLayerInput& in, int bands = 0);
  const std::vector<uint8_t>& pixels() const { return px_; }
  int width() const { return w_; }
  int height() const { return h_; }
  /// The rectangle the last draw() touched; every pixel outside it is 0.
  LayerRect drawn() const { return drawn_; }

 private:
  std::vector<uint8_t> px_;
  std::vector<uint32_t> starts_;  ///< sprites per first row in the last draw, for the band split
  int w_ = 0, h_ = 0;
  LayerRect drawn_;
};

}  // namespace ps
