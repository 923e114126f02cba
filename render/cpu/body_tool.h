/// The Body tool (GL-free): a mouse drag becomes a Box2D body definition.
///   box   drag from one corner to the opposite one
///   disk  drag from the centre to the rim
/// and the force readout of a body (what the matter put on it over the last
/// step). Used by the window (render/panel_rigid.cpp); tested in
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
bool body_from_drag(const BodyDraft& d, const rigid::RigidWorld& w, Vec2 lo, Vec2 hi, float min_size,
                    rigid::BodyDef& out, std::string* why);

/// Mean force and torque (about the centre of mass) over `seconds` from the
/// impulse triple j = (Jx, Jy, L); zero when seconds <= 0.
struct BodyForce {
  double fx = 0.0, fy = 0.0, torque = 0.0;
};
BodyForce mean_force(const double* j, double seconds);

}  // namespace ps
