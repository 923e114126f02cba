/// Picking particles under the cursor, exactly: the result is a row of the
/// ParticleTable, so the window shows the same ID the headless runner exports.
#pragma once
#include <cstdint>
#include <vector>
#include "sim/core/vec.h"
#include "sim/scene/simulation.h"

namespace ps {

/// The particle whose disc (centre x, y, radius) contains `p` and whose centre
/// is nearest to it; `slack` widens every disc (world units) so that sub-pixel
/// particles can still be clicked. Returns the table row, or -1 when `p` lies
/// outside every (widened) disc. Ties go to the lower row.
int64_t pick_particle(const ParticleTable& t, Vec2 p, float slack = 0.f);

/// Rows of all particles whose centres lie within `radius` of `c` (in row order).
void particles_within(const ParticleTable& t, Vec2 c, float radius, std::vector<uint32_t>& out);

}  // namespace ps
