// Verification framework: check evaluation, verdicts, the case registry and
// the runner of one case. The cases live in cases_*.cpp, where their worlds
// go on a backend in case_backend.cpp, the report writer in report.cpp.
#include "sim/verify/verify.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include "sim/verify/case_backend.h"

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
    case Compare::Near: pass = std::fabs(measured - reference) <= tolerance; break;
    case Compare::NearRel:
      pass = std::fabs(measured - reference) <= tolerance * std::fabs(reference);
      break;
    case Compare::Below: pass = measured <= reference; break;
    case Compare::Above: pass = measured >= reference; break;
    default: pass = false; break;
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
  for (auto* group : {&mpm_material_cases, &mpm_flow_cases, &heat_cases, &dem_cases, &rigid_cases,
                      &scene_cases}) {
    std::vector<CaseSpec> more = group();
    for (auto& c : more) all.push_back(std::move(c));
  }
  return all;
}

const std::vector<std::string>& verify_backends() {
  static const std::vector<std::string> names{"cpu", "cuda"};
  return names;
}

void check_backend_name(const std::string& backend) {
  for (const std::string& b : verify_backends())
    if (b == backend) return;
  std::string hint;
  if (backend == "auto")
    hint =
        " (auto would let the CUDA self-check choose, and the report could not say which backend was asked for)";
  throw std::invalid_argument("expected cpu (the reference) or cuda, got '" + backend + "'" + hint);
}

std::string RanOn::text() const {
  if (requested == "cpu") return "cpu";
  if (!on_device()) return host.empty() ? "cpu" : "cpu — " + host;
  std::string t = device;
  if (fell_back()) t += ", fell back to the cpu: " + fallback;
  if (!host.empty()) t += "; on the host: " + host;
  return t;
}

CaseResult run_case(const CaseSpec& spec, const Options& opt_in) {
  Options opt = opt_in;
  opt.record = std::make_shared<BackendRecord>();
  CaseResult r;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    if (!spec.run) throw std::runtime_error("the case has no run function");
    r = spec.run(opt);
  } catch (const std::exception& e) {
    r.error = e.what();
    if (r.error.empty()) r.error = "exception with no message";
  } catch (...) {
    r.error = "unknown exception";
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.id.empty() && r.id != spec.id)
    std::fprintf(stderr, "warning: case '%s' returned the id '%s'; the registered id is kept\n",
                 spec.id.c_str(), r.id.c_str());
  r.id = spec.id;
  r.group = spec.group;
  if (r.title.empty()) r.title = spec.id;
  for (auto& c : r.checks) c.evaluate();  // the verdict never rests on a hand-set flag
  r.ran_on = opt.record->ran_on(opt.backend);
  // A device run must not pass on the CPU unannounced: a case that put nothing
  // on the device and said nothing about why has ignored the backend.
  if (r.error.empty() && opt.backend != "cpu" && !r.ran_on.on_device() && r.ran_on.host.empty())
    r.error = "asked to run on " + opt.backend +
              ", the case put no world on it and gave no reason "
              "(a case builds its worlds through sim/verify/case_backend.h)";
  return r;
}

BackendTally tally_backends(const std::vector<CaseResult>& results) {
  BackendTally t;
  for (const CaseResult& r : results) {
    if (!r.ran_on.on_device())
      ++t.on_cpu;
    else if (r.ran_on.fell_back())
      ++t.fell_back;
    else
      ++t.on_device;
    if (r.ran_on.on_device() && t.device.find(r.ran_on.device) == std::string::npos)
      t.device += (t.device.empty() ? "" : ", ") + r.ran_on.device;
  }
  return t;
}

std::string backend_tally_text(const std::vector<CaseResult>& results,
                               const std::string& requested) {
  const BackendTally t = tally_backends(results);
  auto cases = [](int n) { return std::to_string(n) + (n == 1 ? " case" : " cases"); };
  if (requested == "cpu") return cases(t.on_cpu) + " on the cpu backend (the reference)";
  std::string s = cases(t.on_device) + " on " + (t.device.empty() ? requested : t.device) + ", " +
                  std::to_string(t.on_cpu) + " on the cpu" +
                  (t.on_cpu > 0 ? " (each says why)" : "") + ", " + std::to_string(t.fell_back) +
                  " fell back from the device to the cpu";
  return s;
}

Check make_check(const std::string& quantity, double measured, double reference, double tolerance,
                 Compare compare, const std::string& unit) {
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
