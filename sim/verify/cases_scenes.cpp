// Verification cases (see verify.h): the built-in MPM scenes re-gridded as
// the window's Solver panel does it (sim/scene/regrid.h), at twice and three
// times their grid, each run for 2 simulated seconds. The panel's grid control
// must not be a way to blow a scene up: dt follows the cell size, so the CFL
// number of the shipped scene is kept.
#include "sim/verify/verify.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>
#include "sim/core/particle_table.h"
#include "sim/scene/regrid.h"
#include "sim/scene/scene.h"
#include "sim/verify/case_backend.h"

namespace ps {
namespace verify {

namespace {

/// What one re-gridded run reached.
struct RegridRun {
  int grid = 0;
  size_t particles = 0;
  float dt = 0.f;
  double reached = 0.0;  ///< simulated seconds stepped without a halt
  double mass0 = 0.0, mass1 = 0.0;
  double mass_bound = 0.0;  ///< |mass1 - mass0| / mass0 the float round-off of resampling may give
  float max_speed = 0.f;    ///< the largest particle speed seen at a frame's end
  std::string halt;         ///< the blow-up guard's message, "" when none
  Series speed;             ///< max speed against time
};

/// Loads `path`, re-grids it by `k` as the Solver panel does (the panel's
/// dt and substeps from the shipped scene, then the scene again with
/// domain.grid = k nx), and steps it frame by frame for `seconds`.
RegridRun run_regridded(const std::string& path, int k, double seconds, const Options& opt) {
  RegridRun r;
  std::unique_ptr<Simulation> sim = load_simulation(path, {}, "cpu", opt.threads);
  const MpmWorld* w0 = sim->mpm();
  if (w0 == nullptr)
    throw std::runtime_error(path + " has no MPM world (the grid control is an MPM control)");
  const int nx = w0->grid.nx;
  const RegridPlan plan = plan_regrid({}, nx, k * nx, w0->solver.dt, w0->solver.substeps);
  sim = load_simulation(path, plan.overrides, "cpu", opt.threads);
  MpmWorld* w = sim->mpm();
  w->solver.dt = plan.dt;  // what the window writes into the new world once a frame
  w->solver.substeps = plan.substeps;
  use_backend(*sim, opt);
  r.grid = w->grid.nx;
  r.dt = plan.dt;
  const Diagnostics d0 = sim->diagnostics();
  r.particles = d0.count;
  r.mass0 = r.mass1 = d0.mass;
  r.speed.label = "x" + std::to_string(k) + " (grid " + std::to_string(r.grid) + ")";
  while (sim->time() < seconds) {
    const StepStatus st = sim->step(plan.substeps);
    if (!st.ok) {
      r.halt = st.message;
      break;
    }
    const Diagnostics d = sim->totals();
    r.mass1 = d.mass;
    r.max_speed = std::max(r.max_speed, d.max_speed);
    r.speed.x.push_back(sim->time());
    r.speed.y.push_back(d.max_speed);
  }
  r.reached = sim->time();
  // Transfers, heat and couplings conserve mass bit for bit; a resampling
  // insertion or merge rounds one float sum (the new or surviving particle's
  // mass), at most half an ulp of the largest mass: 2^-24 m_max each.
  ParticleTable t;
  sim->table(t);
  const float m_max = t.mass.empty() ? 0.f : *std::max_element(t.mass.begin(), t.mass.end());
  const ResampleTotals& rs = w->resample_totals();
  r.mass_bound = 1e-12 + static_cast<double>(rs.inserted + rs.merged) *
                             std::ldexp(double(m_max), -24) / r.mass0;
  return r;
}

CaseResult regrid_case(const std::string& path, const std::string& name, const Options& opt) {
  const double seconds = opt.quick ? 0.1 : 2.0;
  CaseResult c;
  c.title = name + " at grid x2 and x3 from the Solver panel runs " + fmt("%.3g", seconds) +
            " s without a blow-up";
  c.model =
      "MLS-MPM scene as shipped; the window's grid control (sim/scene/regrid.h: dt x old / new cells)";
  c.reference =
      "Courant, Friedrichs & Lewy (1928), Math. Ann. 100: an explicit step is stable while v dt / dx stays "
      "below a bound, so dt scaled with dx keeps the shipped scene's margin; conservation of mass (MPM "
      "particles carry their mass: the total is exact)";
  Plot speeds{name + ": largest particle speed", "t (s)", "max |v| (m/s)", {}, false};
  std::string setup, notes;
  for (int k : {2, 3}) {
    const RegridRun r = run_regridded(path, k, seconds, opt);
    const std::string at = "x" + std::to_string(k);
    setup += at + ": grid " + std::to_string(r.grid) + ", " + std::to_string(r.particles) +
             " particles, dt " + fmt("%.3g", r.dt) + " s. ";
    c.checks.push_back(make_check(at + ": simulated time reached without the blow-up guard halting",
                                  r.reached, seconds * (1.0 - 1e-9), 0.0, Compare::Above, "s"));
    c.checks.push_back(make_check(at + ": total mass change / mass",
                                  std::fabs(r.mass1 - r.mass0) / r.mass0, r.mass_bound, 0.0,
                                  Compare::Below));
    notes += at + ": largest particle speed " + fmt("%.3g", r.max_speed) + " m/s. ";
    if (!r.halt.empty()) notes += at + " halted: " + r.halt + ". ";
    speeds.series.push_back(r.speed);
  }
  c.setup =
      name + " (" + path + ") from 0 to " + fmt("%.3g", seconds) + " s; " + setup +
      "The blow-up guard halts a step when a particle moves faster than 1e4 m/s or its volume ratio leaves "
      "its bounds.";
  c.notes =
      notes +
      "The mass bound is 1e-12 (the double-precision sum) plus, in a scene that resamples, half an "
      "ulp of the largest particle mass for each inserted particle and merged pair (one float sum "
      "each, resample.h).";
  c.plots.push_back(speeds);
  return c;
}

/// The built-in scenes whose grid the Solver panel can change (kind "mpm").
std::vector<std::pair<std::string, std::string>> mpm_scene_files() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& p : builtin_scene_paths()) {
    try {
      if (scene_kind(read_scene_document(p, {})) != "mpm") continue;
    } catch (const std::exception&) {
      // A file that does not read still gets its case: running it reports the located error.
    }
    std::string name = p.substr(p.find_last_of('/') + 1);
    name = name.substr(0, name.size() - 5);  // ".json"
    out.emplace_back(p, name);
  }
  return out;
}

}  // namespace

std::vector<CaseSpec> scene_cases() {
  std::vector<CaseSpec> cases;
  for (const auto& [path, name] : mpm_scene_files())
    cases.push_back(
        {"scene.regrid_" + name, "Built-in scenes", false,
         [path = path, name = name](const Options& opt) { return regrid_case(path, name, opt); }});
  return cases;
}

}  // namespace verify
}  // namespace ps
