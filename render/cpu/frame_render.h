/// A simulation drawn into an image without OpenGL: the particles as splats
/// through the software rasteriser, DEM walls and rigid bodies over them.
/// Used by the headless images (`sandbox run --images`, `sandbox compare`,
/// app/frame_image.h) and the window's scene browser thumbnails.
#pragma once
#include "render/cpu/heat_view.h"
#include "render/cpu/raster.h"
#include "sim/scene/simulation.h"

namespace ps {

/// How headless images colour the particles (`sandbox run --color`).
struct ImageColor {
  bool heat = false;
  HeatColor mode = HeatColor::Temperature;
  float lo = 0.f, hi = 0.f;  ///< temperature range, fixed for the run
};

/// Draws the simulation's domain into `img` at its current size (the domain
/// rectangle fitted, aspect kept). `table` is scratch reused between calls.
void render_frame(Simulation& sim, ParticleTable& table, const ImageColor& color, Image& img);

}  // namespace ps
