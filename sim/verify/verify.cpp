// Verification framework: check evaluation, verdicts and the case registry.
// The cases live in cases_mpm.cpp, cases_mpm_materials.cpp, cases_mpm_flow.cpp
// and cases_dem.cpp; the
// report writer in report.cpp.
#include "sim/verify/verify.h"

#include <cstdio>

#include <cmath>

namespace ps {
namespace verify {

void Check::evaluate() {
  // A NaN or infinite measurement is a failure whatever the comparison: NaN
  // compares false everywhere, but an infinity would pass a Below/Above bound.
  if (!std::isfinite(measured)) {
    pass = false;
    return;
  }
  switch (compare) {
    case Compare::Near:
      pass = std::fabs(measured - reference) <= tolerance;
      break;
    case Compare::NearRel:
      pass = std::fabs(measured - reference) <= tolerance * std::fabs(reference);
      break;
    case Compare::Below:
      pass = measured <= reference;
      break;
    case Compare::Above:
      pass = measured >= reference;
      break;
    default:
      pass = false;
      break;
  }
}

bool CaseResult::passed() const {
  if (!error.empty()) return false;
  for (const Check& c : checks)
    if (!c.pass) return false;
  return true;
}

std::vector<CaseSpec> all_cases() {
  std::vector<CaseSpec> all = mpm_cases();
  for (auto* group : {&mpm_material_cases, &mpm_flow_cases, &heat_cases, &dem_cases, &rigid_cases}) {
    std::vector<CaseSpec> more = group();
    for (auto& c : more) all.push_back(std::move(c));
  }
  return all;
}

Check make_check(const std::string& quantity, double measured, double reference, double tolerance, Compare compare,
                 const std::string& unit) {
  Check c;
  c.quantity = quantity;
  c.measured = measured;
  c.reference = reference;
  c.tolerance = tolerance;
  c.compare = compare;
  c.unit = unit;
  c.evaluate();
  return c;
}

}  // namespace verify
}  // namespace ps
