#include "sim/verify/material_point.h"

#include <cmath>

namespace ps {
namespace verify {

UniaxialCurve uniaxial_tension(const MaterialParams& m, double rate, double dt, double final_strain,
                               int record_every) {
  UniaxialCurve c;
  Mat2 F = Mat2::identity();
  float Jp = 1.f;
  const float ax = static_cast<float>(std::exp(rate * dt));
  const int steps = static_cast<int>(std::ceil(final_strain / (rate * dt)));
  double strain = 0.0;
  for (int n = 1; n <= steps; ++n) {
    // Lateral stretch l: tau_yy(l) rises with l; bracket around the
    // volume-preserving guess 1 / ax and bisect to zero.
    auto trial = [&](float l, Mat2& Fo, float& Jo) {
      Fo = Mat2::diag(ax, l) * F;
      Jo = Jp;
      return mpm::constitutive(m, Fo, 1.f, Jo, Mat2{}, static_cast<float>(dt));
    };
    float lo = 0.8f / ax, hi = 1.2f;
    Mat2 Ft;
    float Jt;
    for (int it = 0; it < 60; ++it) {
      const float mid = 0.5f * (lo + hi);
      if (trial(mid, Ft, Jt).a11 > 0.f)
        hi = mid;
      else
        lo = mid;
    }
    const Mat2 tau = trial(0.5f * (lo + hi), Ft, Jt);
    F = Ft;
    Jp = Jt;
    strain += rate * dt;
    if (n % record_every == 0 || n == steps) {
      c.strain.push_back(strain);
      c.stress.push_back(tau.a00);
      c.lateral.push_back(std::fabs(tau.a11));
      c.plastic.push_back(m.type == MaterialType::Viscoplastic ? Jp - 1.0 : 0.0);
    }
  }
  return c;
}

}  // namespace verify
}  // namespace ps
