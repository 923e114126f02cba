/// Long builds in the window: a scene of millions of particles takes seconds to
/// build, so the window builds it on a worker thread and, after a second, shows
/// what is being built, a progress bar and Cancel (Esc cancels too) instead of
/// freezing. Cancel makes the build throw ps::Cancelled at its next progress
/// report (sim/core/progress.h); the caller treats it as a failed load, so the
/// running scene, its comparison and its lesson stay as they were.
#pragma once
#include <functional>
#include <string>

namespace ps {

struct App;

/// Runs `build` on a worker thread and returns when it has finished,
/// rethrowing its exception here. `what` names it in the window ("dam_break").
/// Called inside an ImGui frame (the sync point) it ends that frame before it
/// draws its own and begins a new one after; outside a frame (the first scene,
/// before the main loop) it draws whole frames. Without an ImGui context it
/// builds on this thread.
void build_with_progress(App& app, const std::string& what, const std::function<void()>& build);

}  // namespace ps
