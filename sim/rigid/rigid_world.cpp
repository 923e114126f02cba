#include "sim/rigid/rigid_world.h"

#include <box2d/box2d.h>
#include <cmath>
#include <cstring>
#include "sim/core/hash.h"

namespace ps {
namespace rigid {

const char* body_type_name(BodyType t) { return kBodyTypeNames(t); }

namespace {

b2Vec2 to_b2(Vec2d p, double s) {
  return b2Vec2(static_cast<float>(p.x * s), static_cast<float>(p.y * s));
}
Vec2d from_b2(const b2Vec2& p, double s) { return Vec2d{p.x / s, p.y / s}; }

// Box2D density giving mass in kg: rho_b2 * (s^2 A) = rho * depth * A.
float b2_density(double density, double depth, double s) {
  return static_cast<float>(density * depth / (s * s));
}

}  // namespace

RigidWorld::RigidWorld(Vec2d gravity, double depth, double length_scale)
    : world_(std::make_unique<b2World>(to_b2(gravity, length_scale))),
      s_(length_scale),
      depth_(depth),
      gravity_(gravity) {
  // Bodies resting in a fluid take impulses every substep; sleeping would
  // freeze them between wake-ups.
  world_->SetAllowSleeping(false);
  b2BodyDef gd;
  ground_ = world_->CreateBody(&gd);
}

RigidWorld::~RigidWorld() = default;

int RigidWorld::add_body(const BodyDef& d) {
  b2BodyDef bd;
  bd.type = d.type == BodyType::Static
                ? b2_staticBody
                : (d.type == BodyType::Kinematic ? b2_kinematicBody : b2_dynamicBody);
  bd.position = to_b2(d.position, s_);
  bd.angle = static_cast<float>(d.angle);
  bd.fixedRotation = d.fixed_rotation;
  bd.bullet = d.bullet;
  b2Body* b = world_->CreateBody(&bd);
  for (const PartDef& p : d.parts) {
    b2FixtureDef fd;
    b2CircleShape circle;
    b2PolygonShape poly;
    if (p.shape == ColliderShape::Disk) {
      circle.m_p = to_b2(p.center, s_);
      circle.m_radius = static_cast<float>(p.radius * s_);
      fd.shape = &circle;
    } else {
      b2Vec2 v[b2_maxPolygonVertices];
      const int n = static_cast<int>(p.vertices.size());
      for (int k = 0; k < n; ++k) v[k] = to_b2(p.vertices[static_cast<size_t>(k)], s_);
      poly.Set(v, n);
      fd.shape = &poly;
    }
    fd.density = b2_density(d.density, depth_, s_);
    fd.friction = static_cast<float>(d.friction);
    fd.restitution = static_cast<float>(d.restitution);
    b->CreateFixture(&fd);
  }
  // Box2D's velocity is the centre of mass's.
  b->SetLinearVelocity(to_b2(d.velocity, s_));
  b->SetAngularVelocity(static_cast<float>(d.angular_velocity));
  bodies_.push_back(b);
  defs_.push_back(d);
  return static_cast<int>(bodies_.size()) - 1;
}

int RigidWorld::add_joint(const JointDef& d) {
  b2Body* a = bodies_[static_cast<size_t>(d.body_a)];
  b2Body* b = d.body_b < 0 ? ground_ : bodies_[static_cast<size_t>(d.body_b)];
  b2RevoluteJointDef jd;
  jd.Initialize(b, a, to_b2(d.anchor, s_));  // angle measured as a's rotation relative to b
  jd.enableMotor = d.motor;
  jd.motorSpeed = static_cast<float>(d.motor_speed);
  // Torque in Box2D units: N m x s^2 (force x s, arm x s).
  jd.maxMotorTorque = static_cast<float>(d.max_motor_torque * s_ * s_);
  jd.enableLimit = d.limit;
  jd.lowerAngle = static_cast<float>(d.lower);
  jd.upperAngle = static_cast<float>(d.upper);
  joints_.push_back(world_->CreateJoint(&jd));
  joint_defs_.push_back(d);
  return static_cast<int>(joints_.size()) - 1;
}

void RigidWorld::add_box_walls(Vec2d lo, Vec2d hi, double mu) {
  const Vec2d c[4] = {lo, Vec2d{hi.x, lo.y}, hi, Vec2d{lo.x, hi.y}};
  for (int k = 0; k < 4; ++k) {
    b2EdgeShape e;
    e.SetTwoSided(to_b2(c[k], s_), to_b2(c[(k + 1) % 4], s_));
    b2FixtureDef fd;
    fd.shape = &e;
    fd.friction = static_cast<float>(mu);
    ground_->CreateFixture(&fd);
  }
}

BodyState RigidWorld::state(int i) const {
  const b2Body* b = bodies_[static_cast<size_t>(i)];
  BodyState st;
  st.position = from_b2(b->GetPosition(), s_);
  st.angle = b->GetAngle();
  st.com = from_b2(b->GetWorldCenter(), s_);
  st.velocity = from_b2(b->GetLinearVelocity(), s_);
  st.omega = b->GetAngularVelocity();
  if (b->GetType() == b2_dynamicBody) {
    st.mass = b->GetMass();
    // GetInertia is about the body origin; move it to the centre of mass.
    const b2Vec2 lc = b->GetLocalCenter();
    st.inertia = (b->GetInertia() - b->GetMass() * b2Dot(lc, lc)) / (s_ * s_);
  }
  return st;
}

void RigidWorld::apply_impulse(int i, Vec2d J, double L) {
  b2Body* b = bodies_[static_cast<size_t>(i)];
  if (b->GetType() != b2_dynamicBody) return;
  b->ApplyLinearImpulseToCenter(to_b2(J, s_), true);
  b->ApplyAngularImpulse(static_cast<float>(L * s_ * s_), true);
}

void RigidWorld::step(double dt) {
  world_->Step(static_cast<float>(dt), 8, 3);
  time_ += dt;
}

void RigidWorld::world_parts(std::vector<WorldPart>& out) const {
  out.clear();
  for (size_t i = 0; i < bodies_.size(); ++i) {
    const b2Body* b = bodies_[i];
    const b2Transform& xf = b->GetTransform();
    for (const b2Fixture* f = b->GetFixtureList(); f; f = f->GetNext()) {
      WorldPart p;
      p.body = static_cast<int>(i);
      if (f->GetType() == b2Shape::e_circle) {
        const auto* cs = static_cast<const b2CircleShape*>(f->GetShape());
        p.shape = ColliderShape::Disk;
        p.v[0] = from_b2(b2Mul(xf, cs->m_p), s_);
        p.radius = cs->m_radius / s_;
      } else {
        const auto* ps = static_cast<const b2PolygonShape*>(f->GetShape());
        p.shape = ColliderShape::Polygon;
        p.count = ps->m_count;
        for (int k = 0; k < ps->m_count; ++k) p.v[k] = from_b2(b2Mul(xf, ps->m_vertices[k]), s_);
      }
      out.push_back(p);
    }
  }
}

void RigidWorld::mpm_colliders(std::vector<RigidCollider>& out) const {
  std::vector<WorldPart> parts;
  world_parts(parts);
  out.clear();
  auto f = [](double x) { return static_cast<float>(x); };
  for (const WorldPart& p : parts) {
    const BodyState st = state(p.body);
    RigidCollider c;
    c.body = p.body;
    c.c = Vec2{f(st.com.x), f(st.com.y)};
    c.vel = Vec2{f(st.velocity.x), f(st.velocity.y)};
    c.omega = f(st.omega);
    c.friction = f(defs_[static_cast<size_t>(p.body)].friction);
    c.shape = p.shape;
    Vec2d lo{1e300, 1e300}, hi{-1e300, -1e300};
    auto grow = [&](Vec2d q, double r) {
      lo.x = std::min(lo.x, q.x - r);
      lo.y = std::min(lo.y, q.y - r);
      hi.x = std::max(hi.x, q.x + r);
      hi.y = std::max(hi.y, q.y + r);
    };
    if (p.shape == ColliderShape::Disk) {
      c.v[0] = Vec2{f(p.v[0].x), f(p.v[0].y)};
      c.radius = f(p.radius);
      grow(p.v[0], p.radius);
    } else {
      c.count = static_cast<uint8_t>(p.count);
      for (int k = 0; k < p.count; ++k) {
        c.v[k] = Vec2{f(p.v[k].x), f(p.v[k].y)};
        grow(p.v[k], 0.0);
      }
    }
    c.lo = Vec2{f(lo.x), f(lo.y)};
    c.hi = Vec2{f(hi.x), f(hi.y)};
    out.push_back(c);
  }
}

void RigidWorld::outline(int i, std::vector<std::vector<Vec2d>>& parts) const {
  parts.clear();
  const b2Body* b = bodies_[static_cast<size_t>(i)];
  const b2Transform& xf = b->GetTransform();
  for (const b2Fixture* f = b->GetFixtureList(); f; f = f->GetNext()) {
    std::vector<Vec2d> poly;
    if (f->GetType() == b2Shape::e_circle) {
      const auto* cs = static_cast<const b2CircleShape*>(f->GetShape());
      const Vec2d p = from_b2(b2Mul(xf, cs->m_p), s_);
      const double r = cs->m_radius / s_;
      const double a0 = b->GetAngle();
      for (int k = 0; k < 32; ++k) {
        const double a = a0 + 2.0 * 3.14159265358979323846 * k / 32.0;
        poly.push_back(Vec2d{p.x + r * std::cos(a), p.y + r * std::sin(a)});
      }
    } else {
      const auto* ps = static_cast<const b2PolygonShape*>(f->GetShape());
      for (int k = 0; k < ps->m_count; ++k)
        poly.push_back(from_b2(b2Mul(xf, ps->m_vertices[k]), s_));
    }
    parts.push_back(std::move(poly));
  }
}

void RigidWorld::contacts(std::vector<BodyContact>& out) const {
  out.clear();
  for (const b2Contact* c = world_->GetContactList(); c; c = c->GetNext()) {
    if (!c->IsTouching()) continue;
    b2WorldManifold wm;
    c->GetWorldManifold(&wm);
    const b2Manifold* m = c->GetManifold();
    for (int k = 0; k < m->pointCount; ++k) {
      BodyContact bc;
      bc.point = from_b2(wm.points[k], s_);
      bc.normal = Vec2d{wm.normal.x, wm.normal.y};
      bc.impulse = m->points[k].normalImpulse / s_;  // N s
      out.push_back(bc);
    }
  }
}

int RigidWorld::body_at(Vec2d p) const {
  const b2Vec2 q = to_b2(p, s_);
  for (int i = static_cast<int>(bodies_.size()) - 1; i >= 0; --i)
    for (const b2Fixture* f = bodies_[static_cast<size_t>(i)]->GetFixtureList(); f;
         f = f->GetNext())
      if (f->TestPoint(q)) return i;
  return -1;
}

bool RigidWorld::grab(int i, Vec2d p) {
  release();
  if (i < 0 || i >= static_cast<int>(bodies_.size())) return false;
  b2Body* b = bodies_[static_cast<size_t>(i)];
  if (b->GetType() != b2_dynamicBody) return false;
  b2MouseJointDef md;
  md.bodyA = ground_;
  md.bodyB = b;
  md.target = to_b2(p, s_);
  // Box2D's testbed settings: a 5 Hz, 0.7-damped spring up to 1000 body weights.
  md.maxForce = 1000.0f * b->GetMass() * static_cast<float>(9.81 * s_);
  b2LinearStiffness(md.stiffness, md.damping, 5.0f, 0.7f, md.bodyA, md.bodyB);
  mouse_ = static_cast<b2MouseJoint*>(world_->CreateJoint(&md));
  grabbed_ = i;
  return true;
}

void RigidWorld::grab_target(Vec2d t) {
  if (mouse_) mouse_->SetTarget(to_b2(t, s_));
}

void RigidWorld::release() {
  if (mouse_) world_->DestroyJoint(mouse_);
  mouse_ = nullptr;
  grabbed_ = -1;
}

void RigidWorld::set_density(int i, double density) {
  b2Body* b = bodies_[static_cast<size_t>(i)];
  defs_[static_cast<size_t>(i)].density = density;
  for (b2Fixture* f = b->GetFixtureList(); f; f = f->GetNext())
    f->SetDensity(b2_density(density, depth_, s_));
  b->ResetMassData();
}

void RigidWorld::set_friction(int i, double friction) {
  defs_[static_cast<size_t>(i)].friction = friction;
  for (b2Fixture* f = bodies_[static_cast<size_t>(i)]->GetFixtureList(); f; f = f->GetNext())
    f->SetFriction(static_cast<float>(friction));
  // Contacts that exist keep their mixed friction until they are rebuilt.
  for (b2ContactEdge* e = bodies_[static_cast<size_t>(i)]->GetContactList(); e; e = e->next)
    e->contact->ResetFriction();
}

void RigidWorld::set_restitution(int i, double restitution) {
  defs_[static_cast<size_t>(i)].restitution = restitution;
  for (b2Fixture* f = bodies_[static_cast<size_t>(i)]->GetFixtureList(); f; f = f->GetNext())
    f->SetRestitution(static_cast<float>(restitution));
  for (b2ContactEdge* e = bodies_[static_cast<size_t>(i)]->GetContactList(); e; e = e->next)
    e->contact->ResetRestitution();
}

RigidTotals RigidWorld::totals(Vec2d about) const {
  RigidTotals t;
  for (size_t i = 0; i < bodies_.size(); ++i) {
    const BodyState st = state(static_cast<int>(i));
    if (st.mass <= 0.0) continue;
    t.mass += st.mass;
    t.momentum[0] += st.mass * st.velocity.x;
    t.momentum[1] += st.mass * st.velocity.y;
    const double rx = st.com.x - about.x, ry = st.com.y - about.y;
    t.angular_momentum +=
        st.mass * (rx * st.velocity.y - ry * st.velocity.x) + st.inertia * st.omega;
    t.kinetic_energy +=
        0.5 * st.mass * (st.velocity.x * st.velocity.x + st.velocity.y * st.velocity.y) +
        0.5 * st.inertia * st.omega * st.omega;
  }
  return t;
}

uint64_t RigidWorld::hash() const {
  Fnv1a h;
  for (const b2Body* b : bodies_) {
    const float v[6] = {
        b->GetPosition().x,       b->GetPosition().y,       b->GetAngle(),
        b->GetLinearVelocity().x, b->GetLinearVelocity().y, b->GetAngularVelocity()};
    h.add(v, sizeof v);
  }
  return h.h;
}

}  // namespace rigid
}  // namespace ps
