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

}  // namespace ps

namespace ps {

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

/// Where the last good state is when a device backend fails (the worlds' fall_back).
enum class AtFailure {
  DeviceAtClock,     ///< the device still holds the state at the world's clock: try reading it back
  Unknown,           ///< the device state is unknown: the last host copy
  HostAuthoritative  ///< the host arrays hold the state (a failure while taking a user edit)
};

/// The worlds' guard around one backend call, shared by MpmWorld and DemWorld:
/// on the CPU backend `call` runs unguarded (nothing to fall back to);
/// otherwise an exception from it calls `fall_back(reason, at)` (a BackendError
/// whose device state is intact upgrades Unknown to DeviceAtClock) and the
/// guard returns false.
template <class Call, class FallBack>
bool run_guarded(bool on_cpu, AtFailure at, Call&& call, FallBack&& fall_back) {
  if (on_cpu) {
    call();
    return true;
  }
  try {
    call();
    return true;
  } catch (const BackendError& e) {
    fall_back(e.what(),
              e.state_intact() && at == AtFailure::Unknown ? AtFailure::DeviceAtClock : at);
  } catch (const std::exception& e) {
    fall_back(e.what(), at);
  }
  return false;
}

}  // namespace ps
