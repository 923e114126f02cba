// Verification cases (see verify.h): rigid bodies (Box2D) coupled with MPM
// matter. Archimedes' principle for floating boxes, and conservation of the
// total linear and angular momentum of matter plus bodies.
#include "sim/verify/verify.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include "sim/io/json.h"
#include "sim/rigid/rigid_world.h"
#include "sim/scene/coupled.h"
#include "sim/verify/mpm_flow.h"

namespace ps {
namespace verify {

namespace {

double now_seconds() {
  using clk = std::chrono::steady_clock;
  return std::chrono::duration<double>(clk::now().time_since_epoch()).count();
}

std::unique_ptr<Simulation> build(const std::string& text, const std::string& name, int threads) {
  const Json doc = Json::parse(text, "<verify:" + name + ">");
  return build_simulation(doc, "<verify:" + name + ">", scene_kind(doc), "cpu", threads);
}

}  // namespace

ArchimedesRun archimedes_run(double density_ratio, bool quick, int threads) {
  // A box twice as wide as high (stable upright for every density ratio:
  // w/h > sqrt(6 s (1 - s))) dropped from rest with its bottom on the
  // surface of a tank three box-widths wide.
  ArchimedesRun out;
  const double w = 0.24, h = 0.12, depth = 0.3, width = 0.72, height = 0.6;
  (void)quick;  // one size: dx = 1/128 settles in about 3 s of simulated time
  const int grid = 92;
  const double dx = width / grid;
  const double spacing = 0.5 * dx;
  out.dx = dx;
  out.seconds_simulated = 4.0;
  const double rho_w = 1000.0;
  const double y0 = 2 * dx + depth;  // floor wall layer, then the water
  char text[4096];
  std::snprintf(text, sizeof text, R"({
    "kind": "mpm", "name": "archimedes",
    "domain": {"size": [%.9g, %.9g], "grid": %d},
    "solver": {"transfer": "apic", "dt": 2e-4, "substeps": 50, "boundary": "slip", "gravity": [0, -9.81]},
    "materials": {"water": {"type": "fluid", "density": %.9g, "bulk_modulus": 2e5, "viscosity": 20}},
    "bodies": [{"shape": "box", "min": [0, 0], "max": [%.9g, %.9g], "material": "water"}],
    "rigid": {"bodies": [{"name": "box", "shape": "box", "size": [%.9g, %.9g], "position": [%.9g, %.9g],
                          "density": %.9g, "friction": 0.0}]}
  })",
                width, height, grid, rho_w, width, y0, w, h, 0.5 * width, y0 + 0.5 * h,
                density_ratio * rho_w);
  std::unique_ptr<Simulation> sim = build(text, "rigid.archimedes", threads);
  rigid::RigidWorld& rw = *sim->rigid();
  MpmWorld& mw = *sim->mpm();
  const double dt = mw.solver.dt;
  const int64_t total = static_cast<int64_t>(std::llround(out.seconds_simulated / dt));
  const int64_t every = std::max<int64_t>(1, static_cast<int64_t>(std::llround(0.02 / dt)));
  double sum = 0.0;
  int samples = 0;
  for (int64_t s = 0; s < total; s += every) {
    StepStatus st = sim->step(static_cast<int>(every));
    if (!st.ok) {
      out.error = st.message;
      return out;
    }
    // Draft: the water level away from the box minus the box's lowest point.
    const flow::Profile prof = flow::surface_profile(mw.particles, 0.0, width, 2.0 * dx, 0.0, spacing);
    const double cx = rw.state(0).com.x;
    double level = 0.0;
    int nlev = 0;
    for (size_t k = 0; k < prof.x.size(); ++k) {
      const double d = std::fabs(prof.x[k] - cx);
      if (d > 0.5 * w + 0.06 && prof.x[k] > 3 * dx && prof.x[k] < width - 3 * dx && prof.h[k] > 0.0) {
        level += prof.h[k];
        ++nlev;
      }
    }
    std::vector<std::vector<dem::Vec2d>> parts;
    rw.outline(0, parts);
    double bottom = 1e30;
    for (const auto& q : parts[0]) bottom = std::min(bottom, q.y);
    const double t = sim->time();
    const double draft = nlev ? level / nlev - bottom : 0.0;
    out.t.push_back(t);
    out.draft.push_back(draft);
    if (t >= 0.75 * out.seconds_simulated) {
      sum += draft;
      ++samples;
    }
    out.tilt_deg = std::max(out.tilt_deg, std::fabs(rw.state(0).angle) * 57.29577951308232);
  }
  out.mean_draft = samples ? sum / samples : 0.0;
  out.reference = density_ratio * h;
  return out;
}

namespace {

CaseResult archimedes(const Options& opt) {
  CaseResult r;
  r.id = "rigid.archimedes";
  r.title = "Archimedes: boxes of density 0.3, 0.5 and 0.8 of water's float at the draft that displaces their mass";
  r.model = "Box2D rigid box two-way coupled with MLS-MPM water (APIC, grid moving-boundary rule, sim/mpm/mpm_collider.h)";
  r.reference =
      "Archimedes' principle (hydrostatics): a floating body displaces its own mass of fluid, so a box of height h "
      "and density s rho_w floating upright has draft d = s h.";
  const double t0 = now_seconds();
  const double ratios[3] = {0.3, 0.5, 0.8};
  Plot p;
  p.title = "Draft d / h over time (dashed: s = rho_box / rho_water)";
  p.xlabel = "t (s)";
  p.ylabel = "d / h";
  double dx = 0.0, tsim = 0.0;
  for (double s : ratios) {
    ArchimedesRun run = archimedes_run(s, opt.quick, opt.threads);
    if (!run.error.empty()) {
      r.error = "s = " + fmt("%.1f", s) + ": " + run.error;
      return r;
    }
    dx = run.dx;
    tsim = run.seconds_simulated;
    r.checks.push_back(make_check("s = " + fmt("%.1f", s) + ": mean draft over the last second / (s h)",
                                  run.mean_draft / run.reference, 1.0, 0.05, Compare::NearRel));
    r.checks.push_back(make_check("s = " + fmt("%.1f", s) + ": largest tilt (stays upright)", run.tilt_deg, 10.0, 0.0,
                                  Compare::Below, "deg"));
    Series m;
    m.label = "s = " + fmt("%.1f", s);
    for (size_t k = 0; k < run.t.size(); ++k) {
      m.x.push_back(run.t[k]);
      m.y.push_back(run.draft[k] / 0.12);
    }
    p.series.push_back(m);
    Series ref;
    ref.label = "s = " + fmt("%.1f", s) + " reference";
    ref.dashed = true;
    ref.x = {0.0, run.seconds_simulated};
    ref.y = {s, s};
    p.series.push_back(ref);
  }
  r.plots.push_back(p);
  r.setup = "Box 0.24 x 0.12 m (Box2D, 1 m deep like the water) dropped from rest with its bottom on the surface of "
            "water 0.3 m deep in a tank 0.72 m wide; water: fluid, 1000 kg/m^3, bulk modulus 2e5 Pa, viscosity 0.5 Pa s "
            "(damps the bobbing and the tank's sloshing; no effect on the equilibrium); APIC, dt 2e-4 s, grid dx = " +
            fmt("%.4g", dx) + " m, " + fmt("%.3g", tsim) +
            " s simulated; draft = water level (top particles + half a spacing, columns more than 0.06 m beside the box) "
            "minus the box's lowest point, averaged over the last second.";
  r.notes = "The level is taken away from the box, where the surface is flat once the bobbing has died down. The "
            "viscous water creeps to equilibrium from below (the box first overshoots), so the average over the last "
            "second still carries about 1 % of the approach. Before the grid rule's half-cell band "
            "(mpm_collider.h, kColliderSkin) the boxes sank 7-9 % too deep at this resolution.";
  r.seconds = now_seconds() - t0;
  return r;
}

/// Total momentum of matter + bodies, no gravity, no walls in reach: a box
/// thrown into a blob of water and a disk thrown into a jelly block.
CaseResult momentum(const Options& opt) {
  CaseResult r;
  r.id = "rigid.momentum_mpm";
  r.title = "Momentum: a body thrown into MPM matter without gravity keeps the total linear momentum";
  r.model = "Box2D bodies two-way coupled with MLS-MPM (APIC): water and jelly";
  r.reference = "Newton's third law: the grid rule takes from the body exactly the momentum it gives the nodes, and "
                "APIC's transfers conserve linear and angular momentum (Jiang et al. 2015), so the total is constant.";
  const double t0 = now_seconds();
  const int steps = opt.quick ? 1500 : 4000;
  Plot p;
  p.title = "Total momentum (matter + body) over time";
  p.xlabel = "step";
  p.ylabel = "p_x, p_y (N s), L (N m s)";
  const char* materials[2] = {R"("m": {"type": "fluid", "density": 1000, "bulk_modulus": 5e4, "viscosity": 0.01})",
                              R"("m": {"type": "jelly", "density": 1000, "E": 2e4, "nu": 0.3})"};
  const char* bodies[2] = {R"({"name": "box", "shape": "box", "size": [0.12, 0.08], "position": [0.3, 0.52], "angle": 20,
                               "velocity": [1.5, 0.3], "angular_velocity": 3, "density": 700, "friction": 0.3})",
                           R"({"name": "disk", "shape": "disk", "radius": 0.05, "position": [0.3, 0.45],
                               "velocity": [1.5, 0.4], "angular_velocity": -4, "density": 2000, "friction": 0.8})"};
  const char* names[2] = {"water", "jelly"};
  for (int k = 0; k < 2; ++k) {
    char text[4096];
    std::snprintf(text, sizeof text, R"({
      "kind": "mpm", "name": "momentum",
      "domain": {"size": [1, 1], "grid": 96},
      "solver": {"transfer": "apic", "dt": 1e-4, "substeps": 10, "boundary": "slip", "gravity": [0, 0]},
      "materials": {%s},
      "bodies": [{"shape": "disk", "center": [0.6, 0.5], "radius": 0.18, "material": "m"}],
      "rigid": {"walls": false, "bodies": [%s]}
    })",
                  materials[k], bodies[k]);
    std::unique_ptr<Simulation> sim = build(text, "rigid.momentum_mpm", opt.threads);
    const Diagnostics d0 = sim->diagnostics();
    const double pscale = std::hypot(d0.momentum[0], d0.momentum[1]);
    double worst = 0.0, worst_L = 0.0, exchanged = 0.0;
    Series px, py;
    px.label = std::string(names[k]) + ": p_x";
    py.label = std::string(names[k]) + ": p_y";
    const rigid::BodyState b0 = sim->rigid()->state(0);
    for (int s = 0; s < steps; s += 10) {
      StepStatus st = sim->step(10);
      if (!st.ok) {
        r.error = std::string(names[k]) + ": " + st.message;
        return r;
      }
      const Diagnostics d = sim->diagnostics();
      worst = std::max(worst, std::hypot(d.momentum[0] - d0.momentum[0], d.momentum[1] - d0.momentum[1]) / pscale);
      worst_L = std::max(worst_L, std::fabs(d.angular_momentum - d0.angular_momentum) / std::fabs(d0.angular_momentum));
      px.x.push_back(s + 10);
      px.y.push_back(d.momentum[0]);
      py.x.push_back(s + 10);
      py.y.push_back(d.momentum[1]);
    }
    const rigid::BodyState b1 = sim->rigid()->state(0);
    exchanged = std::hypot(b1.velocity.x - b0.velocity.x, b1.velocity.y - b0.velocity.y) * b0.mass / pscale;
    r.checks.push_back(make_check(std::string(names[k]) + ": momentum the body gave the matter / |p0| (the test has teeth)",
                                  exchanged, 0.2, 0.0, Compare::Above));
    r.checks.push_back(make_check(std::string(names[k]) + ": max |p(t) - p0| / |p0|", worst, 1e-5, 0.0, Compare::Below));
    r.checks.push_back(make_check(std::string(names[k]) + ": max |L(t) - L0| / |L0|", worst_L, 0.02, 0.0, Compare::Below));
    p.series.push_back(px);
    p.series.push_back(py);
  }
  r.plots.push_back(p);
  r.setup = "1 x 1 box, grid 96, no gravity, APIC, dt 1e-4, " + std::to_string(steps) +
            " substeps; a blob (disk r = 0.18) of water (K = 5e4 Pa) or jelly (E = 2e4 Pa, nu = 0.3) at rest; a box "
            "(700 kg/m^3) or a disk (2000 kg/m^3) thrown into it at 1.5 m/s with spin; Box2D's domain walls off.";
  r.notes = "Linear momentum is conserved to float round-off: the matter's state is single precision and Box2D's "
            "too, so the bound 1e-5 of |p0| is about 100 float ulps summed over thousands of substeps. Angular "
            "momentum is conserved by the grid rule and APIC's transfer only up to the particle push-out (positions "
            "moved out of a body) and Box2D's position correction, hence the looser 2 % bound.";
  r.seconds = now_seconds() - t0;
  return r;
}

}  // namespace

std::vector<CaseSpec> rigid_cases() {
  return {
      {"rigid.archimedes", "Rigid bodies", true, archimedes},
      {"rigid.momentum_mpm", "Rigid bodies", true, momentum},
  };
}

}  // namespace verify
}  // namespace ps
