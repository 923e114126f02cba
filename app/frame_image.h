// Headless pictures of a simulation written as PNG files (`sandbox run
// --images`, `sandbox compare`); the drawing itself is render/cpu/frame_render.h.
#pragma once
#include <string>
#include "render/cpu/frame_render.h"  // render_frame, ImageColor
#include "sim/scene/simulation.h"

namespace ps {

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
