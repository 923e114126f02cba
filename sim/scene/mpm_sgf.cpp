#include "sim/scene/mpm_sgf.h"

#include <algorithm>
#include <memory>
#include <utility>

namespace ps {

namespace {

std::function<bool(int64_t, MpmParticles&)> mpm_hook(std::shared_ptr<SgfForceApplier> applier,
                                                     SgfMissingReport report) {
  // `dirty`: fext may hold forces from an earlier step and must be cleared.
  auto dirty = std::make_shared<bool>(true);
  return [applier, dirty, report](int64_t step, MpmParticles& p) {
    const size_t n = p.size();
    if (p.fext.size() != n) p.fext.resize(n);
    const bool active = !applier->schedule().active(step).empty();
    if (!active && !*dirty) return false;
    std::fill(p.fext.begin(), p.fext.end(), Vec2{});
    bool any = active && (*applier)(step, p.id.data(), n, p.fext.data());
    *dirty = any;
    if (report) {
      const std::vector<uint32_t> gone = applier->schedule().take_new_missing();
      if (!gone.empty()) report(step, gone, p);
    }
    return any;
  };
}

}  // namespace

std::function<bool(int64_t, MpmParticles&)> make_mpm_force_hook(const SgfList& list,
                                                                SgfMissingReport report) {
  return mpm_hook(std::make_shared<SgfForceApplier>(list), std::move(report));
}

std::function<bool(int64_t, MpmParticles&)> make_mpm_force_hook(const SgfSet& set,
                                                                SgfMissingReport report) {
  return mpm_hook(std::make_shared<SgfForceApplier>(set), std::move(report));
}

}  // namespace ps
