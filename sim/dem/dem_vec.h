/// Double-precision 2D vectors for the DEM.
///
/// Why double: a DEM step is tiny (dt ~ 1e-6 .. 1e-4 s), so one step moves a
/// particle by v dt ~ 1e-7 m, below the float spacing of a coordinate near
/// 1 m (1.2e-7). In float, slow particles would stop moving and contact
/// overlaps (1e-6 of the radius) would be pure round-off. MPM steps are 100x
/// longer, which is why sim/core/vec.h can stay float.
#pragma once
#include <cmath>
#include "sim/core/hd.h"
#include "sim/core/vec.h"

namespace ps {
namespace dem {

struct Vec2d {
  double x = 0.0, y = 0.0;
};

PS_HD Vec2d operator+(Vec2d a, Vec2d b) { return {a.x + b.x, a.y + b.y}; }
PS_HD Vec2d operator-(Vec2d a, Vec2d b) { return {a.x - b.x, a.y - b.y}; }
PS_HD Vec2d operator-(Vec2d a) { return {-a.x, -a.y}; }
PS_HD Vec2d operator*(double s, Vec2d a) { return {s * a.x, s * a.y}; }
PS_HD Vec2d operator*(Vec2d a, double s) { return {s * a.x, s * a.y}; }
PS_HD Vec2d operator/(Vec2d a, double s) { return {a.x / s, a.y / s}; }
PS_HD Vec2d& operator+=(Vec2d& a, Vec2d b) {
  a.x += b.x;
  a.y += b.y;
  return a;
}
PS_HD Vec2d& operator-=(Vec2d& a, Vec2d b) {
  a.x -= b.x;
  a.y -= b.y;
  return a;
}
PS_HD bool operator==(Vec2d a, Vec2d b) { return a.x == b.x && a.y == b.y; }
PS_HD double dot(Vec2d a, Vec2d b) { return a.x * b.x + a.y * b.y; }
/// z-component of (a, 0) x (b, 0).
PS_HD double cross(Vec2d a, Vec2d b) { return a.x * b.y - a.y * b.x; }
PS_HD double length2(Vec2d a) { return dot(a, a); }
PS_HD double length(Vec2d a) { return sqrt(dot(a, a)); }
/// Rotates +90 degrees: the in-plane result of (0, 0, 1) x (a, 0).
PS_HD Vec2d perp(Vec2d a) { return {-a.y, a.x}; }

inline Vec2d to_d(Vec2 v) { return {v.x, v.y}; }
inline Vec2 to_f(Vec2d v) { return {static_cast<float>(v.x), static_cast<float>(v.y)}; }

}  // namespace dem
}  // namespace ps
