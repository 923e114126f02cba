/// The window's grid control, GL-free: the scene again at another grid
/// resolution with its time step following the cell size, as `--refine` does
/// (load_refined: dt / k at k times the cells), so the CFL number stays what
/// it was. Without it, dam_break at a grid of 384 with its dt of 2e-4 blows up
/// (velocity 1e15 near step 2715). The substeps per frame scale the other way,
/// so a frame still covers the same simulated time (the frame budget and the
/// slow-motion banner take over where the machine cannot keep up).
#pragma once
#include <string>
#include <vector>

namespace ps {

struct RegridPlan {
  std::vector<std::string>
      overrides;       ///< the scene's overrides without domain.grid, then domain.grid=N
  float dt = 0.f;      ///< the window's dt, times old / new cells
  int substeps = 1;    ///< the window's substeps per frame, times new / old cells
  std::string status;  ///< what changed, for the status line
};

/// From `n_old` to `n_new` cells along x, with the window's dt and substeps.
RegridPlan plan_regrid(const std::vector<std::string>& overrides, int n_old, int n_new, float dt,
                       int substeps);

}  // namespace ps
