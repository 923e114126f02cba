/// Material-point drivers: the shared constitutive update (sim/mpm/materials.h,
/// the function both steppers call) run on one homogeneously deformed point,
/// for verification cases and tests that need a load path with a closed-form
/// answer.
#pragma once
#include <vector>
#include "sim/mpm/materials.h"

namespace ps {
namespace verify {

/// Plane-strain uniaxial tension at a constant logarithmic strain rate:
/// each step the axial stretch grows by exp(rate dt) and the lateral stretch
/// is solved (bisection) so the lateral Kirchhoff stress is zero, as at a
/// bar's free faces; F is then projected by mpm::constitutive.
struct UniaxialCurve {
  std::vector<double> strain;   ///< axial logarithmic strain ln(l / l0)
  std::vector<double> stress;   ///< axial Kirchhoff stress tau_xx
  std::vector<double> lateral;  ///< |tau_yy| left by the lateral solve (should be ~0)
  std::vector<double> plastic;  ///< equivalent plastic strain (Jp - 1 for viscoplastic)
};
UniaxialCurve uniaxial_tension(const MaterialParams& m, double rate, double dt, double final_strain,
                               int record_every = 10);

}  // namespace verify
}  // namespace ps
