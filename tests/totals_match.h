// Shared by the CUDA and the fake-device tests: a world's totals summed on the
// device (fixed-order double sums) against the host's index-order diagnostics.
#pragma once
#include <catch2/catch.hpp>

#include "sim/mpm/mpm_world.h"

namespace ps {

inline void check_totals_match(const Diagnostics& t, const Diagnostics& d) {
  CHECK(t.mass == Approx(d.mass).epsilon(1e-12));
  CHECK(t.momentum[0] == Approx(d.momentum[0]).epsilon(1e-9).margin(1e-12));
  CHECK(t.momentum[1] == Approx(d.momentum[1]).epsilon(1e-9).margin(1e-12));
  CHECK(t.angular_momentum == Approx(d.angular_momentum).epsilon(1e-9));
  CHECK(t.kinetic_energy == Approx(d.kinetic_energy).epsilon(1e-12));
  CHECK(t.max_speed == d.max_speed);
}

}  // namespace ps
