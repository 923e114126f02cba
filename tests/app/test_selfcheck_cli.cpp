// `sandbox info` and `sandbox info --self-check` as a user runs them. Without
// a GPU (CI) the check has nothing to run on: it says so and exits 0.
#include <catch2/catch.hpp>
#include <string>
#include "sandbox_exe.h"
#include "sim/cuda/cuda_info.h"

using ps::test::Result;
using ps::test::sandbox;

TEST_CASE("sandbox info --self-check: documented, and a no-op without a device",
          "[app][selfcheck]") {
  const Result help = sandbox("--help");
  CHECK(help.out.find("sandbox info [--self-check]") != std::string::npos);
  CHECK(help.out.find("--backend cuda uses CUDA without the check") != std::string::npos);
  // Without a device nothing is checked and nothing is written (with one, the
  // check would store its verdict in the user's settings folder: not run here).
  if (!ps::cuda_compiled() || ps::cuda_devices().empty()) {
    const Result r = sandbox("info --self-check");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(r.out.find("CUDA self-check: nothing to check") != std::string::npos);
    const Result i = sandbox("info");
    CHECK(i.code == 0);
    CHECK(i.out.find("auto picks cpu") != std::string::npos);
  }
  const Result bad = sandbox("info --self-check=yes");
  CHECK(bad.code == 2);
  const Result unknown = sandbox("info --selfcheck");
  CHECK(unknown.code == 2);
  CHECK(unknown.out.find("unknown option '--selfcheck'") != std::string::npos);
}
