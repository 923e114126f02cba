/// The device self-check: a candidate backend (the CUDA steppers) against the
/// CPU reference on small scenes, one per MPM material and transfer (plus the
/// linear and cubic kernels once each) and one DEM scene, with stated
/// tolerances. `--backend auto` uses CUDA only after it passed on this device
/// with this build (sim/selfcheck/verdict.h keeps the verdicts).
///
/// The scene builders are shared with tests/cuda/test_cuda_vs_cpu.cpp.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include "sim/dem/dem_backend.h"
#include "sim/mpm/mpm_backend.h"
#include "sim/scene/scene.h"

namespace ps {

namespace dem {
class DemWorld;
}

// [SECTION] Scenes ----------------------------------------------------------------

/// One MPM material of the comparisons (scene-file JSON of the material).
struct CheckMaterial {
  const char* name;  ///< "tracer", "fluid", "jelly", "snow", "sand": every MaterialType
  const char* json;
};
const std::vector<CheckMaterial>& check_materials();

/// A small MPM scene on the CPU backend: 1 x 1 domain, grid 64, separating
/// walls, gravity, one 0.3 x 0.3 block (1444 particles at spacing dx / 2)
/// of `material_json`, rotating at 2 rad/s about its centre; dt 1e-4.
/// `stretched` adds a 0.2 x 0.2 block (625 particles) squeezed vertically
/// (dilation preset at -4 /s: v = -4 (0, y - cy)), which loads the
/// constitutive model from the first substep (the self-check uses it).
/// transfer: "pic", "apic", "flip"; kernel: "linear", "quadratic", "cubic".
MpmScene check_mpm_scene(const std::string& material_json, const std::string& transfer,
                         const std::string& kernel, bool stretched = false);

/// A small DEM scene on the CPU backend: a bonded block (EBPM) thrown onto
/// the floor with a loose heap of grains falling onto it, in a walled box:
/// bonds, particle-particle and particle-wall contacts from the first steps.
std::unique_ptr<dem::DemWorld> check_dem_world();

// [SECTION] Comparisons -------------------------------------------------------------

struct MpmDifference {
  float max_dx = 0.f;                        ///< max over particles of |x_ref - x|
  float max_dv = 0.f;                        ///< max over particles of |v_ref - v|
  double rms_dv = 0.0;                       ///< root mean square over particles of |v_ref - v|
  double mass_rel = 0.0, kinetic_rel = 0.0;  ///< |a - b| / |a| of the totals
  bool finite = true;                        ///< every compared number of the candidate is finite
};
/// Both worlds must hold the same particles in the same (host) order; the
/// candidate is synced first.
MpmDifference compare_mpm(MpmWorld& ref, MpmWorld& cand);

struct DemDifference {
  double max_dx = 0.0, max_dv = 0.0, kinetic_rel = 0.0;
  double min_radius = 0.0;
  size_t broken_ref = 0, broken_cand = 0;
  bool finite = true;
};
DemDifference compare_dem(dem::DemWorld& ref, dem::DemWorld& cand);

// [SECTION] The check ------------------------------------------------------------

/// Tolerances of the self-check. Float (MPM) and double (DEM) atomics sum in
/// another order than the CPU's fixed order, so the candidate differs from
/// the reference at round-off level, and that difference grows over a run.
/// Calibrated on the CPU (tests/sim/selfcheck/test_selfcheck.cpp) with a fake
/// candidate that multiplies every particle velocity by (1 + e), |e| <= 1e-5,
/// after every substep: far more than reordered float sums do (~1e-7). Over
/// the MPM cases that gives at most max |dx| 3.6e-4 dx, rms |dv| 2.5e-5 m/s
/// (linear kernel: 1.6e-3 m/s; it amplifies noise near cell crossings) and
/// kinetic energy 8e-4 (linear; else 5e-6); DEM at 1e-6: 5.6e-7 radii,
/// 4.2e-6 m/s. Sensitivity, same scenes: a 1 % gravity error gives 1.3e-3 dx,
/// rms |dv| 2e-3 m/s and kinetic energy 8e-3 (MPM), 1.5e-4 m/s (DEM); a 2 %
/// stiffness error gives rms |dv| 6e-4 to 1.8e-2 m/s (fluid, jelly, snow).
/// The CUDA-vs-CPU tests (tests/cuda) hold 1e-4 dx and 1e-3 m/s after 40
/// substeps and 1e-6 radii and 1e-6 m/s after 300 DEM steps on a GPU.
struct SelfCheckTolerances {
  float mpm_dx = 1e-3f;             ///< max |dx| in grid cells (x dx)
  double mpm_rms_dv = 5e-4;         ///< rms |dv|, m/s (the blocks move at ~0.3 m/s)
  double mpm_rms_dv_linear = 1e-2;  ///< rms |dv| with the linear kernel, m/s
  double mpm_mass = 1e-6;           ///< relative total mass
  double mpm_kinetic = 1e-3;        ///< relative kinetic energy
  double dem_dx = 1e-5;             ///< max |dx| in smallest radii
  double dem_dv = 1e-5;             ///< max |dv|, m/s
  double dem_kinetic = 1e-5;        ///< relative kinetic energy
};

struct SelfCheckCase {
  std::string name;  ///< "mpm snow flip quadratic", "dem bonded block and grains"
  bool pass = true;
  std::string detail;  ///< measured values against tolerances, or the error
};

struct SelfCheckReport {
  bool pass = true;
  std::vector<SelfCheckCase> cases;
  /// The first failing case and by how much ("mpm snow flip quadratic: max
  /// |dx| 0.31 dx > 0.001 dx"), "" when all passed.
  std::string reason;
  double seconds = 0.0;
};

/// Factories for the backends under test (the device). An empty dem factory
/// leaves the DEM case out. Factories may throw: the case then fails.
struct CandidateBackends {
  std::string label;  ///< e.g. "cuda (NVIDIA H100 80GB HBM3)"
  std::function<std::unique_ptr<MpmBackend>()> mpm;
  std::function<std::unique_ptr<dem::DemBackend>()> dem;
};

struct SelfCheckOptions {
  int mpm_steps = 200;  ///< substeps per MPM case (0.02 s of simulated time)
  int dem_steps = 300;  ///< steps of the DEM case
  int threads = 0;      ///< threads of the CPU reference (<= 0: all cores)
  SelfCheckTolerances tol;
  /// Only the cases whose name contains this text ("" = all).
  std::string only;
  /// Called before each case with its name (progress display); may be empty.
  std::function<void(const std::string&)> progress;
};

/// The case names, in the order they run.
std::vector<std::string> self_check_case_names();
/// Runs every case: reference (CPU) and candidate from the same scene, same
/// steps, then compare. A candidate that throws, blows up where the
/// reference does not, falls back to the CPU during the run, or differs
/// beyond a tolerance fails its case. Never throws.
SelfCheckReport run_self_check(const CandidateBackends& candidate,
                               const SelfCheckOptions& options = {});

}  // namespace ps
