// Headless pictures of a simulation: the particles as splats through the
// software rasteriser, DEM walls and rigid bodies over them (`sandbox run
// --images`, `sandbox compare`).
#pragma once
#include <string>
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

/// render_frame into a 960 x 720 image written as a PNG; false and *err when
/// it cannot be written.
bool write_image(Simulation& sim, const std::string& path, ParticleTable& table, std::string* err,
                 const ImageColor& color);

/// Creates the output folder and its parents; throws std::runtime_error naming it.
void create_output_dir(const std::string& dir);
/// `every` (write a PNG every so many frames) when this build can write PNGs;
/// else 0, with a note on stderr.
long png_interval(long every);

}  // namespace ps
