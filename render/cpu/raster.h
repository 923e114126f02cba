/// Software particle rasteriser for headless runs (no GL): draws particles as
/// round splats into an RGB image and writes PNG (stb_image_write).
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "sim/core/vec.h"

namespace ps {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  ///< row 0 is the top row
  void resize(int w, int h) { width = w; height = h; rgb.assign(static_cast<size_t>(w) * h * 3, 0); }
};

/// One splat: centre in world units, radius in world units, colour 0..1.
struct Splat {
  Vec2 x;
  float radius;
  float rgb[3];
};

/// Maps the world rectangle [lo, hi] onto the image (aspect preserved,
/// centred), clears to `background` and draws the splats in order.
void rasterize(Image& img, Vec2 lo, Vec2 hi, const std::vector<Splat>& splats,
               const float background[3], bool draw_frame);

/// Writes a PNG; returns false and sets *error when it cannot.
bool write_png(const std::string& path, const Image& img, std::string* error);
/// True when this build can write PNG files.
bool png_supported();

}  // namespace ps
