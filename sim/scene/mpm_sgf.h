/// SGF force lists applied to an MPM world (sim/sgf is the file format and the schedule; this
/// attaches one to MpmWorld::force_hook), beside dem_sgf.h for DEM worlds.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>
#include "sim/mpm/mpm_particles.h"
#include "sim/sgf/sgf.h"

namespace ps {

/// Called once for each batch of SGF IDs that name no particle: the step,
/// the IDs and the particle set.
using SgfMissingReport =
    std::function<void(int64_t step, const std::vector<uint32_t>& ids, const MpmParticles& p)>;

/// For MpmWorld::force_hook: zeroes p.fext, adds the forces active at the
/// (1-based) step and returns whether any force was added. Rows whose ID has
/// no particle are skipped and reported once per ID through `report`.
std::function<bool(int64_t, MpmParticles&)> make_mpm_force_hook(const SgfList& list,
                                                                SgfMissingReport report = nullptr);
std::function<bool(int64_t, MpmParticles&)> make_mpm_force_hook(const SgfSet& set,
                                                                SgfMissingReport report = nullptr);

}  // namespace ps
