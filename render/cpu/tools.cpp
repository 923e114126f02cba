#include "render/cpu/tools.h"

#include <algorithm>
#include <cmath>

namespace ps {

PointForce tool_point_force(const ToolSettings& s, Vec2 pos, bool pressed) {
  PointForce f;
  f.active = pressed && (s.tool == Tool::Attract || s.tool == Tool::Repel);
  f.pos = pos;
  f.radius = s.radius;
  f.strength = s.tool == Tool::Repel ? -std::fabs(s.force) : std::fabs(s.force);
  return f;
}

void tool_heat_lamps(const ToolSettings& s, Vec2 pos, bool pressed, std::vector<HeatLamp>& out) {
  out.clear();  // keeps the storage: no allocation per frame
  if (!pressed || s.tool != Tool::Heat || !(s.radius > 0.f) || !std::isfinite(pos.x) ||
      !std::isfinite(pos.y))
    return;
  HeatLamp L;
  L.pos = pos;
  L.radius = s.radius;
  L.power = std::clamp(s.heat_power, -kHeatPowerMax, kHeatPowerMax);
  out.push_back(L);
}

uint64_t PaintStroke::key(int64_t i, int64_t j) const {
  return (static_cast<uint64_t>(static_cast<uint32_t>(i)) << 32) | static_cast<uint32_t>(j);
}

void PaintStroke::begin(Vec2 p, float spacing, float radius, Vec2 lo, Vec2 hi,
                        const ParticleTable* existing, std::vector<Vec2>& out) {
  active_ = true;
  h_ = std::max(spacing, 1e-6f);
  r_ = std::max(radius, 0.5f * h_);
  lo_ = lo;
  hi_ = hi;
  emitted_ = 0;
  used_.clear();
  if (existing) {
    // A site is occupied when a particle lies within its lattice cell.
    for (size_t k = 0; k < existing->size(); ++k) {
      int64_t i = std::llround(existing->x[k] / h_), j = std::llround(existing->y[k] / h_);
      used_.insert(key(i, j));
    }
  }
  last_ = p;
  sweep(p, p, out);
}

void PaintStroke::extend(Vec2 p, std::vector<Vec2>& out) {
  if (!active_) return;
  sweep(last_, p, out);
  last_ = p;
}

void PaintStroke::sweep(Vec2 a, Vec2 b, std::vector<Vec2>& out) {
  // Every lattice site within r of the segment [a, b] (a capsule): gap-free
  // however fast the mouse moves.
  Vec2 lo{std::min(a.x, b.x) - r_, std::min(a.y, b.y) - r_},
      hi{std::max(a.x, b.x) + r_, std::max(a.y, b.y) + r_};
  int64_t i0 = static_cast<int64_t>(std::floor(lo.x / h_)),
          i1 = static_cast<int64_t>(std::ceil(hi.x / h_));
  int64_t j0 = static_cast<int64_t>(std::floor(lo.y / h_)),
          j1 = static_cast<int64_t>(std::ceil(hi.y / h_));
  Vec2 d = b - a;
  float dd = length2(d);
  for (int64_t j = j0; j <= j1; ++j) {
    for (int64_t i = i0; i <= i1; ++i) {
      Vec2 s{static_cast<float>(i) * h_, static_cast<float>(j) * h_};
      float t = dd > 0.f ? std::clamp(dot(s - a, d) / dd, 0.f, 1.f) : 0.f;
      if (length2(s - (a + t * d)) > r_ * r_) continue;
      if (s.x < lo_.x || s.y < lo_.y || s.x > hi_.x || s.y > hi_.y) continue;
      if (!used_.insert(key(i, j)).second) continue;
      out.push_back(s);
      ++emitted_;
    }
  }
}

float default_paint_spacing(const MpmWorld& w) { return 0.5f * w.grid.dx; }

void paintable_region(const MpmWorld& w, Vec2& lo, Vec2& hi) {
  float pad = w.grid.dx * static_cast<float>(w.solver.boundary_nodes);
  lo = w.grid.origin + Vec2{pad, pad};
  hi = w.grid.origin + Vec2{w.grid.width() - pad, w.grid.height() - pad};
}

size_t add_painted_particles(MpmWorld& w, const std::vector<Vec2>& sites, int material, float h,
                             Vec2 v, uint16_t group) {
  return w.add_particles(sites, material, h, v, group);
}

}  // namespace ps
