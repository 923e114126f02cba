// The headless runner end to end: the `sandbox` executable as a user runs it.
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include "sandbox_exe.h"
#include "sim/io/dump.h"

namespace fs = std::filesystem;

using ps::test::Result;
using ps::test::sandbox;

TEST_CASE("sandbox run writes dumps and summaries", "[app][runner]") {
  fs::path out = fs::temp_directory_path() / ("ps_runner_out_" + std::to_string(getpid()));
  fs::remove_all(out);
  Result r = sandbox("run pic_vs_apic --steps 40 --dump-every 20 --format csv --threads 2 --out " +
                     out.string() + " --set solver.transfer=pic");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(fs::exists(out / "particles_00000.csv"));
  CHECK(fs::exists(out / "particles_00001.csv"));
  CHECK(fs::exists(out / "particles_00002.csv"));
  CHECK(fs::exists(out / "summary.txt"));
  ps::ParticleTable t = ps::read_csv_dump((out / "particles_00002.csv").string());
  CHECK(t.size() == 5776);
  CHECK(t.id.front() == 1);
  CHECK(t.id.back() == 5776);
  // A summary line per dump with mass, momentum, angular momentum, energy and hash.
  CHECK(r.out.find("dump      2 step       40") != std::string::npos);
  CHECK(r.out.find("angular_momentum=") != std::string::npos);
  CHECK(r.out.find("hash=") != std::string::npos);
  for (const char* fmt : {"ply", "vtk"}) {
    Result f = sandbox(std::string("run pic_vs_apic --steps 10 --dump-every 10 --quiet --format ") +
                       fmt + " --out " + out.string());
    REQUIRE(f.code == 0);
    CHECK(fs::exists(out / (std::string("particles_00001.") + fmt)));
  }
}

TEST_CASE("The same run gives the same hash whatever the thread count",
          "[app][runner][determinism]") {
  Result a = sandbox("run mpm88 --steps 60 --threads 1 --no-progress");
  Result b = sandbox("run mpm88 --steps 60 --threads 2 --no-progress");
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  auto final_hash = [](const std::string& s) {
    size_t at = s.find("final");
    REQUIRE(at != std::string::npos);
    size_t h = s.find("hash=", at);
    return s.substr(h, 21);
  };
  CHECK(final_hash(a.out) == final_hash(b.out));
}

TEST_CASE("Bad command lines and bad --set values are rejected precisely", "[app][runner]") {
  Result r1 = sandbox("run pic_vs_apic --stepz 10");
  CHECK(r1.code == 2);
  CHECK(r1.out.find("unknown option '--stepz' for 'sandbox run'") != std::string::npos);
  Result r2 = sandbox("run pic_vs_apic --steps ten");
  CHECK(r2.code == 2);
  CHECK(r2.out.find("--steps: expected an integer, got 'ten'") != std::string::npos);
  Result r3 = sandbox("run pic_vs_apic --steps 5 --set solver.flip_blend=2");
  CHECK(r3.code == 2);
  CHECK(
      r3.out.find(
          "--set solver.flip_blend=2: field 'solver.flip_blend': value 2 is out of range [0, 1]") !=
      std::string::npos);
  Result r4 = sandbox("run no_such_scene");
  CHECK(r4.code == 2);
  CHECK(r4.out.find("no such scene file or built-in scene") != std::string::npos);
  Result r5 = sandbox("run pic_vs_apic --format xml");
  CHECK(r5.code == 2);
  CHECK(r5.out.find("--format: expected csv, ply, vtk or p4") != std::string::npos);
}

TEST_CASE("A blow-up stops the run with exit status 1 and names particle and step",
          "[app][runner][blowup]") {
  Result r = sandbox(
      "run mpm99 --steps 400 --no-progress --set solver.dt=0.01 --set solver.velocity_limit=100");
  CHECK(r.code == 1);
  CHECK(r.out.find("numerical blow-up at step") != std::string::npos);
  CHECK(r.out.find("particle") != std::string::npos);
}

TEST_CASE("sandbox info lists backends and scenes", "[app][runner]") {
  Result r = sandbox("info");
  CHECK(r.code == 0);
  CHECK(r.out.find("cpu    available") != std::string::npos);
  CHECK(r.out.find("cuda") != std::string::npos);
  CHECK(r.out.find("mpm99") != std::string::npos);
}

TEST_CASE("sandbox specimen fills a silhouette and exports IDs, colours and the belt",
          "[app][specimen]") {
  fs::path out = fs::temp_directory_path() / ("ps_specimen_out_" + std::to_string(getpid()));
  fs::remove_all(out);
  // L-shape: 16 x 40 + 24 x 16 grid points of radius 1 px (see tests/sim/specimen).
  Result r = sandbox(std::string("specimen ") + PS_SOURCE_DIR +
                     "/assets/specimens/l_shape.png --radius-px 1 --out " + out.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("1024 particles") != std::string::npos);
  CHECK(r.out.find("0 points where the nearest-contour and winding tests disagree") !=
        std::string::npos);
  std::ifstream colors(out / "colors.csv");
  std::string header;
  std::getline(colors, header);
  CHECK(header == "ID, R, G, B");
  CHECK(fs::exists(out / "belt.txt"));
  CHECK(fs::exists(out / "inside_tests.png"));
  // The dancer's belt: pixels brighter than 160 in every channel.
  Result d = sandbox(std::string("specimen ") + PS_SOURCE_DIR +
                     "/assets/specimens/dancer.png --out " + out.string());
  REQUIRE(d.code == 0);
  CHECK(d.out.find("1540 particles") != std::string::npos);
  CHECK(d.out.find("76 in the belt") != std::string::npos);
  Result bad = sandbox("specimen no_such_image.png");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("no_such_image.png: cannot read image") != std::string::npos);
}

TEST_CASE("sandbox bench runs scenes at several particle counts", "[app][bench]") {
  Result r =
      sandbox("bench --scenes pic_vs_apic,dem_hopper --sizes 1,2 --steps 3 --warmup 0 --threads 2");
  INFO(r.out);
  REQUIRE(r.code == 0);
  // Refining by 2 about quadruples the particles (MPM lattice 76^2 -> 153^2; DEM radius / 2).
  CHECK(r.out.find("  1x      5776") != std::string::npos);
  CHECK(r.out.find("  2x     23409") != std::string::npos);
  CHECK(r.out.find("dem_hopper     dem  cpu (2 threads)      1x      1215") != std::string::npos);
  Result bad = sandbox("bench --sizes 0");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("--sizes: expected comma-separated integers in [1, 64]") != std::string::npos);
}

TEST_CASE("sandbox bench fails loudly when a scene blows up", "[app][bench]") {
  // A time step 100x too large: the benchmark must not time a scene that failed.
  Result r = sandbox(
      "bench --scenes mpm88,pic_vs_apic --set solver.dt=0.01 --steps 200 --warmup 0 --threads 1");
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK(r.out.find("1x FAILED: numerical blow-up") != std::string::npos);
  CHECK(r.out.find("bench: mpm88 at size 1x on cpu (1 thread) failed: numerical blow-up") !=
        std::string::npos);
  // The other scene still runs and is reported.
  CHECK(r.out.find("pic_vs_apic    mpm  cpu (1 thread)") != std::string::npos);
  // A refined size (load_refined: dt / 2 is still 25x too large) that fails in the warm-up.
  Result w = sandbox(
      "bench --scenes mpm88 --sizes 2 --set solver.dt=0.01 --steps 1 --warmup 100 --threads 1");
  INFO(w.out);
  CHECK(w.code == 1);
  CHECK(w.out.find("bench: mpm88 at size 2x on cpu (1 thread) failed: numerical blow-up") !=
        std::string::npos);
  CHECK(w.out.find("bench: 1 run failed") != std::string::npos);
}

TEST_CASE(
    "sandbox bench names a scene that cannot be built at a size, runs the others and fails at the end",
    "[app][bench]") {
  // dem_dance's bodies are an image mask: at 4x its grains are under half a pixel of it.
  Result r = sandbox(
      "bench --scenes dem_dance,pic_vs_apic --sizes 4 --steps 1 --warmup 0 --threads 1 --backend cpu");
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK(r.out.find("bench: dem_dance at size 4x on cpu could not be built: ") != std::string::npos);
  CHECK(r.out.find("dem_dance.json:") != std::string::npos);  // the file and line, not "<input>"
  CHECK(r.out.find("field 'bodies[0].radius'") != std::string::npos);
  CHECK(r.out.find("pic_vs_apic    mpm  cpu (1 thread)") !=
        std::string::npos);  // the next scene still ran
  CHECK(r.out.find("bench: 1 run failed") != std::string::npos);
}

namespace {
/// The number after `key=` in `line` (NaN when absent or not a number).
double field(const std::string& line, const std::string& key) {
  const size_t at = line.find(" " + key + "=");
  if (at == std::string::npos) return std::nan("");
  return std::strtod(line.c_str() + at + key.size() + 2, nullptr);
}
std::string line_starting(const std::string& out, const std::string& head) {
  const size_t at = out.find("\n" + head);
  return at == std::string::npos ? std::string()
                                 : out.substr(at + 1, out.find('\n', at + 1) - at - 1);
}
}  // namespace

TEST_CASE("The refined mpm88 that bench times stays physical past where it used to blow up",
          "[app][bench][blowup]") {
  // `bench --sizes 2` refines mpm88 (grid 256, spacing and dt / 2). Before fluids kept
  // F = I (commit a1cfb93) their integrated F overflowed in the sloshing flow: 2x blew
  // up at step 7535 (t = 0.75 s), 4x at step 8214 (0.41 s, particle 3631), each with a
  // finite velocity and a volume ratio det F * J of nan. `run --refine 2` is the same
  // load_refined, with the diagnostics.
  Result r = sandbox("run mpm88 --refine 2 --steps 7600 --threads 2 --images 0");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("blow-up") == std::string::npos);
  const std::string start = line_starting(r.out, "start"), fin = line_starting(r.out, "final");
  REQUIRE(!fin.empty());
  CHECK(field(fin, "particles") == 32761);               // the 90^2 lattice refined: 181^2
  CHECK(field(fin, "t") == Approx(0.76).epsilon(1e-6));  // 7600 substeps of dt / 2 = 1e-4
  const double M = field(fin, "mass");
  CHECK(M == field(start, "mass"));  // mass is carried by the particles
  // Energy: the water (0.16 m^2 at rest, centre of mass at y = 0.4) can turn into kinetic
  // energy at most the potential energy it releases by lowering its centre of mass to
  // the lowest it can reach, a layer 0.16 m deep on the 1 m floor (centre 0.08 m).
  CHECK(field(fin, "kinetic_energy") <= M * 9.8 * (0.4 - 0.08));
  // The weakly compressible model (bulk modulus 400, density 1) holds well below its
  // sound speed sqrt(400 / 1) = 20 m/s; a particle beyond it is a numerical artefact.
  CHECK(field(fin, "max_speed") < 20.0);
}

TEST_CASE("Dumps every K steps with --steps, whatever the substeps per frame", "[app][runner]") {
  // mpm99 has 20 substeps per frame; before the fix only steps that were
  // multiples of both 7 and 20 were dumped (none in 30 steps).
  fs::path out = fs::temp_directory_path() / ("ps_runner_sched_" + std::to_string(getpid()));
  fs::remove_all(out);
  Result r =
      sandbox("run mpm99 --steps 30 --dump-every 7 --format csv --threads 1 --images 0 --out " +
              out.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  for (int k : {0, 1, 2, 3, 4}) {
    char name[64];
    std::snprintf(name, sizeof name, "particles_%05d.csv", k);
    CHECK(fs::exists(out / name));
  }
  CHECK_FALSE(fs::exists(out / "particles_00005.csv"));
  for (const char* step : {"step        7", "step       14", "step       21", "step       28"})
    CHECK(r.out.find(step) != std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("run --images K writes a picture every K frames with --steps too", "[app][runner]") {
  // pic_vs_apic: 10 substeps a frame, so 400 steps are 40 frames: pictures at steps 0, 100, 200, 300, 400.
  fs::path out = fs::temp_directory_path() / ("ps_runner_images_" + std::to_string(getpid()));
  fs::remove_all(out);
  Result r =
      sandbox("run pic_vs_apic --steps 400 --images 10 --threads 1 --quiet --out " + out.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  for (int step : {0, 100, 200, 300, 400}) {
    char name[64];
    std::snprintf(name, sizeof name, "frame_%05d.png", step);
    CHECK(fs::exists(out / name));
  }
  int pngs = 0;
  for (const auto& e : fs::directory_iterator(out)) pngs += e.path().extension() == ".png";
  CHECK(pngs == 5);
  // Off the frame grid, the last step gets its picture too.
  fs::remove_all(out);
  Result r2 =
      sandbox("run pic_vs_apic --steps 405 --images 10 --threads 1 --quiet --out " + out.string());
  REQUIRE(r2.code == 0);
  CHECK(fs::exists(out / "frame_00405.png"));
  CHECK(fs::exists(out / "frame_00400.png"));
  fs::remove_all(out);
}

TEST_CASE("A heat run prints the heat ledger, dumps T and melt, and colours images by temperature",
          "[app][runner][heat]") {
  fs::path out = fs::temp_directory_path() / ("ps_runner_heat_" + std::to_string(getpid()));
  fs::remove_all(out);
  Result r = sandbox(
      "run ice_cube --frames 40 --dump-every 40 --images 40 --color temperature --threads 2 --out " +
      out.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("heat final") != std::string::npos);
  CHECK(r.out.find("drift=") != std::string::npos);
  CHECK(fs::exists(out / "frame_00040.png"));
  ps::ParticleTable t = ps::read_csv_dump((out / "particles_00001.csv").string());
  REQUIRE(t.extra_names.size() == 5);
  CHECK(t.extra_names[2] == "T");
  CHECK(t.extra_names[3] == "melt");
  // The plate at 60 C has melted the bottom of the block; its centre is still below -3 C.
  float lo = 1e9f, hi = -1e9f;
  for (float v : t.extra[2]) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  CHECK(
      lo <
      -3.f);  // the centre: a slab at Fourier number 0.18 has warmed about 18 % of the way (measured -3.8)
  CHECK(hi > 0.f);
  CHECK(hi <= 60.f);
  Result bad = sandbox("run mpm99 --frames 1 --color temperature --out " + out.string());
  CHECK(bad.code == 2);
  CHECK(bad.out.find("--color temperature: the scene has no heat") != std::string::npos);
  Result bad2 = sandbox("run ice_cube --frames 1 --color pressure --out " + out.string());
  CHECK(bad2.code == 2);
  CHECK(bad2.out.find("--color: expected material, temperature or melt") != std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("sandbox --lesson runs the lesson's scene with its overrides when there is no display",
          "[app][runner][lesson]") {
  fs::path out = fs::temp_directory_path() / ("ps_lesson_out_" + std::to_string(getpid()));
  fs::remove_all(out);
  unsetenv("DISPLAY");  // headless, as on CI (this test case runs in its own process)
  unsetenv("WAYLAND_DISPLAY");
  // Lesson 01 sets PIC on the spun block: its angular momentum falls; lesson 02 (APIC) keeps it.
  double L[2][2];
  int k = 0;
  for (const char* id : {"01", "02"}) {
    Result r = sandbox(std::string("--lesson ") + id +
                       " --steps 100 --images 0 --threads 2 --out " + out.string());
    INFO(r.out);
    REQUIRE(r.code == 0);
    for (int q = 0; q < 2; ++q) {
      const size_t at = r.out.find(q == 0 ? "start " : "final ");
      REQUIRE(at != std::string::npos);
      const size_t a = r.out.find("angular_momentum=", at);
      L[k][q] = std::stod(r.out.substr(a + 17));
    }
    ++k;
  }
  CHECK(std::fabs(L[0][1]) < 0.5 * std::fabs(L[0][0]));  // PIC: more than half lost in 100 steps
  CHECK(L[1][1] == Approx(L[1][0]).epsilon(1e-3));       // APIC: kept
  Result bad = sandbox("--lesson nope");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("01_pic_loses_rotation") != std::string::npos);
}
