/// Run-time failures of a device backend (CUDA launch failure, out of
/// memory, a lost device) and the process-wide record of them.
///
/// A backend throws BackendError (or any std::exception) from advance / step,
/// sync_to_host, host_changed or its queries. MpmWorld and DemWorld catch it,
/// keep the last good host state, switch to the CPU backend and continue
/// (docs/reliability.md, "CUDA fallback").
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ps {

class BackendError : public std::runtime_error {
 public:
  /// state_intact: the device state is still the one the world last handed
  /// over or stepped to (the failure came before anything was launched), so a
  /// sync_to_host() may still read it back. False: the device state is
  /// unknown (a batch stopped part way, or the context is lost).
  BackendError(const std::string& what, bool state_intact)
      : std::runtime_error(what), state_intact_(state_intact) {}
  bool state_intact() const { return state_intact_; }

 private:
  bool state_intact_ = false;
};

/// Records that a device backend failed at run time in this process (the
/// first reason is kept). From then on `--backend auto` picks the CPU for the
/// rest of the process: a device that just failed is not trusted again, but
/// the stored self-check verdict is left alone (an out-of-memory error is not
/// a wrong result).
void note_backend_failure(const std::string& reason);
/// True once a failure was noted; *reason receives the first one.
bool backend_failure_noted(std::string* reason = nullptr);
/// Forgets noted failures (tests).
void reset_backend_failures_for_tests();

/// What a world did when its device backend failed at run time.
struct BackendFallback {
  bool happened = false;
  std::string backend;       ///< the backend that failed, e.g. "cuda (NVIDIA H100)"
  std::string during;        ///< "stepping", "copying the state to the host", ...
  std::string reason;        ///< its error text
  int64_t failed_step = 0;   ///< the world's step count when the failing call started
  int64_t resumed_step = 0;  ///< the step of the preserved state the CPU continues from
  /// "cuda (X) failed while stepping (REASON); continuing on the CPU backend
  /// from step R, the last state copied to the host (N steps rolled back)".
  std::string message() const;
};

}  // namespace ps
