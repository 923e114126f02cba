/// DEM worlds as P4 rows (the file format, sim/io/p4.h, stays out of sim/dem): particles as
/// P4P rows, contact records as P4C rows.
#pragma once
#include <vector>
#include "sim/dem/dem_world.h"
#include "sim/io/p4.h"

namespace ps {
namespace dem {

/// DEM particles -> P4P rows: ID, GROUP, VOLUME (sphere volume), MASS, position and velocity
/// with z = 0.
P4ParticleFrame p4_from_dem(const DemParticles& p, double time);
/// Contact records -> P4C rows (force on P1; P2 = 0 for wall contacts).
P4ContactFrame p4_from_contacts(const std::vector<ContactRecord>& contacts, double time);

}  // namespace dem
}  // namespace ps
