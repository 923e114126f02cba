// `sandbox verify` on the command line: listing and usage errors (the quick
// suite itself runs as the ctest test verify_quick).
#include <catch2/catch.hpp>
#include "sandbox_exe.h"
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

using ps::test::Result;
using ps::test::sandbox;

TEST_CASE("sandbox verify --list lists the cases and exits 0", "[app][verify]") {
  Result r = sandbox("verify --list");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK((r.out.find("quick") != std::string::npos || r.out.find("no verification cases") != std::string::npos));
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
