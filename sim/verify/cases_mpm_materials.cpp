// Verification cases (see verify.h): material models against closed-form
// answers. The viscoplastic stress plateau in uniaxial tension.
#include "sim/verify/verify.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include "sim/verify/material_point.h"

namespace ps {
namespace verify {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Mean of y over the samples with x in [a, b].
double mean_between(const std::vector<double>& x, const std::vector<double>& y, double a, double b) {
  double s = 0.0;
  int n = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] >= a && x[i] <= b) { s += y[i]; ++n; }
  return n ? s / n : NAN;
}

CaseResult viscoplastic_uniaxial(const Options&) {
  const auto t0 = std::chrono::steady_clock::now();
  CaseResult r;
  r.id = "mpm.viscoplastic_uniaxial";
  r.title = "von Mises viscoplastic: uniaxial tension plateau at the yield stress, and its viscous overstress";
  r.model = "mpm::viscoplastic_update (the shared per-particle code both steppers call), material-point driver";
  r.reference =
      "Plane-strain von Mises plasticity: with the lateral faces free (tau_yy = 0) dev tau = tau_xx/2 diag(1, -1), "
      "so yield |dev tau| = sqrt(2/3) tau_Y gives the plateau tau_xx = 2 tau_Y / sqrt(3) (Hill 1950, The "
      "Mathematical Theory of Plasticity, ch. V, plane strain). Perzyna viscoplasticity (Simo & Hughes 1998, "
      "Computational Inelasticity, sec. 2.7) at a steady deviatoric strain rate d: overstress "
      "|dev tau| - sqrt(2/3) tau_Y = sqrt(2) eta d, i.e. tau_xx = 2 tau_Y / sqrt(3) + 2 eta d (d = axial rate "
      "once the flow is isochoric). eta -> infinity: the elastic curve of the same energy.";
  MaterialParams m;
  m.type = MaterialType::Viscoplastic;
  m.kappa = 1e4f;
  m.mu = 2e3f;
  m.yield_stress = 50.f;
  const double rate = 1.0, dt = 1e-4, final_strain = 0.3;
  r.setup = "One material point, kappa = 1e4, mu = 2e3, tau_Y = 50 (scene units), axial log-strain rate 1 /s, "
            "dt = 1e-4 s, to strain 0.3 (3000 steps); lateral stretch solved each step for tau_yy = 0. Plateau = "
            "mean tau_xx over strain 0.2..0.3. eta = 0 (perfectly plastic), 0.1, 1, 10 and 1e9 (vs the elastic "
            "curve with tau_Y = 1e12).";
  Plot plot{"Uniaxial tension: axial Kirchhoff stress", "axial strain ln(l/l0)", "tau_xx", {}, false};
  const double plateau0 = 2.0 * m.yield_stress / std::sqrt(3.0);
  for (double eta : {0.0, 0.1, 1.0, 10.0}) {
    MaterialParams mm = m;
    mm.eta = static_cast<float>(eta);
    const UniaxialCurve c = uniaxial_tension(mm, rate, dt, final_strain);
    const double ref = plateau0 + 2.0 * eta * rate;
    r.checks.push_back(make_check("plateau tau_xx, eta = " + fmt("%g", eta), mean_between(c.strain, c.stress, 0.2, 0.3),
                                  ref, 5e-3, Compare::NearRel));
    double lat = 0.0;
    for (double v : c.lateral) lat = std::max(lat, v);
    r.checks.push_back(make_check("max |tau_yy| (free faces), eta = " + fmt("%g", eta), lat, 1e-3 * m.yield_stress, 0,
                                  Compare::Below));
    plot.series.push_back(Series{"eta = " + fmt("%g", eta), c.strain, c.stress, false, false});
    plot.series.push_back(Series{"reference, eta = " + fmt("%g", eta), {0.0, final_strain}, {ref, ref}, false, true});
  }
  {
    MaterialParams visc = m, elastic = m;
    visc.eta = 1e9f;
    elastic.yield_stress = 1e12f;
    const UniaxialCurve a = uniaxial_tension(visc, rate, dt, final_strain);
    const UniaxialCurve b = uniaxial_tension(elastic, rate, dt, final_strain);
    r.checks.push_back(make_check("tau_xx at strain 0.3, eta = 1e9, over the elastic curve", a.stress.back() / b.stress.back(),
                                  1.0, 1e-3, Compare::NearRel));
    plot.series.push_back(Series{"eta = 1e9", a.strain, a.stress, false, false});
  }
  r.plots.push_back(plot);
  r.notes = "The plateau is the yield stress the Materials panel sets, reached exactly by the return map (eta = 0); "
            "a viscous flow rule adds 2 eta d, so a larger eta resists a fast pull more: the toffee stretches "
            "instead of snapping.";
  r.seconds = seconds_since(t0);
  return r;
}

}  // namespace

std::vector<CaseSpec> mpm_material_cases() {
  return {
      {"mpm.viscoplastic_uniaxial", "MPM materials", true, viscoplastic_uniaxial},
  };
}

}  // namespace verify
}  // namespace ps
