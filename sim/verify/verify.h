/// `sandbox verify`: verification cases, each a model run against a cited
/// reference (an analytical solution, a conservation law or published
/// measurements), with a stated tolerance and the measured values.
///
/// A case is a function that builds its own worlds (MPM or DEM) in code,
/// runs them on the backend the run asks for (Options::backend: the CPU, the
/// reference, or CUDA) and returns a CaseResult: checks (measured vs
/// reference within a tolerance) and plots (series drawn as inline SVG in the
/// HTML report). Every world goes on its backend through one place
/// (case_backend.h), which records where the case ran; run_case turns that
/// record into the result's RanOn. Cases never tune a reference or a tolerance
/// to pass: a miss is reported with its reason.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include "sim/core/format.h"

namespace ps {

class MpmBackend;
namespace dem {
class DemBackend;
}

namespace verify {

/// How a check compares its measured value with its reference.
enum class Compare {
  Near,     ///< |measured - reference| <= tolerance (absolute)
  NearRel,  ///< |measured - reference| <= tolerance * |reference|
  Below,    ///< measured <= reference (tolerance unused; reference is the bound)
  Above,    ///< measured >= reference
};

/// One measured quantity against its reference.
struct Check {
  std::string quantity;  ///< what is measured, e.g. "period T / T_ref"
  double measured = 0.0;
  double reference = 0.0;
  double tolerance = 0.0;
  Compare compare = Compare::NearRel;
  std::string unit;   ///< "", "s", "N", "deg", ...
  bool pass = false;  ///< filled by evaluate()
  /// Evaluates `pass` (a non-finite measured value always fails).
  void evaluate();
};

/// A check, evaluated at once (the case files' one way to build them).
Check make_check(const std::string& quantity, double measured, double reference, double tolerance,
                 Compare compare, const std::string& unit = "");

// fmt (printf-style numbers for notes and labels) is ps::fmt, sim/core/format.h.

/// One curve of a plot.
struct Series {
  std::string label;
  std::vector<double> x, y;
  bool points = false;  ///< markers only (measured data), no line
  bool dashed = false;  ///< reference curves
};

struct Plot {
  std::string title, xlabel, ylabel;
  std::vector<Series> series;
  bool log_y = false;
};

/// Where a case ran. With the CPU requested everything runs there; with a
/// device requested a case runs on it unless it says why not (a part that has
/// no world to put on a device), and a world whose device failed mid-case
/// (MpmWorld::fallback) is reported with the fallback's message.
struct RanOn {
  std::string requested = "cpu";  ///< Options::backend
  /// The backend the case counts under in the summary: the requested device
  /// when a world or solve of the case ran on it, else "cpu".
  std::string backend = "cpu";
  std::string
      device;  ///< the device backends' names, e.g. "cuda (NVIDIA H100 80GB HBM3)"; "" on the CPU
  std::string
      host;  ///< what ran on the host although a device was requested, and why ("" when nothing)
  std::string
      fallback;  ///< the fallback messages of device worlds that failed mid-case ("" when none)
  bool on_device() const { return backend != "cpu"; }
  bool fell_back() const { return !fallback.empty(); }
  /// One line: "cpu", "cuda (NVIDIA H100)", "cpu — REASON",
  /// "cuda (NVIDIA H100); on the host: REASON", "cuda (NVIDIA H100), fell back to the cpu: MESSAGE".
  std::string text() const;
};

/// What one case produced.
struct CaseResult {
  std::string id;         ///< stable identifier, e.g. "mpm.rotation_angular_momentum"
  std::string title;      ///< one line for the report's table
  std::string model;      ///< the model under test, e.g. "MLS-MPM, quadratic, PIC/APIC/FLIP"
  std::string reference;  ///< the citation (author, year, title, where the numbers come from)
  std::string setup;      ///< the scene in words: sizes, materials, dt, steps
  bool must_pass = true;  ///< a failing must-pass case makes `sandbox verify` exit non-zero
  std::vector<Check> checks;
  std::vector<Plot> plots;
  std::string notes;     ///< what the numbers mean; for a miss, the reason
  std::string error;     ///< set when the case could not run (blow-up, exception)
  double seconds = 0.0;  ///< wall time of the case
  bool passed() const;   ///< no error and every check passes
  std::string group;     ///< filled by the runner from CaseSpec::group (report tables)
  RanOn ran_on;          ///< filled by the runner (run_case) from what the case's worlds ran on
};

/// Makes the backends of a case's worlds; tests inject fakes. An empty
/// member means the product's factory (make_backend / dem::make_dem_backend).
struct BackendFactory {
  std::function<std::unique_ptr<MpmBackend>(const std::string& kind, int threads)> mpm;
  std::function<std::unique_ptr<dem::DemBackend>(const std::string& kind, int threads)> dem;
};

class BackendRecord;

struct Options {
  bool quick = false;  ///< the subset (and smaller sizes) that ctest runs
  int threads = 0;     ///< CPU backend threads (0: hardware concurrency)
  /// The backend every world of every case runs on: "cpu" (the reference) or
  /// "cuda" (`sandbox verify --backend cuda`, tests/cuda). The tolerances and
  /// references are the same on both.
  std::string backend = "cpu";
  BackendFactory factory;
  /// Where the case's worlds record what they ran on (run_case sets a fresh
  /// one per case; null when a case is run directly: nothing is recorded).
  std::shared_ptr<BackendRecord> record;
};

/// The backend names `sandbox verify --backend` takes.
const std::vector<std::string>& verify_backends();
/// Throws std::invalid_argument naming the valid backends when `backend` is not one of them.
void check_backend_name(const std::string& backend);
/// Why `backend` cannot run here ("this build has no CUDA support (...)", "no
/// CUDA device is present (...)"), or "" when it can. A run asked for a device that
/// is not there stops before any case: it must not quietly become a CPU run.
std::string backend_unavailable(const std::string& backend);

/// A registered case.
struct CaseSpec {
  std::string id;
  std::string group;      ///< "MPM transfers", "MPM materials", "DEM", ...
  bool in_quick = false;  ///< also run by --quick
  std::function<CaseResult(const Options&)> run;
};

/// Every case, in report order.
std::vector<CaseSpec> all_cases();

/// Runs one case as `sandbox verify` does: with a fresh BackendRecord, an
/// exception becomes the case's error, the checks are evaluated again (a case
/// cannot mark itself passed), id, group and wall time come from the runner,
/// and ran_on from the record. A case that asked for a device but built
/// nothing on it and gave no reason is an error: it must not pass as a
/// device result.
CaseResult run_case(const CaseSpec& spec, const Options& opt);

/// How many cases ran where: on the requested device (no fallback), on the
/// CPU (requested, or a case with nothing to put on the device), or on the
/// device until a world fell back to the CPU.
struct BackendTally {
  int on_device = 0, on_cpu = 0, fell_back = 0;
  std::string device;  ///< the device names seen, joined by ", "
};
BackendTally tally_backends(const std::vector<CaseResult>& results);
/// "29 cases on the cpu backend (the reference)", or with a device asked for
/// "28 cases on cuda (NVIDIA H100), 1 on the cpu (each says why), 0 fell back from the device to the cpu".
std::string backend_tally_text(const std::vector<CaseResult>& results,
                               const std::string& requested);

/// Cases of each group (defined in the case files; all_cases() joins them).
std::vector<CaseSpec> mpm_cases();       ///< transfers and elasticity (cases_mpm.cpp)
std::vector<CaseSpec> mpm_flow_cases();  ///< dam break, granular column, pile (cases_mpm_flow.cpp)
std::vector<CaseSpec>
mpm_material_cases();  ///< material models vs closed forms (cases_mpm_materials.cpp)
std::vector<CaseSpec>
heat_cases();  ///< PCG, conduction, Stefan, energy bookkeeping (cases_heat.cpp)
std::vector<CaseSpec>
dem_cases();  ///< Hertz, restitution, incline, cantilever, SGF (cases_dem.cpp)
std::vector<CaseSpec> rigid_cases();  ///< rigid bodies coupled with matter (cases_rigid.cpp)
std::vector<CaseSpec>
scene_cases();  ///< the built-in MPM scenes re-gridded from the panel (cases_scenes.cpp)

/// One floating box of the Archimedes case (also run by tests/sim/rigid, which
/// compares batch lengths of the rigid-body exchange).
struct ArchimedesRun {
  std::vector<double> t, draft;  ///< sampled every 0.02 s
  double mean_draft = 0.0;       ///< over the last quarter of the run
  double reference = 0.0;        ///< s h
  double tilt_deg = 0.0;         ///< largest |angle| seen
  double dx = 0.0, seconds_simulated = 0.0;
  std::string error;
};
/// Built on opt.backend (its worlds recorded in opt.record); the size does not depend on opt.quick.
/// exchange_substeps: the scene's rigid.exchange_substeps (0: the default);
/// friction: the box's; volume_correction: the water's (1/s, 0: off);
/// seconds: simulated time.
ArchimedesRun archimedes_run(double density_ratio, const Options& opt, int exchange_substeps = 0,
                             double friction = 0.0, double volume_correction = 0.0,
                             double seconds = 4.0);

/// Writes `dir`/report.html (self-contained: inline SVG plots and CSS, no
/// scripts or external files) and `dir`/summary.md. Returns false and sets
/// `err` when a file cannot be written.
bool write_report(const std::string& dir, const std::vector<CaseResult>& results,
                  const Options& opt, std::string* err);

/// Renders one plot as an inline <svg> element (exposed for tests).
std::string plot_svg(const Plot& plot, int width = 560, int height = 320);
/// The colour ("#rrggbb") plot_svg draws series number `series` in.
const char* plot_colour(size_t series);

}  // namespace verify
}  // namespace ps
