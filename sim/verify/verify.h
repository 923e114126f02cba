/// `sandbox verify`: verification cases, each a model run against a cited
/// reference (an analytical solution, a conservation law or published
/// measurements), with a stated tolerance and the measured values.
///
/// A case is a function that builds its own worlds (MPM or DEM) in code,
/// runs them on the CPU backend (the reference backend) and returns a
/// CaseResult: checks (measured vs reference within a tolerance) and plots
/// (series drawn as inline SVG in the HTML report). Cases never tune a
/// reference or a tolerance to pass: a miss is reported with its reason.
#pragma once
#include "sim/core/format.h"
#include <functional>
#include <string>
#include <vector>

namespace ps {
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
  std::string quantity;   ///< what is measured, e.g. "period T / T_ref"
  double measured = 0.0;
  double reference = 0.0;
  double tolerance = 0.0;
  Compare compare = Compare::NearRel;
  std::string unit;       ///< "", "s", "N", "deg", ...
  bool pass = false;      ///< filled by evaluate()
  /// Evaluates `pass` (a non-finite measured value always fails).
  void evaluate();
};

/// A check, evaluated at once (the case files' one way to build them).
Check make_check(const std::string& quantity, double measured, double reference, double tolerance, Compare compare,
                 const std::string& unit = "");

// fmt (printf-style numbers for notes and labels) is ps::fmt, sim/core/format.h.

/// One curve of a plot.
struct Series {
  std::string label;
  std::vector<double> x, y;
  bool points = false;    ///< markers only (measured data), no line
  bool dashed = false;    ///< reference curves
};

struct Plot {
  std::string title, xlabel, ylabel;
  std::vector<Series> series;
  bool log_y = false;
};

/// What one case produced.
struct CaseResult {
  std::string id;          ///< stable identifier, e.g. "mpm.rotation_angular_momentum"
  std::string title;       ///< one line for the report's table
  std::string model;       ///< the model under test, e.g. "MLS-MPM, quadratic, PIC/APIC/FLIP"
  std::string reference;   ///< the citation (author, year, title, where the numbers come from)
  std::string setup;       ///< the scene in words: sizes, materials, dt, steps
  bool must_pass = true;   ///< a failing must-pass case makes `sandbox verify` exit non-zero
  std::vector<Check> checks;
  std::vector<Plot> plots;
  std::string notes;       ///< what the numbers mean; for a miss, the reason
  std::string error;       ///< set when the case could not run (blow-up, exception)
  double seconds = 0.0;    ///< wall time of the case
  bool passed() const;     ///< no error and every check passes
  std::string group;       ///< filled by the runner from CaseSpec::group (report tables)
};

struct Options {
  bool quick = false;      ///< the subset (and smaller sizes) that ctest runs
  int threads = 0;         ///< CPU backend threads (0: hardware concurrency)
  /// Backend of the DEM cases: "cpu" (the reference) or "cuda" (the same
  /// cases on the device: `sandbox verify --backend cuda`, tests/cuda); with
  /// "cuda", heat.pcg_poisson also runs the device's heat solve.
  std::string dem_backend = "cpu";
};

/// A registered case.
struct CaseSpec {
  std::string id;
  std::string group;       ///< "MPM transfers", "MPM materials", "DEM", ...
  bool in_quick = false;   ///< also run by --quick
  std::function<CaseResult(const Options&)> run;
};

/// Every case, in report order.
std::vector<CaseSpec> all_cases();

/// Cases of each group (defined in the case files; all_cases() joins them).
std::vector<CaseSpec> mpm_cases();       ///< transfers and elasticity (cases_mpm.cpp)
std::vector<CaseSpec> mpm_flow_cases();  ///< dam break, granular column, pile (cases_mpm_flow.cpp)
std::vector<CaseSpec> mpm_material_cases();  ///< material models vs closed forms (cases_mpm_materials.cpp)
std::vector<CaseSpec> heat_cases();      ///< PCG, conduction, Stefan, energy bookkeeping (cases_heat.cpp)
std::vector<CaseSpec> dem_cases();       ///< Hertz, restitution, incline, cantilever, SGF (cases_dem.cpp)
std::vector<CaseSpec> rigid_cases();     ///< rigid bodies coupled with matter (cases_rigid.cpp)

/// One floating box of the Archimedes case (also run by tests/sim/rigid, which
/// compares batch lengths of the rigid-body exchange).
struct ArchimedesRun {
  std::vector<double> t, draft;  ///< sampled every 0.02 s
  double mean_draft = 0.0;       ///< over the second half of the run
  double reference = 0.0;        ///< s h
  double tilt_deg = 0.0;         ///< largest |angle| seen
  double dx = 0.0, seconds_simulated = 0.0;
  std::string error;
};
/// exchange_substeps: the scene's rigid.exchange_substeps (0: the default).
ArchimedesRun archimedes_run(double density_ratio, bool quick, int threads, int exchange_substeps = 0);

/// Writes `dir`/report.html (self-contained: inline SVG plots and CSS, no
/// scripts or external files) and `dir`/summary.md. Returns false and sets
/// `err` when a file cannot be written.
bool write_report(const std::string& dir, const std::vector<CaseResult>& results, const Options& opt,
                  std::string* err);

/// Renders one plot as an inline <svg> element (exposed for tests).
std::string plot_svg(const Plot& plot, int width = 560, int height = 320);
/// The colour ("#rrggbb") plot_svg draws series number `series` in.
const char* plot_colour(size_t series);

}  // namespace verify
}  // namespace ps
