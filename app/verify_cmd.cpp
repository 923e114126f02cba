// `sandbox verify`: selects the cases, runs each on the backend asked for
// (verify::run_case: an exception becomes the case's error, the run goes on),
// prints a line per case and where it ran, writes the report.
#include "app/verify_cmd.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/verify/verify.h"

namespace ps {

namespace {

std::vector<std::string> split_ids(const std::string& list) {
  std::vector<std::string> ids;
  size_t b = 0;
  while (b <= list.size()) {
    size_t c = list.find(',', b);
    std::string t = list.substr(b, c == std::string::npos ? std::string::npos : c - b);
    // Trim blanks ("--only 'a, b'").
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.erase(t.begin());
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.pop_back();
    if (!t.empty()) ids.push_back(t);
    if (c == std::string::npos) break;
    b = c + 1;
  }
  return ids;
}

const char* verdict(const verify::CaseResult& r) {
  if (!r.error.empty()) return "ERROR";
  return r.passed() ? "PASS" : "MISS";
}

std::string compare_text(const verify::Check& c) {
  char b[64];
  switch (c.compare) {
    case verify::Compare::Near: std::snprintf(b, sizeof b, "± %.4g", c.tolerance); return b;
    case verify::Compare::NearRel:
      std::snprintf(b, sizeof b, "± %.4g %%", 100.0 * c.tolerance);
      return b;
    case verify::Compare::Below: return "upper bound";
    case verify::Compare::Above: return "lower bound";
  }
  return "";
}

}  // namespace

int cmd_verify(const Args& a) {
  if (!a.positional.empty())
    throw UsageError("verify takes no scene or other argument, got '" + a.positional[0] + "'");
  verify::Options opt;
  opt.quick = a.has("quick");
  opt.threads = static_cast<int>(a.get_int("threads", 0, 0, 1024));
  opt.backend = a.get("backend", "cpu");
  try {
    verify::check_backend_name(opt.backend);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--backend: ") + e.what());
  }
  const std::string out = a.get("out", "out/verify");
  if (out.empty()) throw UsageError("--out: expected a folder, got an empty string");

  std::vector<verify::CaseSpec> cases = verify::all_cases();
  {
    std::set<std::string> seen;
    for (const auto& c : cases)
      if (!seen.insert(c.id).second)
        std::fprintf(stderr, "warning: verification case id '%s' is registered twice\n",
                     c.id.c_str());
  }

  if (a.has("list")) {
    if (cases.empty()) std::printf("no verification cases are registered\n");
    size_t w = 4;
    for (const auto& c : cases) w = std::max(w, c.id.size());
    if (!cases.empty())
      std::printf("%-*s  %-5s  %s\n", static_cast<int>(w), "id", "quick", "group");
    for (const auto& c : cases)
      std::printf("%-*s  %-5s  %s\n", static_cast<int>(w), c.id.c_str(), c.in_quick ? "yes" : "no",
                  c.group.c_str());
    return 0;
  }

  // Selection: --only names cases (run even when not in the quick subset; --quick
  // still asks them for their smaller sizes); else --quick keeps the in_quick ones.
  std::vector<verify::CaseSpec> selected;
  if (a.has("only")) {
    const std::vector<std::string> ids = split_ids(a.get("only", ""));
    if (ids.empty())
      throw UsageError("--only: expected comma-separated case ids, got '" + a.get("only", "") +
                       "'");
    std::string valid;
    for (const auto& c : cases) valid += "\n  " + c.id;
    if (valid.empty()) valid = " (none are registered)";
    // An id ending in '*' names every case it begins ("scene.*").
    auto matches = [](const std::string& id, const std::string& pattern) {
      if (!pattern.empty() && pattern.back() == '*')
        return id.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
      return id == pattern;
    };
    for (const auto& id : ids) {
      bool found = false;
      for (const auto& c : cases) found = found || matches(c.id, id);
      if (!found) throw UsageError("--only: unknown case '" + id + "'; valid ids:" + valid);
    }
    // Report order, each case once.
    for (const auto& c : cases) {
      bool want = false;
      for (const auto& id : ids) want = want || matches(c.id, id);
      if (want) selected.push_back(c);
    }
  } else {
    for (const auto& c : cases)
      if (!opt.quick || c.in_quick) selected.push_back(c);
  }

  // A device that is not there stops the run before any case: asked for
  // cuda, the user must not get a CPU run (nor a report of every case's reason).
  if (const std::string why = verify::backend_unavailable(opt.backend); !why.empty())
    throw UsageError("--backend " + opt.backend + ": " + why +
                     "; the verification cases were not run (--backend cpu "
                     "runs them on the reference backend)");

  std::printf("verify: %zu case%s (%s), results in %s/\n", selected.size(),
              selected.size() == 1 ? "" : "s", opt.quick ? "quick" : "full", out.c_str());
  if (opt.backend != "cpu")
    std::printf(
        "verify: every case runs on the %s backend where it can (the reference and tolerances are the CPU's); "
        "each says where it ran\n",
        opt.backend.c_str());
  std::fflush(stdout);

  std::vector<verify::CaseResult> results;
  const auto t_all = std::chrono::steady_clock::now();
  for (const auto& spec : selected) {
    verify::CaseResult r = verify::run_case(spec, opt);
    std::printf("%-5s  %-40s %7.2f s  %s%s\n", verdict(r), r.id.c_str(), r.seconds, r.title.c_str(),
                r.must_pass ? "" : "  (informative)");
    if (opt.backend != "cpu") std::printf("       ran on: %s\n", r.ran_on.text().c_str());
    if (!r.error.empty()) std::printf("       error: %s\n", r.error.c_str());
    for (const auto& c : r.checks)
      if (!c.pass)
        std::printf("       miss: %s: measured %.4g, reference %.4g (%s)%s%s\n", c.quantity.c_str(),
                    c.measured, c.reference, compare_text(c).c_str(), c.unit.empty() ? "" : " ",
                    c.unit.c_str());
    std::fflush(stdout);
    results.push_back(std::move(r));
  }
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count();

  int pass = 0, miss = 0, error = 0, must_fail = 0;
  for (const auto& r : results) {
    if (!r.error.empty())
      ++error;
    else if (r.passed())
      ++pass;
    else
      ++miss;
    if (r.must_pass && !r.passed()) ++must_fail;
  }
  std::printf("verify: %zu cases in %.1f s: %d passed, %d missed, %d errors; %s\n", results.size(),
              total, pass, miss, error,
              must_fail == 0 ? "every must-pass case passed"
                             : (std::to_string(must_fail) + " must-pass case" +
                                (must_fail == 1 ? "" : "s") + " did not pass")
                                   .c_str());
  std::printf("verify: ran on: %s\n", verify::backend_tally_text(results, opt.backend).c_str());
  // A device world that failed mid-case went on on the CPU: its verdict is
  // partly the CPU's, so the device run is incomplete and does not exit 0.
  const int fell_back = verify::tally_backends(results).fell_back;
  if (fell_back > 0)
    std::printf(
        "verify: %d case%s fell back from the %s backend to the cpu (see \"ran on\"): the %s run is "
        "incomplete\n",
        fell_back, fell_back == 1 ? "" : "s", opt.backend.c_str(), opt.backend.c_str());
  std::string err;
  if (!verify::write_report(out, results, opt, &err)) {
    std::fprintf(stderr, "sandbox: verify: %s\n", err.c_str());
    return 1;
  }
  std::printf("report: %s (and summary.md)\n",
              (std::filesystem::path(out) / "report.html").string().c_str());
  return must_fail == 0 && fell_back == 0 ? 0 : 1;
}

}  // namespace ps
