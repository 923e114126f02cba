// Verification cases (see verify.h): MPM flows against experiments and
// classical results. Dam break (Martin & Moyce 1952), granular column
// collapse (Lube et al. 2005), angle of repose (Mohr-Coulomb statics).
#include "sim/verify/verify.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include "sim/scene/scene.h"
#include "sim/verify/case_backend.h"
#include "sim/verify/mpm_flow.h"

namespace ps {
namespace verify {
namespace flow {

namespace {

constexpr double kPi = 3.14159265358979323846;

double now_seconds() {
  using clk = std::chrono::steady_clock;
  return std::chrono::duration<double>(clk::now().time_since_epoch()).count();
}

/// Least-squares line through (x, y); returns the slope, sets the rms residual.
double fit_slope(const std::vector<double>& x, const std::vector<double>& y, double* rms) {
  const size_t n = x.size();
  if (n < 2) {
    if (rms) *rms = 0.0;
    return 0.0;
  }
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  double b = sxx > 0 ? sxy / sxx : 0.0;
  if (rms) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) {
      double r = y[i] - (my + b * (x[i] - mx));
      s += r * r;
    }
    *rms = std::sqrt(s / n);
  }
  return b;
}

}  // namespace

Profile surface_profile(const MpmParticles& p, double x0, double x1, double bin, double floor_y,
                        double spacing) {
  Profile prof;
  const int n = std::max(1, static_cast<int>(std::ceil((x1 - x0) / bin)));
  prof.x.resize(n);
  prof.h.assign(n, 0.0);
  for (int i = 0; i < n; ++i) prof.x[i] = x0 + (i + 0.5) * bin;
  for (size_t k = 0; k < p.size(); ++k) {
    int i = static_cast<int>(std::floor((p.x[k].x - x0) / bin));
    if (i < 0 || i >= n) continue;
    double top = p.x[k].y - floor_y + 0.5 * spacing;
    prof.h[i] = std::max(prof.h[i], top);
  }
  return prof;
}

FlankFit flank_angle(const Profile& prof, double lo, double hi) {
  FlankFit f;
  const int n = static_cast<int>(prof.h.size());
  if (n == 0) return f;
  int peak = static_cast<int>(std::max_element(prof.h.begin(), prof.h.end()) - prof.h.begin());
  f.height = prof.h[peak];
  const double hlo = lo * f.height, hhi = hi * f.height;
  // One flank: walk outwards from the peak; take the last (outermost)
  // contiguous run of columns inside [hlo, hhi].
  auto side = [&](int dir, double& angle, int& count, double& rms) {
    std::vector<double> xs, hs, best_x, best_h;
    for (int i = peak; i >= 0 && i < n; i += dir) {
      double h = prof.h[i];
      if (h >= hlo && h <= hhi) {
        xs.push_back(prof.x[i]);
        hs.push_back(h);
      } else if (!xs.empty()) {
        best_x = xs;
        best_h = hs;  // a run ended; a later (outer) run replaces it
        xs.clear();
        hs.clear();
        if (h < hlo) break;  // reached the toe
      }
    }
    if (!xs.empty()) {
      best_x = xs;
      best_h = hs;
    }
    count = static_cast<int>(best_x.size());
    angle = std::atan(std::fabs(fit_slope(best_x, best_h, &rms))) * 180.0 / kPi;
  };
  side(-1, f.angle_left, f.n_left, f.rms_left);
  side(+1, f.angle_right, f.n_right, f.rms_right);
  f.angle = 0.5 * (f.angle_left + f.angle_right);
  return f;
}

PileRun run_pile(double phi_deg, double cohesion, const PileOptions& opt, const Options& on) {
  PileRun run;
  run.phi = phi_deg;
  run.cohesion = cohesion;
  const double t0 = now_seconds();
  const double dx = 1.0 / opt.grid;
  const double floor_y = 3 * dx;
  const double spacing = 0.5 * dx;
  const double xc = 0.5;
  // Time step: CFL 0.17 of the P-wave speed sqrt((lambda + 2 mu) / rho) at
  // grid 128 (1e-4 s for E = 2e5, density 1500, nu = 0.3), scaled with dx.
  const double dt = 1e-4 * std::sqrt(2e5 / opt.E) * (128.0 / opt.grid);
  char bodybuf[512];
  if (opt.triangle_slope > 0) {
    const double hb = 0.5 * opt.column_width, ht = hb * std::tan(opt.triangle_slope * kPi / 180.0);
    std::snprintf(
        bodybuf, sizeof bodybuf,
        R"({"shape": "polygon", "points": [[%.9g, %.9g], [%.9g, %.9g], [%.9g, %.9g]], "material": "sand", "spacing": %.9g})",
        xc - hb, floor_y, xc + hb, floor_y, xc, floor_y + ht, spacing);
  } else {
    std::snprintf(
        bodybuf, sizeof bodybuf,
        R"({"shape": "box", "min": [%.9g, %.9g], "max": [%.9g, %.9g], "material": "sand", "spacing": %.9g})",
        xc - 0.5 * opt.column_width, floor_y, xc + 0.5 * opt.column_width,
        floor_y + opt.column_height, spacing);
  }
  const std::string body = bodybuf;
  char doc[2048];
  std::snprintf(doc, sizeof doc, R"({
    "domain": {"size": [1, 0.5], "grid": %d},
    "solver": {"transfer": "apic", "dt": %.9g, "boundary": "%s", "gravity": [0, -9.8]},
    "materials": {"sand": {"type": "sand", "density": 1500, "E": %.9g, "nu": 0.3,
                           "friction_angle": %.9g, "dilatancy": %.9g%s}},
    "bodies": [%s]
  })",
                opt.grid, dt, opt.boundary.c_str(), opt.E, phi_deg, opt.dilatancy,
                cohesion != 0.0 ? (", \"cohesion\": " + fmt("%.9g", cohesion)).c_str() : "",
                body.c_str());
  MpmScene scene = mpm_scene(doc, "pile.json", on);
  MpmWorld& w = *scene.world;
  const int chunk = std::max(1, static_cast<int>(std::lround(0.05 / dt)));  // 0.05 s
  double ke = 1.0;
  if (opt.pour_width > 0) {
    // Pour: rows of particles (lattice `spacing`) released with the stream
    // speed v = rate / width from `pour_gap` above the heap's current top;
    // one row each time the previous one has moved a spacing.
    const MaterialParams& mp = w.materials[0];
    const float mass = static_cast<float>(mp.density * spacing * spacing),
                vol = static_cast<float>(spacing * spacing);
    const double v = opt.pour_rate / opt.pour_width;
    const int per_row = std::max(1, static_cast<int>(std::lround(opt.pour_width / spacing)));
    const int rows_total =
        static_cast<int>(std::lround(opt.pour_area / (per_row * spacing * spacing)));
    const int row_steps = std::max(1, static_cast<int>(std::lround(spacing / v / dt)));
    // Start from an empty world: drop the body's particles.
    w.particles.clear();
    w.host_changed();
    for (int row = 0; row < rows_total; ++row) {
      w.sync();  // the heap's top is read and the row added on the host arrays
      double top = floor_y;
      for (size_t k = 0; k < w.particles.size(); ++k)
        if (std::fabs(w.particles.x[k].x - xc) < opt.pour_width && w.particles.v[k].y > -0.5 * v)
          top = std::max<double>(top, w.particles.x[k].y);
      const double y = top + opt.pour_gap;
      for (int i = 0; i < per_row; ++i) {
        const double x = xc + (i - 0.5 * (per_row - 1)) * spacing;
        w.particles.add(Vec2{static_cast<float>(x), static_cast<float>(y)},
                        Vec2{0.f, static_cast<float>(-v)}, mass, vol, 0, 1);
      }
      w.host_changed();
      StepStatus st = w.step(row_steps);
      if (!st.ok) {
        run.error = st.message;
        break;
      }
    }
  }
  // Settle: at most max_time after the pour (or the collapse) started settling.
  const double t_settle0 = w.time();
  while (run.error.empty() && w.time() < t_settle0 + opt.max_time) {
    StepStatus st = w.step(chunk);
    if (!st.ok) {
      run.error = st.message;
      break;
    }
    Diagnostics d = w.diagnostics();
    ke = d.kinetic_energy / d.mass;
    if (w.time() > t_settle0 + opt.min_time && ke < 1e-6) break;
  }
  w.sync();
  run.particles = w.particles.size();
  run.sim_time = w.time();
  run.ke_per_mass = ke;
  run.profile = surface_profile(w.particles, 0.0, 1.0, dx, floor_y, spacing);
  run.fit = flank_angle(run.profile);
  double xmin = 1, xmax = 0;
  for (size_t k = 0; k < w.particles.size(); ++k) {
    xmin = std::min<double>(xmin, w.particles.x[k].x);
    xmax = std::max<double>(xmax, w.particles.x[k].x);
  }
  run.runout = 0.5 * (xmax - xmin);
  run.seconds = now_seconds() - t0;
  run.setup =
      opt.pour_width > 0
          ? "pour " + fmt("%.3g", opt.pour_area) + " at " + fmt("%.3g", opt.pour_rate) +
                "/s, stream " + fmt("%.3g", opt.pour_width) + " wide"
      : opt.triangle_slope > 0
          ? "triangle of slope " + fmt("%.3g", opt.triangle_slope) + " deg"
          : "column " + fmt("%.3g", opt.column_width) + " x " + fmt("%.3g", opt.column_height);
  return run;
}

double tilted_layer_speed(double phi_deg, double tilt_deg, int grid, const Options& on,
                          double thickness, double time, std::string* error, double dilatancy_deg,
                          double layer_length) {
  const double dx = 1.0 / grid, floor_y = 3 * dx, E = 5e4;
  const int cells_x = static_cast<int>(std::lround(layer_length * grid));
  const double dt = 1e-4 * std::sqrt(2e5 / E) * (128.0 / grid);
  const double b = tilt_deg * kPi / 180.0;
  char doc[2048];
  std::snprintf(doc, sizeof doc, R"({
    "domain": {"size": [%.9g, 0.5], "grid": %d},
    "solver": {"transfer": "apic", "dt": %.9g, "boundary": "sticky", "gravity": [%.9g, %.9g]},
    "materials": {"sand": {"type": "sand", "density": 1500, "E": %.9g, "nu": 0.3, "friction_angle": %.9g, "dilatancy": %.9g}},
    "bodies": [{"shape": "box", "min": [0, %.9g], "max": [%.9g, %.9g], "material": "sand", "spacing": %.9g}]
  })",
                cells_x * dx, cells_x, dt, 9.8 * std::sin(b), -9.8 * std::cos(b), E, phi_deg,
                dilatancy_deg, floor_y, cells_x * dx, floor_y + thickness, 0.5 * dx);
  MpmScene scene = mpm_scene(doc, "tilt.json", on);
  MpmWorld& w = *scene.world;
  // Tilting-table protocol: settle under vertical gravity (0.3 s), turn
  // gravity to the tilt in 20 increments over 0.5 s, then hold `time`.
  auto run = [&](double seconds) {
    StepStatus st = w.step(std::max(1, static_cast<int>(std::lround(seconds / dt))));
    if (!st.ok && error) *error = st.message;
    return st.ok;
  };
  w.solver.gravity = Vec2{0.f, -9.8f};
  if (!run(0.3)) return NAN;
  for (int i = 1; i <= 20; ++i) {
    const double bi = b * i / 20.0;
    w.solver.gravity =
        Vec2{static_cast<float>(9.8 * std::sin(bi)), static_cast<float>(-9.8 * std::cos(bi))};
    if (!run(0.025)) return NAN;
  }
  if (!run(time)) return NAN;
  w.sync();
  double s = 0;
  int n = 0;
  const double mid = 0.5 * cells_x * dx;
  for (size_t k = 0; k < w.particles.size(); ++k) {
    if (std::fabs(w.particles.x[k].x - mid) > 0.4 * mid) continue;
    s += length(w.particles.v[k]);
    ++n;
  }
  return n ? s / n : 0.0;
}

/// One column against the left wall (x0 = 3 cells), released at t = 0:
/// returns the world (the caller steps it).
std::unique_ptr<MpmWorld> column_world(const std::string& material_json, int grid, double dt,
                                       const char* boundary, double width, double height,
                                       const Options& on, double* x0_out, double* spacing_out,
                                       double wall_friction, const char* transfer) {
  const double dx = 1.0 / grid, x0 = 3 * dx, y0 = 3 * dx, spacing = 0.5 * dx;
  char doc[2048];
  std::snprintf(
      doc, sizeof doc, R"({
    "domain": {"size": [1, 0.5], "grid": %d},
    "solver": {%s, "dt": %.9g, "boundary": "%s", "gravity": [0, -9.8]%s},
    "materials": {"m": %s},
    "bodies": [{"shape": "box", "min": [%.9g, %.9g], "max": [%.9g, %.9g], "material": "m", "spacing": %.9g}]
  })",
      grid, transfer, dt, boundary,
      wall_friction >= 0.0 ? (", \"wall_friction\": " + fmt("%.9g", wall_friction)).c_str() : "",
      material_json.c_str(), x0, y0, x0 + width, y0 + height, spacing);
  MpmScene scene = mpm_scene(doc, "column.json", on);
  if (x0_out) *x0_out = x0;
  if (spacing_out) *spacing_out = spacing;
  return std::move(scene.world);
}

double front_x(const MpmParticles& p) {
  double f = -1e30;
  for (size_t k = 0; k < p.size(); ++k) f = std::max<double>(f, p.x[k].x);
  return f;
}

ColumnRun run_column(const std::string& material_json, int grid, double dt, double width, double a,
                     const Options& on, bool flip) {
  ColumnRun c;
  const double dx = 1.0 / grid;
  double x0 = 0, sp = 0;
  auto w =
      column_world(material_json, grid, dt, "sticky", width, a * width, on, &x0, &sp, -1.0,
                   flip ? "\"transfer\": \"flip\", \"flip_blend\": 1" : "\"transfer\": \"apic\"");
  const int chunk = static_cast<int>(std::lround(0.05 / dt));
  double last = -1e30;
  int still = 0;
  while (w->time() < 3.0) {
    StepStatus st = w->step(chunk);
    if (!st.ok) {
      c.error = st.message;
      return c;
    }
    if (flip) {
      w->sync();
      const double front = front_x(w->particles);
      still = w->time() > 0.3 && std::fabs(front - last) < 0.01 * dx ? still + 1 : 0;
      last = front;
      if (still >= 10) break;
    } else {
      Diagnostics d = w->diagnostics();
      if (w->time() > 0.3 && d.kinetic_energy / d.mass < 1e-6) break;
    }
  }
  w->sync();
  c.ro = (front_x(w->particles) + 0.5 * sp - x0 - width) / width;
  Profile prof = surface_profile(w->particles, 0.0, 1.0, dx, 3 * dx, sp);
  double body = 0;
  for (size_t i = 0; i < prof.h.size(); ++i)
    if (prof.h[i] >= 1.5 * dx) body = prof.x[i] + 0.5 * dx - x0;
  c.body = (body - width) / width;
  c.t = w->time();
  return c;
}

double TankRun::error_worst(double t0) const {
  double worst = 0.0;
  for (size_t k = 0; k < t.size(); ++k)
    if (t[k] >= t0) worst = std::max(worst, std::fabs(depth[k] / depth_eq - 1.0));
  return worst;
}

double TankRun::floor_pressure() const {
  double s = 0.0;
  int n = 0;
  for (size_t k = 0; k < t.size(); ++k)
    if (t[k] >= 0.75 * t.back() && k > 0) {
      s += floor_p[k];
      ++n;
    }
  return n ? s / n : NAN;
}

TankRun run_still_tank(const TankOptions& opt, const Options& on) {
  TankRun run;
  const double t0 = now_seconds();
  const double dx = 1.0 / opt.grid, floor_y = 3 * dx, g = 9.81;
  const double dt = 2e-4 * (128.0 / opt.grid) * std::sqrt(2e5 / opt.K);
  run.dt = dt;
  run.dx = dx;
  std::string vc;
  if (opt.volume_correction >= 0.0)
    vc = ", \"volume_correction\": " + fmt("%.9g", opt.volume_correction);
  char doc[2048];
  std::snprintf(doc, sizeof doc, R"({
    "domain": {"size": [1, 0.6], "grid": %d},
    "solver": {"transfer": "apic", "dt": %.9g, "boundary": "slip", "gravity": [0, -9.81]},
    "materials": {"water": {"type": "fluid", "density": 1000, "bulk_modulus": %.9g, "viscosity": 2%s}},
    "bodies": [{"shape": "box", "min": [%.9g, %.9g], "max": [%.9g, %.9g], "material": "water", "spacing": %.9g}]
  })",
                opt.grid, dt, opt.K, vc.c_str(), 3 * dx, floor_y, 1.0 - 3 * dx, floor_y + opt.depth,
                0.5 * dx);
  MpmScene scene = mpm_scene(doc, "still_tank.json", on);
  MpmWorld& w = *scene.world;
  run.particles = w.particles.size();
  const double width = 1.0 - 6 * dx;  // between the wall faces
  // At rest, p = K (1 - J) = rho g s at the depth s of undeformed water above a
  // particle (s = mass above over rho W), so J = 1 - rho g s / K and the column
  // of undeformed depth h0 = M / (rho W) stands y(s) = int J over it high; its
  // centre of mass sits at h0 / 2 - rho g h0^2 / (3 K), twice that is depth_eq.
  // h0 comes from the mass: the loader centres a whole number of rows (spacing
  // dx / 2, each particle the rest volume of its spacing squared) in the box, so
  // the water at rest density is up to a row shallower than the box it was
  // drawn in (0.2969 m of the box's 0.3 at grid 64) and starts half that lifted.
  const double rho = 1000.0;
  auto sample = [&]() {
    w.sync();
    const MpmParticles& p = w.particles;
    double sum_y = 0.0;
    for (size_t k = 0; k < p.size(); ++k) sum_y += p.x[k].y - floor_y;
    const double depth = 2.0 * sum_y / static_cast<double>(p.size());
    // Pressure p = K (1 - J) against height, least squares over the particles
    // away from the side walls and below 3/4 of the depth, taken at the floor.
    double sy = 0, sp = 0, syy = 0, syp = 0;
    int n = 0;
    for (size_t k = 0; k < p.size(); ++k) {
      const double x = p.x[k].x, y = p.x[k].y - floor_y;
      if (x < 0.1 || x > 0.9 || y > 0.75 * depth) continue;
      const double pr = opt.K * (1.0 - p.J[k]);
      sy += y;
      sp += pr;
      syy += y * y;
      syp += y * pr;
      ++n;
    }
    const double my = sy / n, mp = sp / n;
    const double b = (syp / n - my * mp) / (syy / n - my * my);
    run.t.push_back(w.time());
    run.depth.push_back(depth);
    run.floor_p.push_back(mp - b * my);
    const Diagnostics d = w.diagnostics();
    run.max_speed = std::max(run.max_speed, static_cast<double>(d.max_speed));
    return d;
  };
  const Diagnostics d0 = sample();
  run.mass0 = d0.mass;
  run.p_ref = d0.mass * g / width;
  const double h0 = d0.mass / (rho * width);
  run.depth_eq = h0 - 2.0 * rho * g * h0 * h0 / (3.0 * opt.K);
  const int per = std::max(1, static_cast<int>(std::lround(opt.sample / dt)));
  while (w.time() < opt.seconds - 0.5 * dt) {
    const StepStatus st = w.step(per);
    if (!st.ok) {
      run.error = st.message;
      break;
    }
    run.mass_end = sample().mass;
  }
  run.wall_seconds = now_seconds() - t0;
  return run;
}

}  // namespace flow

namespace {

// ---------------------------------------------------------------------------
// 1. Dam break against Martin & Moyce (1952).

namespace {

struct SurgeRun {
  std::vector<double> T, Z;  ///< T = t sqrt(2g/a), Z = front / a
  std::string error;
  double dt = 0.0;
};

constexpr double kDamA = 0.1, kDamG = 9.8;
constexpr double kExpT[] = {0.832, 1.219, 1.997, 2.547, 3.345};
constexpr double kExpZ[] = {1.217, 1.474, 2.292, 2.995, 4.134};

/// The column a wide, 2a high, released at t = 0 (instantaneously), to T = 3.4.
/// `volume_correction` 20 corrects the water's volume (and holds it at the
/// walls' faces); 0 is J alone in the slip walls' layer.
SurgeRun run_surge(int grid, double volume_correction, const Options& opt) {
  SurgeRun out;
  const double a = kDamA, g = kDamG, rho = 1000.0, K = 4e5;
  const double c = std::sqrt(K / rho), umax = std::sqrt(2 * g * 2 * a);
  const double dx = 1.0 / grid;
  out.dt = 0.25 * dx / (c + umax);
  double x0 = 0, sp = 0;
  char mat[256];
  std::snprintf(mat, sizeof mat,
                R"({"type": "fluid", "density": %g, "bulk_modulus": %g, "volume_correction": %g})",
                rho, K, volume_correction);
  auto w = flow::column_world(mat, grid, out.dt, "slip", a, 2 * a, opt, &x0, &sp);
  const double tscale = std::sqrt(2 * g / a);
  out.T.push_back(0);
  out.Z.push_back(1);
  const int per =
      std::max(1, static_cast<int>(std::lround(0.05 / tscale / out.dt)));  // sample every dT = 0.05
  while (w->time() * tscale < 3.4) {
    StepStatus st = w->step(per);
    if (!st.ok) {
      out.error = st.message;
      break;
    }
    out.T.push_back(w->time() * tscale);
    w->sync();
    out.Z.push_back((flow::front_x(w->particles) + 0.5 * sp - x0) / a);
  }
  return out;
}

/// Z at T (linear between the samples; the last sample past the end).
double surge_at(const SurgeRun& r, double T) {
  for (size_t i = 1; i < r.T.size(); ++i)
    if (r.T[i] >= T) {
      const double f = (T - r.T[i - 1]) / (r.T[i] - r.T[i - 1]);
      return r.Z[i - 1] + f * (r.Z[i] - r.Z[i - 1]);
    }
  return r.Z.empty() ? NAN : r.Z.back();
}

/// Every second sample of a run as a plot series, its T shifted by `delay`.
Series surge_series(const SurgeRun& r, const std::string& label, bool dashed, double delay = 0.0) {
  Series s{label, {}, {}, true, dashed};
  for (size_t i = 0; i < r.T.size(); i += 2) {
    s.x.push_back(r.T[i] + delay);
    s.y.push_back(r.Z[i]);
  }
  return s;
}

/// RMS of the relative deviation from the experiment's five points, with the
/// simulation delayed by `delay` (in T).
double surge_rms(const SurgeRun& r, double delay) {
  double ss = 0.0;
  for (int k = 0; k < 5; ++k) {
    const double rel = (surge_at(r, kExpT[k] - delay) - kExpZ[k]) / kExpZ[k];
    ss += rel * rel;
  }
  return std::sqrt(ss / 5.0);
}

}  // namespace

CaseResult dam_break(const Options& opt) {
  CaseResult r;
  r.id = "mpm.dam_break";
  // Informative, not must-pass: the model releases the column instantly, the experiment did not (see the notes);
  // the miss is shown, not hidden.
  r.must_pass = false;
  r.title =
      "Dam break: surge front Z = x/a vs T = t sqrt(2g/a) against Martin & Moyce (1952), n^2 = 2";
  r.model =
      "MLS-MPM, quadratic B-splines, APIC, weakly compressible fluid (tau = K J (J - 1) I), the water's default "
      "volume correction (J relaxed towards the volume measured on the grid, 20 / s)";
  r.reference =
      "J. C. Martin and W. J. Moyce (1952), \"Part IV. An experimental study of the collapse of liquid columns on a "
      "rigid horizontal plane\", Phil. Trans. R. Soc. Lond. A 244 (882), 312-324, doi:10.1098/rsta.1952.0006: "
      "n^2 = 2, a = 2.25 in, surge-front data of their Fig. 3 as digitised in PySPH "
      "(pypr/pysph, pysph/examples/db_exp_data.py, mm_data_2), the points with T <= 3.4.";
  const double t0 = flow::now_seconds();
  const int grid = opt.quick ? 128 : 256;
  const double a = kDamA, g = kDamG;
  const double vc_default = MaterialParams{}.volume_correction;  // the water as a scene gets it
  const SurgeRun main = run_surge(grid, vc_default, opt);
  if (!main.error.empty()) {
    r.error = main.error;
    return r;
  }
  r.setup =
      "Water column a = " + fmt("%.3g", a) +
      " wide, 2a high (n^2 = 2) against the left wall of a 1 x 0.5 box, "
      "grid " +
      std::to_string(grid) + " (dx = " + fmt("%.4g", 1.0 / grid) +
      "), 4 particles per cell, slip "
      "walls, density 1000, bulk modulus K = 4e5 (c = 20 m/s; peak speed sqrt(2 g 2a) = 2 m/s: Mach <= 0.1), "
      "viscosity 0, volume correction " +
      fmt("%g", vc_default) + " / s (the default), dt = " + fmt("%.3g", main.dt) +
      " s (CFL 0.25 on c + u), run to T = 3.4, released at t = 0. "
      "Front = farthest particle + half a spacing, from the wall.";
  double worst = 0, zsim[5] = {0, 0, 0, 0, 0};
  const Series sim = surge_series(main, "MPM (grid " + std::to_string(grid) + ")", false);
  Series ex{"Martin & Moyce 1952, n^2 = 2", {}, {}, true, true};
  for (int k = 0; k < 5; ++k) {
    ex.x.push_back(kExpT[k]);
    ex.y.push_back(kExpZ[k]);
    zsim[k] = surge_at(main, kExpT[k]);
    const double rel = (zsim[k] - kExpZ[k]) / kExpZ[k];
    worst = std::max(worst, std::fabs(rel));
    r.notes += "T = " + fmt("%.3f", kExpT[k]) + ": Z = " + fmt("%.3f", zsim[k]) + " (experiment " +
               fmt("%.3f", kExpZ[k]) + ", " + fmt("%+.1f", 100 * rel) + " %). ";
  }
  r.checks.push_back(make_check("RMS relative deviation of Z at the 5 measured T <= 3.4",
                                surge_rms(main, 0.0), 0.0, 0.10, Compare::Near));
  Plot p;
  p.title = "Dam break surge front, n^2 = 2";
  p.xlabel = "T = t sqrt(2g/a)";
  p.ylabel = "Z = x_front / a";
  p.series = {sim, ex};
  r.notes += "Largest deviation " + fmt("%.1f", 100 * worst) +
             " %. Tolerance: RMS of the relative deviation <= 10 %. "
             "Front speed dZ/dT between T = 1.22 and 3.35: " +
             fmt("%.2f", (zsim[4] - zsim[1]) / (kExpT[4] - kExpT[1])) + " (experiment " +
             fmt("%.2f", (kExpZ[4] - kExpZ[1]) / (kExpT[4] - kExpT[1])) +
             "; shallow-water (Ritter) 2 sqrt(g H) gives " +
             fmt("%.2f", 2 * std::sqrt(g * 2 * a) / (a * std::sqrt(2 * g / a))) + "). ";
  if (!opt.quick) {
    // Why the front leads: resolution, the walls and the start, each in its own runs.
    std::string series;
    SurgeRun finest;
    for (int gr : {128, 256, 512}) {
      for (double vc : {0.0, vc_default}) {
        const SurgeRun run = (gr == grid && vc == vc_default) ? main : run_surge(gr, vc, opt);
        if (!run.error.empty()) {
          r.notes += "grid " + std::to_string(gr) + (vc > 0 ? " corrected" : "") +
                     " failed: " + run.error + ". ";
          continue;
        }
        series += "grid " + std::to_string(gr) + (vc > 0 ? " with the volume correction" : "") +
                  ": RMS " + fmt("%.3f", surge_rms(run, 0.0)) + "; ";
        if (gr == 512 && vc > 0) finest = run;
      }
    }
    double best = 0.0, best_rms = 1e30;
    if (!finest.T.empty())
      for (int k = 0; k <= 80; ++k) {
        const double d = 0.01 * k, e = surge_rms(finest, d);
        if (e < best_rms) {
          best_rms = e;
          best = d;
        }
      }
    if (!finest.T.empty()) {
      r.checks.push_back(
          make_check("Grid 512, volume correction (walls at their faces): RMS relative deviation",
                     surge_rms(finest, 0.0), 0.0, 0.10, Compare::Near));
      r.checks.push_back(make_check("The same with the experiment's start delayed by dT = " +
                                        fmt("%.2f", best) + " (the best constant delay)",
                                    best_rms, 0.0, 0.10, Compare::Near));
      p.series.push_back(surge_series(finest, "MPM grid 512, volume correction", false));
      p.series.push_back(
          surge_series(finest, "the same, delayed by dT = " + fmt("%.2f", best), true, best));
    }
    r.notes +=
        "Why the front leads, run by run: " + series +
        "(1) Not resolution: without the correction the RMS stays about 0.2 from grid 128 to 512. (2) The walls: "
        "without the correction the water settles about a cell into the slip walls' 3-node layer (mpm.still_tank "
        "measures it); with the correction the walls hold it at their faces and the RMS falls at every grid. What "
        "is left grows with refinement towards a limit (the coarse grid's damping hides part of it at grid 128). "
        "(3) What is left at grid 512 is a start-up offset, not a speed: delaying the simulation by a constant dT = " +
        fmt("%.2f", best) + " (" + fmt("%.1f", 1e3 * best / std::sqrt(2 * g / 0.05715)) +
        " ms at the experiment's a = 5.7 cm) brings all five points to an RMS of " +
        fmt("%.3f", best_rms) +
        ": the front's speed matches the experiment, the model's release is instantaneous while the experiment's "
        "column had to be let go. ";
  } else {
    r.notes +=
        "The full run (not --quick) adds the resolution and wall study and the start-delay fit. ";
  }
  r.plots.push_back(p);
  r.seconds = flow::now_seconds() - t0;
  return r;
}

// ---------------------------------------------------------------------------
// 2. Granular column collapse against Lube et al. (2005).

CaseResult granular_collapse(const Options& opt) {
  CaseResult r;
  r.id = "mpm.granular_collapse";
  r.title =
      "Granular column collapse: run-out (L - L0)/L0 vs aspect ratio a against Lube et al. (2005)";
  r.model =
      "MLS-MPM, quadratic, FLIP (flip_blend 1; APIC shown beside it), sand: Hencky elasticity + plane-strain "
      "Mohr-Coulomb return map (angle of repose phi = 32 deg, cone sin(phi_mc) = tan(phi), c = 0)";
  r.reference =
      "G. Lube, H. E. Huppert, R. S. J. Sparks and A. Freundt (2005), \"Collapses of two-dimensional granular "
      "columns\", Phys. Rev. E 72, 041301: (L_inf - L0)/L0 = 1.2 a for a < 1.8 and 1.9 a^(2/3) for a > 2.8 "
      "(a = H0/L0, one-sided release in a channel; materials with friction angles ~30-35 deg). The coefficients "
      "are quoted as in the task brief and in Staron & Hinch (2005), J. Fluid Mech. 545, 1-27; not re-read from "
      "the paper here.";
  const double t0 = flow::now_seconds();
  const int grid = 128;
  const double L0 = 0.1, phi = 32.0, E = 5e4;
  const double dx = 1.0 / grid;
  const double dt = 1e-4 * std::sqrt(2e5 / E) * (128.0 / grid);
  r.setup =
      "Sand column L0 = 0.1 wide against the left wall of a 1 x 0.5 box, heights a L0 for a = 0.5, 1, 2, 4; grid " +
      std::to_string(grid) + " (dx = " + fmt("%.4g", dx) +
      ", L0 = 12.8 cells), 4 particles per cell, sticky "
      "(rough) walls, density 1500, E = 5e4, nu = 0.3, phi = 32 deg, c = 0, dt = " +
      fmt("%.3g", dt) +
      " s. Checked: FLIP (flip_blend 1), run until the front has not moved 0.01 dx for 0.5 s (at most 3 s). "
      "Shown: APIC from the same columns, run until the kinetic energy per mass < 1e-6. L_inf = farthest "
      "particle + half a spacing, from the wall.";
  char mat[256];
  std::snprintf(mat, sizeof mat,
                R"({"type": "sand", "density": 1500, "E": %g, "nu": 0.3, "friction_angle": %g})", E,
                phi);
  Series flip{"MPM, FLIP 1.0 (checked)", {}, {}, true, false};
  Series apic{"MPM, APIC, same columns (not checked)", {}, {}, true, false};
  Series law_lo{"Lube 2005: 1.2 a (a < 1.8)", {}, {}, false, true};
  Series law_hi{"Lube 2005: 1.9 a^(2/3) (a > 2.8)", {}, {}, false, true};
  for (double a = 0.3; a <= 2.01; a += 0.1) {
    law_lo.x.push_back(a);
    law_lo.y.push_back(1.2 * a);
  }
  for (double a = 2.8; a <= 4.51; a += 0.1) {
    law_hi.x.push_back(a);
    law_hi.y.push_back(1.9 * std::pow(a, 2.0 / 3.0));
  }
  std::string apic_notes;
  for (double a : {0.5, 1.0, 2.0, 4.0}) {
    const flow::ColumnRun f = flow::run_column(mat, grid, dt, L0, a, opt, true);
    if (!f.error.empty()) {
      r.error = f.error;
      break;
    }
    flip.x.push_back(a);
    flip.y.push_back(f.ro);
    r.notes += "a = " + fmt("%.1f", a) + ": (L - L0)/L0 = " + fmt("%.2f", f.ro) +
               ", without the tail thinner than 1.5 dx " + fmt("%.2f", f.body) +
               " (front still at t = " + fmt("%.2f", f.t) + " s). ";
    // APIC beside it: a failed comparison run is noted, the checked run stands.
    const flow::ColumnRun p = flow::run_column(mat, grid, dt, L0, a, opt, false);
    if (p.error.empty()) {
      apic.x.push_back(a);
      apic.y.push_back(p.ro);
      apic_notes +=
          (apic_notes.empty() ? "" : ", ") + fmt("%.2f", p.ro) + " (" + fmt("%.2f", p.body) + ")";
    } else {
      apic_notes += (apic_notes.empty() ? "" : ", ") + std::string("failed (") + p.error + ")";
    }
    const double ro = f.ro;
    if (a < 1.8) {
      r.checks.push_back(make_check("a = " + fmt("%.1f", a) + ": (L - L0)/L0 vs 1.2 a", ro, 1.2 * a,
                                    0.25, Compare::NearRel));
    } else if (a > 2.8) {
      r.checks.push_back(make_check("a = " + fmt("%.1f", a) + ": (L - L0)/L0 vs 1.9 a^(2/3)", ro,
                                    1.9 * std::pow(a, 2.0 / 3.0), 0.25, Compare::NearRel));
    } else {
      // Transition: between the two laws (1.2 a and 1.9 a^(2/3)), each widened by the same 25 %.
      r.checks.push_back(
          make_check("a = " + fmt("%.1f", a) + ": (L - L0)/L0 >= 0.75 x 1.2 a (transition)", ro,
                     0.75 * 1.2 * a, 0, Compare::Above));
      r.checks.push_back(
          make_check("a = " + fmt("%.1f", a) + ": (L - L0)/L0 <= 1.25 x 1.9 a^(2/3) (transition)",
                     ro, 1.25 * 1.9 * std::pow(a, 2.0 / 3.0), 0, Compare::Below));
    }
  }
  Plot p;
  p.title = "Granular column collapse run-out";
  p.xlabel = "aspect ratio a = H0 / L0";
  p.ylabel = "(L_inf - L0) / L0";
  p.series = {flip, apic, law_lo, law_hi};
  r.plots.push_back(p);
  r.notes +=
      "The same columns with APIC, not checked (without the tail in brackets): " + apic_notes +
      " for a = 0.5, 1, 2, 4. ";
  r.notes +=
      "Tolerance 25 % relative: the experimental scatter about the laws is of order 10-20 % and the laws are fits over "
      "several materials. Why FLIP is the checked transfer (since 2026-11-26; APIC before): APIC's run-out depends on "
      "the time step without a limit, because each transfer damps the sub-grid shear once per step (with the earlier "
      "cone, sin(phi_mc) = sin(phi), at a = 4: 6.46, 6.13, 5.49, 4.80, 4.18 and 3.62 for dt, dt/2, dt/4, dt/8, dt/16 "
      "and dt/32; with this cone a = 0.5 gives 0.42, 0.39 and 0.36 and a = 4 4.75, 4.15 and 3.38 at dt, dt/4 and "
      "dt/16; tests/sim/mpm/test_sand.cpp asserts the trend at grid 64), so no APIC value is the model's prediction. "
      "The APIC series above would miss a = 0.5 (-30 %) at this dt and pass the others; checked at dt/16 it would "
      "miss a = 0.5 and a = 4. FLIP (flip_blend 1) damps nothing in the transfer and its run-out does not depend on dt (this "
      "cone, measured 2026-11-26: a = 0.5 0.50 and 0.47, a = 4 4.60 and 4.70 at dt and dt/4; the earlier cone: "
      "a = 4 6.89, 6.80 and 7.28 at dt, dt/4 and dt/16). Resolution (FLIP, grid 256, dt scaled with dx, measured "
      "2026-11-26): a = 0.5 0.58, a = 1 1.26, a = 2 2.86 and a = 4 4.85, against 0.50, 1.13, 2.54 and 4.60 at grid 128 (14 % apart at most). The sand's friction angle is its angle of repose "
      "(sin(phi_mc) = tan(phi), sand_cone_sin in sim/mpm/materials.h; mpm.angle_of_repose checks it): with the "
      "earlier cone sin(phi_mc) = sin(phi), which sheared at atan(sin 32) = 27.9 deg, FLIP ran out 0.60, 1.36, 3.07 "
      "and 6.89 (a = 4 44 % past the law) and APIC 0.50, 1.19, 3.07 and 6.46, a thin tail (1-3 particle layers) "
      "making up a third of the a = 4 run-out. The tail: in a spreading layer one cell thick the grid cannot resolve "
      "the thinning (dv_y/dy), the trial strain has tr > 0 and the constant-volume return map sends it to the apex "
      "(stress free), so the layer loses its friction and slides on. With this cone the tail is a quarter as long: at "
      "a = 4 it adds 0.52 L0 to FLIP's run-out (4.60 against 4.08 without it; the 'without the tail' values above), "
      "against 2.23 L0 with APIC and the earlier cone (6.46 against 4.23); at small a the deposit's own wedge tip is "
      "thinner than 1.5 dx and counts as tail too (a flank of 32 deg is thinner than 1.5 dx over its last 0.19 L0). Rousseau et al. (2023), \"Revisiting "
      "the role of friction coefficients in granular collapses\", J. Fluid Mech., report that a constant-friction "
      "(Drucker-Prager) continuum recovers the a^(2/3) law when its friction is set to the avalanche angle rather "
      "than the stop angle, and that side-wall friction in a channel matters; the plane-strain model here has no "
      "side walls.";
  r.seconds = flow::now_seconds() - t0;
  return r;
}

// ---------------------------------------------------------------------------
// 3. Angle of repose of a poured pile.

CaseResult angle_of_repose(const Options& opt) {
  CaseResult r;
  r.id = "mpm.angle_of_repose";
  r.title = "Angle of repose of a poured sand pile vs the friction angle (25, 30, 35 deg)";
  r.model =
      "MLS-MPM, quadratic, APIC, sand: Hencky elasticity + plane-strain Mohr-Coulomb return map with the "
      "cone sin(phi_mc) = tan(phi) (c = 0; flow at constant volume, and with dilatancy psi = phi for the second "
      "tilting-table pair)";
  r.reference =
      "The angle of repose of a cohesionless granular material is the slope at which a sheared layer flows at its "
      "critical state (constant volume): R. M. Nedderman (1992), Statics and Kinematics of Granular Materials, "
      "Cambridge University Press, ch. 2-3 (the infinite slope: tan(slope) = the layer's friction coefficient). "
      "The plane-strain Mohr-Coulomb material of angle phi_mc with dilatancy psi shears with tan(slope) = sin "
      "phi_mc cos psi / (1 - sin phi_mc sin psi): E. H. Davis (1968), \"Theories of plasticity and the failure of "
      "soil masses\", in I. K. Lee (ed.), Soil Mechanics: Selected Topics, Butterworths. At constant volume (psi = "
      "0) that is sin phi_mc, so the sand's cone is set to sin phi_mc = tan phi and its flowing slope is phi; a dense "
      "dilatant sand (psi = phi) holds steeper slopes than phi until it has loosened.";
  const double t0 = flow::now_seconds();
  flow::PileOptions po;
  const double dx = 1.0 / po.grid;
  r.setup =
      "Pour onto a rough (sticky) floor of a 1 x 0.5 box, grid " + std::to_string(po.grid) +
      " (dx = " + fmt("%.4g", dx) + "): rows of particles (spacing dx/2) in a stream " +
      fmt("%.3g", po.pour_width) + " wide released " + fmt("%.3g", po.pour_gap) +
      " above the heap top at " + fmt("%.3g", po.pour_rate) + " area/s until " +
      fmt("%.3g", po.pour_area) +
      " is poured, then settle (kinetic energy per mass < 1e-6); "
      "density 1500, E = 5e4, nu = 0.3, c = 0, dt = 2e-4 s. Angle: the free surface h(x) = highest particle "
      "per dx-wide column + half a spacing; on each flank the outermost run of columns with 0.2 H <= h <= 0.8 H "
      "(H the pile height) is fitted by least squares; the angle is the mean of the two flanks. Infinite slope: a "
      "layer 0.03 thick (3.8 cells) filling a 6 x 0.5 box from wall to wall on the sticky floor, gravity tilted "
      "(tilting table: settle 0.3 s under vertical gravity, tilt in 20 steps over 0.5 s, hold 1 s), mean "
      "particle speed in the middle 40 % at the end; the default sand (psi = 0) at phi - 3 and phi + 1 deg, the "
      "dilatant sand (psi = phi, dilation_limit 0.15) at phi + 1 deg.";
  Series meas{"MPM pile angle", {}, {}, true, false};
  Series ref{"angle = phi", {20, 40}, {20, 40}, false, true};
  // The three piles are independent: run them side by side, one backend
  // thread each (a pile of ~2600 particles gains little from more), when
  // more than one thread is allowed. Each run is deterministic either way.
  // A run that throws (a device backend that cannot be made, say) keeps its
  // message as its error: an exception must not leave a thread.
  const double phis[3] = {25.0, 30.0, 35.0};
  flow::PileRun runs[3];
  Options one = opt;
  one.threads = 1;
  auto pile_run = [&](int k) {
    try {
      runs[k] = flow::run_pile(phis[k], 0.0, po, one);
    } catch (const std::exception& e) {
      runs[k].error = e.what();
    }
  };
  if (opt.threads == 1) {
    for (int k = 0; k < 3; ++k) pile_run(k);
  } else {
    std::vector<std::thread> pool;
    for (int k = 0; k < 3; ++k) pool.emplace_back(pile_run, k);
    for (auto& t : pool) t.join();
  }
  // The slope directly: an infinite slope (a long layer between walls under
  // tilted gravity). The default sand (psi = 0, constant volume) must stand at
  // phi - 3 deg and flow at phi + 1 deg; the dense dilatant one (psi = phi,
  // dying out at the default dilation_limit) must hold at phi + 1 deg, above
  // its angle of repose (it has to dilate to shear).
  double still[3] = {0, 0, 0}, moving[3] = {0, 0, 0}, still_d[3] = {0, 0, 0};
  std::string terr[9];
  {
    auto tilt_run = [&](int k) {
      try {
        still[k] =
            flow::tilted_layer_speed(phis[k], phis[k] - 3.0, po.grid, one, 0.03, 1.0, &terr[k]);
        moving[k] =
            flow::tilted_layer_speed(phis[k], phis[k] + 1.0, po.grid, one, 0.03, 1.0, &terr[3 + k]);
        still_d[k] = flow::tilted_layer_speed(phis[k], phis[k] + 1.0, po.grid, one, 0.03, 1.0,
                                              &terr[6 + k], phis[k]);
      } catch (const std::exception& e) {
        terr[k] = e.what();
      }
    };
    if (opt.threads == 1) {
      for (int k = 0; k < 3; ++k) tilt_run(k);
    } else {
      std::vector<std::thread> pool;
      for (int k = 0; k < 3; ++k) pool.emplace_back(tilt_run, k);
      for (auto& t : pool) t.join();
    }
  }
  for (int k = 0; k < 3; ++k) {
    const double phi = phis[k];
    const flow::PileRun& run = runs[k];
    if (!run.error.empty()) {
      r.error = run.error;
      break;
    }
    meas.x.push_back(phi);
    meas.y.push_back(run.fit.angle);
    r.checks.push_back(make_check("phi = " + fmt("%.0f", phi) + " deg: pile angle", run.fit.angle,
                                  phi, 3.0, Compare::Near, "deg"));
    r.checks.push_back(
        make_check("phi = " + fmt("%.0f", phi) + " deg: pile settled (kinetic energy per mass)",
                   run.ke_per_mass, 1e-5, 0, Compare::Below, "J/kg"));
    r.checks.push_back(
        make_check("phi = " + fmt("%.0f", phi) +
                       " deg: layer tilted phi - 3 deg stands (mean speed after 1 s held)",
                   still[k], 0.01, 0, Compare::Below, "m/s"));
    r.checks.push_back(
        make_check("phi = " + fmt("%.0f", phi) +
                       " deg: layer tilted phi + 1 deg flows (mean speed after 1 s held)",
                   moving[k], 0.05, 0, Compare::Above, "m/s"));
    r.checks.push_back(
        make_check("phi = " + fmt("%.0f", phi) +
                       " deg, dilatancy psi = phi: dense layer tilted phi + 1 deg stands",
                   still_d[k], 0.01, 0, Compare::Below, "m/s"));
    for (const std::string& e : {terr[k], terr[3 + k], terr[6 + k]})
      if (!e.empty()) r.error = e;
    r.notes += "phi " + fmt("%.0f", phi) + ": " + fmt("%.2f", run.fit.angle) + " deg (flanks " +
               fmt("%.2f", run.fit.angle_left) + " / " + fmt("%.2f", run.fit.angle_right) +
               ", height " + fmt("%.4f", run.fit.height) + ", " + std::to_string(run.particles) +
               " particles). ";
  }
  r.notes +=
      "The cone: the scene's friction angle phi is the angle of repose, and the return map's plane-strain "
      "Mohr-Coulomb cone is set to sin(phi_mc) = tan(phi) (27.8, 35.3 and 44.4 deg for 25, 30 and 35; "
      "sand_cone_sin in sim/mpm/materials.h; the unit tests in tests/sim/mpm/test_sand.cpp check the projected "
      "principal stresses on it to round-off). Reason: the constant-volume flow rule (psi = 0, a return along the "
      "deviator as in Klar et al. 2016) drives a sheared layer's stress to sigma_xx = sigma_yy, where the cone is "
      "reached at tan(slope) = sin(phi_mc) (Davis 1968), so that is the slope at which sand set this way flows. The "
      "flowing layers above confirm it quantitatively: on a Coulomb base of friction tan(phi) a layer at phi + 1 deg "
      "accelerates at g (sin beta - tan phi cos beta) = 0.19, 0.20 and 0.21 m/s^2, i.e. about that speed after the "
      "1 s hold; measured 0.21, 0.23 and 0.20 m/s (2026-11-26). Before 2026-11-26 the cone was phi_mc = phi: its "
      "piles stood at 23.5, 27.7 and 32.3 deg and its layers slid above atan(sin phi) = 22.9, 26.6 and 29.8 deg (in "
      "this box the 30 deg sand tilted to 27 deg slid at 0.105 m/s after 1 s; Davis gives 0.083 m/s^2). The box: "
      "the end walls hold a layer back (the downhill one takes a passive wedge). In the 1-long box of the earlier "
      "protocol that layer crept at 0.0005 m/s, in a 3-long box at 0.017 m/s, which hid that miss at 30 deg; in this "
      "6-long box the middle slides as a block on a Coulomb base would (the speeds above, within 20 %; a 12-long box gives 0.247 m/s against 0.233 at 30 + 1 deg, and the same stand at 30 - 3). "
      "Dilatancy: a dense sand with psi = phi must dilate to shear, so it holds slopes steeper than its angle of "
      "repose until it has dilated by ln Jp = dilation_limit (0.15, the critical state), and then flows at phi, as "
      "real sand's angle of maximum stability exceeds its angle of repose; the check is that it holds at phi + 1 deg, "
      "where the same sand without dilatancy slides. Davis's peak for steady dilatant shear, tan(beta) = sin phi_mc "
      "cos psi / (1 - sin phi_mc sin psi) (27.8, 35.1 and 43.8 deg), is not where it starts: the 35 deg dense layer "
      "already flows at 40.8 deg (1.0 m/s after 1 s; measured 2026-11-26), as the stress state the tilt leaves reaches "
      "the cone before the peak. No slope above phi_mc can stand with any flow rule, so the onset is not checked. "
      "The angle of repose is the quasi-static limit, so the pile is poured at 0.0025 area/s; at twice that rate the "
      "piles stand at 24.3, 32.7 and 34.9 deg (measured 2026-11-26; a first trial of this cone on 2026-11-25, in "
      "an earlier build, had given 24.3, 32.7 and 40.3, whose 35 deg value this build does not reproduce). A pile's "
      "angle scatters by about 1.5 deg at this resolution (flank to flank, and between builds differing in float "
      "rounding).";
  Plot p;
  p.title = "Angle of repose vs friction angle";
  p.xlabel = "friction angle phi (deg)";
  p.ylabel = "pile angle (deg)";
  p.series = {meas, ref};
  r.plots.push_back(p);
  r.seconds = flow::now_seconds() - t0;
  return r;
}

// ---------------------------------------------------------------------------
// 4. A block sliding on a floor with Coulomb friction (solver.wall_friction).

CaseResult wall_friction_slide(const Options& opt) {
  CaseResult r;
  r.id = "mpm.wall_friction_slide";
  r.title =
      "Block sliding on a floor with Coulomb friction mu: deceleration mu g, stopping distance v0^2 / (2 mu g)";
  r.model =
      "MLS-MPM, quadratic, APIC, fixed-corotated jelly; the walls' surface nodes with Coulomb friction "
      "(solver.wall_friction, mpm_kernels.h wall_contact)";
  r.reference =
      "Coulomb's law of sliding friction: a rigid block sliding on a horizontal floor decelerates at mu g "
      "and stops after v0^2 / (2 mu g) (any mechanics text, e.g. Meriam & Kraige, Engineering Mechanics: "
      "Dynamics, ch. 3). With mu = 0 the floor holds the block without slowing it.";
  const double t0 = flow::now_seconds();
  const int grid = 128;
  const double dx = 1.0 / grid, g = 9.8, v0 = 1.0, E = 2e5, rho = 1000.0;
  const double dt = 2e-5;
  r.setup =
      "Jelly block 0.1 x 0.05 (E = 2e5, nu = 0.2, density 1000) resting on the floor of a 1 x 0.5 box "
      "(grid " +
      std::to_string(grid) +
      ", 4 particles per cell, separate walls), given v0 = 1 m/s along the "
      "floor at t = 0; dt = 2e-5 s. Deceleration: least-squares slope of the centre-of-mass velocity while it "
      "is between 0.9 v0 and 0.2 v0; distance: centre-of-mass travel until it is below 1 mm/s (at most 1 s).";
  Plot p;
  p.title = "Sliding block: centre-of-mass velocity";
  p.xlabel = "t (s)";
  p.ylabel = "v_x (m/s)";
  for (double mu : {0.0, 0.2, 0.5}) {
    char doc[1024];
    std::snprintf(doc, sizeof doc, R"({
      "domain": {"size": [1, 0.5], "grid": %d},
      "solver": {"transfer": "apic", "dt": %.9g, "boundary": "separate", "wall_friction": %.9g, "gravity": [0, -9.8]},
      "materials": {"m": {"type": "jelly", "density": %g, "E": %g, "nu": 0.2}},
      "bodies": [{"shape": "box", "min": [0.1, %.9g], "max": [0.2, %.9g], "material": "m", "spacing": %.9g,
                  "velocity": [%.9g, 0]}]
    })",
                  grid, dt, mu, rho, E, 3 * dx, 3 * dx + 0.05, 0.5 * dx, v0);
    MpmScene scene = mpm_scene(doc, "slide.json", opt);
    MpmWorld& w = *scene.world;
    Series curve{"mu = " + fmt("%.1f", mu), {}, {}, false, false};
    std::vector<double> ts, vs;
    double x_start = 0, x_now = 0;
    const int per = 100;  // samples every 2 ms
    auto com = [&](double& x, double& v) {
      Diagnostics d = w.diagnostics();
      v = d.momentum[0] / d.mass;
      double sx = 0, sm = 0;
      for (size_t k = 0; k < w.particles.size(); ++k) {
        sx += w.particles.mass[k] * w.particles.x[k].x;
        sm += w.particles.mass[k];
      }
      x = sx / sm;
    };
    double v = v0;
    com(x_start, v);
    const double t_end = mu > 0 ? std::min(1.0, 1.5 * v0 / (mu * g)) : 0.3;
    while (w.time() < t_end) {
      StepStatus st = w.step(per);
      if (!st.ok) {
        r.error = st.message;
        break;
      }
      com(x_now, v);
      ts.push_back(w.time());
      vs.push_back(v);
      curve.x.push_back(w.time());
      curve.y.push_back(v);
      if (mu > 0 && std::fabs(v) < 1e-3 && w.time() > 0.5 * v0 / (mu * g)) break;
    }
    if (!r.error.empty()) break;
    // Least-squares slope over 0.9 v0 >= v >= 0.2 v0 (mu = 0: the whole run).
    double st = 0, sv = 0, stt = 0, stv = 0;
    int n = 0;
    for (size_t k = 0; k < ts.size(); ++k) {
      if (mu > 0 && (vs[k] > 0.9 * v0 || vs[k] < 0.2 * v0)) continue;
      st += ts[k];
      sv += vs[k];
      stt += ts[k] * ts[k];
      stv += ts[k] * vs[k];
      ++n;
    }
    const double slope = n > 2 ? (n * stv - st * sv) / (n * stt - st * st) : NAN;
    const double decel = -slope;
    if (mu == 0.0) {
      r.checks.push_back(make_check("mu = 0: deceleration / g (frictionless floor)", decel / g, 0.0,
                                    0.01, Compare::Near));
      r.notes += "mu = 0: deceleration " + fmt("%.4f", decel) + " m/s^2 over " +
                 fmt("%.2f", w.time()) + " s, v = " + fmt("%.4f", v) + " m/s at the end. ";
    } else {
      const double dist = x_now - x_start, ref = v0 * v0 / (2 * mu * g);
      r.checks.push_back(make_check("mu = " + fmt("%.1f", mu) + ": deceleration vs mu g", decel,
                                    mu * g, 0.05, Compare::NearRel));
      r.checks.push_back(
          make_check("mu = " + fmt("%.1f", mu) + ": stopping distance vs v0^2 / (2 mu g)", dist,
                     ref, 0.05, Compare::NearRel));
      r.notes += "mu = " + fmt("%.1f", mu) + ": deceleration " + fmt("%.3f", decel) +
                 " m/s^2 (mu g = " + fmt("%.3f", mu * g) + "), distance " + fmt("%.4f", dist) +
                 " m (" + fmt("%.4f", ref) + "), stopped at t = " + fmt("%.3f", w.time()) + " s. ";
    }
    p.series.push_back(curve);
  }
  r.plots.push_back(p);
  r.notes +=
      "Tolerance 5 %: the block is elastic, so it settles onto the floor and rocks a little while it slides; "
      "the normal force it presses with is its weight only on average.";
  r.seconds = flow::now_seconds() - t0;
  return r;
}

// ---------------------------------------------------------------------------
// 5. A tank of water at rest keeps its depth (the fluids' volume correction).

CaseResult still_tank(const Options& opt) {
  CaseResult r;
  r.id = "mpm.still_tank";
  r.title =
      "Still tank: water at rest keeps its depth (volume correction) and its floor pressure is rho g h";
  r.model =
      "MLS-MPM, quadratic B-splines, APIC, weakly compressible fluid with the grid volume correction "
      "(mpm::volume_corrected_J: the channel filtered [1 2 1], the walls the mirror image of the water in front "
      "of them for its volume and its stress)";
  r.reference =
      "Hydrostatics of the weakly compressible fluid p = K (1 - J): at rest a particle under undeformed depth s has "
      "J = 1 - rho g s / K, so the column of undeformed depth h0 has its centre of mass at h0 / 2 - rho g h0^2 / (3 K); "
      "the floor carries the water's weight, p_floor = M g / W. The correction follows the density drift "
      "compensation of FLIP fluids (M. Mueller, Ten Minute Physics 18, 2022) and the grid density constraint of "
      "Kugelstadt, Longva, Thuerey & Bender, IEEE TVCG 27(4), 2021; the walls' mirror images follow the ghost "
      "particles of Libersky, Petschek, Carney, Hipp & Allahdadi, J. Comput. Phys. 109, 1993.";
  const double t0 = flow::now_seconds();
  struct Config {
    int grid;
    double K, seconds;
  };
  const std::vector<Config> configs =
      opt.quick ? std::vector<Config>{{64, 2e5, 30.0}}
                : std::vector<Config>{
                      {64, 2e5, 60.0}, {128, 2e5, 60.0}, {64, 1e6, 60.0}, {128, 1e6, 60.0}};
  // The same tank without the correction, for the curve that loses its water.
  const Config off = opt.quick ? Config{64, 2e5, 30.0} : Config{64, 2e5, 60.0};
  // The tank starts uncompressed and rings about its compressed equilibrium
  // while the walls' and the viscosity's damping take the start's energy out:
  // the depth is held to 1 % from kSettle on; the start's swing is reported.
  // The floor pressure swings longer (grid 64, K = 2e5: the fit's intercept
  // 1.5, 0.65, 1.2, 0.88 of M g / W at 3, 7, 10, 13 s, within 0.5 % from
  // 21 s on), so the quick run lasts 30 s and every run is judged on its
  // last quarter.
  constexpr double kSettle = 5.0;
  Plot depth{"Depth (twice the centre-of-mass height) over its hydrostatic equilibrium",
             "t (s)",
             "depth / depth_eq - 1 (%)",
             {},
             false};
  auto curve = [&](const flow::TankRun& run, const std::string& label, bool dashed) {
    Series s{label, {}, {}, false, dashed};
    for (size_t k = 0; k < run.t.size(); ++k) {
      s.x.push_back(run.t[k]);
      s.y.push_back(100.0 * (run.depth[k] / run.depth_eq - 1.0));
    }
    depth.series.push_back(s);
  };
  for (const Config& c : configs) {
    flow::TankOptions to;
    to.grid = c.grid;
    to.K = c.K;
    to.seconds = c.seconds;
    to.volume_correction = 20.0;
    const flow::TankRun run = flow::run_still_tank(to, opt);
    const std::string tag = "grid " + std::to_string(c.grid) + ", K = " + fmt("%.0e", c.K);
    if (!run.error.empty()) {
      r.error = tag + ": " + run.error;
      break;
    }
    r.checks.push_back(make_check(tag + ": largest |depth / depth_eq - 1| from " +
                                      fmt("%.0f", kSettle) + " to " + fmt("%.0f", c.seconds) + " s",
                                  run.error_worst(kSettle), 0.01, 0.0, Compare::Below));
    r.checks.push_back(make_check(tag + ": floor pressure / (M g / W), mean of the last quarter",
                                  run.floor_pressure() / run.p_ref, 1.0, 0.02, Compare::NearRel));
    r.checks.push_back(make_check(tag + ": |mass change| / mass",
                                  std::fabs(run.mass_end - run.mass0) / run.mass0, 0.0, 0.0,
                                  Compare::Below));
    curve(run, tag, false);
    r.notes += tag + ": depth " + fmt("%.4f", run.depth.front()) + " -> " +
               fmt("%.4f", run.depth.back()) + " m, equilibrium " + fmt("%.4f", run.depth_eq) +
               " m (" + fmt("%+.2f", 100.0 * run.error_end()) + " % at the end; worst " +
               fmt("%.2f", 100.0 * run.error_worst(0.0)) +
               " % with the start's swing), floor pressure " + fmt("%.1f", run.floor_pressure()) +
               " Pa (M g / W = " + fmt("%.1f", run.p_ref) + " Pa), dt " + fmt("%.3g", run.dt) +
               " s, " + std::to_string(run.particles) + " particles, " +
               fmt("%.0f", run.wall_seconds) + " s wall. ";
  }
  if (r.error.empty()) {
    flow::TankOptions to;
    to.grid = off.grid;
    to.K = off.K;
    to.seconds = off.seconds;
    to.volume_correction = 0.0;
    const flow::TankRun run = flow::run_still_tank(to, opt);
    const std::string tag =
        "grid " + std::to_string(off.grid) + ", K = " + fmt("%.0e", off.K) + ", no correction";
    if (run.error.empty()) {
      curve(run, tag, true);
      r.notes +=
          "Without the correction (volume_correction 0), " + tag.substr(0, tag.find(", no")) +
          ": depth " + fmt("%.4f", run.depth.front()) + " -> " + fmt("%.4f", run.depth.back()) +
          " m in " + fmt("%.0f", off.seconds) + " s (" + fmt("%+.2f", 100.0 * run.error_end()) +
          " % from equilibrium): the water sinks into the walls' 3-node layer in its first second and then "
          "compacts towards the floor while J stays at its hydrostatic value. ";
    } else {
      r.notes += "The run without the correction failed: " + run.error + ". ";
    }
  }
  r.plots.push_back(depth);
  r.setup =
      "Water at rest from wall to wall in a 1 x 0.6 box with slip walls 3 nodes thick (the correction makes "
      "them hold the water at their faces), 0.3 m deep, 4 particles per cell, density 1000, viscosity 2 Pa s, "
      "gravity 9.81, APIC, dt = 2e-4 s at grid 128 and K = 2e5 (scaled with dx and 1 / sqrt(K): CFL 0.36 on "
      "the sound speed), volume_correction 20 / s. Depth: twice the mean particle height above the floor (the "
      "centre of mass, which sinks when the water compacts), sampled every 0.5 s. Floor pressure: p = K (1 - J) "
      "of the particles away from the side walls (0.1 < x < 0.9) and below 3/4 of the depth, fitted linearly in "
      "height and taken at the floor." +
      std::string(opt.quick ? " Quick: grid 64, K = 2e5, 30 s." : "");
  r.notes +=
      "Tolerances: depth within 1 % of its equilibrium from 5 s on, floor pressure within 2 % of M g / W, "
      "mass exact.";
  r.seconds = flow::now_seconds() - t0;
  return r;
}

}  // namespace

std::vector<CaseSpec> mpm_flow_cases() {
  return {
      {"mpm.dam_break", "MPM flows", true, dam_break},
      {"mpm.granular_collapse", "MPM flows", false, granular_collapse},
      {"mpm.angle_of_repose", "MPM flows", false, angle_of_repose},
      {"mpm.wall_friction_slide", "MPM flows", true, wall_friction_slide},
      {"mpm.still_tank", "MPM flows", true, still_tank},
  };
}

}  // namespace verify
}  // namespace ps
