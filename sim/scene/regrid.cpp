#include "sim/scene/regrid.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ps {

RegridPlan plan_regrid(const std::vector<std::string>& overrides, int n_old, int n_new, float dt,
                       int substeps) {
  RegridPlan p;
  for (const auto& o : overrides)
    if (o.rfind("domain.grid=", 0) != 0) p.overrides.push_back(o);
  p.overrides.push_back("domain.grid=" + std::to_string(n_new));
  const double k =
      n_old > 0 && n_new > 0 ? static_cast<double>(n_new) / n_old : 1.0;  // cells x k: dt / k
  p.dt = static_cast<float>(dt / k);
  p.substeps =
      std::clamp(static_cast<int>(std::lround(substeps * k)), 1, 400);  // the Solver panel's range
  char b[256];
  std::snprintf(
      b, sizeof b,
      "grid %d -> %d: dt %.3g -> %.3g s, %d -> %d substeps a frame (dt follows the cell size, as --refine "
      "does, so the CFL number stays)",
      n_old, n_new, static_cast<double>(dt), static_cast<double>(p.dt), substeps, p.substeps);
  p.status = b;
  return p;
}

}  // namespace ps
