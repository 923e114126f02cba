// Runs every DEM verification case (sim/verify/cases_dem.cpp) and requires it
// to pass: the cases' physics claims are guarded by ctest too.
#include <catch2/catch.hpp>

#include <cstdio>
#include "sim/verify/verify.h"

using namespace ps::verify;

TEST_CASE("DEM verification cases pass", "[verify][dem]") {
  Options opt;
  opt.quick = true;
  opt.threads = 2;
  const std::vector<CaseSpec> cases = dem_cases();
  REQUIRE(cases.size() == 6);
  double total = 0.0;
  for (const CaseSpec& spec : cases) {
    CHECK(spec.group == "DEM");
    if (!spec.in_quick) continue;
    CaseResult r = spec.run(opt);
    total += r.seconds;
    std::printf("[verify] %-20s %6.2f s  %s\n", r.id.c_str(), r.seconds,
                r.passed() ? "pass" : "FAIL");
    for (const Check& c : r.checks)
      std::printf("           %-55s measured %.8g  reference %.8g  tol %.3g %s  %s\n",
                  c.quantity.c_str(), c.measured, c.reference, c.tolerance, c.unit.c_str(),
                  c.pass ? "ok" : "MISS");
    INFO(r.id << ": " << r.error << " " << r.notes);
    CHECK(r.id == spec.id);
    CHECK(r.must_pass);
    CHECK(!r.checks.empty());
    CHECK(!r.plots.empty());
    CHECK(!r.reference.empty());
    REQUIRE(r.passed());
  }
  std::printf("[verify] DEM cases: %.2f s in all\n", total);
}
