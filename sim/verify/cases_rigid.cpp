// Verification cases (see verify.h): rigid bodies (Box2D) coupled with MPM
// matter. Archimedes' principle for floating boxes, and conservation of the
// total linear and angular momentum of matter plus bodies.
#include "sim/verify/verify.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include "sim/dem/dem_build.h"
#include "sim/dem/dem_kernels.h"
#include "sim/dem/dem_world.h"
#include "sim/io/json.h"
#include "sim/rigid/rigid_world.h"
#include "sim/scene/coupled.h"
#include "sim/verify/case_backend.h"
#include "sim/verify/mpm_flow.h"

namespace ps {
namespace verify {

namespace {

double now_seconds() {
  using clk = std::chrono::steady_clock;
  return std::chrono::duration<double>(clk::now().time_since_epoch()).count();
}

std::unique_ptr<Simulation> build(const std::string& text, const std::string& name,
                                  const Options& opt) {
  return simulation(text, "<verify:" + name + ">", opt);
}

/// What the momentum cases track while a scene runs: the largest drift of the
/// total linear momentum (relative to `pscale`) and of the angular momentum
/// (relative to |L0|), and p_x, p_y for the plot.
struct MomentumTrace {
  double worst = 0.0, worst_L = 0.0;
  Series px, py;
  std::string error;  ///< the step's message if one failed (the trace stops there)
};

/// Steps `sim` `steps` steps in chunks of `chunk`, sampling after each chunk;
/// the plot's x is the simulated time (`x_time`) or the step count. `each`
/// runs after every chunk (a case's own premise checks).
template <class Each>
MomentumTrace trace_momentum(Simulation& sim, int steps, int chunk, double pscale, bool x_time,
                             Each each) {
  MomentumTrace t;
  const Diagnostics d0 = sim.diagnostics();
  for (int s = 0; s < steps; s += chunk) {
    const StepStatus st = sim.step(chunk);
    if (!st.ok) {
      t.error = st.message;
      break;
    }
    each();
    const Diagnostics d = sim.diagnostics();
    t.worst = std::max(
        t.worst,
        std::hypot(d.momentum[0] - d0.momentum[0], d.momentum[1] - d0.momentum[1]) / pscale);
    t.worst_L = std::max(t.worst_L, std::fabs(d.angular_momentum - d0.angular_momentum) /
                                        std::fabs(d0.angular_momentum));
    const double x = x_time ? sim.time() : static_cast<double>(s + chunk);
    t.px.x.push_back(x);
    t.px.y.push_back(d.momentum[0]);
    t.py.x.push_back(x);
    t.py.y.push_back(d.momentum[1]);
  }
  return t;
}

/// The area of the closed polygon `poly` below the line y = level (the
/// polygon clipped to the half-plane, Sutherland & Hodgman 1974; shoelace).
double area_below(const std::vector<dem::Vec2d>& poly, double level) {
  std::vector<dem::Vec2d> in;
  const size_t n = poly.size();
  for (size_t k = 0; k < n; ++k) {
    const dem::Vec2d a = poly[k], b = poly[(k + 1) % n];
    const bool ia = a.y <= level, ib = b.y <= level;
    if (ia) in.push_back(a);
    if (ia != ib) {
      const double u = (level - a.y) / (b.y - a.y);
      in.push_back(dem::Vec2d{a.x + u * (b.x - a.x), level});
    }
  }
  double twice = 0.0;
  for (size_t k = 0; k < in.size(); ++k) {
    const dem::Vec2d a = in[k], b = in[(k + 1) % in.size()];
    twice += a.x * b.y - b.x * a.y;
  }
  return 0.5 * std::fabs(twice);
}

}  // namespace

ArchimedesRun archimedes_run(double density_ratio, const Options& opt, int exchange_substeps,
                             double friction, double volume_correction, double seconds) {
  // A box twice as wide as high (stable upright for every density ratio:
  // w/h > sqrt(6 s (1 - s))) dropped from rest with its bottom on the
  // surface of a tank three box-widths wide.
  ArchimedesRun out;
  const double w = 0.24, h = 0.12, depth = 0.3, width = 0.72, height = 0.6;
  // One size whatever opt.quick says: dx = 1/128 settles in about 3 s of simulated time.
  const int grid = 92;
  const double dx = width / grid;
  const double spacing = 0.5 * dx;
  out.dx = dx;
  out.seconds_simulated = seconds;
  const double rho_w = 1000.0;
  // Water that keeps its volume is held at the walls' faces (3 nodes in), so
  // it is drawn between them, as in mpm.still_tank (drawn from the domain's
  // edge it is squeezed out of the walls' layer at the start); without the
  // correction it fills the tank from the edge and settles into the layer
  // (2 cells of it in the floor's), as rigid.archimedes was measured.
  const double wall = volume_correction > 0.0 ? 3 * dx : 0.0;
  const double y0 = (volume_correction > 0.0 ? 3 * dx : 2 * dx) + depth;
  char exchange[64] = "";
  if (exchange_substeps > 0)
    std::snprintf(exchange, sizeof exchange, R"("exchange_substeps": %d, )", exchange_substeps);
  char text[4096];
  std::snprintf(text, sizeof text, R"({
    "kind": "mpm", "name": "archimedes",
    "domain": {"size": [%.9g, %.9g], "grid": %d},
    "solver": {"transfer": "apic", "dt": 2e-4, "substeps": 50, "boundary": "slip", "gravity": [0, -9.81]},
    "materials": {"water": {"type": "fluid", "density": %.9g, "bulk_modulus": 2e5, "viscosity": 20,
                            "volume_correction": %.9g}},
    "bodies": [{"shape": "box", "min": [%.9g, %.9g], "max": [%.9g, %.9g], "material": "water"}],
    "rigid": {%s"bodies": [{"name": "box", "shape": "box", "size": [%.9g, %.9g], "position": [%.9g, %.9g],
                          "density": %.9g, "friction": %.9g}]}
  })",
                width, height, grid, rho_w, volume_correction, wall, wall, width - wall, y0,
                exchange, w, h, 0.5 * width, y0 + 0.5 * h, density_ratio * rho_w, friction);
  std::unique_ptr<Simulation> sim = build(text, "rigid.archimedes", opt);
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
    // Draft: the area of the box below the water level away from it, over
    // the box's width (the water it displaces per metre of width: s h at
    // equilibrium, whatever its tilt; upright, the level minus its bottom).
    mw.sync();
    const flow::Profile prof =
        flow::surface_profile(mw.particles, 0.0, width, 2.0 * dx, 0.0, spacing);
    const double cx = rw.state(0).com.x;
    double level = 0.0;
    int nlev = 0;
    for (size_t k = 0; k < prof.x.size(); ++k) {
      const double d = std::fabs(prof.x[k] - cx);
      if (d > 0.5 * w + 0.06 && prof.x[k] > 3 * dx && prof.x[k] < width - 3 * dx &&
          prof.h[k] > 0.0) {
        level += prof.h[k];
        ++nlev;
      }
    }
    std::vector<std::vector<dem::Vec2d>> parts;
    rw.outline(0, parts);
    const double t = sim->time();
    const double draft = nlev ? area_below(parts[0], level / nlev) / w : 0.0;
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
  r.title =
      "Archimedes: boxes of density 0.3, 0.5 and 0.8 of water's float at the draft that displaces their mass";
  r.model =
      "Box2D rigid box two-way coupled with MLS-MPM water (APIC, grid moving-boundary rule, sim/mpm/mpm_collider.h)";
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
    ArchimedesRun run = archimedes_run(s, opt);
    if (!run.error.empty()) {
      r.error = "s = " + fmt("%.1f", s) + ": " + run.error;
      return r;
    }
    dx = run.dx;
    tsim = run.seconds_simulated;
    r.checks.push_back(
        make_check("s = " + fmt("%.1f", s) + ": mean draft over the last second / (s h)",
                   run.mean_draft / run.reference, 1.0, 0.05, Compare::NearRel));
    r.checks.push_back(make_check("s = " + fmt("%.1f", s) + ": largest tilt (stays upright)",
                                  run.tilt_deg, 10.0, 0.0, Compare::Below, "deg"));
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
  r.setup =
      "Box 0.24 x 0.12 m (Box2D, 1 m deep like the water) dropped from rest with its bottom on the surface of "
      "water 0.3 m deep in a tank 0.72 m wide; water: fluid, 1000 kg/m^3, bulk modulus 2e5 Pa, viscosity 20 Pa s "
      "(damps the bobbing and the tank's sloshing; no effect on the equilibrium); APIC, dt 2e-4 s, grid dx = " +
      fmt("%.4g", dx) + " m, " + fmt("%.3g", tsim) +
      " s simulated; draft = the box's area below the water level (top particles + half a spacing, columns more "
      "than 0.06 m beside the box) over its width (upright: the level minus its bottom), averaged over the last "
      "second.";
  r.notes =
      "The level is taken away from the box, where the surface is flat once the bobbing has died down. The "
      "viscous water creeps to equilibrium from below (the box first overshoots), so the average over the last "
      "second still carries about 1 % of the approach. Before the grid rule's half-cell band "
      "(mpm_collider.h, kColliderSkin) the boxes sank 7-9 % too deep at this resolution.";
  r.seconds = now_seconds() - t0;
  return r;
}

/// The same tank with water that keeps its volume (volume_correction), boxes
/// of 0.3, 0.5 and 0.7 of water's density, frictionless and with the default
/// friction (0.5), at 3 %.
CaseResult archimedes_volume(const Options& opt) {
  CaseResult r;
  r.id = "rigid.archimedes_volume";
  r.title =
      "Archimedes in water that keeps its volume: boxes of 0.3, 0.5 and 0.7 of water's density, friction 0 "
      "and 0.5";
  r.model =
      "Box2D rigid box two-way coupled with MLS-MPM water (APIC, grid moving-boundary rule, no Coulomb friction "
      "against a fluid) whose volume correction is on (volume_correction 20 / s: J relaxed towards the volume the "
      "particles fill on the grid; the body, like the walls, counted as the mirror image of the water in front of "
      "it)";
  r.reference =
      "Archimedes' principle (hydrostatics): a floating body displaces its own mass of fluid, so a box of height h "
      "and density s rho_w floating upright has draft d = s h (the displaced area s w h whatever its tilt). A "
      "fluid carries no shear stress at rest, so the box's friction does not change it.";
  const double t0 = now_seconds();
  const double ratios[3] = {0.3, 0.5, 0.7};
  const double frictions[2] = {0.0, 0.5};
  const double rate = 20.0;
  // Long enough for the slow settling after the drop (the still tank's start
  // swing lasts about 13 s); the mean is over the last quarter.
  const double seconds = 20.0;
  Plot p;
  p.title = "Draft d / h over time, volume correction on (dashed: s)";
  p.xlabel = "t (s)";
  p.ylabel = "d / h";
  for (double mu : frictions)
    for (double s : ratios) {
      const std::string tag = "s = " + fmt("%.1f", s) + ", friction " + fmt("%.1f", mu);
      ArchimedesRun run = archimedes_run(s, opt, 0, mu, rate, seconds);
      if (!run.error.empty()) {
        r.error = tag + ": " + run.error;
        return r;
      }
      r.checks.push_back(make_check(
          tag + ": mean draft over the last " + fmt("%.3g", 0.25 * seconds) + " s / (s h)",
          run.mean_draft / run.reference, 1.0, 0.03, Compare::NearRel));
      r.checks.push_back(make_check(tag + ": largest tilt (stays upright)", run.tilt_deg, 10.0, 0.0,
                                    Compare::Below, "deg"));
      Series m;
      m.label = tag;
      m.dashed = mu > 0.0;
      for (size_t k = 0; k < run.t.size(); ++k) {
        m.x.push_back(run.t[k]);
        m.y.push_back(run.draft[k] / 0.12);
      }
      p.series.push_back(m);
    }
  r.plots.push_back(p);
  r.setup =
      "rigid.archimedes' tank and box (0.24 x 0.12 m box dropped from rest onto water 0.3 m deep in a tank 0.72 m "
      "wide, grid 92, APIC, dt 2e-4 s, " +
      fmt("%.3g", seconds) +
      " s), the water with volume_correction 20 / s, the box's friction 0 and 0.5 (the default); draft as in "
      "rigid.archimedes (the displaced area over the box's width), averaged over the last quarter of the run.";
  r.notes =
      "Friction 0.5 is the rigid body's default; dashed lines. The grid rule's Coulomb friction acts only where "
      "the matter can carry shear (not against a fluid: sim/scene/coupled.cpp), so the two frictions run alike; "
      "with it a rubbing box hung where the drop left it, up to mu times the sides' pressure carrying its weight "
      "(0.892 / 0.945 / 0.962 at 4 s). The boxes settle over about 8 s, so the case runs 20 s. Before the body "
      "was counted in the volume channel (mpm::body_mirrored_volume) the water within reach of it was left "
      "uncorrected and packed into the half-cell band the grid rule holds free under the box, and the boxes "
      "sank: 1.015 / 1.055 / 1.016 after 20 s (docs/rigid.md).";
  r.seconds = now_seconds() - t0;
  return r;
}

/// Total momentum of matter + bodies, no gravity, no walls in reach: a box
/// thrown into a blob of water and a disk thrown into a jelly block.
CaseResult momentum(const Options& opt) {
  CaseResult r;
  r.id = "rigid.momentum_mpm";
  r.title =
      "Momentum: a body thrown into MPM matter without gravity keeps the total linear momentum";
  r.model = "Box2D bodies two-way coupled with MLS-MPM (APIC): water and jelly";
  r.reference =
      "Newton's third law: the grid rule takes from the body exactly the momentum it gives the nodes, and "
      "APIC's transfers conserve linear and angular momentum (Jiang et al. 2015), so the total is constant.";
  const double t0 = now_seconds();
  const int steps = opt.quick ? 1500 : 4000;
  Plot p;
  p.title = "Total momentum (matter + body) over time";
  p.xlabel = "step";
  p.ylabel = "p_x, p_y (N s), L (N m s)";
  const char* materials[2] = {
      R"("m": {"type": "fluid", "density": 1000, "bulk_modulus": 5e4, "viscosity": 0.01})",
      R"("m": {"type": "jelly", "density": 1000, "E": 2e4, "nu": 0.3})"};
  const char* bodies[2] = {
      R"({"name": "box", "shape": "box", "size": [0.12, 0.08], "position": [0.3, 0.52], "angle": 20,
                               "velocity": [1.5, 0.3], "angular_velocity": 3, "density": 700, "friction": 0.3})",
      R"({"name": "disk", "shape": "disk", "radius": 0.05, "position": [0.3, 0.45],
                               "velocity": [1.5, 0.4], "angular_velocity": -4, "density": 2000, "friction": 0.8})"};
  const char* names[2] = {"water", "jelly"};
  for (int k = 0; k < 2; ++k) {
    char text[4096];
    std::snprintf(text, sizeof text, R"({
      "kind": "mpm", "name": "momentum",
      "domain": {"size": [1.5, 1.5], "grid": 144},
      "solver": {"transfer": "apic", "dt": 1e-4, "substeps": 10, "boundary": "slip", "gravity": [0, 0]},
      "materials": {%s},
      "bodies": [{"shape": "disk", "center": [0.6, 0.5], "radius": 0.18, "material": "m"}],
      "rigid": {"walls": false, "bodies": [%s]}
    })",
                  materials[k], bodies[k]);
    std::unique_ptr<Simulation> sim = build(text, "rigid.momentum_mpm", opt);
    const Diagnostics d0 = sim->diagnostics();
    const double pscale = std::hypot(d0.momentum[0], d0.momentum[1]);
    // The premise: no wall acts. The matter's closest approach to the nodes on
    // the walls, in cells: a particle's quadratic stencil reaches the walls'
    // (constrained) layer only within half a cell of them.
    MpmWorld& mw = *sim->mpm();
    const double b_lo_x = mw.grid.origin.x + mw.grid.dx * mw.solver.boundary_nodes;
    const double b_lo_y = mw.grid.origin.y + mw.grid.dx * mw.solver.boundary_nodes;
    const double b_hi_x = mw.grid.origin.x + mw.grid.dx * (mw.grid.nx - mw.solver.boundary_nodes);
    const double b_hi_y = mw.grid.origin.y + mw.grid.dx * (mw.grid.ny - mw.solver.boundary_nodes);
    double clearance = 1e30;
    const rigid::BodyState b0 = sim->rigid()->state(0);
    MomentumTrace tr = trace_momentum(*sim, steps, 10, pscale, false, [&] {
      mw.sync();
      for (size_t q = 0; q < mw.particles.size(); ++q) {
        const Vec2 x = mw.particles.x[q];
        clearance = std::min({clearance, x.x - b_lo_x, b_hi_x - x.x, x.y - b_lo_y, b_hi_y - x.y});
      }
    });
    if (!tr.error.empty()) {
      r.error = std::string(names[k]) + ": " + tr.error;
      return r;
    }
    const double worst = tr.worst, worst_L = tr.worst_L;
    Series& px = tr.px;
    Series& py = tr.py;
    px.label = std::string(names[k]) + ": p_x";
    py.label = std::string(names[k]) + ": p_y";
    const rigid::BodyState b1 = sim->rigid()->state(0);
    const double exchanged =
        std::hypot(b1.velocity.x - b0.velocity.x, b1.velocity.y - b0.velocity.y) * b0.mass / pscale;
    r.checks.push_back(make_check(
        std::string(names[k]) + ": momentum the body gave the matter / |p0| (the test has teeth)",
        exchanged, 0.2, 0.0, Compare::Above));
    r.checks.push_back(make_check(std::string(names[k]) +
                                      ": closest approach of the matter to the walls (cells from "
                                      "the nodes on the wall; the walls' layer acts within 0.5)",
                                  clearance / mw.grid.dx, 2.0, 0.0, Compare::Above));
    r.checks.push_back(make_check(std::string(names[k]) + ": max |p(t) - p0| / |p0|", worst, 1e-5,
                                  0.0, Compare::Below));
    r.checks.push_back(make_check(std::string(names[k]) + ": max |L(t) - L0| / |L0|", worst_L, 0.02,
                                  0.0, Compare::Below));
    p.series.push_back(px);
    p.series.push_back(py);
  }
  r.plots.push_back(p);
  r.setup =
      "1.5 x 1.5 box, grid 144 (dx = 1/96), no gravity, APIC, dt 1e-4, " + std::to_string(steps) +
      " substeps; a blob (disk r = 0.18) of water (K = 5e4 Pa) or jelly (E = 2e4 Pa, nu = 0.3) at rest; a box "
      "(700 kg/m^3) or a disk (2000 kg/m^3) thrown into it at 1.5 m/s with spin; Box2D's domain walls off. The "
      "matter must stay clear of the walls (checked): in a 1 x 1 box the water's splash reached the top wall "
      "after about 3000 substeps, and the wall's force then changed the total by 6 %.";
  r.notes =
      "Linear momentum is conserved to float round-off: the matter's state is single precision and Box2D's "
      "too, so the bound 1e-5 of |p0| is about 100 float ulps summed over thousands of substeps. Angular "
      "momentum is conserved by the grid rule and APIC's transfer only up to the particle push-out (positions "
      "moved out of a body) and Box2D's position correction, hence the looser 2 % bound.";
  r.seconds = now_seconds() - t0;
  return r;
}

// [SECTION] DEM grains and bodies ------------------------------------------------------

dem::DemMaterial elastic_grain() {
  dem::DemMaterial m;
  m.density = 2500.0;
  m.E = 1e7;
  m.nu = 0.25;
  m.restitution = 1.0;  // no damping: Hertz's elastic impact
  m.friction = 0.0;
  m.rolling_friction = 0.0;
  return m;
}

struct PlateImpact {
  double max_overlap = 0.0, peak_force = 0.0, duration = 0.0;
  double momentum_error = 0.0;  ///< |p_sphere + p_plate - p0| / |p0| at the end
  double plate_speed = 0.0;     ///< the plate's speed after the impact
};

/// A sphere (R, speed v, no gravity) hits the top face of (0) a DEM plane
/// wall, (1) a static Box2D plate coupled as a moving wall, (2) a free Box2D
/// plate `heavy` times the sphere's mass. Overlap and force are read at each
/// step's start, contact begins and ends where the overlap crosses zero.
PlateImpact plate_impact(int kind, double R, double v, double dt, double heavy,
                         const Options& opt) {
  auto w = std::make_unique<dem::DemWorld>();
  use_backend(*w, opt);
  w->solver.gravity = {0.0, 0.0};
  w->solver.dt = dt;
  w->domain_min = {-0.5, -0.5};
  w->domain_max = {0.5, 0.5};
  const int m = w->add_material("elastic", elastic_grain());
  if (kind == 0) dem::add_plane(*w, {0.0, 0.0}, {0.0, 1.0}, m);
  dem::add_particle(*w, {0.0, R + 1e-6}, R, m, 0, {0.0, -v});
  w->host_changed();
  dem::DemWorld* wp = w.get();
  const double m_sphere = w->particles.mass[0];
  SceneInfo info;
  info.name = "plate";
  info.kind = "dem";
  std::unique_ptr<Simulation> sim = make_dem_simulation(info, std::move(w));
  if (kind > 0) {
    auto rw = std::make_unique<rigid::RigidWorld>(dem::Vec2d{0.0, 0.0}, 2.0 * R, 10.0);
    rigid::BodyDef d;
    d.name = "plate";
    d.type = kind == 1 ? rigid::BodyType::Static : rigid::BodyType::Dynamic;
    rigid::PartDef part;
    part.vertices = {{-0.2, -0.02}, {0.2, -0.02}, {0.2, 0.02}, {-0.2, 0.02}};
    d.parts.push_back(part);
    d.position = {0.0, -0.02};
    // Density giving `heavy` sphere masses: area 0.016 m^2, depth 2R.
    d.density = heavy * m_sphere / (0.016 * 2.0 * R);
    d.dem_material = 0;
    rw->add_body(d);
    sim = std::make_unique<CoupledSimulation>(info, std::move(sim), std::move(rw),
                                              Vec2{-0.5f, -0.5f}, Vec2{0.5f, 0.5f}, dt, 1);
  }
  PlateImpact out;
  const double p0 = m_sphere * v;
  bool started = false;
  double t_in = -1.0, t_out = -1.0, d_prev = R - wp->particles.x[0].y;
  auto plate_top = [&]() { return kind == 2 ? sim->rigid()->state(0).com.y + 0.02 : 0.0; };
  std::vector<dem::ContactRecord> rec;
  for (int s = 0; s < 100000; ++s) {
    const double t_start = sim->time();
    wp->sync();
    const double d = R - (wp->particles.x[0].y - plate_top());
    StepStatus st = sim->step(1);
    if (!st.ok) throw std::runtime_error(st.message);
    if (wp->last_result().wall_contacts > 0) {
      if (!started) t_in = t_start - dt * d / (d - d_prev);
      started = true;
      wp->contacts(rec, true);
      out.peak_force = std::max(out.peak_force, std::hypot(rec.back().f[0], rec.back().f[1]));
      out.max_overlap = std::max(out.max_overlap, d);
    } else if (started) {
      t_out = t_start - dt * d / (d - d_prev);
      break;
    }
    d_prev = d;
  }
  if (!started || t_out < 0.0) throw std::runtime_error("no complete contact");
  out.duration = t_out - t_in;
  wp->sync();
  double p = m_sphere * wp->particles.v[0].y;
  if (kind == 2) {
    const rigid::BodyState b = sim->rigid()->state(0);
    p += b.mass * b.velocity.y;
    out.plate_speed = std::fabs(b.velocity.y);
  }
  out.momentum_error = std::fabs(p - (-p0)) / p0;
  return out;
}

CaseResult dem_plate(const Options& opt) {
  CaseResult r;
  r.id = "rigid.dem_plate_hertz";
  r.title =
      "DEM sphere on a rigid plate: Hertz overlap, peak force and contact time as on a DEM wall; momentum with a free plate";
  r.model =
      "DEM Hertz-Mindlin wall contact with a Box2D body's part as a moving Polygon wall (sim/scene/coupled.cpp)";
  r.reference =
      "Hertz (1882) via Johnson (1985) eq. 11.24: d_max = (15 m v^2 / (16 E* sqrt(R)))^(2/5), F_max = 4/3 E* "
      "sqrt(R) d_max^1.5, t_c = 2.868 (m^2 / (R E*^2 v))^(1/5); the DEM plane wall of dem.hertz_impact; "
      "conservation of momentum (Newton's third law).";
  const double t0 = now_seconds();
  const double R = 0.01, v = 1.0;
  const dem::DemMaterial mat = elastic_grain();
  const double E_star = dem::pair_props(mat, mat).E_star;
  const double m = 4.0 / 3.0 * 3.14159265358979323846 * R * R * R * mat.density;
  const double tc = 2.86824 * std::pow(m * m / (R * E_star * E_star * v), 0.2);
  const double dt = tc / (opt.quick ? 200.0 : 1000.0);
  const double d_ref = std::pow(15.0 * m * v * v / (16.0 * E_star * std::sqrt(R)), 0.4);
  const double f_ref = 4.0 / 3.0 * E_star * std::sqrt(R) * std::pow(d_ref, 1.5);
  try {
    const PlateImpact wall = plate_impact(0, R, v, dt, 0.0, opt);
    const PlateImpact stat = plate_impact(1, R, v, dt, 0.0, opt);
    const PlateImpact heavy = plate_impact(2, R, v, dt, 1e4, opt);
    const PlateImpact light = plate_impact(2, R, v, dt, 3.0, opt);
    r.checks.push_back(make_check("static plate: max overlap vs the DEM plane wall",
                                  stat.max_overlap, wall.max_overlap, 1e-9, Compare::NearRel, "m"));
    r.checks.push_back(make_check("static plate: peak force vs the DEM plane wall", stat.peak_force,
                                  wall.peak_force, 1e-9, Compare::NearRel, "N"));
    r.checks.push_back(make_check("static plate: contact time vs the DEM plane wall", stat.duration,
                                  wall.duration, 1e-9, Compare::NearRel, "s"));
    r.checks.push_back(make_check("static plate: max overlap vs Hertz", stat.max_overlap, d_ref,
                                  0.01, Compare::NearRel, "m"));
    r.checks.push_back(make_check("static plate: peak force vs Hertz", stat.peak_force, f_ref, 0.01,
                                  Compare::NearRel, "N"));
    r.checks.push_back(make_check("static plate: contact time vs Hertz", stat.duration, tc, 0.01,
                                  Compare::NearRel, "s"));
    r.checks.push_back(make_check("free plate of 1e4 sphere masses: contact time vs Hertz",
                                  heavy.duration, tc, 0.01, Compare::NearRel, "s"));
    r.checks.push_back(make_check("free plate of 3 sphere masses: |p(end) - p0| / |p0|",
                                  light.momentum_error, 1e-6, 0.0, Compare::Below));
    r.checks.push_back(make_check(
        "free plate of 3 sphere masses: its speed after / v (elastic: 2 m / (m + M) = 0.5)",
        light.plate_speed / v, 0.5, 0.01, Compare::NearRel));
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  r.setup =
      "Elastic sphere (R = 1 cm, 2500 kg/m^3, E = 1e7 Pa, nu = 0.25, e = 1, no friction) at 1 m/s onto the top "
      "face of a 0.4 x 0.04 m plate, no gravity; dt = t_c / " +
      fmt("%.0f", opt.quick ? 200.0 : 1000.0) +
      "; the plate is a DEM plane wall, a static Box2D box, or a free Box2D box of 1e4 or 3 sphere masses "
      "(depth = the sphere's diameter).";
  r.notes =
      "The free 3-mass plate is a restitution-1 two-body collision: momentum is shared, the plate leaves at "
      "2m/(m+M) v = 0.5 v. Its momentum lives in Box2D's single-precision state, hence the 1e-6 bound.";
  r.seconds = now_seconds() - t0;
  return r;
}

/// No gravity, no walls: a disk thrown into a cluster of grains.
CaseResult dem_momentum(const Options& opt) {
  CaseResult r;
  r.id = "rigid.momentum_dem";
  r.title =
      "Momentum: a body thrown into DEM grains without gravity keeps the total linear momentum";
  r.model =
      "Box2D disk coupled with DEM grains (Hertz-Mindlin with damping, friction and rolling resistance)";
  r.reference =
      "Newton's third law: each wall contact puts the opposite force on the body (wall_reaction), so grains "
      "plus body keep their momentum; angular momentum too, up to Box2D's single precision.";
  const double t0 = now_seconds();
  try {
    auto w = std::make_unique<dem::DemWorld>();
    use_backend(*w, opt);
    w->solver.gravity = {0.0, 0.0};
    w->domain_min = {0.0, 0.0};
    w->domain_max = {1.0, 1.0};
    dem::DemMaterial mat = elastic_grain();
    mat.restitution = 0.5;
    mat.friction = 0.5;
    mat.rolling_friction = 0.05;
    const int m = w->add_material("grain", mat);
    const double R = 0.008;
    for (int j = 0; j < 10; ++j)
      for (int i = 0; i < 10; ++i)
        dem::add_particle(*w, {0.55 + (2.0 * i + (j % 2)) * R * 1.001, 0.42 + j * R * 1.7330}, R, m,
                          0, {0.0, 0.0});
    w->host_changed();
    const double dt = 0.2 * w->estimate_time_step().hertz;
    w->solver.dt = dt;
    dem::DemWorld* wp = w.get();
    SceneInfo info;
    info.name = "momentum";
    info.kind = "dem";
    auto rw = std::make_unique<rigid::RigidWorld>(dem::Vec2d{0.0, 0.0}, 2.0 * R, 10.0);
    rigid::BodyDef d;
    d.name = "disk";
    rigid::PartDef part;
    part.shape = ColliderShape::Disk;
    part.radius = 0.05;
    d.parts.push_back(part);
    d.position = {0.3, 0.5};
    d.velocity = {2.0, 0.2};
    d.angular_velocity = 5.0;
    d.density = 3000.0;
    rw->add_body(d);
    CoupledSimulation sim(info, make_dem_simulation(info, std::move(w)), std::move(rw),
                          Vec2{0.f, 0.f}, Vec2{1.f, 1.f}, dt, 1);
    const Diagnostics d0 = sim.diagnostics();
    const double p0 = std::hypot(d0.momentum[0], d0.momentum[1]);
    const rigid::BodyState b0 = sim.rigid()->state(0);
    const int steps = static_cast<int>(0.25 / dt);
    Plot p;
    p.title = "Total momentum (grains + disk)";
    p.xlabel = "t (s)";
    p.ylabel = "p_x, p_y (N s)";
    MomentumTrace tr = trace_momentum(sim, steps, 50, p0, true, [] {});
    if (!tr.error.empty()) throw std::runtime_error(tr.error);
    const double worst = tr.worst, worst_L = tr.worst_L;
    Series& px = tr.px;
    Series& py = tr.py;
    px.label = "p_x";
    py.label = "p_y";
    const rigid::BodyState b1 = sim.rigid()->state(0);
    r.checks.push_back(make_check(
        "momentum the disk gave the grains / |p0| (the test has teeth)",
        std::hypot(b1.velocity.x - b0.velocity.x, b1.velocity.y - b0.velocity.y) * b0.mass / p0,
        0.2, 0.0, Compare::Above));
    r.checks.push_back(make_check("max |p(t) - p0| / |p0|", worst, 1e-6, 0.0, Compare::Below));
    r.checks.push_back(make_check("max |L(t) - L0| / |L0| (about the domain centre)", worst_L, 1e-4,
                                  0.0, Compare::Below));
    p.series = {px, py};
    r.plots.push_back(p);
    (void)wp;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  r.setup =
      "100 grains (R = 8 mm, e = 0.5, mu = 0.5, rolling 0.05) in a hexagonal patch at rest, no gravity, no walls; "
      "a disk (r = 5 cm, 3000 kg/m^3, depth 16 mm) thrown at 2 m/s with 5 rad/s of spin; 0.25 s.";
  r.notes =
      "The grains' state is double precision; the disk's is Box2D's float, so its momentum carries about 1e-7 "
      "relative round-off per step. The angular bound 1e-4 was set before measuring and is missed (3.9e-4 on "
      "the first run): Box2D integrates the disk's position in single precision, each of the run's ~25 000 "
      "steps rounds a displacement of about 2e-4 of its units on a coordinate of about 3, and the torque the "
      "grains put on the disk is taken about that rounded centre. The contact torques themselves balance to "
      "3e-12 (tests/sim/dem/test_dem_walls.cpp). Not a must-pass case for that reason; the linear bound is "
      "also asserted by tests/sim/rigid.";
  r.must_pass = false;
  r.seconds = now_seconds() - t0;
  return r;
}

CaseResult mixed_momentum(const Options& opt) {
  CaseResult r;
  r.id = "rigid.momentum_mixed";
  r.title =
      "Momentum: MPM jelly, DEM grains and two bodies in one scene keep the total linear momentum";
  r.model =
      "One scene composed of an MPM world, a DEM world and Box2D bodies (the MPM substep sets the clock; the DEM "
      "catches up in its own steps; the grains count per metre of depth)";
  r.reference =
      "Newton's third law across the composition: each world takes from a body exactly what it gives it "
      "(the grid rule; the DEM wall reactions, scaled by the same 1 / (mean grain diameter) as the grains' "
      "momentum in the totals), so matter + grains + bodies keep their momentum.";
  const double t0 = now_seconds();
  const int steps = opt.quick ? 1500 : 3000;
  const char* text = R"({
    "kind": "mpm", "name": "mixed momentum",
    "domain": {"size": [1.5, 1.5], "grid": 144},
    "solver": {"transfer": "apic", "dt": 1e-4, "substeps": 10, "boundary": "slip", "gravity": [0, 0]},
    "materials": {"jelly": {"type": "jelly", "density": 1000, "E": 2e4, "nu": 0.3}},
    "bodies": [{"shape": "disk", "center": [0.6, 1.0], "radius": 0.15, "material": "jelly"}],
    "dem": {
      "solver": {"dt": "auto", "dt_safety": 0.2, "gravity": [0, 0], "expected_speed": 3},
      "materials": {"grain": {"density": 2000, "E": 1e7, "nu": 0.25, "restitution": 0.5, "friction": 0.5,
                              "rolling_friction": 0.05}},
      "domain": {"walls": false},
      "bond": {"enabled": false},
      "bodies": [{"shape": "box", "center": [0.9, 0.45], "size": [0.16, 0.14], "radius": 0.008, "packing": "hex",
                  "material": "grain"}]
    },
    "rigid": {"walls": false, "bodies": [
      {"name": "box", "shape": "box", "size": [0.12, 0.08], "position": [0.3, 1.02], "angle": 20,
       "velocity": [1.5, 0.3], "angular_velocity": 3, "density": 700, "friction": 0.3},
      {"name": "disk", "shape": "disk", "radius": 0.05, "position": [1.3, 0.47], "velocity": [-2.0, 0.2],
       "angular_velocity": 5, "density": 3000, "friction": 0.5}
    ]}
  })";
  try {
    std::unique_ptr<Simulation> sim = build(text, "rigid.momentum_mixed", opt);
    auto* c = dynamic_cast<CoupledSimulation*>(sim.get());
    if (!c || !c->grains())
      throw std::runtime_error("the scene did not build MPM, DEM and bodies together");
    const Diagnostics d0 = sim->diagnostics();
    const double p0 = std::hypot(d0.momentum[0], d0.momentum[1]);
    const rigid::BodyState a0 = sim->rigid()->state(0), b0 = sim->rigid()->state(1);
    Plot p;
    p.title = "Total momentum (jelly + grains + bodies)";
    p.xlabel = "step";
    p.ylabel = "p_x, p_y (N s per metre of depth)";
    MomentumTrace tr = trace_momentum(*sim, steps, 10, p0, false, [] {});
    if (!tr.error.empty()) throw std::runtime_error(tr.error);
    const double worst = tr.worst, worst_L = tr.worst_L;
    Series& px = tr.px;
    Series& py = tr.py;
    px.label = "p_x";
    py.label = "p_y";
    const rigid::BodyState a1 = sim->rigid()->state(0), b1 = sim->rigid()->state(1);
    const double pa = std::hypot(a0.velocity.x, a0.velocity.y) * a0.mass,
                 pb = std::hypot(b0.velocity.x, b0.velocity.y) * b0.mass;
    r.checks.push_back(make_check(
        "momentum the box gave the jelly / its own (the test has teeth)",
        std::hypot(a1.velocity.x - a0.velocity.x, a1.velocity.y - a0.velocity.y) * a0.mass / pa,
        0.2, 0.0, Compare::Above));
    r.checks.push_back(make_check(
        "momentum the disk gave the grains / its own (the test has teeth)",
        std::hypot(b1.velocity.x - b0.velocity.x, b1.velocity.y - b0.velocity.y) * b0.mass / pb,
        0.2, 0.0, Compare::Above));
    r.checks.push_back(make_check("max |p(t) - p0| / |p0|", worst, 1e-5, 0.0, Compare::Below));
    r.checks.push_back(make_check("max |L(t) - L0| / |L0| (about the domain centre)", worst_L, 0.02,
                                  0.0, Compare::Below));
    p.series = {px, py};
    r.plots.push_back(p);
    r.setup =
        "1.5 x 1.5 box, grid 144, no gravity, APIC, dt 1e-4, " + std::to_string(steps) +
        " MPM substeps; a jelly disk (r = 0.15, E = 2e4 Pa) hit by a box (700 kg/m^3) at 1.5 m/s with spin, and "
        "a hex-packed block of DEM grains (r = 8 mm, 2000 kg/m^3, not bonded) hit by a disk (3000 kg/m^3) at "
        "2 m/s with spin; no walls anywhere. Grains per metre of depth: 1 / (16 mm) = " +
        fmt("%.1f", c->grain_depth_scale()) + " times their own mass and momentum.";
    r.notes =
        "The bound 1e-5 of |p0| is the MPM case's (float state over thousands of substeps); angular momentum "
        "has the MPM case's 2 % (the push-out of particles from a body, Box2D's position correction).";
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  r.seconds = now_seconds() - t0;
  return r;
}

}  // namespace

std::vector<CaseSpec> rigid_cases() {
  return {
      {"rigid.archimedes", "Rigid bodies", true, archimedes},
      {"rigid.archimedes_volume", "Rigid bodies", false, archimedes_volume},
      {"rigid.momentum_mpm", "Rigid bodies", true, momentum},
      {"rigid.dem_plate_hertz", "Rigid bodies", true, dem_plate},
      {"rigid.momentum_dem", "Rigid bodies", true, dem_momentum},
      {"rigid.momentum_mixed", "Rigid bodies", true, mixed_momentum},
  };
}

}  // namespace verify
}  // namespace ps
