/// The window's view state (internal to render/; part of App, window_state.h): the camera, the
/// legends' dock beside the scene, the colour mode and its maps and ranges, the overlays'
/// switches, the particle size, the side panels' widths. Written by the panels and keys, read
/// by the drawing; settings.ini keeps most of it (App::fill_settings).
#pragma once
#include <array>
#include <vector>
#include "render/cpu/camera.h"
#include "render/cpu/colormap.h"
#include "render/cpu/heat_view.h"
#include "render/cpu/layout.h"
#include "render/gl_draw.h"

namespace ps {

struct ViewState {
  Camera2D cam;
  bool view_touched = false;  ///< user panned/zoomed: stop auto-fitting on resize
  ScreenRect last_fit_viewport{0, 0, 0, 0};
  /// The legends and the status line beside the scene, never over it (render/cpu/layout.h):
  /// the split of the scene's area this frame, the boxes placed in it, and the last
  /// frame's boxes, from which the split is made.
  OverlayDock overlay_dock;
  /// This frame's placing; the dock's fit, checked every frame.
  OverlayFlow overlay_flow, overlay_check;
  std::vector<Vec2> overlay_boxes;
  /// What the dock was split for: the scene's area, what is shown, how many panes.
  struct OverlayKey {
    float x = 0.f, y = 0.f, w = 0.f, h = 0.f;
    const void* shown = nullptr;
    int panes = 0;
    bool operator==(const OverlayKey& o) const {
      return x == o.x && y == o.y && w == o.w && h == o.h && shown == o.shown && panes == o.panes;
    }
  };
  OverlayKey overlay_key;
  ColorMode color_mode = ColorMode::Material;
  int scalar_column = 0;
  std::array<Colormap, kColorModeCount> cmap{
      Colormap::Viridis,  Colormap::Turbo,   Colormap::Viridis, Colormap::Coolwarm,
      Colormap::Viridis,  Colormap::Viridis, Colormap::Turbo,   Colormap::Turbo,
      Colormap::Coolwarm, Colormap::IceWater};
  bool auto_range = true;
  float range_lo = 0.f, range_hi = 1.f;
  float sprite_scale = 1.f;
  bool show_grid = false, show_grid_velocity = false, show_particle_velocity = false,
       show_affine = true;
  /// Rigid bodies' contact points and the matter's force on each body (render/feature_rigid.cpp).
  bool show_contacts = true, show_forces = true;
  bool show_help = false;
  /// Speed drawn as a 1.5-cell arrow: the largest speed seen since the last
  /// load or preset, so decay (PIC losing rotation) shows as shrinking arrows.
  float grid_ref_speed = 0.f, particle_ref_speed = 0.f;
  bool vsync = true;
  /// A frame's time besides stepping (moving average): the step budget's complement.
  double frame_rest_ms = 0.0;
  SpritePath sprite_path = SpritePath::Auto;  ///< settings view.sprites (render/gl_draw.h)
  float left_w = 340.f, right_w = 330.f;      ///< panel widths (logical px, scaled)
  /// The widths wanted (the defaults, or where the user dragged the edges): left_w and right_w
  /// are these within the panels' share of the window (render/cpu/layout.h), applied every frame.
  float left_pref = 340.f, right_pref = 330.f;
  /// Tab: both side panels hidden, the scene takes the window (a projector's presenter view).
  bool panels_hidden = false;
  /// What the left and the right panel take.
  float side_left() const { return panels_hidden ? 0.f : left_w; }
  float side_right() const { return panels_hidden ? 0.f : right_w; }
  /// The side panels' background: their ImGui window background is left
  /// transparent and a scissored clear in the colour ImGui would have blended
  /// over the scene is put first in each panel's draw list (a callback), so it
  /// keeps the window's place in ImGui's drawing order. With software OpenGL
  /// the blended, textured background quad cost about 1.5 ms a frame.
  struct PanelBackground {
    std::array<float, 4> rect{};  ///< display coordinates: x, y, w, h
    std::array<float, 3> rgb{};
    /// This frame's ImDrawList of the panel, until the callback is put in.
    void* draw_list = nullptr;
  };
  std::array<PanelBackground, 2> panel_backgrounds{};

  // Temperature colours (heat itself is a feature, render/feature_heat.cpp).
  bool temp_auto = true;                  ///< temperature range from the particles' min / max
  float temp_lo = -10.f, temp_hi = 60.f;  ///< the fixed temperature range, deg C
  std::vector<MeltRole> melt_role;        ///< per material (melt-fraction colours)
};

}  // namespace ps
