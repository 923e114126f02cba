/// Per-frame particle snapshot for drawing and picking, and the scalar fields
/// the colour modes show. Reuses the table's storage: no allocation per frame
/// once the particle count is stable.
#pragma once
#include <string>
#include <vector>
#include "sim/mpm/mpm_world.h"
#include "sim/scene/simulation.h"

namespace ps {

/// Extra columns of an MPM snapshot, in this order. The temperature (deg C,
/// sim/mpm/heat.h) is a host column: the CUDA-GL interop does not write it.
enum MpmColumn : int {
  kColJ = 0,
  kColJp = 1,
  kColPressure = 2,
  kColVonMises = 3,
  kColPlastic = 4,
  kColTemperature = 5,
  kMpmColumnCount = 6
};

/// Fills `t` from the world (same rows, IDs, radii and colours as
/// MpmSimulation::table). The stress columns (Cauchy pressure and von Mises
/// stress, from the material's constitutive model) are computed only when
/// `with_stress` is set, else left at zero.
void mpm_snapshot(MpmWorld& w, ParticleTable& t, bool with_stress);

/// Cauchy stress sigma = tau / J of particle i from the material model
/// (the kernels' `constitutive`, evaluated on copies: nothing is changed).
Mat2 particle_cauchy_stress(const MpmWorld& w, size_t i);

/// Column index of `name` in t.extra_names, or -1.
int find_column(const ParticleTable& t, const std::string& name);

/// Range [lo, hi] of the finite values of `v` (lo = hi = 0 when empty).
void value_range(const std::vector<float>& v, float& lo, float& hi);

/// Robust range: the `tail` and 1 - `tail` quantiles of the finite values, so
/// a few splashing particles do not wash out the colour scale. `scratch` is
/// reused storage (no allocation once it has grown).
void robust_range(const std::vector<float>& v, float tail, std::vector<float>& scratch, float& lo,
                  float& hi);

/// The speed colours' auto range: 0 to the fastest speed since it was reset
/// (a load, a preset, a comparison's start: hi = 0), never shrinking, so a
/// motion that dies out fades to the slow end instead of its noise filling
/// the bar. `frame_hi` is this frame's (robust) largest speed.
inline void hold_speed_range(float frame_hi, float& lo, float& hi) {
  lo = 0.f;
  hi = frame_hi > hi ? frame_hi : hi;
  if (!(hi > 1e-6f)) hi = 1e-6f;
}

}  // namespace ps
