/// Measurements shared by the MPM flow verification cases (cases_mpm_flow.cpp)
/// and their tests (tests/sim/mpm/test_sand.cpp, test_flow_verify_cases.cpp):
/// free-surface profiles, the flank angle of a sand pile, run-out lengths and
/// the runs that produce them.
#pragma once
#include <cmath>
#include <memory>
#include <string>
#include <vector>
#include "sim/mpm/mpm_particles.h"
#include "sim/mpm/mpm_world.h"
#include "sim/verify/verify.h"

namespace ps {
namespace verify {
namespace flow {

/// Free surface h(x) of a deposit: the particle set binned in columns of
/// width `bin` starting at `x0`; h = (highest particle centre in the column)
/// - floor_y + spacing / 2 (the top of the particle's cell), 0 for an empty
/// column.
struct Profile {
  std::vector<double> x, h;
};
Profile surface_profile(const MpmParticles& p, double x0, double x1, double bin, double floor_y,
                        double spacing);

/// Flank angle of a pile from its free surface: on each side of the highest
/// column, the columns whose height lies in [lo, hi] x (pile height) are
/// fitted by least squares with a straight line h = a + b x; the angle is
/// atan |b|. Only the outermost contiguous run of such columns on each side
/// counts (the flank, not a terrace on the top).
struct FlankFit {
  double angle_left = 0.0, angle_right = 0.0;  ///< degrees
  double angle = 0.0;                          ///< mean of the two flanks (degrees)
  int n_left = 0, n_right = 0;                 ///< columns in each fit
  double height = 0.0;                         ///< pile height
  double rms_left = 0.0, rms_right = 0.0;      ///< rms residual of each fit (scene units)
};
FlankFit flank_angle(const Profile& prof, double lo = 0.2, double hi = 0.8);

/// A sand pile built by the pile protocol (see run_pile in cases_mpm_flow.cpp
/// and the angle_of_repose case's `setup` for the words).
struct PileRun {
  double phi = 0.0;  ///< friction angle set (degrees)
  double cohesion = 0.0;
  FlankFit fit;
  Profile profile;
  double seconds = 0.0;      ///< wall time
  double sim_time = 0.0;     ///< simulated time
  double ke_per_mass = 0.0;  ///< at the end (settled when small)
  size_t particles = 0;
  double runout = 0.0;  ///< half-width of the deposit base
  std::string error;    ///< blow-up message, if any
  std::string setup;    ///< the run in words
};
struct PileOptions {
  int grid = 128;  ///< cells across the unit-width domain (domain 1 x 0.5, floor 3 cells up)
  double column_width = 0.1;  ///< collapse protocol: initial column (scene units)
  double column_height = 0.2;
  double max_time = 10.0;  ///< simulated settling seconds at most (after the pour)
  double min_time = 0.5;   ///< simulated settling seconds at least
  double triangle_slope =
      0.0;         ///< > 0: start from a triangular pile of this slope (deg) instead of the column
  double E = 5e4;  ///< Young's modulus (density 1500, nu 0.3)
  std::string boundary = "sticky";
  double dilatancy = 0.0;  ///< the sand's dilatancy angle psi (degrees; 0: constant-volume flow)
  /// > 0: pour instead of collapsing a column: a stream of this width
  /// (scene units) released `pour_gap` above the heap's top at `pour_rate`
  /// (area per second) until `pour_area` has been added.
  double pour_width = 0.015;
  double pour_rate = 0.0025;  ///< slow: the angle of repose is a quasi-static property
  double pour_area = 0.04;
  double pour_gap = 0.01;
};
/// The world runs on `on`'s backend with its threads (case_backend.h).
PileRun run_pile(double phi_deg, double cohesion, const PileOptions& opt, const Options& on);

/// Infinite-slope test: a sand layer `thickness` thick filling a `layer_length` x
/// 0.5 box from wall to wall on a sticky floor (grid cells per unit length),
/// gravity (9.8) tilted by `tilt_deg` from the floor normal in a tilting-table
/// protocol (settle 0.3 s under vertical gravity, tilt in 20 increments over
/// 0.5 s, hold `time`). Returns the mean speed of the particles in the middle
/// 40 % of the box at the end (about 0 when the layer stands). `dilatancy_deg`
/// is the sand's dilatancy angle psi (0: the default flow rule at constant
/// volume). The end walls hold a layer back (the downhill one takes a passive
/// wedge): in a 1-long box a layer that an infinite slope lets slide at
/// 0.1 m/s after 1 s only creeps (0.0005 m/s), at 3 long 0.017 m/s; at 6
/// long (the default) the middle slides at 0.105 m/s, and its speeds follow a
/// block on a Coulomb base within 20 % (measured 2026-11-26). The world runs
/// on `on`'s backend with its threads.
double tilted_layer_speed(double phi_deg, double tilt_deg, int grid, const Options& on,
                          double thickness = 0.03, double time = 1.0, std::string* error = nullptr,
                          double dilatancy_deg = 0.0, double layer_length = 6.0);

/// One column of `material_json` (a material object) `width` x `height`
/// against the left wall of a 1 x 0.5 box (x0 = y0 = 3 cells), 4 particles per
/// cell, released at t = 0 on `on`'s backend; the caller steps it. `transfer`
/// is the solver's transfer fields as JSON text. x0_out / spacing_out may be null.
std::unique_ptr<MpmWorld> column_world(const std::string& material_json, int grid, double dt,
                                       const char* boundary, double width, double height,
                                       const Options& on, double* x0_out, double* spacing_out,
                                       double wall_friction = -1.0,
                                       const char* transfer = "\"transfer\": \"apic\"");
/// The largest particle x (the front of a collapse or a surge).
double front_x(const MpmParticles& p);

/// One collapsed column (column_world with a sticky floor, `width` L0 wide,
/// a L0 high) run to rest: `ro` = (L - L0) / L0 with L the farthest particle +
/// half a spacing from the wall, `body` the same without the thin front tail
/// (the farthest column of the deposit at least 1.5 cells thick), `t` the time
/// it stopped. FLIP keeps a little noise (its kinetic energy never falls to
/// 1e-6), so with `flip` it stops when the front has not moved 0.01 dx for
/// 0.5 s; otherwise when the kinetic energy per mass < 1e-6; at most 3 s.
struct ColumnRun {
  double ro = NAN, body = NAN, t = 0;
  std::string error;
};
ColumnRun run_column(const std::string& material_json, int grid, double dt, double width, double a,
                     const Options& on, bool flip);

/// A tank of water at rest (the fluids' volume correction, mpm_kernels.h):
/// a 1 x 0.6 domain, `grid` cells across, slip walls 3 nodes thick, water
/// `depth` deep from wall to wall (4 particles per cell), density 1000,
/// bulk modulus `K`, viscosity 2, APIC, gravity 9.81, wall_friction 0 (the
/// faces hold the water: without it it sinks into the wall layer), dt = 2e-4 s at grid
/// 128 and K = 2e5, scaled with dx and 1 / sqrt(K) (CFL 0.36 on the sound
/// speed). Run for `seconds` of simulated time on `on`'s backend, sampled
/// every `sample` s.
struct TankOptions {
  int grid = 128;
  double K = 2e5;
  double seconds = 60.0;
  double depth = 0.3;
  double sample = 0.5;
  /// The water's volume_correction (1/s); < 0: the material's default.
  double volume_correction = -1.0;
};
struct TankRun {
  std::vector<double> t;      ///< sample times (s), t[0] = 0
  std::vector<double> depth;  ///< twice the water's centre-of-mass height above the floor (m)
  std::vector<double>
      floor_p;  ///< floor pressure (Pa): p = K (1 - J) fitted linearly in y, taken at the floor
  double depth_eq = 0.0;  ///< the hydrostatic equilibrium of `depth` for this K (m)
  double p_ref = 0.0;     ///< the water's weight over the floor's width, M g / W (Pa)
  double mass0 = 0.0, mass_end = 0.0;
  double max_speed = 0.0;  ///< the largest particle speed seen at the samples (m/s)
  double dt = 0.0, dx = 0.0;
  size_t particles = 0;
  double wall_seconds = 0.0;
  std::string error;
  /// depth(t) / depth_eq - 1 at the last sample; the largest |depth / depth_eq - 1| from t0 on.
  double error_end() const { return depth.empty() ? NAN : depth.back() / depth_eq - 1.0; }
  double error_worst(double t0) const;
  /// Mean floor pressure over the samples of the last quarter of the run.
  double floor_pressure() const;
};
TankRun run_still_tank(const TankOptions& opt, const Options& on);

}  // namespace flow
}  // namespace verify
}  // namespace ps
