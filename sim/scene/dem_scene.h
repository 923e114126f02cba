/// DEM scene files ("kind": "dem"): the format is documented in docs/dem.md.
#pragma once
#include <string>
#include "sim/dem/dem_world.h"
#include "sim/io/json.h"

namespace ps {
namespace dem {

/// Replaces `world`'s contents with the scene in `root` (parameters,
/// materials, walls, bodies, regions, loads), forms the bonds and resets the
/// clock. Throws ps::InputError naming file:line:col and the dotted field
/// path for every bad or unknown field. `scene_dir` is the scene file's
/// folder (the DEM format has no external files yet; kept for symmetry).
void load_dem_scene(const ps::Json& root, const std::string& scene_dir, DemWorld& world);

/// Parses and loads a scene file.
void load_dem_scene_file(const std::string& path, DemWorld& world);

}  // namespace dem
}  // namespace ps

namespace ps {
using dem::load_dem_scene;
}  // namespace ps
