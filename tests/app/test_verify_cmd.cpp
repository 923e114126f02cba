// `sandbox verify` on the command line: listing and usage errors (the quick
// suite itself runs as the ctest test verify_quick).
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include "sandbox_exe.h"
#include "sim/cuda/cuda_info.h"
#include "tests/temp_files.h"

namespace fs = std::filesystem;

using ps::test::Result;
using ps::test::sandbox;
using ps::test::slurp;

TEST_CASE("sandbox verify --list lists the cases and exits 0", "[app][verify]") {
  Result r = sandbox("verify --list");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK((r.out.find("quick") != std::string::npos ||
         r.out.find("no verification cases") != std::string::npos));
}

TEST_CASE("sandbox verify rejects bad command lines with exit status 2", "[app][verify]") {
  Result r = sandbox("verify --only nosuchcase");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("unknown case 'nosuchcase'") != std::string::npos);
  CHECK(r.out.find("valid ids") != std::string::npos);
  Result t = sandbox("verify --threads many --list");
  CHECK(t.code == 2);
  Result u = sandbox("verify --quik");
  CHECK(u.code == 2);
  CHECK(u.out.find("unknown option '--quik' for 'sandbox verify'") != std::string::npos);
  Result p = sandbox("verify dam_break");
  CHECK(p.code == 2);
}

TEST_CASE("sandbox verify --backend takes cpu or cuda only", "[app][verify]") {
  for (const char* bad : {"gpu", "auto"}) {
    Result r = sandbox(std::string("verify --list --backend ") + bad);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find(std::string("--backend: expected cpu (the reference) or cuda, got '") + bad +
                     "'") != std::string::npos);
  }
  // Listing needs no device.
  CHECK(sandbox("verify --list --backend cuda").code == 0);
}

TEST_CASE(
    "sandbox verify --backend cuda without a device stops with exit status 2, or runs on the device",
    "[app][verify]") {
  const fs::path out = fs::temp_directory_path() / ("ps_verify_cuda_" + std::to_string(getpid()));
  fs::remove_all(out);
  Result r =
      sandbox("verify --backend cuda --only dem.sgf_impulse,mpm.viscoplastic_uniaxial --out " +
              out.string());
  INFO(r.out);
  if (!ps::cuda_device_available()) {
    // Asked for the device, the user gets an error, not a CPU run.
    CHECK(r.code == 2);
    CHECK(r.out.find("--backend cuda: ") != std::string::npos);
    CHECK((r.out.find("no CUDA device is present") != std::string::npos ||
           r.out.find("this build has no CUDA support") != std::string::npos));
    CHECK(r.out.find("the verification cases were not run") != std::string::npos);
    CHECK(r.out.find("PASS") == std::string::npos);
    CHECK_FALSE(fs::exists(out / "report.html"));
  } else {
    CHECK(r.code == 0);
    CHECK(r.out.find("ran on: cuda (") != std::string::npos);
    CHECK(r.out.find("ran on: cpu — a material-point driver") != std::string::npos);
    CHECK(r.out.find("verify: ran on: 1 case on cuda (") != std::string::npos);
    CHECK(slurp(out / "summary.md").find("| cpu (see why) |") != std::string::npos);
  }
  fs::remove_all(out);
}

TEST_CASE("sandbox verify on the CPU says so per case and in the summary", "[app][verify]") {
  const fs::path out = fs::temp_directory_path() / ("ps_verify_cpu_" + std::to_string(getpid()));
  fs::remove_all(out);
  Result r =
      sandbox("verify --only dem.sgf_impulse,mpm.viscoplastic_uniaxial --out " + out.string());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("verify: ran on: 2 cases on the cpu backend (the reference)") !=
        std::string::npos);
  const std::string md = slurp(out / "summary.md");
  CHECK(md.find("- backend: cpu") != std::string::npos);
  CHECK(md.find("| `dem.sgf_impulse` | DEM | PASS | must-pass |") != std::string::npos);
  CHECK(md.find("| cpu | SGF force list") != std::string::npos);
  CHECK(md.find("\nRan on: cpu\n") != std::string::npos);
  const std::string html = slurp(out / "report.html");
  CHECK(html.find("<dt>Ran on</dt><dd>cpu</dd>") != std::string::npos);
  fs::remove_all(out);
}
