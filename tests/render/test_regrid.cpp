// The window's grid control (sim/scene/regrid.h): the time step follows the
// cell size as --refine does, so raising a scene's grid cannot blow it up.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/mpm/mpm_world.h"
#include "sim/scene/regrid.h"
#include "sim/scene/simulation.h"

using namespace ps;

TEST_CASE("Re-gridding replaces the grid override and scales dt and substeps with the cell size",
          "[render][regrid]") {
  const RegridPlan up = plan_regrid({"solver.transfer=pic", "domain.grid=64"}, 192, 384, 2e-4f, 20);
  CHECK(up.overrides == std::vector<std::string>{"solver.transfer=pic", "domain.grid=384"});
  CHECK(up.dt == Approx(1e-4));
  CHECK(up.substeps == 40);  // a frame covers the same simulated time
  CHECK(up.status.find("grid 192 -> 384: dt 0.0002 -> 0.0001 s, 20 -> 40 substeps a frame") == 0);
  // And back: the same dt and substeps again.
  const RegridPlan down = plan_regrid(up.overrides, 384, 192, up.dt, up.substeps);
  CHECK(down.dt == Approx(2e-4));
  CHECK(down.substeps == 20);
  // Substeps stay in the Solver panel's range.
  CHECK(plan_regrid({}, 64, 8192, 1e-4f, 20).substeps == 400);
  CHECK(plan_regrid({}, 512, 8, 1e-4f, 2).substeps == 1);
}

namespace {

/// dam_break re-gridded from the Solver panel as the window does it (the
/// overrides, then the window's dt and substeps for the new world), stepped
/// on one thread until `steps` or a halt; returns the halt's step, 0 if none.
int64_t regridded_dam_break(int grid, bool scale_dt, int64_t steps) {
  std::unique_ptr<Simulation> sim = load_simulation("dam_break", {}, "cpu", 1);
  MpmWorld* w = sim->mpm();
  REQUIRE(w != nullptr);
  const RegridPlan plan = plan_regrid({}, w->grid.nx, grid, w->solver.dt, w->solver.substeps);
  SolverParams solver = w->solver;
  if (scale_dt) {
    solver.dt = plan.dt;
    solver.substeps = plan.substeps;
  }
  sim = load_simulation("dam_break", plan.overrides, "cpu", 1);
  w = sim->mpm();
  REQUIRE(w->grid.nx == grid);
  w->solver = solver;
  while (sim->step_count() < steps) {
    const StepStatus st = sim->step(solver.substeps);
    if (!st.ok) return st.step;
  }
  return 0;
}

}  // namespace

TEST_CASE("dam_break re-gridded to 384 from the panel stays stable with dt following the cells",
          "[render][regrid]") {
  // With the scene's dt of 2e-4 the finer grid breaks the CFL condition and blows up within 700 steps
  // (at 0.12 simulated seconds); with dt / 2 it runs 7000 steps (0.7 s: the wave has hit the far wall).
  const int64_t unscaled = regridded_dam_break(384, false, 700);
  CHECK(unscaled > 0);
  CHECK(regridded_dam_break(384, true, 7000) == 0);
}
