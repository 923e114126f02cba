#include "sim/specimen/specimen_shapes.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace ps {

namespace {

void paint(Image& img, int c, int r, const uint8_t rgb[3]) {
  uint8_t* p = img.at(c, r);
  p[0] = rgb[0];
  p[1] = rgb[1];
  p[2] = rgb[2];
}

/// Distance^2 from (x, y) to the segment a-b.
float seg_dist2(float x, float y, float ax, float ay, float bx, float by) {
  const float ux = bx - ax, uy = by - ay;
  const float l2 = ux * ux + uy * uy;
  float t = l2 > 0.f ? ((x - ax) * ux + (y - ay) * uy) / l2 : 0.f;
  t = std::min(1.f, std::max(0.f, t));
  const float dx = x - (ax + t * ux), dy = y - (ay + t * uy);
  return dx * dx + dy * dy;
}

/// A limb: a polyline of joints with a radius (a chain of capsules).
struct Limb {
  std::vector<Vec2> joints;
  float radius;
  bool contains(float x, float y) const {
    for (size_t k = 0; k + 1 < joints.size(); ++k)
      if (seg_dist2(x, y, joints[k].x, joints[k].y, joints[k + 1].x, joints[k + 1].y) <=
          radius * radius)
        return true;
    return false;
  }
};

/// Convex polygon, vertices in order (either orientation).
struct Convex {
  std::vector<Vec2> v;
  bool contains(float x, float y) const {
    int sign = 0;
    for (size_t k = 0; k < v.size(); ++k) {
      const Vec2 a = v[k], b = v[(k + 1) % v.size()];
      const float c = (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x);
      const int s = c > 0.f ? 1 : (c < 0.f ? -1 : 0);
      if (s == 0) continue;
      if (sign == 0)
        sign = s;
      else if (s != sign)
        return false;
    }
    return true;
  }
};

}  // namespace

Image make_disk_image(const DiskShape& d) {
  Image img;
  img.resize(d.size, d.size);
  for (int r = 0; r < d.size; ++r)
    for (int c = 0; c < d.size; ++c)
      if (d.contains(c + 0.5f, r + 0.5f)) paint(img, c, r, kSilhouetteInk);
  return img;
}

Image make_l_image(const LShape& l) {
  Image img;
  img.resize(l.size, l.size);
  for (int r = 0; r < l.size; ++r)
    for (int c = 0; c < l.size; ++c)
      if (l.contains(c + 0.5f, r + 0.5f)) paint(img, c, r, kSilhouetteInk);
  return img;
}

Image make_dancer_image() {
  const int W = 128, H = 192;
  const float head_cx = 64.f, head_cy = 24.f, head_r = 13.f;
  const Limb neck{{{64.f, 34.f}, {64.f, 46.f}}, 5.f};
  const Convex torso{{{46.f, 46.f}, {82.f, 46.f}, {75.f, 100.f}, {53.f, 100.f}}};
  const Convex hips{{{53.f, 98.f}, {75.f, 98.f}, {82.f, 118.f}, {46.f, 118.f}}};
  const Limb arm_up{{{79.f, 50.f}, {100.f, 32.f}, {110.f, 8.f}}, 5.f};  // raised right arm
  const Limb arm_bent{{{49.f, 50.f}, {28.f, 72.f}, {40.f, 94.f}},
                      5.f};  // bent left arm, hand at the hip
  const Limb leg_straight{{{56.f, 112.f}, {51.f, 150.f}, {47.f, 182.f}, {36.f, 184.f}}, 7.f};
  const Limb leg_step{{{72.f, 112.f}, {92.f, 144.f}, {100.f, 178.f}, {112.f, 181.f}}, 7.f};
  const float belt_y0 = 96.f, belt_y1 = 108.f;

  Image img;
  img.resize(W, H);
  for (int r = 0; r < H; ++r)
    for (int c = 0; c < W; ++c) {
      const float x = c + 0.5f, y = r + 0.5f;
      const bool head =
          (x - head_cx) * (x - head_cx) + (y - head_cy) * (y - head_cy) <= head_r * head_r;
      const bool trunk = torso.contains(x, y) || hips.contains(x, y);
      const bool body = head || trunk || neck.contains(x, y) || arm_up.contains(x, y) ||
                        arm_bent.contains(x, y) || leg_straight.contains(x, y) ||
                        leg_step.contains(x, y);
      if (!body) continue;
      // The belt band crosses the trunk only (the hand resting on it stays ink).
      const bool belt = trunk && y >= belt_y0 && y < belt_y1 && !arm_bent.contains(x, y);
      paint(img, c, r, belt ? kBeltColor : kSilhouetteInk);
    }
  return img;
}

std::vector<std::string> write_specimen_assets(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string disk = (std::filesystem::path(dir) / "disk.png").string();
  const std::string ell = (std::filesystem::path(dir) / "l_shape.png").string();
  const std::string dancer = (std::filesystem::path(dir) / "dancer.png").string();
  save_png(disk, make_disk_image());
  save_png(ell, make_l_image());
  save_png(dancer, make_dancer_image());
  return {disk, ell, dancer};
}

}  // namespace ps
