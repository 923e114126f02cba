/// Progress of long work on this thread, and a way to cancel it.
///
/// A scene of millions of particles takes seconds to build. The loaders say how
/// far they are (`progress("bodies[2]", 0.4)`); whoever started the build
/// listens on the same thread with a `ProgressScope`: the command line prints a
/// line now and then, the window moves a bar and offers Cancel. A listener
/// that returns false cancels: the next `progress` call throws `Cancelled`, so
/// the half-built scene unwinds like any failed load and nothing else changes.
/// Without a listener `progress` costs a thread-local load.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>

namespace ps {

/// Thrown by `progress` when the listener asked to stop.
struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("cancelled") {}
};

/// `stage` names what is being built ("bodies[2]", "bonds"), `fraction` is the
/// share of the whole build done (0 to 1). Returns false to cancel.
using ProgressListener = std::function<bool(const std::string& stage, double fraction)>;

/// Installs a listener for this thread until destroyed (the previous one
/// comes back: scopes nest).
class ProgressScope {
 public:
  explicit ProgressScope(ProgressListener listener);
  ~ProgressScope();
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;

 private:
  ProgressListener listener_;
  ProgressListener* previous_;
};

/// Reports progress to this thread's listener, if any; throws Cancelled when
/// it returns false.
void progress(const std::string& stage, double fraction);
/// True when this thread has a listener (a loader may skip building stage names).
bool progress_listened();

}  // namespace ps
