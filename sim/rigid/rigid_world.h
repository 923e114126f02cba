/// Rigid bodies: Box2D 2.4 (Debian's libbox2d-dev) is the solver;
/// this module is the scene-facing wrapper: SI units in and out, bodies by
/// index, the parts the MPM grid and the DEM see, the mouse joint, and the
/// impulses the matter returns. See docs/rigid.md.
///
/// Units. Box2D is tuned for objects of 0.1-10 "meters" (its slop is 0.005 and
/// a polygon has a 0.01 skin), while the sandbox's domains are about 1 m wide.
/// Lengths are therefore scaled by `length_scale` s on the way into Box2D
/// (velocities by s, gravity by s) and masses are kept in kg (Box2D density =
/// density x depth / s^2), so impulses scale by s and angular impulses and
/// inertias by s^2. The 2D bodies have a `depth` (m): mass = density x area x
/// depth (1 m in MPM scenes, whose matter is per metre of depth).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include "sim/core/names.h"
#include "sim/dem/dem_vec.h"
#include "sim/mpm/mpm_collider.h"

class b2World;
class b2Body;
class b2MouseJoint;
class b2Joint;

namespace ps {
namespace rigid {

using dem::Vec2d;

enum class BodyType : uint8_t { Static = 0, Kinematic = 1, Dynamic = 2 };
inline constexpr NameTable<BodyType, 3> kBodyTypeNames{0, {"static", "kinematic", "dynamic"}};
const char* body_type_name(BodyType t);

/// One convex part, in the body's frame.
struct PartDef {
  ColliderShape shape = ColliderShape::Polygon;
  std::vector<Vec2d> vertices;  ///< polygon, counter-clockwise, convex, 3..8
  Vec2d center{0.0, 0.0};       ///< disk centre
  double radius = 0.0;          ///< disk radius
};

struct BodyDef {
  std::string name;
  BodyType type = BodyType::Dynamic;
  std::vector<PartDef> parts;
  Vec2d position{0.0, 0.0};  ///< body origin (world)
  double angle = 0.0;        ///< rad
  Vec2d velocity{0.0, 0.0};  ///< of the centre of mass
  double angular_velocity = 0.0;
  double density = 1000.0;  ///< kg/m^3 (x depth: kg/m^2 of area)
  double friction = 0.5;    ///< Coulomb, body-body (geometric mean in Box2D) and matter-body
  double restitution = 0.0;
  bool fixed_rotation = false;
  bool bullet = false;
  float color[3] = {0.55f, 0.42f, 0.30f};
  int dem_material = 0;  ///< DEM material index for grain contacts
};

enum class JointType : uint8_t { Revolute = 0 };

struct JointDef {
  JointType type = JointType::Revolute;
  int body_a = 0;
  int body_b = -1;         ///< -1: pinned to the world
  Vec2d anchor{0.0, 0.0};  ///< world point
  bool motor = false;
  double motor_speed = 0.0;       ///< rad/s
  double max_motor_torque = 0.0;  ///< N m
  bool limit = false;
  double lower = 0.0, upper = 0.0;  ///< rad, relative angle
};

/// A body's state in SI units.
struct BodyState {
  Vec2d position;  ///< origin
  double angle = 0.0;
  Vec2d com;       ///< centre of mass (world)
  Vec2d velocity;  ///< of the centre of mass
  double omega = 0.0;
  double mass = 0.0;     ///< kg (0 for static and kinematic bodies)
  double inertia = 0.0;  ///< about the centre of mass, kg m^2
};

/// One part (fixture) of a body, placed in the world (double precision).
struct WorldPart {
  ColliderShape shape = ColliderShape::Polygon;
  int count = 0;                  ///< polygon vertices, counter-clockwise
  Vec2d v[kColliderMaxVertices];  ///< polygon vertices; v[0] = disk centre
  double radius = 0.0;            ///< disk radius
  int body = 0;
};

struct RigidTotals {
  double mass = 0.0;
  double momentum[2] = {0.0, 0.0};
  double angular_momentum = 0.0;  ///< about the point given to totals()
  double kinetic_energy = 0.0;
};

/// A contact point between two bodies (for drawing), with its normal impulse.
struct BodyContact {
  Vec2d point, normal;
  double impulse = 0.0;
};

class RigidWorld {
 public:
  /// gravity in m/s^2; depth in m; length_scale: see the file comment.
  RigidWorld(Vec2d gravity, double depth, double length_scale);
  ~RigidWorld();
  RigidWorld(const RigidWorld&) = delete;
  RigidWorld& operator=(const RigidWorld&) = delete;

  /// Adds a body; parts must already be valid (rigid_scene.cpp checks them).
  int add_body(const BodyDef& def);
  int add_joint(const JointDef& def);
  /// Static edges around [lo, hi] (the domain's walls), friction mu.
  void add_box_walls(Vec2d lo, Vec2d hi, double mu);

  size_t body_count() const { return bodies_.size(); }
  const BodyDef& def(int b) const { return defs_[static_cast<size_t>(b)]; }
  BodyState state(int b) const;
  const std::vector<JointDef>& joints() const { return joint_defs_; }

  /// Adds an impulse (N s) through the centre of mass and an angular impulse
  /// (N m s) to a dynamic body; ignored for static and kinematic bodies.
  void apply_impulse(int b, Vec2d J, double L);
  /// Advances Box2D by dt (8 velocity and 3 position iterations).
  void step(double dt);
  double time() const { return time_; }

  /// Every part at the current pose, in body order then fixture order.
  void world_parts(std::vector<WorldPart>& out) const;
  /// The same parts as MPM colliders (with the body's velocity, spin, centre
  /// of mass and friction); RigidCollider::body names the body.
  void mpm_colliders(std::vector<RigidCollider>& out) const;
  /// Outline of each part in world coordinates (disks: 32-gons), for drawing.
  void outline(int b, std::vector<std::vector<Vec2d>>& parts) const;
  /// Contacts between bodies of the last step (for drawing).
  void contacts(std::vector<BodyContact>& out) const;

  /// The body whose part contains p (topmost = highest index), or -1.
  int body_at(Vec2d p) const;
  /// Mouse joint: drag body b by the world point `p` towards `target`.
  bool grab(int b, Vec2d p);
  void grab_target(Vec2d target);
  void release();
  int grabbed() const { return grabbed_; }

  /// Live edits (the window's body panel): the body keeps its pose and velocity.
  void set_density(int b, double density);
  void set_friction(int b, double friction);
  void set_restitution(int b, double restitution);

  /// Dynamic bodies' mass, momentum, angular momentum about `about`, kinetic energy.
  RigidTotals totals(Vec2d about) const;
  /// Hash of every body's pose and velocity (bit patterns of Box2D's floats).
  uint64_t hash() const;
  double length_scale() const { return s_; }
  double depth() const { return depth_; }
  Vec2d gravity() const { return gravity_; }  ///< m/s^2

 private:
  std::unique_ptr<b2World> world_;
  std::vector<b2Body*> bodies_;
  std::vector<BodyDef> defs_;
  std::vector<b2Joint*> joints_;
  std::vector<JointDef> joint_defs_;
  b2Body* ground_ = nullptr;
  b2MouseJoint* mouse_ = nullptr;
  int grabbed_ = -1;
  double s_ = 1.0, depth_ = 1.0, time_ = 0.0;
  Vec2d gravity_{0.0, 0.0};
};

}  // namespace rigid
}  // namespace ps
