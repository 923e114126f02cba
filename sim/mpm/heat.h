/// Heat and melting on the MPM grid (SEEDS-DIGEST section 4, the
/// ice-melting paper, J. Yanshan Univ. 2024). A pure module like the
/// resampler: MpmWorld calls `HeatSolver::run` every `interval` substeps with
/// the heat step dt_h = (sum of those substeps' dt) * time_scale.
///
/// One pass (all sums in double, in particle index order: bit-identical for
/// every thread count):
///   1. Particle -> grid with the quadratic B-spline weights w_ip:
///        C_i = sum w cap_p          (heat capacity, J/K per unit depth)
///        T_i = sum w cap_p T_p / C_i
///        k_i = sum w V_p k_p / dx^2        (conductivity times the cell's
///                                          covered share, V_p = m_p / rho)
///      cap_p = m_ice c_ice + m_water c_water (the particle's ice and its
///      virtual water; the melt material's c for the water).
///   2. Nodes: fixed (Dirichlet: a held wall's band and face nodes, or a
///      plate rectangle, T given), free (C_i > 0: an unknown) or empty (no
///      material: insulated, or air). A wall's face nodes (x = b dx, b =
///      boundary_nodes) sit where the MPM walls stop the particles, so its
///      temperature acts at the material's edge.
///   3. Backward Euler with the 5-point Laplacian (faces of length dx):
///        C_i/dt (T_i' - T_i) = sum_faces k_f (T_j' - T_i') + Q_i/dt
///      k_f = 2 k_i k_j / (k_i + k_j) between free nodes, k_i towards a fixed
///      node; an empty neighbour is insulated (Neumann) or, with convective
///      air, h dx (T_air - T_i'). Q_i: photons and lamps (energy). The matrix
///      is symmetric positive definite; preconditioned conjugate gradient
///      (Jacobi or incomplete Cholesky IC(0)) to ||r|| <= tol ||b||.
///   4. Grid -> particle as an increment blended with the interpolated value
///      (heat.flip): T_p* = flip (T_p + sum_i w_ip (T_i' - T_i)) +
///      (1 - flip) sum_i w_ip T_i' (fixed nodes: T_i' = T_fix); either part
///      gives sum_p cap_p (T_p* - T_p) = sum_i C_i (T_i' - T_i) exactly. A
///      particle on a fixed node takes T_fix with that node's weight (the
///      increment uses T_fix - T_p, not T_fix - T_i: the node's mean would
///      push particles already at T_fix past it). The result is limited to
///      the range of the particle's own and its nodes' new temperatures; the
///      heat the limiter takes off goes back to the particles around through
///      the grid (sum unchanged), so moving particles cannot overshoot.
///   5. Latent heat: a particle of a melting material (latent_heat > 0 and a
///      melts_into material) whose temperature would pass the melting point
///      puts the energy above it into melting: dm = E / L of its ice becomes
///      virtual water (melt fraction phi = melted / initial ice mass); only
///      what is left after the ice is gone raises T. Its stress volume vol0
///      falls with its ice mass, so its stiffness falls with phi.
///   6. Virtual water (the paper's section 2.2): each pass a share of a
///      particle's water moves to the melting-material neighbour below it
///      (gravity) and levels with neighbours at the same height; every
///      transfer is pairwise (what one loses the other gains), carries its
///      heat (mixing at constant capacity) and its momentum (the receiver's
///      velocity becomes the mass-weighted mean).
///   7. Emission: a particle whose virtual water exceeds one water particle's
///      mass emits a particle of the melt material next to it (outwards and
///      down), with that mass, its velocity and temperature and a fresh ID.
///      A particle whose ice is all gone becomes a particle of the melt
///      material in place.
/// Refreezing is not modelled: water below the melting point stays water
/// (supercooled). Air as photons: the paper's photons carry eps sigma T_air^4
/// onto the body's visible surface; unlike the paper the body also emits,
/// by reciprocity along the same photon paths (a node given Q by the air
/// gives back Q (T / T_air)^4, linearised in the implicit solve), so the
/// exchange is eps sigma (T_air^4 - T^4) over the surface the air sees and a
/// piece left in the air tends to its temperature instead of heating without
/// bound.
///
/// Conservation. Mass: every transfer (melting moves no mass; flow and
/// emission move multiples of the quantum q = 4 ulp(largest initial mass of a
/// melting particle), and every mass of a melting material is a multiple of
/// q, rounded so when the pass first sees it) is exact in float, so the total
/// mass is conserved bit for bit. Heat: sum cap (T - T_ref) + L m_water is
/// conserved by every step above except the solve, whose energy error is
/// dt * sum(residual) (below tol * |b| * sqrt(n)); inflows from walls, air
/// and lamps are measured separately (HeatReport).
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "sim/core/vec.h"
#include "sim/mpm/materials.h"
#include "sim/mpm/mpm_params.h"
#include "sim/mpm/mpm_particles.h"

namespace ps {

enum class HeatPreconditioner : uint8_t { Jacobi = 0, IC0 = 1 };
enum class AirModel : uint8_t { None = 0, Photons = 1, Convection = 2 };
/// Where a device backend's heat pass solves its linear system: on the host
/// (the preconditioner chosen), on the device (HeatLinearSolver: Jacobi PCG),
/// or on the device from kDeviceSolveFrom unknowns on (auto).
enum class HeatDeviceSolve : uint8_t { Off = 0, Auto = 1, On = 2 };
/// Their names in scene files, `--set` and the window's log, by value.
inline constexpr const char* kHeatDeviceSolveNames[3] = {"off", "auto", "on"};

/// One side of the domain for heat: insulated (no flux) or held at a
/// temperature at its face (the nodes at x = boundary_nodes dx, where the
/// particles stop) and over the boundary layer behind it.
struct HeatWall {
  bool fixed = false;
  float temperature = 20.f;
};

/// A rectangle of nodes held at a temperature (a hot plate, a cold block).
struct HeatPlate {
  Vec2 lo{0.f, 0.f}, hi{0.f, 0.f};
  float temperature = 40.f;
};

/// A heat lamp / hot spot: an irradiance q (1 - r/radius) on the material
/// within `radius` of `pos`; `power` (W per unit depth) is what it gives a
/// fully covered disk (q = 3 power / (pi radius^2)), so a small piece under
/// it gets only its share. Negative power cools.
struct HeatLamp {
  Vec2 pos{0.f, 0.f};
  float radius = 0.05f;
  float power = 100.f;
};

/// (A new field also goes into heat_fields in mpm_world.cpp: the rewind's controls image.)
struct HeatParams {
  bool enabled = false;
  /// Heat-only mode: the material stays where it is (no motion); only the
  /// heat pass runs each `interval` substeps (conduction shown alone).
  bool only = false;
  int interval = 10;       ///< a heat pass every `interval` substeps
  float time_scale = 1.f;  ///< heat time per mechanical time (class demos speed melting up)
  /// Grid -> particle temperature: the share of the increment (FLIP-like,
  /// T_p + sum w dT_i) against the interpolated value (PIC-like, sum w T_i').
  /// Both conserve sum cap T exactly (sum_p cap_p w_ip = C_i); the increment
  /// keeps particle detail but lets moving particles drift past the grid's
  /// range (the FLIP overshoot: 288 C next to a 60 C plate in ice_cube at 1),
  /// the interpolation obeys the discrete maximum principle but smooths.
  float flip = 0.95f;
  double tolerance = 1e-8;  ///< PCG relative residual
  int max_iterations = 500;
  HeatPreconditioner preconditioner = HeatPreconditioner::IC0;
  /// With a device backend (CUDA): where the system is solved (HeatDeviceSolve).
  HeatDeviceSolve device_solve = HeatDeviceSolve::Auto;
  HeatWall walls[4];  ///< left, right, bottom, top
  std::vector<HeatPlate> plates;
  std::vector<HeatLamp> lamps;
  // Air.
  AirModel air = AirModel::None;
  float air_temperature = 20.f;  ///< deg C
  float emissivity = 0.9f;       ///< photons: epsilon
  int photons = 4000;            ///< photons per pass
  float convection_h = 10.f;     ///< convection: W / (m^2 K)
  // Virtual water (section 2.2 of the paper).
  bool water_flow = true;
  float flow_down_rate =
      20.f;  ///< share of a particle's water moving down per second (of heat time)
  float flow_level_rate = 10.f;  ///< share levelled with same-height neighbours per second
  /// Volume of one emitted water particle; 0: the rest volume of the melting
  /// particle (its lattice cell h^2).
  float emit_volume = 0.f;
  float gamma =
      0.92f;  ///< water volume per ice volume of equal mass (documented; emit volumes use densities)
};

/// Stefan-Boltzmann constant, W / (m^2 K^4).
constexpr double kStefanBoltzmann = 5.670374419e-8;
constexpr double kCelsiusToKelvin = 273.15;

/// The linear system of one pass: 5-point SPD matrix over the unknowns
/// (row-major node order), stored as the diagonal and the east / north
/// couplings (west / south are the neighbours' east / north).
struct HeatSystem {
  int n = 0;
  std::vector<double> diag;
  std::vector<double> east, north;  ///< -A(i, east(i)) >= 0, -A(i, north(i)) >= 0
  std::vector<int> east_of, north_of, west_of, south_of;  ///< unknown index or -1
  void resize(int count);
  /// An nx x ny block of unknowns with diagonal d and couplings kx (east-west)
  /// and ky (north-south): the model problems of the tests and verify cases.
  static HeatSystem structured(int nx, int ny, double d, double kx, double ky);
  /// y = A x
  void apply(const std::vector<double>& x, std::vector<double>& y) const;
};

struct PcgResult {
  int iterations = 0;
  double relative_residual = 0.0;  ///< ||b - A x|| / ||b|| (recomputed at the end)
  bool converged = false;
};

/// Preconditioned conjugate gradient for a HeatSystem; x holds the initial
/// guess and receives the solution. Scratch vectors live in `work`; on
/// return work.q holds A x (the pass's energy defect uses it again).
struct PcgWork {
  std::vector<double> r, z, p, q, ic_d, ic_q;
};
PcgResult solve_pcg(const HeatSystem& A, const std::vector<double>& b, std::vector<double>& x,
                    double tol, int max_iterations, HeatPreconditioner pre, PcgWork& work);
/// The end every PCG shares: q = A x, the true relative residual against
/// ||b|| = bnorm (the recurrence drifts slightly) and the verdict (rnorm: the
/// recurrence's last ||r||).
PcgResult pcg_finish(const HeatSystem& A, const std::vector<double>& b,
                     const std::vector<double>& x, int iterations, double bnorm, double rnorm,
                     double tol, std::vector<double>& q);

/// A PCG that runs elsewhere: the CUDA backend's device (sim/mpm/heat_cuda.cu).
/// The same iteration as solve_pcg with the Jacobi preconditioner (IC(0)'s
/// triangular solves are sequential), its sums in a fixed order: the same
/// result on every run on one device. x holds the initial guess; the result
/// ends with pcg_finish on the host, so work.q holds A x as after solve_pcg.
/// Device failures throw BackendError.
class HeatLinearSolver {
 public:
  virtual ~HeatLinearSolver() = default;
  virtual PcgResult solve(const HeatSystem& A, const std::vector<double>& b, std::vector<double>& x,
                          double tol, int max_iterations, PcgWork& work) = 0;
};

/// Unknowns from which HeatDeviceSolve::Auto solves on the device. Measured
/// on an H200 with a 16-core Xeon host (docs/benchmarks.md, "heat solve on the
/// device"): the host's IC(0) took 0.53 ms at 2 809 unknowns and 2.35 ms at
/// 11 025, the device's Jacobi PCG 0.67 and 1.22 ms (about 0.5 ms of launches,
/// syncs and copies whatever the size); they cross near 3 500.
constexpr int kDeviceSolveFrom = 4000;

/// What one pass did.
struct HeatReport {
  int iterations = 0;
  double residual = 0.0;
  bool converged = true;
  int unknowns = 0;
  double dt = 0.0;            ///< the heat step
  double energy_walls = 0.0;  ///< J per unit depth into the material from walls and plates
  double energy_air = 0.0;    ///< from photons or convection
  double energy_lamps = 0.0;
  double energy_grid = 0.0;  ///< sum_i C_i dT_i: everything the grid gave the particles
  /// The solve's energy defect dt sum_u (A x - b)_u: heat the PCG tolerance
  /// created or destroyed (the ledger's drift comes from it and from rounding).
  double energy_solver = 0.0;
  /// Rounding the stored (float) temperatures made: sum cap (T_float - T_exact).
  double energy_rounding = 0.0;
  bool on_device = false;  ///< the system was solved by the HeatLinearSolver
  /// The device's solve stopped unconverged and the host finished it from its x
  /// (iterations count both).
  bool host_finish = false;
  double solve_ms = 0.0;  ///< the solve (with its transfers to and from the device)
  /// A device solve that failed (then the host solved this pass): the reason.
  std::string device_error;
  int limited = 0;              ///< particles whose blended temperature the range limiter moved
  double energy_limited = 0.0;  ///< |heat| it moved to the neighbours (not lost: redistributed)
  double melted = 0.0;          ///< ice mass melted this pass
  int emitted = 0;              ///< water particles emitted
  int converted = 0;            ///< particles whose ice was all gone (now the melt material)
  std::vector<uint32_t> new_ids;
  double ms = 0.0;
};

/// Totals of the state (HeatSolver::totals).
struct HeatTotals {
  double ice_mass = 0.0;    ///< ice still solid (melting materials)
  double water_mass = 0.0;  ///< virtual water plus particles of melt materials
  double virtual_water = 0.0;
  double sensible = 0.0;  ///< sum cap (T - T_ref)
  double latent = 0.0;    ///< sum L m_water (liquid of a melt material)
  double heat() const { return sensible + latent; }
  double min_T = 0.0, max_T = 0.0;
};

class HeatSolver {
 public:
  /// One pass of heat step dt (seconds of heat time). Particles may be added
  /// (emitted water: fresh IDs from p.next_id) or change material.
  const HeatReport& run(MpmParticles& p, const GridSpec& g, const SolverParams& s,
                        const std::vector<MaterialParams>& materials, const HeatParams& hp,
                        double dt, uint64_t seed, const std::vector<HeatLamp>& extra_lamps = {});
  const HeatReport& last() const { return report_; }
  /// The device solver run() may use (HeatParams::device_solve), or null; not
  /// owned: MpmWorld sets it from its backend around each pass.
  void set_linear_solver(HeatLinearSolver* s) { linear_ = s; }
  /// Heat content and ice / water masses (reference temperature: T_ref below).
  static HeatTotals totals(const MpmParticles& p, const std::vector<MaterialParams>& materials);
  /// The reference temperature of the heat content: the lowest melting point
  /// of a melting material (0 when none melts).
  static double reference_temperature(const std::vector<MaterialParams>& materials);
  /// Grid temperature of the last pass (after the solve) and its node mask
  /// (0 empty, 1 free, 2 fixed), row-major over (nx + 1) x (ny + 1) nodes.
  const std::vector<double>& grid_temperature() const { return T_new_; }
  const std::vector<uint8_t>& node_kind() const { return kind_; }
  /// The mass quantum (0 until a melting particle was seen).
  float quantum() const { return quantum_; }
  /// Puts the masses (and virtual water) of melting particles on the mass
  /// quantum, choosing it on the first call; run() does it too.
  void quantize(MpmParticles& p, const std::vector<MaterialParams>& materials);
  /// Forget the quantum (a new scene).
  void reset() { quantum_ = 0.f; }
  /// The mass quantum of a saved state (the rewind; 0: not yet quantized).
  void set_quantum(float q) { quantum_ = q; }
  /// The heat capacity of particle i (J/K per unit depth).
  static double capacity(const MpmParticles& p, const std::vector<MaterialParams>& materials,
                         size_t i);

 private:
  void transfer_to_grid(const MpmParticles& p, const GridSpec& g,
                        const std::vector<MaterialParams>& m);
  void classify(const GridSpec& g, const SolverParams& s, const HeatParams& hp);
  void deposit_sources(const MpmParticles& p, const GridSpec& g, const SolverParams& s,
                       const HeatParams& hp, double dt, uint64_t seed,
                       const std::vector<HeatLamp>& extra);
  void assemble(const GridSpec& g, const HeatParams& hp, double dt);
  void transfer_to_particles(MpmParticles& p, const GridSpec& g,
                             const std::vector<MaterialParams>& m);
  /// Buckets the melting particles (also for emission) and, when `flow`,
  /// moves virtual water between them.
  void flow_virtual_water(MpmParticles& p, const GridSpec& g, const SolverParams& s,
                          const std::vector<MaterialParams>& m, const HeatParams& hp, double dt,
                          bool flow);
  void emit_and_convert(MpmParticles& p, const GridSpec& g, const SolverParams& s,
                        const std::vector<MaterialParams>& m, const HeatParams& hp, bool emit);

  HeatReport report_;
  // Grid, (nx + 1) x (ny + 1) nodes.
  struct NodeSums {
    double C = 0.0, CT = 0.0, K = 0.0, V = 0.0;
  };
  std::vector<NodeSums> acc_;
  std::vector<double> C_, K_, V_, Q_, P_, T_old_, T_new_, T_fix_;
  std::vector<uint8_t> kind_;
  std::vector<int> unknown_of_;  ///< node -> unknown or -1
  std::vector<int> node_of_;     ///< unknown -> node
  HeatSystem A_;
  std::vector<double> b_, x_, guess_;
  PcgWork work_;
  std::vector<int> robin_faces_;  ///< per unknown: empty faces (convection)
  // Virtual water.
  std::vector<int> cell_start_, order_;
  std::vector<double> recv_, gave_, dpx_, dpy_, dheat_;
  std::vector<double> Tlim_, D_;  ///< the limiter's temperatures and redistributed heat
  std::vector<int> level_, fill_;
  float quantum_ = 0.f;
  HeatLinearSolver* linear_ = nullptr;
  double flip_ = 1.0;
  double air_T4_ = 0.0;  ///< T_air^4 (K^4) of this pass's photons (0: none)
};

}  // namespace ps
