/// Moving rigid boundaries on the MPM grid: one convex part of a
/// rigid body (a disk or a convex polygon, placed at the substep's start) and
/// the per-node rule that couples it with the matter, two-way.
///
/// Grid rule (the moving-boundary condition of Stomakhin et al. 2013, sec. 8,
/// "collision objects", with the body's rigid velocity field): a node whose
/// position lies inside the part or within half a cell of its surface
/// (signed distance phi <= kColliderSkin dx) has its velocity
/// relative to the body, v_rel = v - v_body(x_i), projected:
///   vn = v_rel . n (n: outward normal of the nearest face); if vn < 0
///   (approaching), the normal part is removed and the tangential part is
///   reduced by Coulomb friction mu |vn| (to zero when |v_t| <= mu |vn|).
/// Separating nodes are left alone. The momentum the node gains,
/// m_i (v' - v), is taken from the body: the part's impulse accumulates
/// -m_i (v' - v) and its angular impulse -(x_i - c) x m_i (v' - v) about the
/// body's centre of mass c. Matter + body momentum is therefore conserved
/// exactly by construction (G2P moves grid momentum to the particles
/// unchanged for PIC, APIC and FLIP).
///
/// Particle rule: after advection a particle whose centre ended inside a part
/// is moved back to its surface along the normal (position only; momentum is
/// untouched). This keeps particles out of bodies thinner than the stencil
/// (a body must be about 2 cells thick for the grid rule alone).
#pragma once
#include <cstdint>
#include "sim/core/hd.h"
#include "sim/core/vec.h"

namespace ps {

constexpr int kColliderMaxVertices = 8;  // Box2D's b2_maxPolygonVertices

enum class ColliderShape : uint8_t { Disk = 0, Polygon = 1 };

struct RigidCollider {
  ColliderShape shape = ColliderShape::Disk;
  uint8_t count = 0;                  ///< polygon vertices (counter-clockwise)
  Vec2 v[kColliderMaxVertices] = {};  ///< polygon vertices; v[0] = centre of a disk
  float radius = 0.f;                 ///< disk radius
  Vec2 lo, hi;                        ///< bounding box (world)
  Vec2 c;                             ///< the body's centre of mass
  Vec2 vel;                           ///< velocity of c
  float omega = 0.f;                  ///< angular velocity (rad/s, counter-clockwise)
  float friction = 0.f;               ///< Coulomb coefficient between matter and body
  int body = 0;  ///< owning body index (impulses are summed per body by the caller)
};

namespace mpm {

/// The band of the grid rule, in cells. With phi <= 0 the first constrained
/// row of nodes lies on average half a cell inside the surface and the matter
/// reaches about 0.8 cells into the body (a floating box of density 0.5 sank
/// 9 % too deep at dx = 1/128); half a cell puts that row on the surface on
/// average. Measured with it: tests/sim/rigid, `sandbox verify`'s
/// rigid.archimedes.
constexpr float kColliderSkin = 0.5f;

/// Signed distance from x to the part's surface (negative inside) and the
/// outward unit normal of the nearest surface point.
PS_HD float collider_distance(const RigidCollider& c, Vec2 x, Vec2& n) {
  if (c.shape == ColliderShape::Disk) {
    const Vec2 d = x - c.v[0];
    const float r = length(d);
    n = r > 0.f ? d / r : Vec2{0.f, 1.f};
    return r - c.radius;
  }
  // Convex polygon: outside, the distance to the nearest edge point; inside,
  // minus the distance to the nearest edge (its outward normal).
  float best_in = -3.0e38f;
  Vec2 n_in{0.f, 1.f};
  bool outside = false;
  float best_out = 3.0e38f;
  Vec2 n_out{0.f, 1.f};
  for (int k = 0; k < c.count; ++k) {
    const Vec2 a = c.v[k];
    const Vec2 b = c.v[k + 1 < c.count ? k + 1 : 0];
    const Vec2 e = b - a;
    const float L = length(e);
    if (!(L > 0.f)) continue;
    const Vec2 nk{e.y / L, -e.x / L};  // outward for counter-clockwise vertices
    const float s = dot(x - a, nk);
    if (s > 0.f) outside = true;
    if (s > best_in) {
      best_in = s;
      n_in = nk;
    }
    float t = dot(x - a, e) / (L * L);
    t = t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
    const Vec2 d = x - (a + t * e);
    const float dl = length(d);
    if (dl < best_out) {
      best_out = dl;
      n_out = dl > 0.f ? d / dl : nk;
    }
  }
  if (outside) {
    n = n_out;
    return best_out;
  }
  n = n_in;
  return best_in;
}

/// The body's velocity at x.
PS_HD Vec2 collider_velocity(const RigidCollider& c, Vec2 x) {
  const Vec2 r = x - c.c;
  return c.vel + c.omega * perp(r);
}

/// p - from turned by the angle of (cs, sn), placed at `to`.
PS_HD Vec2 turned_about(Vec2 p, Vec2 from, Vec2 to, float cs, float sn) {
  const Vec2 r = p - from;
  return to + Vec2{cs * r.x - sn * r.y, sn * r.x + cs * r.y};
}

/// The part after tau seconds of its own rigid motion (the batched exchange,
/// sim/scene/coupled.h): the centre of mass advances by vel tau and the shape
/// turns by omega tau about it; vel and omega are kept. Summing substeps,
/// centre += vel dt and angle += omega dt, gives the same pose, so a substep
/// computes it from the placed part and the time since placement instead of
/// accumulating rounding. tau = 0 returns the part unchanged, bit for bit.
PS_HD RigidCollider collider_moved(const RigidCollider& c0, float tau) {
  RigidCollider c = c0;
  if (tau == 0.f) return c;
  const float th = c0.omega * tau;
  const float cs = cosf(th), sn = sinf(th);
  c.c = c0.c + tau * c0.vel;
  if (c0.shape == ColliderShape::Disk) {
    c.v[0] = turned_about(c0.v[0], c0.c, c.c, cs, sn);
    c.lo = c.v[0] - Vec2{c0.radius, c0.radius};
    c.hi = c.v[0] + Vec2{c0.radius, c0.radius};
    return c;
  }
  const int n = c0.count < kColliderMaxVertices ? c0.count : kColliderMaxVertices;
  for (int k = 0; k < n; ++k) {
    c.v[k] = turned_about(c0.v[k], c0.c, c.c, cs, sn);
    if (k == 0) {
      c.lo = c.v[0];
      c.hi = c.v[0];
    }
    c.lo = Vec2{fminf(c.lo.x, c.v[k].x), fminf(c.lo.y, c.v[k].y)};
    c.hi = Vec2{fmaxf(c.hi.x, c.v[k].x), fmaxf(c.hi.y, c.v[k].y)};
  }
  return c;
}

/// False when x is farther than `band` from collider_moved(c0, tau): the part
/// turns about the body's centre of mass c, so it stays within the distance
/// from c to the placed bounding box's farthest corner of c's moved position.
/// A cheap test before building the moved part (true may still be out of reach).
PS_HD bool moved_collider_may_reach(const RigidCollider& c0, float tau, Vec2 x, float band) {
  const Vec2 ct = c0.c + tau * c0.vel;
  const float rx = fmaxf(c0.c.x - c0.lo.x, c0.hi.x - c0.c.x),
              ry = fmaxf(c0.c.y - c0.lo.y, c0.hi.y - c0.c.y);
  const float reach = sqrtf(rx * rx + ry * ry) + band;
  return length2(x - ct) <= reach * reach;
}

PS_HD bool collider_bbox_contains(const RigidCollider& c, Vec2 x) {
  return x.x >= c.lo.x && x.x <= c.hi.x && x.y >= c.lo.y && x.y <= c.hi.y;
}

/// The grid rule for one node at xi with velocity v (edited in place).
/// Returns true when the node was inside the part and approaching it.
PS_HD bool collide_node(const RigidCollider& c, Vec2 xi, Vec2& v, float skin) {
  if (!(xi.x >= c.lo.x - skin && xi.x <= c.hi.x + skin && xi.y >= c.lo.y - skin &&
        xi.y <= c.hi.y + skin))
    return false;
  Vec2 n;
  if (collider_distance(c, xi, n) > skin) return false;
  const Vec2 vb = collider_velocity(c, xi);
  Vec2 vr = v - vb;
  const float vn = dot(vr, n);
  if (!(vn < 0.f)) return false;
  Vec2 vt = vr - vn * n;
  const float lt = length(vt);
  const float cap = -c.friction * vn;  // > 0
  vr = lt <= cap ? Vec2{0.f, 0.f} : vt - (cap / lt) * vt;
  v = vb + vr;
  return true;
}

/// The particle rule: a particle of half-size r (half its rest spacing,
/// 0.5 sqrt(vol0)) whose centre came closer than r to the part, or inside
/// it, is moved out along the normal to distance r, so its volume stays
/// outside the body.
PS_HD bool push_out(const RigidCollider& c, Vec2& x, float r) {
  if (!(x.x >= c.lo.x - r && x.x <= c.hi.x + r && x.y >= c.lo.y - r && x.y <= c.hi.y + r))
    return false;
  Vec2 n;
  const float d = collider_distance(c, x, n);
  if (d >= r) return false;
  x = x + (r - d) * n;
  return true;
}

/// The volume channel's mirror across a part (ghost particles, as the walls'
/// mpm::wall_mirrored_volume does at the domain's edge): a node xi within
/// `reach` (the kernel's half-width) of the part's surface, or inside the
/// part however deep, reads besides its own deposit the deposit at its image
/// across the surface, m = xi - 2 phi n, returned in m. Water resting against
/// a body then reads full at the nodes around the face, as against a wall,
/// instead of a support half empty, which the interior test
/// (volume_node_interior) would leave uncorrected; and a gap between the
/// water and the face reads as thinned water, which the correction closes.
/// Deep inside, a node mirrors the matter beside the body (water under and
/// around a floating one, air above it). The face is the surface itself, not
/// the grid rule's band (kColliderSkin): mirrored a quarter of a cell out,
/// the correction kept that much water out and a floating box of half
/// water's density rode 2.5 % high (docs/rigid.md).
PS_HD bool body_mirror_point(const RigidCollider& c, Vec2 xi, float reach, Vec2& m) {
  if (!(xi.x >= c.lo.x - reach && xi.x <= c.hi.x + reach && xi.y >= c.lo.y - reach &&
        xi.y <= c.hi.y + reach))
    return false;
  Vec2 n;
  const float d = collider_distance(c, xi, n);
  if (!(d < reach)) return false;
  m = xi - (2.f * d) * n;
  return true;
}

}  // namespace mpm
}  // namespace ps
