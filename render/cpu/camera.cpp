#include "render/cpu/camera.h"

#include <algorithm>

namespace ps {

void Camera2D::set_window(float width, float height, float pixel_ratio) {
  width_ = std::max(1.f, width);
  height_ = std::max(1.f, height);
  ratio_ = pixel_ratio > 0.f ? pixel_ratio : 1.f;
}

void Camera2D::fit(Vec2 lo, Vec2 hi, float margin) {
  float ww = std::max(hi.x - lo.x, 1e-6f);
  float wh = std::max(hi.y - lo.y, 1e-6f);
  float keep = std::clamp(1.f - 2.f * margin, 0.1f, 1.f);
  centre_ = 0.5f * (lo + hi);
  scale_ = std::clamp(keep * std::min(viewport_.w / ww, viewport_.h / wh), kMinScale, kMaxScale);
}

Vec2 Camera2D::world_to_screen(Vec2 w) const {
  Vec2 c = viewport_.centre();
  return {c.x + (w.x - centre_.x) * scale_, c.y - (w.y - centre_.y) * scale_};
}

Vec2 Camera2D::screen_to_world(Vec2 s) const {
  Vec2 c = viewport_.centre();
  return {centre_.x + (s.x - c.x) / scale_, centre_.y - (s.y - c.y) / scale_};
}

void Camera2D::zoom_about(Vec2 screen, float factor) {
  if (!(factor > 0.f)) return;
  // Keep w = screen_to_world(screen) fixed: solve centre' from
  // screen = c + (w - centre') * scale' (x), c - (w - centre') * scale' (y).
  Vec2 w = screen_to_world(screen);
  scale_ = std::clamp(scale_ * factor, kMinScale, kMaxScale);
  Vec2 c = viewport_.centre();
  centre_.x = w.x - (screen.x - c.x) / scale_;
  centre_.y = w.y + (screen.y - c.y) / scale_;
}

void Camera2D::pan(Vec2 delta) {
  centre_.x -= delta.x / scale_;
  centre_.y += delta.y / scale_;
}

void Camera2D::world_to_ndc(float m[16]) const {
  // screen = c + (w - centre) * (s, -s); ndc = (2 sx / W - 1, 1 - 2 sy / H).
  Vec2 c = viewport_.centre();
  float ax = 2.f * scale_ / width_;
  float ay = 2.f * scale_ / height_;
  float bx = 2.f * (c.x - centre_.x * scale_) / width_ - 1.f;
  float by = 1.f - 2.f * (c.y + centre_.y * scale_) / height_;
  for (int i = 0; i < 16; ++i) m[i] = 0.f;
  m[0] = ax;
  m[5] = ay;
  m[10] = 1.f;
  m[12] = bx;
  m[13] = by;
  m[15] = 1.f;
}

}  // namespace ps
