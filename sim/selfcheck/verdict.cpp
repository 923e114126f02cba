#include "sim/selfcheck/verdict.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include "sim/core/atomic_write.h"
#include "sim/core/backend_error.h"
#include "sim/core/file.h"
#include "sim/core/settings_dir.h"
#include "sim/cuda/cuda_info.h"
#include "sim/dem/dem_backend.h"
#include "sim/mpm/mpm_backend.h"
#include "sim/scene/auto_backend.h"

namespace ps {

// [SECTION] Verdict file ------------------------------------------------------------

namespace {

constexpr const char* kHeader = "ps-cuda-selfcheck 1";
constexpr size_t kMaxEntries = 16;
constexpr size_t kMaxField = 4096;  // longer fields are cut (the file stays small)

/// Tabs, newlines and other control characters would break the line format.
std::string clean(const std::string& s) {
  std::string out;
  out.reserve(std::min(s.size(), kMaxField));
  for (char c : s) {
    if (out.size() >= kMaxField) break;
    const unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  return out;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  size_t b = 0;
  while (true) {
    const size_t t = line.find('\t', b);
    out.push_back(line.substr(b, t == std::string::npos ? std::string::npos : t - b));
    if (t == std::string::npos) break;
    b = t + 1;
  }
  return out;
}

bool parse_int64(const std::string& s, int64_t& v) {
  if (s.empty() || s.size() > 19) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  v = std::strtoll(s.c_str(), nullptr, 10);
  return true;
}

bool parse_seconds(const std::string& s, double& v) {
  if (s.empty() || s.size() > 32) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end && *end == '\0' && v >= 0.0 && v < 1e9;
}

/// Every well-formed line of the file; empty for a missing or malformed file.
std::vector<Verdict> read_all(const std::string& path) {
  std::vector<Verdict> out;
  if (path.empty()) return out;
  std::string text;
  try {
    text = read_file_bytes(path);  // regular files only, size-limited
  } catch (const std::exception&) {
    return out;
  }
  if (text.find('\0') != std::string::npos) return out;
  size_t b = 0;
  bool header = false;
  while (b < text.size()) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    std::string line = text.substr(b, e - b);
    b = e + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      if (line != kHeader) return {};  // another format or garbage: nothing is known
      header = true;
      continue;
    }
    const std::vector<std::string> f = split_tabs(line);
    if (f.size() != 5 || f[0].empty() || f[0].size() > kMaxField) continue;
    Verdict v;
    v.key = f[0];
    const std::optional<VerdictState> state = kVerdictStateNames.find(f[1]);
    if (!state || *state == VerdictState::NotChecked) continue;  // only pass and fail are kept
    v.state = *state;
    if (!parse_int64(f[2], v.when) || !parse_seconds(f[3], v.seconds)) continue;
    v.reason = f[4];
    if (v.state == VerdictState::Fail && v.reason.empty()) v.reason = "no reason recorded";
    if (std::none_of(out.begin(), out.end(), [&](const Verdict& o) { return o.key == v.key; }))
      out.push_back(v);
  }
  return out;
}

}  // namespace

Verdict read_verdict(const std::string& cache_path, const std::string& key) {
  for (const Verdict& v : read_all(cache_path))
    if (v.key == key) return v;
  Verdict none;
  none.key = key;
  return none;
}

bool write_verdict(const std::string& cache_path, const Verdict& v, std::string* error) {
  if (cache_path.empty()) {
    if (error) *error = "no settings folder ($XDG_CONFIG_HOME and $HOME are unset)";
    return false;
  }
  if (v.state == VerdictState::NotChecked || v.key.empty()) {
    if (error) *error = "nothing to store";
    return false;
  }
  try {
    std::vector<Verdict> all = read_all(cache_path);
    Verdict nv = v;
    nv.key = clean(v.key);
    nv.reason = clean(v.reason);
    all.erase(
        std::remove_if(all.begin(), all.end(), [&](const Verdict& o) { return o.key == nv.key; }),
        all.end());
    all.insert(all.begin(), nv);
    if (all.size() > kMaxEntries) all.resize(kMaxEntries);
    std::string text =
        "# Particle Sandbox CUDA self-check verdicts, one line per device and build (newest first):\n"
        "# key, pass or fail, unix time, seconds, reason. `sandbox info --self-check` re-runs the\n"
        "# check; deleting this file makes the next `--backend auto` run check again.\n";
    text += kHeader;
    text += "\n";
    for (const Verdict& o : all) {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.3f", o.seconds);
      text += o.key + "\t" + verdict_state_name(o.state) + "\t" + std::to_string(o.when) + "\t" +
              secs + "\t" + o.reason + "\n";
    }
    const std::filesystem::path p(cache_path);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
    write_file_atomic(cache_path, text);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
  return true;
}

std::string verdict_cache_path() {
  const std::string dir = settings_dir();
  return dir.empty() ? std::string() : (std::filesystem::path(dir) / "cuda-selfcheck.txt").string();
}

// [SECTION] Device identity --------------------------------------------------------

std::string cuda_device_key(int device) {
  for (const CudaDeviceInfo& d : cuda_devices()) {
    if (d.index != device) continue;
    return clean("device=" + d.name + ";uuid=" + d.uuid + ";pci=" + d.pci_bus_id +
                 ";cc=" + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) +
                 ";driver=" + std::to_string(cuda_driver_version()) +
                 ";runtime=" + std::to_string(cuda_runtime_version()) +
                 ";build=" + cuda_build_stamp() + ";check=" + std::to_string(kSelfCheckRevision));
  }
  return "";
}

std::string cuda_device_label(int device) {
  for (const CudaDeviceInfo& d : cuda_devices())
    if (d.index == device)
      return d.name + " (device " + std::to_string(d.index) +
             (d.pci_bus_id.empty() ? "" : ", PCI " + d.pci_bus_id) + ")";
  return "CUDA device " + std::to_string(device);
}

// [SECTION] The decision ------------------------------------------------------------

namespace {

int64_t now_unix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const char* kRecheckHint =
    "`sandbox info --self-check` checks again, `--backend cuda` uses CUDA anyway";

}  // namespace

GateDecision decide_backend(const GateRequest& req, const CandidateBackends& candidate,
                            const SelfCheckFn& check) {
  GateDecision d;
  d.verdict.key = req.key;
  if (!candidate.mpm) {
    d.message = "no CUDA stepper to check";
    return d;
  }
  if (req.force) {
    d.use_candidate = true;
    return d;
  }
  if (!req.recheck && !req.cache_path.empty()) {
    const Verdict stored = read_verdict(req.cache_path, req.key);
    if (stored.state == VerdictState::Pass) {
      d.verdict = stored;
      d.use_candidate = true;
      return d;
    }
    if (stored.state == VerdictState::Fail) {
      d.verdict = stored;
      d.message = "using the CPU backend: " + req.device + " failed the CUDA self-check (" +
                  stored.reason + "); " + kRecheckHint;
      return d;
    }
  }
  // Not checked yet (or asked to check again): run it now.
  d.ran_check = true;
  try {
    d.report = check(candidate);
  } catch (const std::exception& e) {
    d.report = SelfCheckReport{};
    d.report.pass = false;
    d.report.reason = std::string("the self-check stopped: ") + e.what();
  } catch (...) {
    d.report = SelfCheckReport{};
    d.report.pass = false;
    d.report.reason = "the self-check stopped with an unknown error";
  }
  if (d.report.pass && d.report.cases.empty()) {
    d.report.pass = false;
    d.report.reason = "the self-check ran no case";
  }
  d.verdict.state = d.report.pass ? VerdictState::Pass : VerdictState::Fail;
  d.verdict.when = now_unix();
  d.verdict.seconds = d.report.seconds;
  d.verdict.reason = d.report.pass ? "" : d.report.reason;
  if (!req.cache_path.empty()) write_verdict(req.cache_path, d.verdict, &d.cache_error);
  d.use_candidate = d.report.pass;
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f", d.report.seconds);
  if (d.report.pass)
    d.message = req.device + " passed the CUDA self-check (" +
                std::to_string(d.report.cases.size()) + " cases, " + secs +
                " s): using the CUDA backend";
  else
    d.message = "using the CPU backend: " + req.device + " failed the CUDA self-check (" +
                d.report.reason + "); " + kRecheckHint;
  if (!d.cache_error.empty()) d.message += " (verdict not stored: " + d.cache_error + ")";
  return d;
}

CandidateBackends cuda_candidates() {
  CandidateBackends c;
  if (!cuda_compiled() || cuda_devices().empty()) return c;
  c.label = "cuda (" + cuda_device_label(0) + ")";
  c.mpm = [] { return make_backend("cuda", 0); };
  c.dem = [] { return dem::make_dem_backend("cuda", 0); };
  return c;
}

namespace {

std::mutex g_mutex;
std::function<void(const std::string&)> g_reporter;
std::optional<AutoBackend> g_choice;
bool g_message_shown = false;
bool g_failure_said = false;

void report(const std::string& line) {
  std::function<void(const std::string&)> r;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    r = g_reporter;
  }
  if (r) r(line);
}

SelfCheckReport run_with_progress(const CandidateBackends& c) {
  SelfCheckOptions o;
  int k = 0;
  const size_t total = self_check_case_names().size();
  o.progress = [&](const std::string& name) {
    report("  [" + std::to_string(++k) + "/" + std::to_string(total) + "] " + name);
  };
  return run_self_check(c, o);
}

}  // namespace

void set_self_check_reporter(std::function<void(const std::string&)> reporter) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_reporter = std::move(reporter);
}

void install_auto_backend() {
  set_auto_backend_rule([] {
    AutoBackend a = choose_auto_backend();
    return AutoChoice{a.kind, a.message};
  });
}

AutoBackend choose_auto_backend() {
  // A device that failed in this process is not used again by auto.
  std::string why;
  if (backend_failure_noted(&why)) {
    AutoBackend a{"cpu", ""};
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_failure_said) {
      g_failure_said = true;
      a.message = "using the CPU backend: CUDA failed earlier in this run (" + why + ")";
    }
    return a;
  }
  static std::mutex decide_mutex;  // one check at a time, even from several threads
  std::lock_guard<std::mutex> decide_lock(decide_mutex);
  AutoBackend a;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_choice) {
      a = *g_choice;
      if (g_message_shown) a.message.clear();
      g_message_shown = true;
      return a;
    }
  }
  const CandidateBackends c = cuda_candidates();
  if (!c.mpm) {
    a.kind = "cpu";
  } else {
    GateRequest req;
    req.key = cuda_device_key(0);
    req.device = cuda_device_label(0);
    req.cache_path = verdict_cache_path();
    const Verdict stored = read_verdict(req.cache_path, req.key);
    if (stored.state == VerdictState::NotChecked)
      report("sandbox: checking " + req.device +
             " against the CPU before first use with this build (" +
             std::to_string(self_check_case_names().size()) +
             " short cases; once per device and build)");
    const GateDecision d = decide_backend(req, c, run_with_progress);
    a.kind = d.use_candidate ? "cuda" : "cpu";
    a.message = d.message;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_choice = a;
  g_message_shown = true;
  return a;
}

GateDecision recheck_cuda_device() {
  const CandidateBackends c = cuda_candidates();
  GateRequest req;
  req.recheck = true;
  if (!c.mpm) {
    GateDecision d;
    std::string why;
    cuda_devices(&why);
    d.message = cuda_compiled()
                    ? "no CUDA device (" + (why.empty() ? std::string("none found") : why) + ")"
                    : "this build has no CUDA backend";
    return d;
  }
  req.key = cuda_device_key(0);
  req.device = cuda_device_label(0);
  req.cache_path = verdict_cache_path();
  GateDecision d = decide_backend(req, c, run_with_progress);
  std::lock_guard<std::mutex> lock(g_mutex);
  g_choice = AutoBackend{d.use_candidate ? "cuda" : "cpu", ""};
  return d;
}

}  // namespace ps
