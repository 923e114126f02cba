/// One backend and its fallback to the CPU: what MpmWorld and DemWorld share
/// about run-time device failures (docs/reliability.md, "CUDA fallback").
///
/// The guard owns the world's backend, the clock of the state the host arrays
/// hold (the last good copy), the background checkpoint, the last fallback and
/// the notices for the user. A call through run() on a device backend that
/// throws switches the world to a CPU backend at the preserved state: the
/// guard reads the device state back where it can, else takes the newest
/// checkpoint that reached host memory, else the last host copy; rolls the
/// world's clock back to that state's; builds the CPU backend; posts a notice.
///
/// The world says what its clock is and how a CPU backend is built on its host
/// arrays (Hooks), and keeps everything else: what a step is, what an edit is.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include "sim/core/backend_error.h"
#include "sim/core/checkpoint.h"

namespace ps {

/// Where the last good state is when a device backend fails.
enum class AtFailure {
  DeviceAtClock,     ///< the device still holds the state at the world's clock: try reading it back
  Unknown,           ///< the device state is unknown: the last host copy
  HostAuthoritative  ///< the host arrays hold the state (a failure while taking a user edit)
};

/// `Backend` has name(), sync_to_host() and the checkpoint calls of
/// CheckpointTracker; `CpuBackend` is its CPU implementation (never guarded:
/// there is nothing to fall back to); `Clock` has an int64_t `step`.
template <class Backend, class CpuBackend, class Clock>
class BackendGuard {
 public:
  struct Hooks {
    std::function<Clock()> clock;                   ///< the world's clock now
    std::function<void(const Clock&)> set_clock;    ///< rolls the world back to a state's clock
    std::function<std::unique_ptr<Backend>()> cpu;  ///< a CPU backend holding the host arrays
    std::function<void()> host_copy_arrived;        ///< a device's newer state reached the host
    std::function<void(const BackendFallback&)> fell_back;  ///< after a fallback
  };

  BackendGuard(Hooks hooks, std::unique_ptr<Backend> initial)
      : hooks_(std::move(hooks)), backend_(std::move(initial)) {}
  BackendGuard(const BackendGuard&) = delete;  // the hooks point into the world
  BackendGuard& operator=(const BackendGuard&) = delete;

  Backend& backend() { return *backend_; }
  const Backend& backend() const { return *backend_; }
  bool on_cpu() const { return dynamic_cast<const CpuBackend*>(backend_.get()) != nullptr; }
  /// Installs a backend that already holds the host arrays (they are the state).
  void replace(std::unique_ptr<Backend> b) {
    backend_ = std::move(b);
    host_taken();
  }

  /// Runs a backend call; a device backend's exception becomes a fallback
  /// (returns false). A CPU backend's exception propagates. A BackendError
  /// whose device state is intact upgrades Unknown to DeviceAtClock.
  template <class Call>
  bool run(const char* during, AtFailure at, Call&& call) {
    if (on_cpu()) {
      call();
      return true;
    }
    try {
      call();
      return true;
    } catch (const BackendError& e) {
      fall_back(e.what(), during,
                e.state_intact() && at == AtFailure::Unknown ? AtFailure::DeviceAtClock : at);
    } catch (const std::exception& e) {
      fall_back(e.what(), during, at);
    }
    return false;
  }

  /// sync_to_host, guarded: the host arrays become the state at the world's clock.
  void sync() {
    if (!run("copying the state to the host", AtFailure::DeviceAtClock,
             [&] { backend_->sync_to_host(); }))
      return;
    if (!on_cpu() && host_clock_.step != hooks_.clock().step && hooks_.host_copy_arrived)
      hooks_.host_copy_arrived();
    host_clock_ = hooks_.clock();
  }

  /// The host arrays are the state at the world's clock (an edit, a load, a
  /// CPU backend that steps them).
  void host_taken() { host_clock_ = hooks_.clock(); }
  /// The host copy and the checkpoints are older than the host arrays now.
  void host_edited() { ckpt_.drop(); }
  /// Forgets the clocks (a cleared world).
  void reset() {
    host_clock_ = Clock{};
    ckpt_.drop();
  }
  const Clock& host_clock() const { return host_clock_; }

  /// Notes an arrived background copy and starts the next one when due (every
  /// `interval` steps; a backend without background copies syncs instead).
  /// False when a device failure made the world fall back meanwhile.
  bool keep_checkpoint(int interval) {
    const int before = fallbacks_;
    if (ckpt_.waiting(host_clock_.step)) {
      run("checking a checkpoint", AtFailure::DeviceAtClock,
          [&] { ckpt_.set_arrived(backend_->checkpoint_arrived()); });
      if (fallbacks_ != before) return false;
    }
    if (ckpt_.due(hooks_.clock().step, host_clock_.step, interval)) {
      bool async = false;
      if (run("checkpointing the state", AtFailure::DeviceAtClock,
              [&] { async = ckpt_.begin(*backend_, hooks_.clock()); }) &&
          !async)
        sync();
    }
    return fallbacks_ == before;
  }

  /// Switches to a CPU backend at the preserved state (see the file comment).
  void fall_back(const std::string& reason, const char* during, AtFailure at) {
    BackendFallback fb;
    fb.happened = true;
    fb.backend = backend_->name();
    fb.during = during;
    fb.reason = reason;
    fb.failed_step = hooks_.clock().step;
    if (at == AtFailure::HostAuthoritative) {
      host_clock_ = hooks_.clock();  // the host arrays hold the state (and the user's edits)
    } else if (at == AtFailure::DeviceAtClock) {
      // The device state is still the one at the world's clock: read it back
      // if the device still answers. sync_to_host never leaves the host arrays
      // half written.
      try {
        backend_->sync_to_host();
        host_clock_ = hooks_.clock();
      } catch (const std::exception&) {}
    }
    if (host_clock_.step < hooks_.clock().step)
      ckpt_.adopt(*backend_, host_clock_);  // a newer copy that reached the host
    // Roll back to the preserved state; its clock gives the same next dt.
    hooks_.set_clock(host_clock_);
    fb.resumed_step = host_clock_.step;
    backend_.reset();  // a failed device backend's destructor ignores further errors
    backend_ = hooks_.cpu();
    host_clock_ = hooks_.clock();
    ckpt_.drop();  // the CPU backend steps the host arrays: no copies to wait for
    last_ = fb;
    ++fallbacks_;
    note_backend_failure(fb.backend + ": " + reason);
    post_notice(fb.message());
    if (hooks_.fell_back) hooks_.fell_back(fb);
  }

  /// The last fallback (happened = false when there was none) and how many there were.
  const BackendFallback& last_fallback() const { return last_; }
  int fallbacks() const { return fallbacks_; }

  void post_notice(const std::string& text) {
    if (!text.empty()) notices_.push_back(text);
  }
  /// The notices, oldest first, joined by newlines; cleared by the call.
  std::string take_notice() {
    std::string out;
    for (const std::string& n : notices_) out += (out.empty() ? "" : "\n") + n;
    notices_.clear();
    return out;
  }

 private:
  Hooks hooks_;
  std::unique_ptr<Backend> backend_;
  Clock host_clock_{};             ///< clock of the state in the host arrays (the last good copy)
  CheckpointTracker<Clock> ckpt_;  ///< the background checkpoint in flight or arrived
  BackendFallback last_;
  int fallbacks_ = 0;
  std::vector<std::string> notices_;
};

}  // namespace ps
