// Lessons and comparisons that ask for unbounded work, run as a
// user runs them: the `sandbox` executable under a memory limit and a time
// limit. Each must stop promptly with a located error (exit 2), where before
// it exhausted memory (std::bad_alloc after 35 s and 7.9 GB) or ran for hours.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include "tests/app/sandbox_exe.h"

using ps::test::Result;
using ps::test::sandbox_in;
namespace fs = std::filesystem;

namespace {

std::string regression(const std::string& name) {
  return (fs::path(PS_SOURCE_DIR) / "tests" / "fuzz" / "regressions" / "lesson" / name).string();
}

// 1 GiB of address space: the sandbox runs a lesson in far less (checked below); the 22-item
// comparison needed 7.9 GB, and 20 items 2.2 GB, before the pane count was checked first.
const char* const kMemoryLimit = "ulimit -v 1048576; unset DISPLAY WAYLAND_DISPLAY";
constexpr int kSeconds = 60;             // the outer limit (timeout exits 124)
constexpr double kPromptSeconds = 10.0;  // what "prompt" means here: the refusals take milliseconds

struct Timed {
  Result r;
  double seconds = 0.0;
};

Timed timed(const std::string& args) {
  const auto t0 = std::chrono::steady_clock::now();
  Timed t;
  t.r = sandbox_in(kMemoryLimit, args, kSeconds);
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

std::string out_dir() {
  return (fs::temp_directory_path() / ("ps_lesson_limits_" + std::to_string(getpid()))).string();
}

}  // namespace

TEST_CASE("A lesson comparing 22 two-value items is refused from its count under a memory limit",
          "[app][lesson][compare]") {
  // The limit leaves room for a real lesson with a comparison: lesson 03 runs under it.
  const Timed ok = timed("--lesson 03 --frames 1 --images 0 --threads 2 --out " + out_dir());
  INFO(ok.r.out);
  REQUIRE(ok.r.code == 0);
  const std::string oom = regression("oom-compare-22-items-4M-panes.json");
  const Timed t = timed("--lesson " + oom + " --frames 1 --images 0 --out " + out_dir());
  INFO(t.r.out);
  CHECK(t.r.code == 2);
  CHECK(t.r.out.find(oom +
                     ":1:57: field 'compare': the settings give 4194304 panes (a: 2 values x ") !=
        std::string::npos);
  CHECK(t.seconds < kPromptSeconds);
  // The command line's form: 22 --vary flags.
  std::string varies;
  for (int k = 0; k < 22; ++k) varies += " --vary a" + std::to_string(k) + "=1,2";
  const Timed c =
      timed("compare pic_vs_apic" + varies + " --frames 1 --images 0 --out " + out_dir());
  INFO(c.r.out);
  CHECK(c.r.code == 2);
  CHECK(
      c.r.out.find(
          "--vary gives 4194304 panes (a0: 2 values x a1: 2 values x a2: 2 values x a3: 2 values x ... (22 "
          "settings in all)); compare shows 2 to 4 panes") != std::string::npos);
  CHECK(c.seconds < kPromptSeconds);
  fs::remove_all(out_dir());
}

TEST_CASE(
    "Time steps 10^7 apart are refused naming the ratio, not stepped for hours, under a time limit",
    "[app][lesson][compare]") {
  const std::string hang = regression("hang-compare-dt-ratio-1e7.json");
  const Timed t = timed("--lesson " + hang + " --frames 1 --images 0 --out " + out_dir());
  INFO(t.r.out);
  CHECK(t.r.code == 2);  // 124: the time limit ran out
  CHECK(
      t.r.out.find(
          hang +
          ":1:57: field 'compare': pane 1 (dt=0.1) takes substeps of 0.1 s, pane 2 (dt=0.00000001) "
          "of 1e-08 s: a ratio of 1e+07") != std::string::npos);
  CHECK(t.seconds < kPromptSeconds);
  const Timed c =
      timed("compare pic_vs_apic --vary solver.dt=0.1,0.00000001 --steps 1 --images 0 --out " +
            out_dir());
  INFO(c.r.out);
  CHECK(c.r.code == 2);
  CHECK(
      c.r.out.find(
          "sandbox: --vary: pane 1 (dt=0.1) takes substeps of 0.1 s, pane 2 (dt=0.00000001) of 1e-08 s: a "
          "ratio of 1e+07. Panes advance in lockstep of simulated time, so pane 2 would take 1e+07 substeps "
          "for each of pane 1's; a comparison allows time steps at most 100 times apart") !=
      std::string::npos);
  CHECK(c.seconds < kPromptSeconds);
  fs::remove_all(out_dir());
}

TEST_CASE("sandbox --lesson reports every lesson error located before running", "[app][lesson]") {
  struct Case {
    const char* file;
    const char* expect;
  };
  const Case cases[] = {
      {"error-set-bad-value.json",
       ":4:32: field 'set[1]': \"solver.transfer=bogus\": scene field 'solver.transfer': "},
      {"error-compare-bad-value.json",
       ":5:14: field 'compare': pane 2 (transfer=bogus): scene field 'solver.transfer': "},
      {"error-compare-one-pane.json", ":1:64: field 'compare': the settings give 1 pane"},
      {"error-scene-empty.json", ":1:25: field 'scene': empty"},
      {"error-scene-missing.json", ":1:25: field 'scene': \"no_such_scene\": no such scene file"},
  };
  for (const Case& k : cases) {
    const std::string path = regression(k.file);
    const Timed t = timed("--lesson " + path + " --frames 1 --images 0 --out " + out_dir());
    INFO(t.r.out);
    CHECK(t.r.code == 2);  // before: a bad compare value ran the scene and exited 0
    CHECK(t.r.out.find("sandbox: " + path + k.expect) != std::string::npos);
    CHECK(t.r.out.find("--set") == std::string::npos);  // no flag the user never typed
  }
  fs::remove_all(out_dir());
}
