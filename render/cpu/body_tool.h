/// The Body tool (GL-free): a mouse drag becomes a Box2D body definition.
///   box   drag from one corner to the opposite one
///   disk  drag from the centre to the rim
/// and the force readout of a body (what the matter put on it over the last
/// step). Used by the window (render/feature_rigid.cpp); tested in
/// tests/render/test_body_tool.cpp.
#pragma once
#include <string>
#include "sim/rigid/rigid_world.h"

namespace ps {

struct BodyDraft {
  int shape = 0;  ///< 0 box, 1 disk
  Vec2 a{0.f, 0.f}, b{0.f, 0.f};
  float density = 500.f, friction = 0.5f, restitution = 0.1f;
};

/// Fills `out` from the drag. False, with the reason in `why`, when the body
/// would be smaller than `min_size` (world units) across, or would not lie
/// inside [lo, hi] entirely. The name is "drawn N" with the smallest N not
/// taken in `w`; the colour depends on the density (light wood .. dark steel).
bool body_from_drag(const BodyDraft& d, const rigid::RigidWorld& w, Vec2 lo, Vec2 hi,
                    float min_size, rigid::BodyDef& out, std::string* why);

/// Mean force and torque (about the centre of mass) over `seconds` from the
/// impulse triple j = (Jx, Jy, L); zero when seconds <= 0.
struct BodyForce {
  double fx = 0.0, fy = 0.0, torque = 0.0;
};
BodyForce mean_force(const double* j, double seconds);

/// The Bodies panel's *forces* overlay for one body: its weight (grey) and the
/// matter's force on it (cyan), each a straight arrow from its own anchor. The
/// anchors sit `gap` either side of the centre of mass across gravity (level
/// with it along gravity, so a floating body's equal and opposite arrows start
/// side by side and compare at a glance), the force on the side its sideways
/// part points to: the two never overlap, so neither is drawn kinked over the
/// other (one arrow from the centre of mass each, at an angle, read as one
/// bent line).
struct ArrowSeg {
  Vec2 from{0.f, 0.f}, to{0.f, 0.f};
};
struct ForceArrows {
  ArrowSeg weight, force;
};
/// `weight` and `force` are the arrows' vectors (world units, scaled for the
/// screen); `gap` is in world units (the window: 5 pixels).
ForceArrows force_arrows(Vec2 com, Vec2 weight, Vec2 force, float gap);

}  // namespace ps
