// Replays every committed fuzz input through its harness in the normal test
// build (no sanitizers needed to catch a property violation or a crash; the
// fuzz build adds ASan/UBSan): the minimized inputs of past findings
// (tests/fuzz/regressions/<target>/) and the hand-written seeds
// (tests/fuzz/seeds/<target>/). A finding that comes back fails here.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include "sim/core/limits.h"
#include "tests/fuzz/fuzz_targets.h"

namespace fs = std::filesystem;

TEST_CASE("fuzz regressions and seeds replay cleanly through every harness", "[fuzz]") {
  const ps::InputLimits saved = ps::input_limits();
  ps::fuzz::init_limits();
  size_t n = 0;
  const ps::fuzz::TargetInfo* all = ps::fuzz::targets(n);
  REQUIRE(n == 9);
  size_t replayed = 0;
  for (size_t t = 0; t < n; ++t) {
    for (const char* kind : {"regressions", "seeds"}) {
      const fs::path dir = fs::path(PS_SOURCE_DIR) / "tests" / "fuzz" / kind / all[t].name;
      std::error_code ec;
      if (!fs::is_directory(dir, ec)) continue;
      for (const auto& de : fs::directory_iterator(dir)) {
        if (!de.is_regular_file()) continue;
        std::ifstream in(de.path(), std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        const std::string bytes = ss.str();
        INFO(all[t].name << ": " << de.path().string());
        CHECK(all[t].run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()) == 0);
        ++replayed;
      }
    }
  }
  ps::input_limits() = saved;
  CHECK(replayed >= 15);  // the seeds alone are more than this; an empty replay is a broken path
}
