// Heat and melting (sim/mpm/heat.h): PCG, conservation of mass and
// momentum through melting, water flow and emission, fresh IDs, radiative
// equilibrium, lamp power, determinism across thread counts and located
// scene errors. The analytical comparisons (slab decay, Stefan, energy
// bookkeeping) are `sandbox verify` cases (sim/verify/cases_heat.cpp); the
// quick ones run in ctest through verify_quick.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include "sim/core/backend_error.h"
#include "sim/io/json.h"
#include "sim/mpm/heat.h"
#include "sim/mpm/mpm_cpu.h"
#include "sim/scene/scene.h"

using namespace ps;

namespace {

std::unique_ptr<MpmScene> ice_scene(const std::string& name, int threads,
                                    std::vector<std::string> sets = {}) {
  auto s = std::make_unique<MpmScene>(load_mpm_scene(resolve_scene_path(name), sets));
  s->world->set_backend(std::make_unique<MpmCpuBackend>(threads));
  return s;
}

double total_mass(const MpmParticles& p) {
  double m = 0.0;
  for (float v : p.mass) m += v;
  return m;
}

}  // namespace

TEST_CASE("PCG: IC(0) and Jacobi solve a manufactured 5-point problem, IC(0) in fewer iterations",
          "[heat]") {
  const int n = 63;
  const HeatSystem A = HeatSystem::structured(n, n, 4.0 + 0.01, 1.0,
                                              1.0);  // a little capacity, as in the heat system
  std::vector<double> x_ref(static_cast<size_t>(n) * n), b;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const double x = (i + 1.0) / (n + 1), y = (j + 1.0) / (n + 1);
      x_ref[static_cast<size_t>(j) * n + i] = x * (1 - x) * y * (1 - y) * std::exp(x - 2 * y);
    }
  A.apply(x_ref, b);
  PcgWork work;
  int its[2];
  for (int k = 0; k < 2; ++k) {
    std::vector<double> x(x_ref.size(), 0.0);
    PcgResult r = solve_pcg(A, b, x, 1e-11, 1000,
                            k ? HeatPreconditioner::IC0 : HeatPreconditioner::Jacobi, work);
    CHECK(r.converged);
    CHECK(r.relative_residual <= 1e-11);
    double err = 0.0;
    for (size_t q = 0; q < x.size(); ++q) err = std::max(err, std::fabs(x[q] - x_ref[q]));
    CHECK(err < 1e-8);
    its[k] = r.iterations;
  }
  CHECK(its[1] < its[0]);
}

TEST_CASE("A scene that starts with heat on has its total mass exact from step 0", "[heat]") {
  // The melting masses go on the heat solver's quantum when the scene is built, not at the first heat
  // pass: ice_cube at grid 384 (the Solver panel's x3) lost 1.5e-7 of its mass at step 10 before.
  for (const char* grid : {"domain.grid=128", "domain.grid=384"}) {
    auto s = ice_scene("ice_cube", 2, {grid});
    MpmWorld& w = *s->world;
    const double m0 = total_mass(w.particles);
    w.solver.dt *= 128.f / static_cast<float>(w.grid.nx);
    REQUIRE(w.step(30).ok);  // three heat passes
    INFO(grid);
    CHECK(total_mass(w.particles) == m0);
  }
}

TEST_CASE(
    "Melting conserves mass bit for bit, momentum per pass, and gives emitted water fresh IDs",
    "[heat]") {
  auto s = ice_scene("ice_cube", 2);
  MpmWorld& w = *s->world;
  uint32_t max_id0 = 0;
  for (uint32_t id : w.particles.id) max_id0 = std::max(max_id0, id);
  const size_t n0 = w.particles.size();
  const double m0 = total_mass(w.particles);  // on the quantum since the scene was built
  double worst_p = 0.0;
  for (int f = 0; f < 150; ++f) {
    w.step(10);  // one heat pass per call (interval 10), then one outside step()
    double px0 = 0.0, py0 = 0.0, px1 = 0.0, py1 = 0.0, pabs = 0.0;
    for (size_t i = 0; i < w.particles.size(); ++i) {
      px0 += double(w.particles.mass[i]) * w.particles.v[i].x;
      py0 += double(w.particles.mass[i]) * w.particles.v[i].y;
      pabs += double(w.particles.mass[i]) * length(w.particles.v[i]);
    }
    w.heat_now();
    for (size_t i = 0; i < w.particles.size(); ++i) {
      px1 += double(w.particles.mass[i]) * w.particles.v[i].x;
      py1 += double(w.particles.mass[i]) * w.particles.v[i].y;
    }
    if (pabs > 0.0) worst_p = std::max(worst_p, std::hypot(px1 - px0, py1 - py0) / pabs);
  }
  const HeatLedger& L = w.heat_ledger();
  INFO("emitted " << L.emitted << " converted " << L.converted << " melted " << L.melted);
  CHECK(L.melted > 0.5);
  CHECK(L.emitted > 10);
  CHECK(w.particles.size() > n0);
  CHECK(total_mass(w.particles) == m0);  // exactly: transfers are multiples of the mass quantum
  CHECK(worst_p < 1e-6);                 // float rounding of the receivers' velocities only
  std::set<uint32_t> ids(w.particles.id.begin(), w.particles.id.end());
  CHECK(ids.size() == w.particles.size());  // no ID twice
  size_t fresh = 0;
  for (uint32_t id : w.particles.id) fresh += id > max_id0;
  CHECK(fresh ==
        static_cast<size_t>(L.emitted));  // every emitted particle has a new ID, none reused
  // Ice stays at or below its melting point (up to the quantum's leftover heat
  // and warm water flowing onto it, which the next pass melts with).
  for (size_t i = 0; i < w.particles.size(); ++i)
    if (w.particles.material[i] == 0 && w.particles.mass[i] > w.particles.vwater[i])
      CHECK(w.particles.temp[i] <= 0.05f);
}

TEST_CASE("Heat runs are deterministic across thread counts", "[heat]") {
  auto a = ice_scene("ice_in_water", 1, {"domain.grid=64"});
  auto b = ice_scene("ice_in_water", 2, {"domain.grid=64"});
  a->world->step(600);
  b->world->step(600);
  const MpmParticles& p = a->world->particles;
  const MpmParticles& q = b->world->particles;
  REQUIRE(p.size() == q.size());
  CHECK(state_hash(p) == state_hash(q));
  CHECK(p.temp == q.temp);
  CHECK(p.vwater == q.vwater);
  CHECK(a->world->heat_ledger().melted > 0.0);
}

TEST_CASE("Photons: a body at the air's temperature stays there (emission balances absorption)",
          "[heat]") {
  auto s =
      ice_scene("ice_cube", 2,
                {"heat.air.model=photons", "heat.walls.bottom=insulated", "bodies.0.temperature=25",
                 "heat.air.temperature=25", "materials.ice.melting_point=100"});
  MpmWorld& w = *s->world;
  w.step(200);
  const HeatTotals t = w.heat_totals();
  CHECK(t.min_T == Approx(25.0).margin(1e-3));
  CHECK(t.max_T == Approx(25.0).margin(1e-3));
  // Colder than the air: it warms.
  auto c = ice_scene("ice_cube", 2,
                     {"heat.air.model=photons", "heat.walls.bottom=insulated",
                      "bodies.0.temperature=-20", "heat.air.temperature=25"});
  c->world->step(200);
  CHECK(c->world->heat_ledger().air > 0.0);
  CHECK(c->world->heat_totals().max_T > -20.0);
}

TEST_CASE("A lamp gives its power to a fully covered disk", "[heat]") {
  auto s = ice_scene("ice_cube", 2,
                     {"heat.only=true", "heat.walls.bottom=insulated", "heat.air.model=none",
                      "heat.lamps=[{\"pos\": [0.5, 0.12], \"radius\": 0.06, \"power\": 500}]"});
  MpmWorld& w = *s->world;
  w.step(100);
  const HeatLedger& L = w.heat_ledger();
  // 10 passes of dt = 10 substeps * 1e-4 s * time_scale 20000 = 20 s each.
  const double expected = 500.0 * L.heat_time;
  CHECK(L.lamps == Approx(expected).epsilon(0.05));  // the disk on the node lattice
  const HeatTotals t = w.heat_totals();
  CHECK(t.heat() - L.initial_heat == Approx(L.lamps).epsilon(1e-6));
}

TEST_CASE("Heat scene errors name the file, line and field", "[heat]") {
  const std::string good = resolve_scene_path("ice_cube");
  auto error_of = [&](const std::vector<std::string>& sets) -> std::string {
    try {
      load_mpm_scene(good, sets);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK_THAT(error_of({"materials.ice.melts_into=steam"}),
             Catch::Contains("materials.ice.melts_into") && Catch::Contains("steam"));
  CHECK_THAT(error_of({"materials.ice.latent_heat=0"}),
             Catch::Contains("materials.ice.melts_into"));
  CHECK_THAT(error_of({"materials.ice.melts_into=ice"}), Catch::Contains("itself"));
  CHECK_THAT(error_of({"heat.walls.left=hot"}), Catch::Contains("heat.walls.left"));
  CHECK_THAT(error_of({"heat.air.model=sunlight"}), Catch::Contains("heat.air.model"));
  CHECK_THAT(error_of({"heat.plates=[{\"min\": [0, 0], \"max\": [1, 1]}]"}),
             Catch::Contains("temperature"));
  CHECK_THAT(error_of({"materials.ice.conductivity=-1"}),
             Catch::Contains("materials.ice.conductivity"));
  CHECK_THAT(error_of({"bodies.0.temperature=-300"}), Catch::Contains("bodies[0].temperature"));
}

TEST_CASE("Saving a heat scene keeps what the Heat panel edits", "[heat]") {
  MpmScene s = load_mpm_scene(resolve_scene_path("ice_cube"));
  MpmWorld& w = *s.world;
  w.heat.walls[0] = HeatWall{true, -15.f};  // left held at -15 C
  w.heat.walls[2] = HeatWall{};             // the plate turned off: insulated
  w.heat.air = AirModel::Photons;
  w.heat.air_temperature = 30.f;
  w.heat.interval = 4;
  w.heat.flip = 0.8f;
  w.heat.only = true;
  w.heat.preconditioner = HeatPreconditioner::Jacobi;
  w.materials[0].latent_heat = 300000.f;
  const Json doc = mpm_scene_to_json(s);
  MpmScene r = build_mpm_scene(doc, s.info.path);
  const HeatParams& h = r.world->heat;
  CHECK(h.walls[0].fixed);
  CHECK(h.walls[0].temperature == -15.f);
  CHECK_FALSE(h.walls[2].fixed);
  CHECK(h.air == AirModel::Photons);
  CHECK(h.air_temperature == 30.f);
  CHECK(h.interval == 4);
  CHECK(h.flip == 0.8f);
  CHECK(h.only);
  CHECK(h.preconditioner == HeatPreconditioner::Jacobi);
  CHECK(r.world->materials[0].latent_heat == 300000.f);
  CHECK(r.world->materials[0].melts_into == 1);
}

TEST_CASE("Moving particles stay within the temperatures around them (range limiter)", "[heat]") {
  // Before the limiter: meltwater beside the 60 C plate reached 288 C and ice -92 C
  // with the pure increment, and ice under a strong lamp -29 C with the default blend.
  auto a = ice_scene("ice_cube", 2);
  a->world->step(150 * 20);
  HeatTotals t = a->world->heat_totals();
  CHECK(t.min_T >= -5.0 - 1e-4);
  CHECK(t.max_T <= 60.0 + 1e-4);
  CHECK(a->world->heat_ledger().melted > 1.0);
  auto b = ice_scene(
      "ice_sculpture", 2,
      {"heat.lamps.0.power=3000", "heat.lamps.0.radius=0.04", "heat.lamps.0.pos=[0.5,0.33]"});
  b->world->step(300 * 20);
  t = b->world->heat_totals();
  CHECK(t.min_T >= -2.0 - 1e-4);  // nothing is colder than the ice was (air 25 C)
  CHECK(b->world->heat_ledger().melted > 1.0);
}

namespace {

/// A stand-in for the CUDA backend's device solve (sim/mpm/heat_cuda.cu): the
/// host's Jacobi PCG, counting its calls, or failing like a lost device.
class CountingSolver final : public HeatLinearSolver {
 public:
  bool fail = false;
  int calls = 0;
  int last_n = 0;
  int cap = 0;  ///< > 0: stop after this many iterations (a device Jacobi that runs out)
  PcgResult solve(const HeatSystem& A, const std::vector<double>& b, std::vector<double>& x,
                  double tol, int max_iterations, PcgWork& work) override {
    ++calls;
    last_n = A.n;
    if (fail) {
      std::fill(x.begin(), x.end(),
                1e30);  // half-written, as a device failing mid-copy could leave it
      throw BackendError("CUDA error in heat solve: an illegal memory access was encountered",
                         true);
    }
    return solve_pcg(A, b, x, tol, cap > 0 ? cap : max_iterations, HeatPreconditioner::Jacobi,
                     work);
  }
};

/// The CPU backend with a device solve attached: what the world sees of the CUDA backend.
class CpuWithSolver final : public MpmBackend {
 public:
  explicit CpuWithSolver(HeatLinearSolver* s) : solver_(s) {}
  std::string name() const override { return "cpu with a test heat solve"; }
  void bind(MpmParticles* host) override { cpu_.bind(host); }
  void host_changed() override { cpu_.host_changed(); }
  void sync_to_host() override { cpu_.sync_to_host(); }
  SubstepResult substep(const SubstepInput& in) override { return cpu_.substep(in); }
  BackendStats stats() const override { return cpu_.stats(); }
  void read_grid(GridSpec& spec, std::vector<float>& mass,
                 std::vector<Vec2>& velocity) const override {
    cpu_.read_grid(spec, mass, velocity);
  }
  HeatLinearSolver* heat_linear_solver() override { return solver_; }

 private:
  MpmCpuBackend cpu_{1};
  HeatLinearSolver* solver_;
};

}  // namespace

TEST_CASE(
    "A device backend's heat solve gets the pass's system when the setting asks, and its answer is used",
    "[heat]") {
  // Reference: the host's own Jacobi PCG (what the stand-in runs), so the
  // states must be bit-identical when the device path is taken.
  auto host = ice_scene("ice_cube", 1, {"heat.preconditioner=jacobi"});
  host->world->step(200);
  for (const char* where : {"off", "auto", "on"}) {
    CountingSolver solver;
    auto s = ice_scene("ice_cube", 1,
                       {"heat.preconditioner=jacobi", std::string("heat.device_solve=") + where});
    s->world->set_backend(std::make_unique<CpuWithSolver>(&solver));
    s->world->step(200);
    const HeatLedger& L = s->world->heat_ledger();
    INFO("device_solve=" << where << ": " << solver.calls << " device solves of " << L.passes
                         << " passes");
    REQUIRE(L.passes == 20);
    const int unknowns = s->world->last_heat().unknowns;
    REQUIRE(unknowns > 0);
    REQUIRE(unknowns < kDeviceSolveFrom);  // ice_cube is small: auto keeps it on the host
    if (std::string(where) == "on") {
      CHECK(solver.calls == 20);
      CHECK(L.device_passes == 20);
      CHECK(s->world->last_heat().on_device);
      CHECK(solver.last_n == unknowns);
    } else {
      CHECK(solver.calls == 0);
      CHECK(L.device_passes == 0);
    }
    CHECK(state_hash(s->world->particles) == state_hash(host->world->particles));
    CHECK(s->world->particles.temp == host->world->particles.temp);
  }
}

TEST_CASE(
    "Auto solves on the device from kDeviceSolveFrom unknowns, and an unconverged device solve is finished on the host",
    "[heat]") {
  // ice_cube refined to 512 (dt scaled with dx): about 11 000 unknowns.
  const std::vector<std::string> fine{"domain.grid=512", "solver.dt=2.5e-5"};
  CountingSolver solver;
  auto s = ice_scene("ice_cube", 1, fine);
  s->world->set_backend(std::make_unique<CpuWithSolver>(&solver));
  s->world->step(20);
  REQUIRE(s->world->heat_ledger().passes == 2);
  CHECK(s->world->last_heat().unknowns >= kDeviceSolveFrom);
  CHECK(solver.calls == 2);
  CHECK(s->world->heat_ledger().device_passes == 2);
  CHECK_FALSE(s->world->last_heat().host_finish);
  // A device solve that runs out of iterations: the host finishes it with
  // the scene's preconditioner, so the pass converges like a host pass.
  std::vector<std::string> capped = fine;
  capped.push_back("heat.device_solve=on");
  CountingSolver short_solver;
  short_solver.cap = 2;
  auto c = ice_scene("ice_cube", 1, capped);
  c->world->set_backend(std::make_unique<CpuWithSolver>(&short_solver));
  c->world->step(20);
  auto h = ice_scene("ice_cube", 1, fine);  // the host's own solve (CPU backend)
  h->world->step(20);
  const HeatReport& r = c->world->last_heat();
  CHECK(short_solver.calls == 2);
  CHECK(r.on_device);
  CHECK(r.host_finish);
  CHECK(r.converged);
  CHECK(r.residual <= 1e-8 * 1.0001);
  CHECK(c->world->heat_ledger().unconverged == 0);
  CHECK(r.iterations > 2);  // the device's two and the host's
  // The same temperatures as the host's solve, to the solver tolerance.
  const std::vector<float>& Tc = c->world->particles.temp;
  const std::vector<float>& Th = h->world->particles.temp;
  REQUIRE(Tc.size() == Th.size());
  float worst = 0.f;
  for (size_t i = 0; i < Tc.size(); ++i) worst = std::max(worst, std::fabs(Tc[i] - Th[i]));
  CHECK(worst < 1e-3f);
}

TEST_CASE(
    "A device heat solve that fails falls back to the host for that pass and to the CPU backend after it",
    "[heat]") {
  reset_backend_failures_for_tests();
  auto host = ice_scene("ice_cube", 1);
  host->world->step(200);
  CountingSolver solver;
  solver.fail = true;
  auto s = ice_scene("ice_cube", 1, {"heat.device_solve=on"});
  s->world->set_backend(std::make_unique<CpuWithSolver>(&solver));
  s->world->step(200);  // returns after the fallback (the caller steps on from there)
  CHECK(s->world->step_count() == 10);
  s->world->step(190);
  REQUIRE(s->world->step_count() == 200);
  CHECK(solver.calls == 1);  // the first pass failed; the world went on on the CPU backend
  CHECK(s->world->fallback().happened);
  CHECK(s->world->fallback().during == "solving the heat equation");
  CHECK(s->world->fallback().resumed_step ==
        s->world->fallback().failed_step);  // nothing rolled back
  CHECK(s->world->backend_name().rfind("cpu", 0) == 0);
  CHECK(s->world->take_notice().find("illegal memory access") != std::string::npos);
  // The pass was solved on the host (IC(0), the scene's preconditioner) from
  // the guess, not from what the failed solve left: the same state as a CPU run.
  CHECK(s->world->heat_ledger().passes == 20);
  CHECK(s->world->heat_ledger().device_passes == 0);
  CHECK(state_hash(s->world->particles) == state_hash(host->world->particles));
  CHECK(s->world->particles.temp == host->world->particles.temp);
  reset_backend_failures_for_tests();  // the failure above is process-wide (--backend auto's memory)
}

TEST_CASE(
    "A heat wall holds its temperature at its face: a bar between a hot and a cold wall conducts over its own length",
    "[heat]") {
  // A tracer bar filling the domain between the left and right walls' faces
  // (x = 3 dx and 61 dx: where the MPM walls stop the particles), the left
  // wall held at 1 C, the right at 0 C, heat only, interpolated temperatures
  // (flip 0). In the steady state the profile is linear between the faces:
  // T = 1 at the left face, 0 at the right, slope -1 / L. With the walls held
  // only on their 3-node bands, the half-covered face nodes conducted at half
  // k, the walls acted about 2.5 cells behind their faces and the slope came
  // out 8 % shallow (T = 0.96 extrapolated to the left face).
  const std::string doc = R"({"domain": {"size": [1, 0.25], "grid": 64},
    "solver": {"dt": 0.001, "substeps": 1, "gravity": [0, 0]},
    "heat": {"enabled": true, "only": true, "interval": 1, "time_scale": 1000, "tolerance": 1e-12, "flip": 0,
             "walls": {"left": {"temperature": 1}, "right": {"temperature": 0}}},
    "materials": {"rock": {"type": "tracer", "density": 1, "conductivity": 1, "heat_capacity": 1}},
    "bodies": [{"shape": "box", "min": [0.046875, 0.08], "max": [0.953125, 0.17], "material": "rock",
                "temperature": 0.5}]})";
  MpmScene s = build_mpm_scene(Json::parse(doc, "bar.json"), "bar.json");
  MpmWorld& w = *s.world;
  w.set_backend(std::make_unique<MpmCpuBackend>(1));
  REQUIRE(w.solver.boundary_nodes == 3);
  const double dx = 1.0 / 64, xl = 3 * dx, xr = 61 * dx, L = xr - xl;
  w.step(30);  // heat dt 1 per pass, 12 times the slowest mode's decay time L^2 / pi^2
  w.sync();
  // The face nodes are held, the first node inside is free.
  const std::vector<uint8_t>& kind = w.heat_solver().node_kind();
  const std::vector<double>& T = w.heat_solver().grid_temperature();
  const int NX = w.grid.nodes_x(), jm = 8;  // a row through the bar
  CHECK(kind[static_cast<size_t>(jm * NX + 3)] == 2);
  CHECK(T[static_cast<size_t>(jm * NX + 3)] == 1.0);
  CHECK(kind[static_cast<size_t>(jm * NX + 4)] == 1);
  CHECK(kind[static_cast<size_t>(jm * NX + 61)] == 2);
  CHECK(kind[static_cast<size_t>(jm * NX + 60)] == 1);
  // Least-squares line through the particles of the middle 80 %.
  double n = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0;
  for (size_t i = 0; i < w.particles.size(); ++i) {
    const double x = w.particles.x[i].x, y = w.particles.temp[i];
    if (x < xl + 0.1 * L || x > xr - 0.1 * L) continue;
    n += 1.0;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  REQUIRE(n > 100.0);
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx), icpt = (sy - slope * sx) / n;
  INFO("slope * L = " << slope * L << ", T(left face) = " << icpt + slope * xl
                      << ", T(right face) = " << icpt + slope * xr);
  CHECK(slope * L == Approx(-1.0).epsilon(0.01));
  CHECK(icpt + slope * xl == Approx(1.0).margin(0.005));
  CHECK(icpt + slope * xr == Approx(0.0).margin(0.005));
  // Steady: what the hot wall puts in, the cold wall takes out (the ledger's
  // wall energy per pass is their sum).
  CHECK(std::fabs(w.heat_solver().last().energy_walls) < 1e-6);
}
