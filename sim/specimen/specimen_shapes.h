/// Our own silhouette images for specimens (assets/specimens/*.png): a disk,
/// an L-shape with a concave corner and a "dancer" made of limbs with a
/// coloured belt band. Shapes are rasterised by pixel centre: a pixel is
/// painted when its centre (c + 0.5, r + 0.5), in image coordinates (x right,
/// y down), is inside the shape. The shape structs are public so tests can
/// compute expected particle counts analytically.
#pragma once
#include <string>
#include <vector>
#include "sim/specimen/specimen.h"

namespace ps {

/// Disk of radius r about (cx, cy), image coordinates, on a size x size image.
struct DiskShape {
  int size = 96;
  float cx = 48.f, cy = 48.f, r = 40.f;
  bool contains(float x, float y) const {
    return (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r;
  }
};

/// L-shape: the vertical bar [x0, x0 + t) x [y0, y1) plus the foot
/// [x0, x1) x [y1 - t, y1), image coordinates (y down, so the foot is at the
/// bottom). The concave corner is at (x0 + t, y1 - t).
struct LShape {
  int size = 96;
  int x0 = 8, x1 = 88, y0 = 8, y1 = 88, t = 32;
  bool contains(float x, float y) const {
    const bool bar = x >= x0 && x < x0 + t && y >= y0 && y < y1;
    const bool foot = x >= x0 && x < x1 && y >= y1 - t && y < y1;
    return bar || foot;
  }
};

/// Silhouette colours: figure on a white background.
constexpr uint8_t kSilhouetteInk[3] = {34, 38, 58};
constexpr uint8_t kBeltColor[3] = {250, 214, 170};

Image make_disk_image(const DiskShape& d = {});
Image make_l_image(const LShape& l = {});
/// A 128 x 192 dancer: head, torso, a raised arm and a bent arm, one straight
/// and one stepping leg (capsules), and a belt band in kBeltColor across the
/// waist. Mask it with MaskRule::NotBackground (the belt is light, like the
/// white belt of the original); the belt is select_bright(s, 160).
Image make_dancer_image();

/// Writes disk.png, l_shape.png and dancer.png into `dir` (needs image I/O).
/// Returns the paths written.
std::vector<std::string> write_specimen_assets(const std::string& dir);

}  // namespace ps
