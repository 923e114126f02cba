/// The window's 2D view: world <-> screen transforms, fit, pan and zoom about
/// the cursor. GL-free so it is unit tested without a window.
///
/// Coordinate spaces:
///   world       simulation units, y up
///   screen      window (logical) pixels, origin top-left, y down: GLFW cursor
///               positions and ImGui coordinates
///   framebuffer device pixels = screen * pixel_ratio (HiDPI: 2 on a Retina display)
///   NDC         OpenGL clip space of the whole framebuffer
#pragma once
#include "sim/core/vec.h"

namespace ps {

/// A screen-space rectangle (logical pixels).
struct ScreenRect {
  float x = 0.f, y = 0.f, w = 1.f, h = 1.f;
  Vec2 centre() const { return {x + 0.5f * w, y + 0.5f * h}; }
  bool contains(Vec2 p) const { return p.x >= x && p.y >= y && p.x < x + w && p.y < y + h; }
};

class Camera2D {
 public:
  /// Window size in logical pixels and framebuffer pixels per logical pixel.
  void set_window(float width, float height, float pixel_ratio);
  /// The part of the window the scene is framed in (between the side panels).
  void set_viewport(const ScreenRect& r) { viewport_ = r; }
  const ScreenRect& viewport() const { return viewport_; }

  /// Frames the world rectangle [lo, hi] centred in the viewport, leaving
  /// `margin` (a fraction of the viewport) free around it.
  void fit(Vec2 lo, Vec2 hi, float margin = 0.04f);

  Vec2 world_to_screen(Vec2 w) const;
  Vec2 screen_to_world(Vec2 s) const;
  Vec2 screen_to_framebuffer(Vec2 s) const { return s * ratio_; }
  Vec2 framebuffer_to_screen(Vec2 f) const { return f / ratio_; }

  /// Multiplies the zoom by `factor` keeping the world point under `screen` fixed.
  void zoom_about(Vec2 screen, float factor);
  /// Moves the view so that the content follows a cursor drag of `delta` screen pixels.
  void pan(Vec2 delta);

  /// Column-major 4x4 matrix mapping world (x, y, 0, 1) to NDC of the whole framebuffer.
  void world_to_ndc(float m[16]) const;

  /// Logical pixels per world unit.
  float scale() const { return scale_; }
  /// Framebuffer pixels per world unit (sprite sizes, line widths).
  float framebuffer_scale() const { return scale_ * ratio_; }
  float pixel_ratio() const { return ratio_; }
  Vec2 centre() const { return centre_; }
  float width() const { return width_; }
  float height() const { return height_; }
  void set(Vec2 centre, float scale) {
    centre_ = centre;
    scale_ = scale;
  }

  static constexpr float kMinScale = 1e-3f;
  static constexpr float kMaxScale = 1e7f;

 private:
  float width_ = 1.f, height_ = 1.f, ratio_ = 1.f;
  ScreenRect viewport_;
  Vec2 centre_{0.f, 0.f};  ///< world point shown at the viewport centre
  float scale_ = 1.f;      ///< logical pixels per world unit
};

}  // namespace ps
