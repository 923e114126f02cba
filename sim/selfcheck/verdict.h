/// Which backend `--backend auto` uses, and the remembered self-check
/// verdicts it rests on.
///
/// Auto uses the CUDA steppers only on a device that passed the self-check
/// (sim/selfcheck/selfcheck.h) with this build. The check runs the first time
/// auto meets a device + build; its verdict is stored in
/// settings_dir()/cuda-selfcheck.txt, so later runs do not repeat it.
/// `--backend cuda` uses CUDA without looking at any verdict;
/// `sandbox info --self-check` runs the check again.
///
/// The verdict file (text, one line per device and build, newest first, at
/// most 16 lines; written atomically):
///
///     # Particle Sandbox CUDA self-check verdicts (sandbox info --self-check re-runs the check)
///     ps-cuda-selfcheck 1
///     <key> TAB pass|fail TAB <unix time> TAB <seconds the check took> TAB <reason, "" on pass>
///
/// A missing, unreadable or malformed file, or a line that does not parse, is
/// "not checked" for its key: never an error.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>
#include "sim/core/names.h"
#include "sim/selfcheck/selfcheck.h"

namespace ps {

// [SECTION] Verdicts -------------------------------------------------------------

enum class VerdictState { NotChecked, Pass, Fail };
/// The verdict file's and the reports' names.
inline constexpr NameTable<VerdictState, 3> kVerdictStateNames{0, {"not checked", "pass", "fail"}};
inline const char* verdict_state_name(VerdictState s) { return kVerdictStateNames(s); }

struct Verdict {
  VerdictState state = VerdictState::NotChecked;
  std::string key;
  int64_t when = 0;      ///< unix time of the check
  double seconds = 0.0;  ///< how long the check took
  std::string reason;    ///< the first failing case and by how much (fail)
};

/// The stored verdict for `key`, or NotChecked. Never throws.
Verdict read_verdict(const std::string& cache_path, const std::string& key);
/// Stores `v` (replacing the line of its key), keeping the 16 newest lines;
/// creates the folder; atomic (write_file_atomic). Never throws: false and
/// *error on failure.
bool write_verdict(const std::string& cache_path, const Verdict& v, std::string* error = nullptr);

/// settings_dir()/cuda-selfcheck.txt, or "" when there is no settings folder.
std::string verdict_cache_path();

// [SECTION] Device identity --------------------------------------------------------

/// The identity a verdict belongs to: the device (name, UUID, PCI bus id),
/// the driver and this build (CUDA runtime version, compile stamps of the
/// CUDA sources), and the self-check's own revision. "" without a device.
std::string cuda_device_key(int device);
/// "NVIDIA H100 80GB HBM3 (device 0, PCI 0000:01:00.0)".
std::string cuda_device_label(int device);

// [SECTION] The decision ------------------------------------------------------------

/// Bump when the cases or tolerances change: old verdicts then no longer apply.
constexpr int kSelfCheckRevision = 1;

struct GateRequest {
  std::string key;         ///< identity of device + build (cuda_device_key)
  std::string device;      ///< for messages (cuda_device_label)
  std::string cache_path;  ///< the verdict file; "" = no memory (check every time)
  bool force = false;      ///< use the candidate without any check (--backend cuda)
  bool recheck = false;    ///< ignore a stored verdict, check and store again
};

struct GateDecision {
  bool use_candidate = false;
  Verdict verdict;          ///< what the decision rests on (NotChecked when forced)
  bool ran_check = false;   ///< the check ran for this decision
  SelfCheckReport report;   ///< its report, when it ran
  std::string message;      ///< for the user; "" when there is nothing to say
  std::string cache_error;  ///< the verdict could not be stored (the decision stands)
};

using SelfCheckFn = std::function<SelfCheckReport(const CandidateBackends&)>;

/// The decision, testable without a device: a forced request uses the
/// candidate; else a stored verdict for req.key decides (pass: candidate,
/// fail: CPU with the stored reason); else `check(candidate)` runs (an
/// exception counts as a failure), its verdict is stored, and decides.
GateDecision decide_backend(const GateRequest& req, const CandidateBackends& candidate,
                            const SelfCheckFn& check);

/// The CUDA steppers as candidates ("cuda" MPM and DEM backends on device 0).
CandidateBackends cuda_candidates();

/// What `--backend auto` resolves to in this process: "cuda" when a device is
/// present, no CUDA failure was noted in this process (note_backend_failure),
/// and the device passed its self-check (run now when not yet checked;
/// progress lines go to the reporter); else "cpu". Decided once per process.
/// `message` says why the CPU was chosen (or that the check just passed);
/// it is non-empty only on the first call that has something to say.
struct AutoBackend {
  std::string kind;  ///< "cpu" or "cuda"
  std::string message;
};
AutoBackend choose_auto_backend();

/// Installs choose_auto_backend as the scene builder's rule for "auto"
/// (sim/scene/auto_backend.h). Every program calls it once at start: sandbox's
/// main, the test and fuzz mains.
void install_auto_backend();

/// Where progress lines of a self-check that auto starts go (the app prints
/// them to stderr; default: nowhere). Process-wide.
void set_self_check_reporter(std::function<void(const std::string&)> reporter);

/// `sandbox info --self-check`: checks device 0 again (recheck), stores and
/// returns the decision; progress goes to the reporter. Without a device,
/// use_candidate = false and the message says why.
GateDecision recheck_cuda_device();

}  // namespace ps
