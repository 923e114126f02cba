/// The worlds' side of a device backend's periodic checkpoint (MpmWorld,
/// DemWorld; the CUDA side is sim/cuda/background_copy.cuh): every
/// `interval` steps the backend starts copying its state to host memory in
/// the background; the world notes the clock of that moment, asks now and
/// then whether the copy has arrived, and after a device failure rolls back
/// to it when it is newer than the host arrays, or to the copy before it when
/// the device died while the last one was still on its way. A backend without background
/// copies (the CPU's, which steps the host arrays; fakes) makes the world
/// sync instead.
#pragma once
#include <algorithm>
#include <cstdint>
#include <exception>

namespace ps {

/// `Clock` has an int64_t `step`. `Backend` has checkpoint_begin(),
/// checkpoint_arrived() and checkpoint_restore() (MpmBackend, DemBackend).
template <class Clock>
class CheckpointTracker {
 public:
  /// The host arrays became the state (an edit, a load): an older copy is of
  /// no use any more.
  void drop() {
    active_ = false;
    arrived_ = false;
    has_prev_ = false;
  }
  /// A checkpoint is due: `step` is the world's, `host_step` that of the host
  /// arrays (the last sync), `interval` the checkpoint interval.
  bool due(int64_t step, int64_t host_step, int interval) const {
    const int64_t newest = active_ ? std::max(host_step, clock_.step) : host_step;
    return step - newest >= std::max(1, interval);
  }
  /// A copy newer than the host arrays is on its way: ask whether it arrived
  /// (so that a later failure can roll back to it without asking the device).
  bool waiting(int64_t host_step) const { return active_ && !arrived_ && clock_.step > host_step; }
  void set_arrived(bool a) { arrived_ = a; }
  /// Starts a copy of the state at `now`; false when the backend has no
  /// background copies (the caller syncs instead). Throws what the backend throws.
  template <class Backend>
  bool begin(Backend& b, const Clock& now) {
    if (!b.checkpoint_begin()) return false;
    // The copy before is complete now (the backend waited for it) and stays
    // in host memory while this one travels.
    prev_ = clock_;
    has_prev_ = active_;
    clock_ = now;
    active_ = true;
    arrived_ = false;
    return true;
  }
  /// After a device failure: the newest copy that is whole in host memory and
  /// newer than the host arrays (the last begun once it has arrived, else the
  /// one before it) is written into them (host memory only) and `host_clock`
  /// becomes its clock. Errors leave the host arrays as they were. Drops the copies.
  template <class Backend>
  void adopt(Backend& b, Clock& host_clock) {
    if (active_ && clock_.step > host_clock.step) {
      try {
        if (!arrived_) arrived_ = b.checkpoint_arrived();  // a lost device throws here
      } catch (const std::exception&) {}
      try {
        if (arrived_ && b.checkpoint_restore(false)) {
          host_clock = clock_;
        } else if (has_prev_ && prev_.step > host_clock.step && b.checkpoint_restore(true)) {
          host_clock = prev_;
        }
      } catch (const std::exception&) {}
    }
    drop();
  }

 private:
  Clock clock_{}, prev_{};  ///< the last begun copy's clock, and the one before's
  bool active_ = false, arrived_ = false, has_prev_ = false;
};

}  // namespace ps
