/// Software particle rasteriser for headless runs (no GL): draws particles as
/// round splats into an RGB image and writes PNG (sim/core/image.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "sim/core/image.h"
#include "sim/core/vec.h"

namespace ps {

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

/// A filled convex polygon (a rigid body's part) in world units, with a
/// darker outline.
struct FilledPolygon {
  std::vector<Vec2> pts;  ///< counter-clockwise or clockwise
  float rgb[3];
};

/// Draws polygons over an image that rasterize() drew with the same lo, hi.
void draw_polygons(Image& img, Vec2 lo, Vec2 hi, const std::vector<FilledPolygon>& polys);

/// Writes a PNG (save_png); returns false and sets *error when it cannot.
bool write_png(const std::string& path, const Image& img, std::string* error);
/// True when this build can write PNG files (image_io_available).
inline bool png_supported() { return image_io_available(); }

}  // namespace ps
