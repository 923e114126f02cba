#include "render/cpu/picking.h"

namespace ps {

int64_t pick_particle(const ParticleTable& t, Vec2 p, float slack) {
  int64_t best = -1;
  float best_d2 = 0.f;
  const size_t n = t.size();
  const bool has_radius = t.radius.size() == n;
  for (size_t i = 0; i < n; ++i) {
    float dx = t.x[i] - p.x, dy = t.y[i] - p.y;
    float d2 = dx * dx + dy * dy;
    float r = (has_radius ? t.radius[i] : 0.f) + slack;
    if (d2 > r * r) continue;
    if (best < 0 || d2 < best_d2) {
      best = static_cast<int64_t>(i);
      best_d2 = d2;
    }
  }
  return best;
}

void particles_within(const ParticleTable& t, Vec2 c, float radius, std::vector<uint32_t>& out) {
  out.clear();
  const float r2 = radius * radius;
  for (size_t i = 0; i < t.size(); ++i) {
    float dx = t.x[i] - c.x, dy = t.y[i] - c.y;
    if (dx * dx + dy * dy <= r2) out.push_back(static_cast<uint32_t>(i));
  }
}

}  // namespace ps
