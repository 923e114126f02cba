#include "render/cpu/heat_view.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ps {

void melt_roles(const std::vector<MaterialParams>& materials, std::vector<MeltRole>& out) {
  out.assign(materials.size(), MeltRole::Inert);
  for (size_t k = 0; k < materials.size(); ++k) {
    const MaterialParams& m = materials[k];
    if (material_melts(m)) {
      out[k] = MeltRole::Melts;
      const size_t t = static_cast<size_t>(m.melts_into);
      if (t < materials.size() && t != k && !material_melts(materials[t]))
        out[t] = MeltRole::Target;
    }
  }
}

float melt_display_value(MeltRole role, float melt) {
  switch (role) {
    case MeltRole::Melts: return std::isfinite(melt) ? std::clamp(melt, 0.f, 1.f) : 0.f;
    case MeltRole::Target: return 1.f;
    case MeltRole::Inert: break;
  }
  return std::numeric_limits<float>::quiet_NaN();
}

std::array<float, 3> melt_rgb(Colormap c, float v) {
  if (std::isnan(v)) return kNoMeltGrey;
  return colormap_rgb(c, v);
}

std::array<float, 3> temperature_rgb(Colormap c, float t, float lo, float hi) {
  const float span = hi - lo;
  return colormap_rgb(c, span > 0.f ? (t - lo) / span : 0.f);
}

void temperature_range(const MpmParticles& p, float& lo, float& hi) {
  bool any = false;
  lo = hi = 0.f;
  for (float t : p.temp) {
    if (!std::isfinite(t)) continue;
    if (!any) {
      lo = hi = t;
      any = true;
      continue;
    }
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  }
}

void heat_particle_rgb(const MpmParticles& p, const std::vector<MaterialParams>& materials,
                       HeatColor mode, Colormap c, float lo, float hi,
                       std::vector<std::array<float, 3>>& out) {
  const size_t n = p.size();
  out.resize(n);
  if (mode == HeatColor::Temperature) {
    if (!(hi > lo)) temperature_range(p, lo, hi);
    for (size_t i = 0; i < n; ++i)
      out[i] = temperature_rgb(c, i < p.temp.size() ? p.temp[i] : lo, lo, hi);
    return;
  }
  std::vector<MeltRole> role;
  melt_roles(materials, role);
  for (size_t i = 0; i < n; ++i) {
    const size_t m = p.material[i];
    const MeltRole r = m < role.size() ? role[m] : MeltRole::Inert;
    out[i] = melt_rgb(c, melt_display_value(r, i < p.melt.size() ? p.melt[i] : 0.f));
  }
}

HeatBalance heat_balance(const HeatLedger& ledger, const HeatTotals& totals) {
  HeatBalance b;
  b.now = totals.heat();
  b.initial = ledger.have_initial ? ledger.initial_heat : b.now;
  b.inflow = ledger.walls + ledger.air + ledger.lamps;
  b.drift = b.now - b.initial - b.inflow;
  const double scale = std::max(std::fabs(b.inflow), std::fabs(b.now - b.initial));
  b.relative = scale > 0.0 ? std::fabs(b.drift) / scale : 0.0;
  return b;
}

}  // namespace ps
