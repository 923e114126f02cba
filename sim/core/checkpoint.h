/// The worlds' side of a device backend's periodic checkpoint (MpmWorld,
/// DemWorld; the CUDA side is sim/cuda/background_copy.cuh): every
/// `interval` steps the backend starts copying its state to host memory in
/// the background; the world notes the clock of that moment, asks now and
/// then whether the copy has arrived, and after a device failure rolls back
/// to it when it is newer than the host arrays. A backend without background
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
    clock_ = now;
    active_ = true;
    arrived_ = false;
    return true;
  }
  /// After a device failure: a copy newer than the host arrays that has
  /// arrived is written into them (host memory only) and `host_clock` becomes
  /// its clock. Errors leave the host arrays as they were. Drops the copy.
  template <class Backend>
  void adopt(Backend& b, Clock& host_clock) {
    if (active_ && clock_.step > host_clock.step) {
      try {
        if (!arrived_) arrived_ = b.checkpoint_arrived();
        if (arrived_ && b.checkpoint_restore()) host_clock = clock_;
      } catch (const std::exception&) {
      }
    }
    drop();
  }

 private:
  Clock clock_{};
  bool active_ = false, arrived_ = false;
};

}  // namespace ps
