/// SGF force lists on DEM grains: the DemWorld's force hook made from an SGF
/// list or set (the format and the schedule are sim/sgf/sgf.h's).
#pragma once
#include <cstdint>
#include <functional>
#include "sim/dem/dem_particles.h"
#include "sim/sgf/sgf.h"

namespace ps {

/// For dem::DemWorld::force_hook: zeroes p.fext, adds the forces active at the
/// (1-based) step in double precision (a 0.3 N row arrives as the double 0.3)
/// and returns whether any force was added.
std::function<bool(int64_t, dem::DemParticles&)> make_dem_force_hook(const SgfList& list);
std::function<bool(int64_t, dem::DemParticles&)> make_dem_force_hook(const SgfSet& set);

}  // namespace ps
