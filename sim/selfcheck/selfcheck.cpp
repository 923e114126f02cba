#include "sim/selfcheck/selfcheck.h"
#include "sim/core/format.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include "sim/dem/dem_world.h"
#include "sim/io/json.h"
#include "sim/mpm/mpm_cpu.h"
#include "sim/mpm/mpm_world.h"
#include "sim/scene/dem_scene.h"

namespace ps {

// [SECTION] Scenes ----------------------------------------------------------------

const std::vector<CheckMaterial>& check_materials() {
  static const std::vector<CheckMaterial> m = {
      {"tracer", R"({"type": "tracer"})"},
      {"fluid", R"({"type": "fluid", "bulk_modulus": 400, "viscosity": 0.01})"},
      {"jelly", R"({"type": "jelly", "E": 3000, "nu": 0.2})"},
      {"snow", R"({"type": "snow", "E": 3000, "nu": 0.2})"},
      {"sand", R"({"type": "sand", "E": 3000, "nu": 0.3, "friction_angle": 30})"},
      // A low yield stress so the squeezed block flows plastically.
      {"viscoplastic",
       R"({"type": "viscoplastic", "kappa": 3000, "mu": 1000, "yield_stress": 5, "eta": 0.01})"},
  };
  return m;
}

MpmScene check_mpm_scene(const std::string& material_json, const std::string& transfer,
                         const std::string& kernel, bool stretched) {
  // The rotating block moves nearly rigidly; the squeezed one (dilation
  // preset at -4 /s: v = -4 (0, y - cy)) loads the constitutive model at once.
  const std::string second = stretched ? R"(,
               {"shape": "box", "min": [0.65, 0.15], "max": [0.85, 0.35], "material": "m", "spacing": 0.0078125,
                "preset": {"kind": "dilation", "speed": -4}})"
                                       : "";
  const std::string s = std::string(R"({
    "domain": {"size": [1, 1], "grid": 64},
    "solver": {"transfer": ")") +
                        transfer + R"(", "kernel": ")" + kernel + R"(", "dt": 0.0001,
               "boundary": "separate", "gravity": [0, -9.8]},
    "materials": {"m": )" +
                        material_json + R"(},
    "bodies": [{"shape": "box", "min": [0.3, 0.1], "max": [0.6, 0.4], "material": "m", "spacing": 0.0078125,
                "preset": {"kind": "rotation", "speed": 2}})" +
                        second + R"(]
  })";
  return build_mpm_scene(Json::parse(s, "selfcheck_mpm.json"), "selfcheck_mpm.json");
}

std::unique_ptr<dem::DemWorld> check_dem_world() {
  // Everything moves from the first step: the block lands on the floor at
  // 0.5 m/s while the grains fall onto it at 1 m/s; bonds far from breaking
  // (a bond that breaks in one run and not the other is a threshold flip,
  // not a wrong result).
  static const char* kScene = R"({
    "kind": "dem",
    "domain": {"min": [0, 0], "max": [0.3, 0.3], "walls": true, "wall_material": "steel"},
    "solver": {"dt": "auto", "dt_safety": 0.2, "substeps": 50, "gravity": [0, -9.81], "velocity_limit": 50,
               "expected_speed": 3},
    "materials": {
      "rock": {"density": 2500, "E": 1e7, "nu": 0.25, "restitution": 0.5, "friction": 0.5, "rolling_friction": 0.02},
      "steel": {"density": 7800, "E": 2e8, "nu": 0.3, "restitution": 0.8, "friction": 0.3}
    },
    "bond": {"enabled": true, "E": 1e7, "nu": 0.25, "radius_ratio": 1, "contact_radius_multiplier": 1.05,
             "tensile_strength": 1e9, "compressive_strength": 1e9, "shear_strength": 1e9, "damping": 0.02},
    "bodies": [
      {"shape": "box", "center": [0.15, 0.0253], "size": [0.1, 0.05], "radius": 0.0025, "material": "rock",
       "bonded": true, "group": 1, "velocity": [0.3, -0.5]},
      {"shape": "disk", "center": [0.14, 0.0733], "disk_radius": 0.025, "radius": 0.0025, "material": "rock",
       "velocity": [0, -1]}
    ]
  })";
  auto w = std::make_unique<dem::DemWorld>();
  dem::load_dem_scene(Json::parse(kScene, "selfcheck_dem.json"), ".", *w);
  return w;
}

// [SECTION] Comparisons -------------------------------------------------------------

namespace {

bool finite(Vec2 v) { return std::isfinite(v.x) && std::isfinite(v.y); }
bool finite(dem::Vec2d v) { return std::isfinite(v.x) && std::isfinite(v.y); }

double rel(double a, double b) {
  const double d = std::fabs(a - b);
  return std::fabs(a) > 0.0 ? d / std::fabs(a) : d;
}

}  // namespace

MpmDifference compare_mpm(MpmWorld& ref, MpmWorld& cand) {
  MpmDifference d;
  ref.sync();
  cand.sync();
  const MpmParticles& a = ref.particles;
  const MpmParticles& b = cand.particles;
  if (a.size() != b.size()) {
    d.finite = false;
    return d;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (!finite(b.x[i]) || !finite(b.v[i])) {
      d.finite = false;
      continue;
    }
    d.max_dx = std::max(d.max_dx, length(a.x[i] - b.x[i]));
    const float dv = length(a.v[i] - b.v[i]);
    d.max_dv = std::max(d.max_dv, dv);
    d.rms_dv += static_cast<double>(dv) * dv;
  }
  d.rms_dv = a.size() ? std::sqrt(d.rms_dv / static_cast<double>(a.size())) : 0.0;
  const Diagnostics da = ref.diagnostics(), db = cand.diagnostics();
  d.mass_rel = rel(da.mass, db.mass);
  d.kinetic_rel = rel(da.kinetic_energy, db.kinetic_energy);
  if (!std::isfinite(db.mass) || !std::isfinite(db.kinetic_energy)) d.finite = false;
  return d;
}

DemDifference compare_dem(dem::DemWorld& ref, dem::DemWorld& cand) {
  DemDifference d;
  ref.sync();
  cand.sync();
  const dem::DemParticles& a = ref.particles;
  const dem::DemParticles& b = cand.particles;
  if (a.size() != b.size() || ref.bonds.size() != cand.bonds.size()) {
    d.finite = false;
    return d;
  }
  d.min_radius = a.size() ? a.radius[0] : 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    d.min_radius = std::min(d.min_radius, a.radius[i]);
    if (!finite(b.x[i]) || !finite(b.v[i])) {
      d.finite = false;
      continue;
    }
    d.max_dx = std::max(d.max_dx, length(a.x[i] - b.x[i]));
    d.max_dv = std::max(d.max_dv, length(a.v[i] - b.v[i]));
  }
  for (uint8_t x : ref.bonds.broken) d.broken_ref += x ? 1 : 0;
  for (uint8_t x : cand.bonds.broken) d.broken_cand += x ? 1 : 0;
  const dem::DemDiagnostics da = ref.diagnostics(), db = cand.diagnostics();
  d.kinetic_rel = rel(da.kinetic_energy, db.kinetic_energy);
  if (!std::isfinite(db.kinetic_energy)) d.finite = false;
  return d;
}

// [SECTION] The check ------------------------------------------------------------

namespace {

struct MpmCaseSpec {
  const CheckMaterial* material;
  const char* transfer;
  const char* kernel;
  std::string name() const {
    return std::string("mpm ") + material->name + " " + transfer + " " + kernel;
  }
};

std::vector<MpmCaseSpec> mpm_cases() {
  std::vector<MpmCaseSpec> out;
  const auto& mats = check_materials();
  for (const CheckMaterial& m : mats)
    for (const char* t : {"pic", "apic", "flip"}) out.push_back(MpmCaseSpec{&m, t, "quadratic"});
  // The other kernels once each: linear (MUSL pass) and cubic (wider stencil).
  out.push_back(MpmCaseSpec{&mats[2], "apic", "linear"});
  out.push_back(MpmCaseSpec{&mats[3], "flip", "cubic"});
  // PolyPIC (quadratic only) on an elastic and a plastic material.
  out.push_back(MpmCaseSpec{&mats[2], "polypic", "quadratic"});
  out.push_back(MpmCaseSpec{&mats[3], "polypic", "quadratic"});
  return out;
}

const char* kDemCase = "dem bonded block and grains";

/// Runs `steps` on both worlds; "" or why the candidate failed.
template <class World>
std::string run_pair(World& ref, World& cand, int steps, const std::string& cand_name) {
  const StepStatus sr = ref.step(steps);
  const StepStatus sc = cand.step(steps);
  if (cand.fallback().happened) return "failed at run time: " + cand.fallback().reason;
  if (cand.backend_name() != cand_name)
    return "the candidate backend was replaced by " + cand.backend_name();
  if (!sr.ok) return "the CPU reference blew up (" + sr.message + ")";
  if (!sc.ok) return "blew up where the CPU reference did not (" + sc.message + ")";
  if (cand.step_count() != ref.step_count())
    return "stepped to step " + std::to_string(cand.step_count()) + " instead of " +
           std::to_string(ref.step_count());
  return "";
}

SelfCheckCase run_mpm_case(const MpmCaseSpec& spec, const CandidateBackends& c,
                           const SelfCheckOptions& o) {
  SelfCheckCase out;
  out.name = spec.name();
  MpmScene ref = check_mpm_scene(spec.material->json, spec.transfer, spec.kernel, true);
  MpmScene cand = check_mpm_scene(spec.material->json, spec.transfer, spec.kernel, true);
  ref.world->set_backend(std::make_unique<MpmCpuBackend>(o.threads));
  cand.world->set_backend(c.mpm());
  const std::string cand_name = cand.world->backend_name();
  // The check itself compares; no checkpoints are needed on its scenes.
  cand.world->checkpoint_interval = 1 << 30;
  std::string why = run_pair(*ref.world, *cand.world, o.mpm_steps, cand_name);
  if (!why.empty()) {
    out.pass = false;
    out.detail = why;
    return out;
  }
  const MpmDifference d = compare_mpm(*ref.world, *cand.world);
  if (cand.world->fallback().happened) {
    out.pass = false;
    out.detail = "failed copying its state to the host: " + cand.world->fallback().reason;
    return out;
  }
  const float dx = ref.world->grid.dx;
  const double rms_tol =
      std::string(spec.kernel) == "linear" ? o.tol.mpm_rms_dv_linear : o.tol.mpm_rms_dv;
  const double dx_cells = d.max_dx / dx;
  std::string measured =
      fmt("max |dx| %.3g dx, rms |dv| %.3g m/s, max |dv| %.3g m/s", dx_cells, d.rms_dv, d.max_dv) +
      fmt(", relative mass %.2g, relative kinetic energy %.2g", d.mass_rel, d.kinetic_rel);
  std::string over;
  if (!d.finite)
    over = "non-finite or missing particle state";
  else if (!(dx_cells <= o.tol.mpm_dx))
    over = fmt("max |dx| %.3g dx > %.3g dx", dx_cells, o.tol.mpm_dx);
  else if (!(d.rms_dv <= rms_tol))
    over = fmt("rms |dv| %.3g m/s > %.3g m/s", d.rms_dv, rms_tol);
  else if (!(d.mass_rel <= o.tol.mpm_mass))
    over = fmt("total mass differs by %.3g > %.3g (relative)", d.mass_rel, o.tol.mpm_mass);
  else if (!(d.kinetic_rel <= o.tol.mpm_kinetic))
    over =
        fmt("kinetic energy differs by %.3g > %.3g (relative)", d.kinetic_rel, o.tol.mpm_kinetic);
  out.pass = over.empty();
  const std::string after = " after " + std::to_string(o.mpm_steps) + " substeps";
  out.detail = out.pass ? measured + after : over + after + " [" + measured + "]";
  return out;
}

SelfCheckCase run_dem_case(const CandidateBackends& c, const SelfCheckOptions& o) {
  SelfCheckCase out;
  out.name = kDemCase;
  std::unique_ptr<dem::DemWorld> ref = check_dem_world(), cand = check_dem_world();
  ref->set_backend(dem::make_dem_backend("cpu", o.threads));
  cand->set_backend(c.dem());
  const std::string cand_name = cand->backend_name();
  cand->checkpoint_interval = 1 << 30;
  std::string why = run_pair(*ref, *cand, o.dem_steps, cand_name);
  if (!why.empty()) {
    out.pass = false;
    out.detail = why;
    return out;
  }
  const DemDifference d = compare_dem(*ref, *cand);
  if (cand->fallback().happened) {
    out.pass = false;
    out.detail = "failed copying its state to the host: " + cand->fallback().reason;
    return out;
  }
  const double dx_r = d.min_radius > 0.0 ? d.max_dx / d.min_radius : d.max_dx;
  std::string measured = fmt("max |dx| %.3g radii, max |dv| %.3g m/s", dx_r, d.max_dv) +
                         fmt(", relative kinetic energy %.2g, broken bonds %.0f", d.kinetic_rel,
                             static_cast<double>(d.broken_cand));
  std::string over;
  if (!d.finite)
    over = "non-finite or missing particle state";
  else if (d.broken_ref != d.broken_cand)
    over = fmt("%.0f bonds broke instead of %.0f", static_cast<double>(d.broken_cand),
               static_cast<double>(d.broken_ref));
  else if (!(dx_r <= o.tol.dem_dx))
    over = fmt("max |dx| %.3g radii > %.3g radii", dx_r, o.tol.dem_dx);
  else if (!(d.max_dv <= o.tol.dem_dv))
    over = fmt("max |dv| %.3g m/s > %.3g m/s", d.max_dv, o.tol.dem_dv);
  else if (!(d.kinetic_rel <= o.tol.dem_kinetic))
    over =
        fmt("kinetic energy differs by %.3g > %.3g (relative)", d.kinetic_rel, o.tol.dem_kinetic);
  out.pass = over.empty();
  const std::string after = " after " + std::to_string(o.dem_steps) + " steps";
  out.detail = out.pass ? measured + after : over + after + " [" + measured + "]";
  return out;
}

}  // namespace

std::vector<std::string> self_check_case_names() {
  std::vector<std::string> out;
  for (const MpmCaseSpec& s : mpm_cases()) out.push_back(s.name());
  out.push_back(kDemCase);
  return out;
}

SelfCheckReport run_self_check(const CandidateBackends& candidate,
                               const SelfCheckOptions& options) {
  SelfCheckReport rep;
  const auto t0 = std::chrono::steady_clock::now();
  auto wanted = [&](const std::string& name) {
    return options.only.empty() || name.find(options.only) != std::string::npos;
  };
  auto record = [&](SelfCheckCase c) {
    if (!c.pass && rep.pass) {
      rep.pass = false;
      rep.reason = c.name + ": " + c.detail;
    }
    rep.cases.push_back(std::move(c));
  };
  auto guarded = [&](const std::string& name, auto&& fn) {
    if (!wanted(name)) return;
    if (options.progress) options.progress(name);
    try {
      record(fn());
    } catch (const std::exception& e) {
      record(SelfCheckCase{name, false, std::string("error: ") + e.what()});
    } catch (...) {
      record(SelfCheckCase{name, false, "unknown error"});
    }
  };
  if (!candidate.mpm) {
    record(SelfCheckCase{"mpm", false, "no MPM backend to check"});
  } else {
    for (const MpmCaseSpec& s : mpm_cases())
      guarded(s.name(), [&] { return run_mpm_case(s, candidate, options); });
  }
  if (candidate.dem) guarded(kDemCase, [&] { return run_dem_case(candidate, options); });
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace ps
