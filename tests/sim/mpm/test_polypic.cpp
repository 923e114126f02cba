// PolyPIC (Fu, Guo, Wang & Jiang 2017): the mode basis, conservation like
// APIC, less dissipation than APIC, determinism, scene wiring.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include "mpm_test_util.h"
#include "sim/mpm/mpm_cpu.h"
#include "sim/mpm/mpm_kernels.h"

using namespace ps;
using test::scene_from;
using test::teaching_block;

namespace {

/// A block of stress-free particles well inside the walls (the verify case's
/// [0.3, 0.7]^2: its rotating corners stay clear of the wall layer, whose
/// forces would exert a torque), rotating about its centre, translating and
/// bent by a quadratic velocity field (which the higher modes carry: a
/// linear field alone would leave them at round-off).
MpmScene spinning_block(const char* transfer) {
  MpmScene s = scene_from(std::string(R"({"domain": {"size": [1, 1], "grid": 32},
    "solver": {"transfer": ")") +
                          transfer + R"(", "dt": 0.0005, "boundary": "separate", "gravity": [0, 0]},
    "materials": {"t": {"type": "tracer"}},
    "bodies": [{"shape": "box", "min": [0.3, 0.3], "max": [0.7, 0.7], "material": "t",
                "spacing": 0.0078125, "preset": "rotation"}]})");
  MpmParticles& p = s.world->particles;
  for (size_t i = 0; i < p.size(); ++i) {
    const float dx = p.x[i].x - 0.5f, dy = p.x[i].y - 0.5f;
    p.v[i] += Vec2{0.05f + 2.f * dy * dy, -0.03f + 3.f * dx * dx};
  }
  s.world->host_changed();
  return s;
}

/// Linear and angular momentum about the origin, the angular part the
/// particles' affine matrices carry included: m D (C21 - C12), D = dx^2 / 4
/// (Jiang et al. 2015, sec. 5.3). PolyPIC's higher modes carry none.
struct Momenta {
  double px = 0, py = 0, l = 0, m = 0;
};
Momenta momenta(const MpmWorld& w) {
  const MpmParticles& p = w.particles;
  const double dd = 0.25 * w.grid.dx * w.grid.dx;
  Momenta r;
  for (size_t i = 0; i < p.size(); ++i) {
    const double m = p.mass[i];
    r.m += m;
    r.px += m * p.v[i].x;
    r.py += m * p.v[i].y;
    r.l +=
        m * (static_cast<double>(p.x[i].x) * p.v[i].y - static_cast<double>(p.x[i].y) * p.v[i].x);
    r.l += m * dd * (p.C[i].a10 - p.C[i].a01);
  }
  return r;
}

}  // namespace

TEST_CASE("PolyPIC basis: one particle's G2P then P2G reproduces its nine node velocities",
          "[mpm][polypic]") {
  // With all nine modes (v, C and the six extra ones) the round trip through
  // the particle is lossless (Fu et al. 2017); this checks the
  // orthogonality and the closed-form scaling factors together.
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> uni(0.f, 1.f);
  auto range = [&](float a, float b) { return a + (b - a) * uni(gen); };
  for (int trial = 0; trial < 200; ++trial) {
    // Positions across the cell, including the ends where a weight vanishes.
    const float X = 10.f + (trial == 0 ? 0.5f : trial == 1 ? 0.49999f : range(0.f, 1.f));
    const float Y = 20.f + range(0.f, 1.f);
    int bx, by;
    float fx, fy, wx[4], wy[4], dwx[4], dwy[4];
    mpm::axis_weights(Kernel::Quadratic, X, bx, fx, wx, dwx);
    mpm::axis_weights(Kernel::Quadratic, Y, by, fy, wy, dwy);
    const mpm::PolyAxis ax = mpm::poly_axis(wx, fx), ay = mpm::poly_axis(wy, fy);
    Vec2 vi[3][3];
    for (auto& row : vi)
      for (Vec2& v : row) v = Vec2{range(-1.f, 1.f), range(-1.f, 1.f)};
    // G2P: the constant mode, the affine ones (unit norm: 2d, APIC's C times dx / 2), the extra modes.
    Vec2 v0{}, cx{}, cy{};
    PolyModes m;
    for (int b = 0; b < 3; ++b)
      for (int a = 0; a < 3; ++a) {
        v0 += (wx[a] * wy[b]) * vi[a][b];
        cx += (ax.we[1][a] * wy[b]) * vi[a][b];
        cy += (wx[a] * ay.we[1][b]) * vi[a][b];
        mpm::poly_gather_node(m, ax, ay, a, b, vi[a][b]);
      }
    // P2G of this one particle: w v(x_i) must equal w v_i at every node.
    for (int b = 0; b < 3; ++b)
      for (int a = 0; a < 3; ++a) {
        const float w = wx[a] * wy[b];
        const Vec2 back = w * v0 + ax.we[1][a] * wy[b] * cx + wx[a] * ay.we[1][b] * cy +
                          mpm::poly_node_velocity(m, ax, ay, a, b);
        INFO("trial " << trial << " f = (" << fx << ", " << fy << ") node " << a << "," << b);
        CHECK(back.x == Approx(w * vi[a][b].x).margin(2e-6));
        CHECK(back.y == Approx(w * vi[a][b].y).margin(2e-6));
      }
    // The extra modes carry no momentum: their weighted sums vanish.
    Vec2 sum{};
    for (int b = 0; b < 3; ++b)
      for (int a = 0; a < 3; ++a) sum += mpm::poly_node_velocity(m, ax, ay, a, b);
    CHECK(std::fabs(sum.x) < 1e-6);
    CHECK(std::fabs(sum.y) < 1e-6);
  }
}

TEST_CASE("PolyPIC's stored modes keep their energy when the particle moves across the cell",
          "[mpm][polypic]") {
  // A particle's share of the grid's kinetic energy is (1/2) m sum_i w_ip |v_p(x_i)|^2. The
  // transfers never raise it (P2G: Jensen; G2P: a projection), but the particle moves between its
  // G2P and the next P2G, and the stencil weights move with it. The stored coefficients are those of
  // a basis orthonormal under the weights, so that energy is m/2 sum_r |c_r|^2 wherever the
  // particle is. (With the paper's monic G the energy of a G mode is 2k(f) |c|^2, k running from 0,
  // where a weight vanishes, to 3/32 on a node: moving particles pumped energy into the modes,
  // the verify case mpm.polypic_elastic_rotation.)
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> uni(0.f, 1.f);
  auto range = [&](float a, float b) { return a + (b - a) * uni(gen); };
  double worst = 0;
  for (int trial = 0; trial < 400; ++trial) {
    PolyModes m;
    double e_modes = 0;
    for (Vec2& c : m.c) {
      c = Vec2{range(-1.f, 1.f), range(-1.f, 1.f)};
      e_modes += static_cast<double>(c.x) * c.x + static_cast<double>(c.y) * c.y;
    }
    // Offsets that keep every weight above about 1e-3 (the energy divides by it below),
    // the node itself (f = 1) and the cell's middle among them.
    const float fx = trial == 0 ? 1.f : range(0.55f, 1.45f),
                fy = trial == 1 ? 0.55f : range(0.55f, 1.45f);
    int bx, by;
    float gx, gy, wx[4], wy[4], dwx[4], dwy[4];
    mpm::axis_weights(Kernel::Quadratic, 10.f + fx, bx, gx, wx, dwx);
    mpm::axis_weights(Kernel::Quadratic, 20.f + fy, by, gy, wy, dwy);
    const mpm::PolyAxis ax = mpm::poly_axis(wx, gx), ay = mpm::poly_axis(wy, gy);
    double e = 0;  // sum_i w_i |v(x_i)|^2, from what P2G puts on node i: w_i v(x_i)
    for (int b = 0; b < 3; ++b)
      for (int a = 0; a < 3; ++a) {
        const Vec2 wv = mpm::poly_node_velocity(m, ax, ay, a, b);
        e +=
            (static_cast<double>(wv.x) * wv.x + static_cast<double>(wv.y) * wv.y) / (wx[a] * wy[b]);
      }
    INFO("trial " << trial << " f = (" << gx << ", " << gy << ")");
    CHECK(e == Approx(e_modes).epsilon(1e-4));
    worst = std::max(worst, std::fabs(e / e_modes - 1.0));
  }
  INFO("largest relative difference " << worst);
  CHECK(worst < 1e-4);
}

TEST_CASE("PolyPIC creates no energy on a spinning, bent elastic block", "[mpm][polypic]") {
  // The lecture's block as a jelly, spun and bent by a quadratic velocity field that the modes carry
  // from the first substep, no gravity, clear of the walls: kinetic + elastic energy may only fall.
  // Under the paper's monic coefficients (see the test above) PolyPIC's rose past E0 at about 2.5 s
  // and reached 11.5 E0 by 3 s; with orthonormal ones it stays at or below 0.97 E0 throughout.
  struct Run {
    double peak = 0, end = 0;
  };
  auto energy = [](const char* transfer) {
    MpmScene s =
        scene_from(std::string(R"({"domain": {"size": [1, 1], "grid": 32},
      "solver": {"transfer": ")") +
                   transfer + R"(", "dt": 0.0005, "boundary": "separate", "gravity": [0, 0]},
      "materials": {"j": {"type": "jelly", "E": 5000, "nu": 0.2, "density": 1000}},
      "bodies": [{"shape": "box", "min": [0.3, 0.3], "max": [0.7, 0.7], "material": "j",
                  "spacing": 0.0078125, "preset": "rotation"}]})");
    MpmWorld& w = *s.world;
    MpmParticles& p = w.particles;
    for (size_t i = 0; i < p.size(); ++i) {
      const float dx = p.x[i].x - 0.5f, dy = p.x[i].y - 0.5f;
      p.v[i] += Vec2{8.f * dy * dy - 0.2f, 8.f * dx * dx - 0.2f};
    }
    w.host_changed();
    auto total = [&] { return w.diagnostics().kinetic_energy + elastic_energy(p, w.materials); };
    const double e0 = total();
    Run r;
    for (int k = 0; k < 60; ++k) {  // 3 s
      REQUIRE(w.step(100).ok);
      r.end = total() / e0;
      r.peak = std::max(r.peak, r.end);
    }
    return r;
  };
  const Run apic = energy("apic"), poly = energy("polypic");
  INFO("E / E0 over 3 s, largest and last: APIC " << apic.peak << ", " << apic.end << "; PolyPIC "
                                                  << poly.peak << ", " << poly.end);
  CHECK(apic.peak < 1.0 + 2e-3);
  CHECK(poly.peak < 1.0 + 2e-3);
  // And the modes are worth carrying: the bend that APIC's transfers filter out stays (0.94 E0
  // against APIC's 0.54 at 3 s).
  CHECK(poly.end > apic.end + 0.2);
}

TEST_CASE("PolyPIC conserves mass and momentum and angular momentum like APIC", "[mpm][polypic]") {
  const int steps = 400;
  double drift_p[2], drift_l[2];
  const char* transfers[2] = {"apic", "polypic"};
  for (int t = 0; t < 2; ++t) {
    MpmScene s = spinning_block(transfers[t]);
    MpmWorld& w = *s.world;
    const Momenta a = momenta(w);
    const float m0 = static_cast<float>(w.diagnostics().mass);
    REQUIRE(w.step(steps).ok);
    const Momenta b = momenta(w);
    CHECK(static_cast<float>(w.diagnostics().mass) == m0);  // particles carry mass
    const double pn = std::hypot(a.px, a.py);
    drift_p[t] = std::hypot(b.px - a.px, b.py - a.py) / pn;
    drift_l[t] = std::fabs(b.l - a.l) / std::fabs(a.l);
  }
  INFO("relative drift over " << steps << " substeps: momentum APIC " << drift_p[0] << ", PolyPIC "
                              << drift_p[1] << "; angular momentum APIC " << drift_l[0]
                              << ", PolyPIC " << drift_l[1]);
  // Round-off of float sums over ~10^4 particles and 400 substeps.
  CHECK(drift_p[1] < 1e-5);
  CHECK(drift_l[1] < 1e-5);
  // The extra modes must not make it worse than APIC's round-off (factor 4 of slack).
  CHECK(drift_l[1] < 4 * std::max(drift_l[0], 1e-7));
}

TEST_CASE("PolyPIC's P2G puts exactly the particles' momentum on the grid", "[mpm][polypic]") {
  MpmScene s = spinning_block("polypic");
  MpmWorld& w = *s.world;
  REQUIRE(w.step(20).ok);  // the modes carry the bend now
  double extra = 0;
  for (const PolyModes& m : w.particles.poly)
    for (const Vec2& c : m.c)
      extra = std::max(extra, static_cast<double>(std::fabs(c.x) + std::fabs(c.y)));
  REQUIRE(extra > 1e-4);
  w.solver.gravity = Vec2{};
  const Diagnostics d0 = w.diagnostics();
  REQUIRE(w.step(1).ok);
  const test::GridTotals gt = test::grid_totals(w);
  CHECK(gt.mass == Approx(d0.mass).epsilon(1e-6));
  CHECK(gt.px == Approx(d0.momentum[0]).epsilon(1e-5));
  CHECK(gt.py == Approx(d0.momentum[1]).epsilon(1e-5));
}

TEST_CASE("PolyPIC loses less kinetic energy than APIC on the lecture's rotating block",
          "[mpm][polypic]") {
  // A rigid rotation is a linear field, which APIC and PolyPIC both carry
  // exactly: the loss starts when the block's corners reach the sticky wall
  // layer (after ~0.25 s) and the field stops being linear.
  auto ratio = [](const char* transfer) {
    MpmScene s = teaching_block(transfer, "rotation");
    const double e0 = s.world->diagnostics().kinetic_energy;
    REQUIRE(s.world->step(1000).ok);
    return s.world->diagnostics().kinetic_energy / e0;
  };
  const double pic = ratio("pic"), apic = ratio("apic"), poly = ratio("polypic");
  INFO("KE(1000 substeps) / KE(0): PIC " << pic << ", APIC " << apic << ", PolyPIC " << poly);
  CHECK(poly > apic);
  CHECK(apic > pic);
  // No energy is created beyond forward Euler's outward drift of free
  // particles (APIC's ratio reaches 1.0005 before the walls).
  CHECK(poly < 1.0 + 1e-3);
}

TEST_CASE("PolyPIC loses less energy than APIC on a vibrating elastic bar", "[mpm][polypic]") {
  // The bar of `sandbox verify`'s mpm.vibrating_bar_energy (free-free, nu = 0,
  // first axial mode), 1.5 periods.
  auto energy = [](const char* transfer) {
    MpmScene s = scene_from(std::string(R"({"domain": {"size": [1, 1], "grid": 128},
      "solver": {"transfer": ")") +
                            transfer + R"(", "dt": 2e-5, "boundary": "separate", "gravity": [0, 0]},
      "materials": {"bar": {"type": "jelly", "E": 10000, "nu": 0, "density": 1}},
      "bodies": [{"shape": "box", "min": [0.25, 0.475], "max": [0.75, 0.525], "material": "bar",
                  "spacing": 0.00390625}]})");
    MpmWorld& w = *s.world;
    MpmParticles& p = w.particles;
    for (size_t i = 0; i < p.size(); ++i)
      p.v[i] = Vec2{-0.5f * std::cos(3.14159265f * (p.x[i].x - 0.25f) / 0.5f), 0.f};
    w.host_changed();
    auto total = [&] { return w.diagnostics().kinetic_energy + elastic_energy(p, w.materials); };
    const double e0 = total();
    REQUIRE(w.step(750).ok);
    return total() / e0;
  };
  const double apic = energy("apic"), poly = energy("polypic");
  INFO("E(1.5 T) / E(0): APIC " << apic << ", PolyPIC " << poly);
  CHECK(poly > apic);
  CHECK(poly < 1.0 + 1e-3);
}

TEST_CASE("PolyPIC is bit-deterministic across 1 and 3 threads", "[mpm][polypic][determinism]") {
  auto run = [](int threads, const char* transfer, std::vector<PolyModes>* modes) {
    MpmScene s =
        load_mpm_scene(resolve_scene_path("mpm99"), {std::string("solver.transfer=") + transfer});
    s.world->set_backend(std::make_unique<MpmCpuBackend>(threads));
    REQUIRE(s.world->step(150).ok);
    if (modes) *modes = s.world->particles.poly;
    return state_hash(s.world->particles);
  };
  std::vector<PolyModes> m1, m3;
  const uint64_t h1 = run(1, "polypic", &m1);
  const uint64_t h3 = run(3, "polypic", &m3);
  CHECK(h1 == h3);
  REQUIRE(m1.size() == m3.size());
  CHECK(std::memcmp(m1.data(), m3.data(), m1.size() * sizeof(PolyModes)) == 0);
  // And PolyPIC is not APIC under another name (the test can fail).
  CHECK(run(3, "apic", nullptr) != h1);
}

TEST_CASE("Modes left from an earlier PolyPIC run are dropped after other transfers",
          "[mpm][polypic]") {
  // PolyPIC 30 -> APIC 10 -> PolyPIC 5. The modes PolyPIC wrote 10 substeps
  // ago no longer describe the particles' field: the world zeroes them.
  auto run = [](bool zero_by_hand) {
    MpmScene s = spinning_block("polypic");
    MpmWorld& w = *s.world;
    REQUIRE(w.step(30).ok);
    w.solver.transfer = Transfer::APIC;
    REQUIRE(w.step(10).ok);
    if (zero_by_hand) {
      w.particles.poly.assign(w.particles.size(), PolyModes{});
      w.host_changed();
    }
    w.solver.transfer = Transfer::PolyPIC;
    REQUIRE(w.step(5).ok);
    return state_hash(w.particles);
  };
  CHECK(run(false) == run(true));
}

TEST_CASE("Scene files and --set and saving know PolyPIC - other kernels are refused",
          "[mpm][polypic][scene]") {
  const std::string json = R"({"domain": {"size": [1, 1], "grid": 32},
    "solver": {"transfer": "polypic"},
    "materials": {"t": {"type": "tracer"}},
    "bodies": [{"shape": "box", "min": [0.3, 0.3], "max": [0.5, 0.5], "material": "t"}]})";
  MpmScene s = scene_from(json, "poly.json");
  CHECK(s.world->solver.transfer == Transfer::PolyPIC);
  CHECK(std::string(transfer_name(Transfer::PolyPIC)) == "polypic");
  // Saving writes it back.
  const Json saved = mpm_scene_to_json(s);
  CHECK(saved.find("solver")->find("transfer")->as_string() == "polypic");
  // --set solver.transfer=polypic
  Json doc = Json::parse(R"({"domain": {"size": [1, 1], "grid": 32}, "solver": {"transfer": "apic"},
    "materials": {"t": {"type": "tracer"}},
    "bodies": [{"shape": "box", "min": [0.3, 0.3], "max": [0.5, 0.5], "material": "t"}]})",
                         "a.json");
  apply_override(doc, "solver.transfer=polypic");
  CHECK(build_mpm_scene(doc, "a.json").world->solver.transfer == Transfer::PolyPIC);
  // Linear and cubic kernels: a located error on the kernel field.
  for (const char* k : {"linear", "cubic"}) {
    Json bad = doc;
    apply_override(bad, std::string("solver.kernel=") + k);
    try {
      build_mpm_scene(bad, "a.json");
      FAIL("PolyPIC with the " << k << " kernel was accepted");
    } catch (const InputError& e) {
      INFO(e.what());
      CHECK(e.field() == "solver.kernel");
      CHECK(std::string(e.what()).find("quadratic kernel only") != std::string::npos);
    }
  }
  // A world edited into the combination refuses to step.
  s.world->solver.kernel = Kernel::Cubic;
  CHECK_THROWS_AS(s.world->step(1), std::invalid_argument);
}
