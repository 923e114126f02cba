#include "render/cpu/body_tool.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ps {

bool body_from_drag(const BodyDraft& d, const rigid::RigidWorld& w, Vec2 lo, Vec2 hi,
                    float min_size, rigid::BodyDef& out, std::string* why) {
  auto fail = [&](const std::string& s) {
    if (why) *why = s;
    return false;
  };
  rigid::BodyDef b;
  rigid::PartDef p;
  Vec2 blo, bhi;
  if (d.shape == 1) {
    const float r = length(d.b - d.a);
    if (!(2.f * r >= min_size))
      return fail("too small: drag from the centre outwards to at least " +
                  std::to_string(0.5f * min_size));
    p.shape = ColliderShape::Disk;
    p.radius = r;
    b.position = rigid::Vec2d{d.a.x, d.a.y};
    blo = d.a - Vec2{r, r};
    bhi = d.a + Vec2{r, r};
  } else {
    blo = Vec2{std::min(d.a.x, d.b.x), std::min(d.a.y, d.b.y)};
    bhi = Vec2{std::max(d.a.x, d.b.x), std::max(d.a.y, d.b.y)};
    if (!(bhi.x - blo.x >= min_size && bhi.y - blo.y >= min_size))
      return fail("too small: drag a box at least " + std::to_string(min_size) + " wide and high");
    // The centre in float, as the scene file would read it back.
    const Vec2 c = 0.5f * (blo + bhi);
    const Vec2 h = 0.5f * (bhi - blo);
    p.shape = ColliderShape::Polygon;
    p.vertices = {{-h.x, -h.y}, {h.x, -h.y}, {h.x, h.y}, {-h.x, h.y}};
    b.position = rigid::Vec2d{c.x, c.y};
  }
  if (blo.x < lo.x || blo.y < lo.y || bhi.x > hi.x || bhi.y > hi.y)
    return fail("the body must lie inside the domain");
  if (!(d.density > 0.f)) return fail("the density must be positive");
  b.parts.push_back(p);
  b.type = rigid::BodyType::Dynamic;
  b.density = d.density;
  b.friction = d.friction;
  b.restitution = d.restitution;
  for (int n = 1;; ++n) {
    const std::string name = "drawn " + std::to_string(n);
    bool taken = false;
    for (size_t i = 0; i < w.body_count() && !taken; ++i)
      taken = w.def(static_cast<int>(i)).name == name;
    if (!taken) {
      b.name = name;
      break;
    }
  }
  // Light wood (300 kg/m^3) to dark steel (8000): log scale.
  const float t = std::clamp(std::log(d.density / 300.f) / std::log(8000.f / 300.f), 0.f, 1.f);
  const float wood[3] = {0.72f, 0.55f, 0.36f}, steel[3] = {0.42f, 0.45f, 0.50f};
  for (int k = 0; k < 3; ++k) b.color[k] = wood[k] + t * (steel[k] - wood[k]);
  out = b;
  return true;
}

ForceArrows force_arrows(Vec2 com, Vec2 weight, Vec2 force, float gap) {
  // Across gravity: perpendicular to the weight (x when there is none).
  const float wl = length(weight);
  const Vec2 down = wl > 0.f ? weight / wl : Vec2{0.f, -1.f};
  const Vec2 side{-down.y, down.x};
  // The force on the side its sideways part points to (so it leans away from the weight's line).
  const float s = dot(force, side) >= 0.f ? 1.f : -1.f;
  ForceArrows a;
  a.force.from = com + (s * gap) * side;
  a.force.to = a.force.from + force;
  a.weight.from = com - (s * gap) * side;
  a.weight.to = a.weight.from + weight;
  return a;
}

BodyForce mean_force(const double* j, double seconds) {
  BodyForce f;
  if (!(seconds > 0.0)) return f;
  f.fx = j[0] / seconds;
  f.fy = j[1] / seconds;
  f.torque = j[2] / seconds;
  return f;
}

}  // namespace ps
