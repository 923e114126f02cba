// The CUDA self-check and `--backend auto`'s decision, on the host with fake
// device backends (tests/sim/selfcheck/fake_backends.h): no GPU needed.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include "sim/core/backend_error.h"
#include "sim/cuda/cuda_info.h"
#include "sim/io/text.h"
#include "sim/selfcheck/selfcheck.h"
#include "sim/selfcheck/verdict.h"
#include "tests/sim/selfcheck/fake_backends.h"

using namespace ps;
namespace fs = std::filesystem;

namespace {

/// A fresh folder under the temp dir, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("ps_selfcheck_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
  static int& counter() {
    static int c = 0;
    return c;
  }
};

CandidateBackends fake_candidates(fake::MpmFaults mf = {}, fake::DemFaults df = {}) {
  CandidateBackends c;
  c.label = "fake-device";
  c.mpm = [mf] { return std::make_unique<fake::DeviceMpm>(mf); };
  c.dem = [df] { return std::make_unique<fake::DeviceDem>(df); };
  return c;
}

/// The real check on a subset of cases, counting its calls.
SelfCheckFn counting_check(int& calls, const std::string& only) {
  return [&calls, only](const CandidateBackends& c) {
    ++calls;
    SelfCheckOptions o;
    o.only = only;
    return run_self_check(c, o);
  };
}

GateRequest request(const std::string& cache,
                    const std::string& key = "device=Fake GPU;uuid=GPU-0;build=1") {
  GateRequest r;
  r.key = key;
  r.device = "Fake GPU (device 0)";
  r.cache_path = cache;
  return r;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
}

}  // namespace

// [SECTION] The check itself ---------------------------------------------------------

TEST_CASE("Self-check: every material and transfer, plus DEM, are cases", "[selfcheck]") {
  const std::vector<std::string> names = self_check_case_names();
  CHECK(names.size() ==
        static_cast<size_t>(3 * kMaterialTypeCount + 5));  // + linear, cubic, 2 PolyPIC, DEM
  for (const CheckMaterial& m : check_materials())
    for (const char* t : {"pic", "apic", "flip"})
      CHECK(std::find(names.begin(), names.end(),
                      std::string("mpm ") + m.name + " " + t + " quadratic") != names.end());
  for (const char* m : {"jelly", "snow"})
    CHECK(std::find(names.begin(), names.end(), std::string("mpm ") + m + " polypic quadratic") !=
          names.end());
  CHECK(check_materials().size() == static_cast<size_t>(kMaterialTypeCount));
  CHECK(names.back().rfind("dem", 0) == 0);
}

TEST_CASE(
    "Self-check: round-off-level noise passes and a 1 % gravity error in one case fails, named",
    "[selfcheck]") {
  reset_backend_failures_for_tests();
  // Velocities multiplied by (1 + e), |e| <= 1e-6, after every substep: far
  // more than reordered float sums do (the tolerances hold up to 1e-5).
  fake::MpmFaults noisy;
  noisy.noise = 1e-6f;
  fake::DemFaults dem_noisy;
  dem_noisy.noise = 1e-6;
  const SelfCheckReport ok = run_self_check(fake_candidates(noisy, dem_noisy));
  for (const SelfCheckCase& c : ok.cases) INFO(c.name << ": " << c.detail);
  CHECK(ok.pass);
  CHECK(ok.reason.empty());
  CHECK(ok.cases.size() == self_check_case_names().size());
  for (const SelfCheckCase& c : ok.cases) {
    INFO(c.name << ": " << c.detail);
    CHECK(c.pass);
  }

  // A bug only in snow under FLIP: 1 % more gravity.
  fake::MpmFaults bug;
  bug.gravity_error = 0.098f;
  bug.bug_material = static_cast<int>(MaterialType::Snow);
  bug.bug_transfer = static_cast<int>(Transfer::FLIP);
  const SelfCheckReport bad = run_self_check(fake_candidates(bug));
  CHECK_FALSE(bad.pass);
  std::vector<std::string> failed;
  for (const SelfCheckCase& c : bad.cases)
    if (!c.pass) failed.push_back(c.name);
  CHECK(failed == std::vector<std::string>{"mpm snow flip quadratic", "mpm snow flip cubic"});
  INFO(bad.reason);
  CHECK(bad.reason.rfind("mpm snow flip quadratic: ", 0) == 0);
  // By how much: the measured value against the tolerance.
  CHECK((bad.reason.find(" > ") != std::string::npos));
  CHECK(!backend_failure_noted());
}

TEST_CASE("Self-check: a DEM bug, a candidate that fails at run time, a factory that throws",
          "[selfcheck]") {
  reset_backend_failures_for_tests();
  SelfCheckOptions dem_only;
  dem_only.only = "dem";
  fake::DemFaults dbug;
  dbug.gravity_error = 0.098;
  SelfCheckReport r = run_self_check(fake_candidates({}, dbug), dem_only);
  REQUIRE(r.cases.size() == 1);
  CHECK_FALSE(r.pass);
  INFO(r.reason);
  CHECK(r.reason.find("dem bonded block and grains: max |d") == 0);
  CHECK(r.reason.find(" > ") != std::string::npos);

  // The device dies during a case: the world falls back to the CPU, which
  // the check must not mistake for a pass.
  SelfCheckOptions one;
  one.only = "jelly apic quadratic";
  fake::MpmFaults dies;
  dies.fail_after = 50;
  r = run_self_check(fake_candidates(dies), one);
  REQUIRE(r.cases.size() == 1);
  CHECK_FALSE(r.pass);
  CHECK(r.reason.find("failed at run time: fake CUDA error") != std::string::npos);
  reset_backend_failures_for_tests();

  CandidateBackends throwing;
  throwing.mpm = []() -> std::unique_ptr<MpmBackend> {
    throw std::runtime_error("CUDA error in cudaMalloc: out of memory");
  };
  r = run_self_check(throwing, one);
  REQUIRE(r.cases.size() == 1);
  CHECK_FALSE(r.pass);
  CHECK(r.reason == "mpm jelly apic quadratic: error: CUDA error in cudaMalloc: out of memory");
}

// [SECTION] The decision ---------------------------------------------------------------

TEST_CASE(
    "Auto: a candidate that fails its self-check is not used, the message names the case, the verdict is kept",
    "[selfcheck]") {
  reset_backend_failures_for_tests();
  TempDir tmp;
  const std::string cache = tmp.file("sub/cuda-selfcheck.txt");  // the folder is created
  fake::MpmFaults bug;
  bug.gravity_error = 0.098f;
  bug.bug_material = static_cast<int>(MaterialType::Snow);
  bug.bug_transfer = static_cast<int>(Transfer::FLIP);
  int calls = 0;
  const SelfCheckFn check = counting_check(calls, "snow");
  GateDecision d = decide_backend(request(cache), fake_candidates(bug), check);
  CHECK(calls == 1);
  CHECK(d.ran_check);
  CHECK_FALSE(d.use_candidate);
  CHECK(d.verdict.state == VerdictState::Fail);
  INFO(d.message);
  CHECK(d.message.find("using the CPU backend") == 0);
  CHECK(d.message.find("Fake GPU") != std::string::npos);
  CHECK(d.message.find("mpm snow flip quadratic: ") != std::string::npos);
  CHECK(d.cache_error.empty());
  // Stored, and decides the next run without checking again.
  const Verdict v = read_verdict(cache, request(cache).key);
  CHECK(v.state == VerdictState::Fail);
  CHECK(v.reason.find("mpm snow flip quadratic") == 0);
  CHECK(v.when > 0);
  d = decide_backend(request(cache), fake_candidates(bug), check);
  CHECK(calls == 1);
  CHECK_FALSE(d.ran_check);
  CHECK_FALSE(d.use_candidate);
  CHECK(d.message.find("mpm snow flip quadratic") != std::string::npos);
}

TEST_CASE(
    "Auto: a candidate that passes is used and the verdict is cached and re-read, not re-checked",
    "[selfcheck]") {
  reset_backend_failures_for_tests();
  TempDir tmp;
  const std::string cache = tmp.file("cuda-selfcheck.txt");
  int calls = 0;
  const SelfCheckFn check = counting_check(calls, "jelly apic quadratic");
  GateDecision d = decide_backend(request(cache), fake_candidates(), check);
  CHECK(calls == 1);
  CHECK(d.use_candidate);
  CHECK(d.verdict.state == VerdictState::Pass);
  CHECK(d.message.find("passed the CUDA self-check") != std::string::npos);
  // Second decision (a later run): from the file, no check, no message.
  d = decide_backend(request(cache), fake_candidates(), check);
  CHECK(calls == 1);
  CHECK_FALSE(d.ran_check);
  CHECK(d.use_candidate);
  CHECK(d.verdict.state == VerdictState::Pass);
  CHECK(d.message.empty());
  // Another device or build is not covered by that verdict.
  d = decide_backend(request(cache, "device=Fake GPU;uuid=GPU-0;build=2"), fake_candidates(),
                     check);
  CHECK(calls == 2);
  CHECK(d.use_candidate);
  CHECK(read_verdict(cache, "device=Fake GPU;uuid=GPU-0;build=1").state == VerdictState::Pass);
  CHECK(read_verdict(cache, "device=Fake GPU;uuid=GPU-0;build=2").state == VerdictState::Pass);
  // Re-check on request (sandbox info --self-check): runs again and replaces the verdict.
  GateRequest again = request(cache);
  again.recheck = true;
  fake::MpmFaults bug;
  bug.gravity_error = 1.f;
  d = decide_backend(again, fake_candidates(bug), check);
  CHECK(calls == 3);
  CHECK_FALSE(d.use_candidate);
  CHECK(read_verdict(cache, request(cache).key).state == VerdictState::Fail);
  // Without a cache the check runs every time.
  d = decide_backend(request(""), fake_candidates(), check);
  d = decide_backend(request(""), fake_candidates(), check);
  CHECK(calls == 5);
}

TEST_CASE("Auto: forcing the candidate (--backend cuda) skips the check and stores nothing",
          "[selfcheck]") {
  TempDir tmp;
  const std::string cache = tmp.file("cuda-selfcheck.txt");
  int calls = 0;
  GateRequest r = request(cache);
  r.force = true;
  fake::MpmFaults bug;
  bug.gravity_error = 1.f;
  const GateDecision d = decide_backend(r, fake_candidates(bug), counting_check(calls, ""));
  CHECK(calls == 0);
  CHECK(d.use_candidate);
  CHECK_FALSE(d.ran_check);
  CHECK_FALSE(fs::exists(cache));
  // Nothing to check: the CPU.
  const GateDecision none =
      decide_backend(request(cache), CandidateBackends{}, counting_check(calls, ""));
  CHECK_FALSE(none.use_candidate);
  CHECK(calls == 0);
}

TEST_CASE("Auto: a garbage or corrupted verdict file is 'not checked', never a crash",
          "[selfcheck]") {
  TempDir tmp;
  const std::string cache = tmp.file("cuda-selfcheck.txt");
  const std::string key = request(cache).key;
  const std::string good_line = key + "\tpass\t1700000000\t1.500\t\n";
  const std::vector<std::pair<const char*, std::string>> bad = {
      {"empty", ""},
      {"binary", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe", 18)},
      {"no header", good_line},
      {"wrong header", "ps-cuda-selfcheck 999\n" + good_line},
      {"NUL inside",
       std::string("ps-cuda-selfcheck 1\n") + key + std::string("\tpass\t1\0\t1\t\n", 12)},
      {"too few fields", "ps-cuda-selfcheck 1\n" + key + "\tpass\t1700000000\n"},
      {"too many fields", "ps-cuda-selfcheck 1\n" + key + "\tpass\t1700000000\t1\tx\ty\n"},
      {"unknown verdict", "ps-cuda-selfcheck 1\n" + key + "\tmaybe\t1700000000\t1\t\n"},
      {"negative time", "ps-cuda-selfcheck 1\n" + key + "\tpass\t-5\t1\t\n"},
      {"time overflow", "ps-cuda-selfcheck 1\n" + key + "\tpass\t99999999999999999999999\t1\t\n"},
      {"bad seconds", "ps-cuda-selfcheck 1\n" + key + "\tpass\t1700000000\tnan\t\n"},
      {"truncated", ("ps-cuda-selfcheck 1\n" + good_line).substr(0, 40)},
      {"another key only", "ps-cuda-selfcheck 1\nsomething else\tpass\t1700000000\t1\t\n"},
      {"long line", "ps-cuda-selfcheck 1\n" + std::string(100000, 'k') + "\tpass\t1\t1\t\n"},
  };
  for (const auto& [what, bytes] : bad) {
    INFO(what);
    spit(cache, bytes);
    CHECK(read_verdict(cache, key).state == VerdictState::NotChecked);
    int calls = 0;
    const GateDecision d =
        decide_backend(request(cache), fake_candidates(), counting_check(calls, "tracer pic"));
    CHECK(calls == 1);
    CHECK(d.use_candidate);
    // Replaced by a well-formed file.
    CHECK(read_verdict(cache, key).state == VerdictState::Pass);
    CHECK(slurp(cache).find("ps-cuda-selfcheck 1\n") != std::string::npos);
  }
  // The well-formed line itself reads back.
  spit(cache, "# comment\r\nps-cuda-selfcheck 1\r\n" + good_line);
  const Verdict v = read_verdict(cache, key);
  CHECK(v.state == VerdictState::Pass);
  CHECK(v.when == 1700000000);
  CHECK(v.seconds == Approx(1.5));
  // A folder where the file should be: not checked; the verdict cannot be
  // stored, the decision still stands and says so.
  fs::remove(cache);
  fs::create_directories(cache);
  CHECK(read_verdict(cache, key).state == VerdictState::NotChecked);
  int calls = 0;
  const GateDecision d =
      decide_backend(request(cache), fake_candidates(), counting_check(calls, "tracer pic"));
  CHECK(calls == 1);
  CHECK(d.use_candidate);
  CHECK_FALSE(d.cache_error.empty());
  CHECK(d.message.find("verdict not stored") != std::string::npos);
  // A check that throws is a failure, not a crash.
  const GateDecision t = decide_backend(
      request(tmp.file("other.txt")), fake_candidates(),
      [](const CandidateBackends&) -> SelfCheckReport { throw std::runtime_error("boom"); });
  CHECK_FALSE(t.use_candidate);
  CHECK(t.verdict.reason == "the self-check stopped: boom");
}

TEST_CASE("Verdict file: newest first, 16 lines at most, fields cleaned of tabs and newlines",
          "[selfcheck]") {
  TempDir tmp;
  const std::string cache = tmp.file("v.txt");
  for (int k = 0; k < 20; ++k) {
    Verdict v;
    v.key = "key " + std::to_string(k);
    v.state = k % 2 ? VerdictState::Fail : VerdictState::Pass;
    v.when = 1000 + k;
    v.reason = k % 2 ? "case\twith\ttabs\nand a newline" : "";
    REQUIRE(write_verdict(cache, v));
  }
  CHECK(read_verdict(cache, "key 19").state == VerdictState::Fail);
  CHECK(read_verdict(cache, "key 19").reason == "case with tabs and a newline");
  CHECK(read_verdict(cache, "key 4").state == VerdictState::Pass);
  CHECK(read_verdict(cache, "key 3").state == VerdictState::NotChecked);  // the oldest went
  const std::string text = slurp(cache);
  CHECK(text.find("key 19") < text.find("key 18"));
  // Nothing is left behind but the file (the temporary was renamed over it).
  int files = 0;
  for (const auto& e : fs::directory_iterator(tmp.path)) files += e.is_regular_file() ? 1 : 0;
  CHECK(files == 1);
  std::string err;
  CHECK_FALSE(write_verdict("", Verdict{VerdictState::Pass, "k", 1, 0.0, ""}, &err));
  CHECK_FALSE(err.empty());
}

TEST_CASE("Auto in this process: after a CUDA failure at run time auto picks the CPU",
          "[selfcheck]") {
  reset_backend_failures_for_tests();
  note_backend_failure(
      "cuda (Fake GPU): CUDA error in advance: an illegal memory access was encountered");
  CHECK(choose_auto_backend().kind == "cpu");
  std::string why;
  CHECK(backend_failure_noted(&why));
  CHECK(why.find("illegal memory access") != std::string::npos);
  reset_backend_failures_for_tests();
  // Without a device this build's auto is the CPU, and no check runs.
  if (!cuda_compiled()) CHECK(choose_auto_backend().kind == "cpu");
}
