#include "sim/scene/dem_sgf.h"

#include <algorithm>
#include <memory>

namespace ps {

namespace {

std::function<bool(int64_t, dem::DemParticles&)> dem_hook(
    std::shared_ptr<SgfForceApplier> applier) {
  // Same contract as the MPM hook, in double precision: fext is set (not
  // accumulated) on every step that has forces, and cleared once after the
  // last one (`dirty`), so no stale force is left if the hook is removed.
  auto dirty = std::make_shared<bool>(true);
  return [applier, dirty](int64_t step, dem::DemParticles& p) {
    const size_t n = p.size();
    if (p.fext.size() != n) p.fext.resize(n);
    const bool active = !applier->schedule().active(step).empty();
    if (!active && !*dirty) return false;
    std::fill(p.fext.begin(), p.fext.end(), dem::Vec2d{});
    const bool any = active && (*applier)(step, p.id.data(), n, p.fext.data());
    *dirty = any;
    return any;
  };
}

}  // namespace

std::function<bool(int64_t, dem::DemParticles&)> make_dem_force_hook(const SgfList& list) {
  return dem_hook(std::make_shared<SgfForceApplier>(list));
}

std::function<bool(int64_t, dem::DemParticles&)> make_dem_force_hook(const SgfSet& set) {
  return dem_hook(std::make_shared<SgfForceApplier>(set));
}

}  // namespace ps
