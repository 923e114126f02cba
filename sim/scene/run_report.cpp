#include "sim/scene/run_report.h"

#include <cinttypes>
#include <cstdio>
#include "sim/rigid/rigid_world.h"
#include "sim/scene/coupled.h"

namespace ps {

std::vector<std::string> heat_state_lines(Simulation& sim, const char* tag) {
  MpmWorld* w = sim.mpm();
  if (!w || !w->heat.enabled) return {};
  const HeatTotals t = w->heat_totals();
  const HeatLedger& L = w->heat_ledger();
  const double in = L.walls + L.air + L.lamps;
  const double h0 = L.have_initial ? L.initial_heat : t.heat();
  char line[400];
  std::snprintf(
      line, sizeof line,
      "heat %s t=%.4g s heat_time=%.4g s ice=%.6g water=%.6g heat=%.6g J in=%.6g J drift=%.3g J "
      "(solver %.3g, rounding %.3g) T=[%.2f, %.2f] C passes=%" PRId64
      " pcg_iterations=%d residual=%.2g",
      tag, w->time(), L.heat_time, t.ice_mass, t.water_mass, t.heat(), in, t.heat() - h0 - in,
      L.solver, L.rounding, t.min_T, t.max_T, L.passes, w->last_heat().iterations,
      w->last_heat().residual);
  return {line};
}

std::vector<std::string> body_lines(Simulation& sim, const char* tag) {
  std::vector<std::string> out;
  const rigid::RigidWorld* rw = sim.rigid();
  if (!rw) return out;
  for (size_t b = 0; b < rw->body_count(); ++b) {
    const rigid::BodyState st = rw->state(static_cast<int>(b));
    char line[384];
    std::snprintf(
        line, sizeof line,
        "body %s %zu %s x=(%.6f, %.6f) angle=%.4f deg v=(%.5f, %.5f) omega=%.5f mass=%.6g", tag,
        b + 1, rw->def(static_cast<int>(b)).name.c_str(), st.com.x, st.com.y,
        st.angle * 57.29577951308232, st.velocity.x, st.velocity.y, st.omega, st.mass);
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> cost_lines(Simulation& sim, double secs, int64_t total_steps) {
  std::vector<std::string> out;
  if (const auto* cs = dynamic_cast<const CoupledSimulation*>(&sim);
      cs && (sim.mpm() || sim.dem()) && total_steps > 0 && secs > 0) {
    // The coupling's own cost: placing the parts, the impulses, Box2D's step
    // (the grid rule's node loop is inside the MPM substep's time).
    // Plus, with MPM matter, the grid rule's node loop inside the substep.
    char line[320];
    const double ms_step = 1e3 * secs / static_cast<double>(total_steps);
    const double grid_ms = sim.mpm() ? sim.mpm()->backend_stats().rigid_grid_ms : 0.0;
    const size_t nb = sim.rigid()->body_count();
    if (sim.mpm())
      std::snprintf(
          line, sizeof line,
          "coupling %.4f ms per substep (%.1f %% of %.4f ms): exchange and Box2D %.4f ms, grid rule %.4f ms; %zu %s",
          cs->coupling_ms() + grid_ms, 100.0 * (cs->coupling_ms() + grid_ms) / ms_step, ms_step,
          cs->coupling_ms(), grid_ms, nb, nb == 1 ? "body" : "bodies");
    else
      std::snprintf(
          line, sizeof line,
          "coupling %.4f ms per DEM step (%.1f %% of %.4f ms): walls, reactions and Box2D; %zu %s",
          cs->coupling_ms(), 100.0 * cs->coupling_ms() / ms_step, ms_step, nb,
          nb == 1 ? "body" : "bodies");
    out.push_back(line);
  }
  MpmWorld* w = sim.mpm();
  if (w && w->resample_totals().calls > 0) {
    const ResampleTotals& rt = w->resample_totals();
    char line[320];
    std::snprintf(line, sizeof line,
                  "resampling %" PRId64 " passes (every %d substeps): %" PRId64
                  " particles inserted, %" PRId64
                  " merged pairs, %.3f ms per pass (%.2f%% of the run)",
                  rt.calls, w->resampling.interval, rt.inserted, rt.merged,
                  rt.ms / double(rt.calls), secs > 0 ? 100.0 * rt.ms * 1e-3 / secs : 0.0);
    out.push_back(line);
  }
  if (w && w->heat_ledger().passes > 0) {
    const HeatLedger& L = w->heat_ledger();
    char line[448];
    std::snprintf(line, sizeof line,
                  "heat %" PRId64
                  " passes (every %d substeps): %.3g PCG iterations per pass, %" PRId64
                  " unconverged, %" PRId64 " water particles emitted, %" PRId64
                  " converted, %.3f ms per pass "
                  "(%.2f%% of the run; the solve %.3f ms, %d unknowns at the last, %" PRId64
                  " solved on the device)",
                  L.passes, w->heat.interval, double(L.iterations) / double(L.passes),
                  L.unconverged, L.emitted, L.converted, L.ms / double(L.passes),
                  secs > 0 ? 100.0 * L.ms * 1e-3 / secs : 0.0, L.solve_ms / double(L.passes),
                  w->last_heat().unknowns, L.device_passes);
    out.push_back(line);
  }
  return out;
}

}  // namespace ps
