#include "sim/scene/rigid_scene.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include "sim/core/error.h"
#include "sim/io/json_read.h"

namespace ps {
namespace rigid {

namespace {

constexpr double kDeg = 3.14159265358979323846 / 180.0;
/// A part may reach this many domain sizes from its body's position (a floor
/// laid across the domain from a body in a corner reaches 1.5).
constexpr double kMaxPartReach = 4.0;

Vec2d to_d(Vec2 v) { return Vec2d{v.x, v.y}; }

/// Checks a polygon: 3..8 vertices, convex, no repeated or collinear corner,
/// edges not shorter than min_edge; returns it counter-clockwise.
std::vector<Vec2d> read_polygon(const Json& arr, const std::string& field, double min_edge) {
  if (!arr.is_array())
    throw InputError(arr.loc(), field,
                     "expected an array of [x, y] vertices, got " + describe(arr));
  const size_t n = arr.size();
  if (n < 3 || n > static_cast<size_t>(kColliderMaxVertices))
    throw InputError(arr.loc(), field,
                     "a convex polygon needs 3 to 8 vertices (Box2D's limit), got " +
                         std::to_string(n) + "; split a larger shape into a compound body");
  std::vector<Vec2d> v;
  for (size_t k = 0; k < n; ++k)
    v.push_back(to_d(json_vec2(arr.at(k), field + "[" + std::to_string(k) + "]")));
  double area2 = 0.0;
  for (size_t k = 0; k < n; ++k) {
    const Vec2d a = v[k], b = v[(k + 1) % n];
    area2 += a.x * b.y - a.y * b.x;
  }
  if (area2 < 0.0) std::reverse(v.begin(), v.end());  // clockwise input is accepted
  for (size_t k = 0; k < n; ++k) {
    const Vec2d a = v[k], b = v[(k + 1) % n], c = v[(k + 2) % n];
    const Vec2d e = b - a;
    if (std::sqrt(e.x * e.x + e.y * e.y) < min_edge) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "edge %zu is %.3g long, shorter than the smallest Box2D keeps (%.3g)", k,
                    std::sqrt(e.x * e.x + e.y * e.y), min_edge);
      throw InputError(arr.at(k).loc(), field, buf);
    }
    const double turn = (b.x - a.x) * (c.y - b.y) - (b.y - a.y) * (c.x - b.x);
    if (!(turn > 0.0)) {
      // The vertex index as the user wrote it.
      const size_t at = area2 < 0.0 ? n - 1 - (k + 1) % n : (k + 1) % n;
      throw InputError(
          arr.at(at).loc(), field,
          "polygon is not convex at vertex " + std::to_string(at) +
              " (a body's polygon must be convex; use a compound body of convex parts)");
    }
  }
  return v;
}

/// One part: box (size), disk (radius) or polygon (vertices), placed by
/// offset / angle within the body.
std::string reach_message(double reach, double max_reach) {
  char buf[192];
  std::snprintf(
      buf, sizeof buf,
      "the part reaches %.3g from the body's position, more than %.3g (%g times the domain's size)",
      reach, max_reach, kMaxPartReach);
  return buf;
}

/// `max_reach` bounds how far a part may reach from its body's origin: Box2D
/// computes in float, so a part 1e16 long rounds its corners together (a box's
/// vertices stop being convex) long before anything overflows.
PartDef read_part(ObjReader& r, bool placed, double min_edge, double max_reach) {
  PartDef p;
  const int shape = r.choice("shape", -1, {"box", "disk", "polygon"});
  if (shape < 0) r.fail("shape", "required field is missing (box, disk or polygon)");
  Vec2d off{0.0, 0.0};
  double ang = 0.0;
  if (placed) {
    off = to_d(r.vec2("offset", Vec2{0.f, 0.f}));
    ang = r.number("angle", 0.0, -3600.0, 3600.0) * kDeg;
  }
  const double c = std::cos(ang), s = std::sin(ang);
  auto place = [&](Vec2d q) { return Vec2d{off.x + c * q.x - s * q.y, off.y + s * q.x + c * q.y}; };
  if (shape == 1) {
    p.shape = ColliderShape::Disk;
    p.radius = r.number_required("radius", 0.0, 1e6);
    if (!(p.radius * 2.0 >= min_edge))
      r.fail("radius", "must be positive and at least " + std::to_string(min_edge / 2));
    p.center = off;
    if (!(std::hypot(off.x, off.y) + p.radius <= max_reach))
      r.fail(placed ? "offset" : "radius",
             reach_message(std::hypot(off.x, off.y) + p.radius, max_reach));
    return p;
  }
  p.shape = ColliderShape::Polygon;
  if (shape == 0) {
    const Vec2d sz = to_d(r.vec2_required("size"));
    if (!(sz.x >= min_edge && sz.y >= min_edge))
      r.fail("size", "both sides must be at least " + std::to_string(min_edge) + " (got " +
                         std::to_string(sz.x) + ", " + std::to_string(sz.y) + ")");
    const double hx = 0.5 * sz.x, hy = 0.5 * sz.y;
    for (Vec2d q : {Vec2d{-hx, -hy}, Vec2d{hx, -hy}, Vec2d{hx, hy}, Vec2d{-hx, hy}})
      p.vertices.push_back(place(q));
  } else {
    const Json* v = r.get("vertices");
    if (!v) r.fail("vertices", "required field is missing");
    for (Vec2d q : read_polygon(*v, r.field("vertices"), min_edge)) p.vertices.push_back(place(q));
  }
  double reach = 0.0;
  for (const Vec2d& q : p.vertices) reach = std::max(reach, std::hypot(q.x, q.y));
  if (!(reach <= max_reach))
    r.fail(shape == 0 ? "size" : "vertices", reach_message(reach, max_reach));
  return p;
}

}  // namespace

std::unique_ptr<RigidWorld> read_rigid_section(const Json& doc, const RigidSceneContext& ctx) {
  ObjReader r(doc, "rigid");
  const double span =
      std::max(ctx.domain_hi.x - ctx.domain_lo.x, ctx.domain_hi.y - ctx.domain_lo.y);
  const double depth = r.number("depth", ctx.default_depth, 1e-9, 1e6);
  const double s = r.number("length_scale", 10.0 / std::max(span, 1e-9), 1e-6, 1e9);
  const bool walls = r.boolean("walls", true);
  const double wall_friction = r.number("wall_friction", 0.5, 0.0, 10.0);
  r.get("exchange_substeps");  // the coupling's setting, not the bodies' (build_coupled reads it)
  // Box2D drops edges shorter than its linear slop (0.005 of its units).
  const double min_edge = 0.02 / s;
  const double max_reach = kMaxPartReach * span;
  auto world = std::make_unique<RigidWorld>(ctx.gravity, depth, s);
  if (walls) world->add_box_walls(ctx.domain_lo, ctx.domain_hi, wall_friction);

  std::vector<std::string> names;
  if (const Json* bodies = r.get("bodies")) {
    if (!bodies->is_array())
      throw InputError(bodies->loc(), "rigid.bodies",
                       "expected an array, got " + describe(*bodies));
    for (size_t b = 0; b < bodies->size(); ++b) {
      const std::string path = "rigid.bodies[" + std::to_string(b) + "]";
      ObjReader br(bodies->at(b), path);
      BodyDef d;
      d.name = br.string("name", "body " + std::to_string(b + 1));
      for (const std::string& n : names)
        if (n == d.name) br.fail("name", "a body named '" + d.name + "' already exists");
      d.type = br.choice("type", BodyType::Dynamic, kBodyTypeNames);
      if (br.has("parts")) {
        if (br.has("shape")) br.fail("shape", "give either shape or parts, not both");
        const Json* parts = br.get("parts");
        if (!parts->is_array() || parts->size() == 0 || parts->size() > 64)
          throw InputError(parts->loc(), br.field("parts"),
                           "expected an array of 1 to 64 parts, got " + describe(*parts));
        for (size_t k = 0; k < parts->size(); ++k) {
          ObjReader pr(parts->at(k), br.field("parts") + "[" + std::to_string(k) + "]");
          d.parts.push_back(read_part(pr, true, min_edge, max_reach));
          pr.finish();
        }
      } else {
        d.parts.push_back(read_part(br, false, min_edge, max_reach));
      }
      d.position = to_d(br.vec2_required("position"));
      d.angle = br.number("angle", 0.0, -3600.0, 3600.0) * kDeg;
      d.velocity = to_d(br.vec2("velocity", Vec2{0.f, 0.f}));
      d.angular_velocity = br.number("angular_velocity", 0.0, -1e4, 1e4);
      d.density = br.number("density", 1000.0, 0.0, 1e6);
      if (d.type == BodyType::Dynamic && !(d.density > 0.0))
        br.fail("density",
                "a dynamic body needs a positive density (got 0): it would have no mass");
      d.friction = br.number("friction", 0.5, 0.0, 10.0);
      d.restitution = br.number("restitution", 0.0, 0.0, 1.0);
      d.fixed_rotation = br.boolean("fixed_rotation", false);
      d.bullet = br.boolean("bullet", false);
      br.color("color", d.color);
      if (const Json* m = br.get("dem_material")) {
        if (ctx.dem_materials.empty()) br.fail("dem_material", "the scene has no DEM grains");
        if (!m->is_string())
          throw InputError(m->loc(), br.field("dem_material"),
                           "expected a material name, got " + describe(*m));
        d.dem_material = -1;
        for (size_t k = 0; k < ctx.dem_materials.size(); ++k)
          if (ctx.dem_materials[k] == m->as_string()) d.dem_material = static_cast<int>(k);
        if (d.dem_material < 0)
          br.fail("dem_material", "no DEM material named '" + m->as_string() + "'");
      }
      // Inside the domain (the walls would trap it outside, or Box2D would never see it).
      const Vec2d& p = d.position;
      if (p.x < ctx.domain_lo.x || p.y < ctx.domain_lo.y || p.x > ctx.domain_hi.x ||
          p.y > ctx.domain_hi.y)
        br.fail("position", "is outside the domain");
      br.finish();
      names.push_back(d.name);
      world->add_body(d);
    }
  }
  auto find = [&](ObjReader& jr, const char* key, bool required) -> int {
    const Json* v = jr.get(key);
    if (!v) {
      if (required) jr.fail(key, "required field is missing");
      return -1;
    }
    if (!v->is_string())
      throw InputError(v->loc(), jr.field(key), "expected a body name, got " + describe(*v));
    for (size_t k = 0; k < names.size(); ++k)
      if (names[k] == v->as_string()) return static_cast<int>(k);
    throw InputError(v->loc(), jr.field(key), "no body named '" + v->as_string() + "'");
  };
  if (const Json* joints = r.get("joints")) {
    if (!joints->is_array())
      throw InputError(joints->loc(), "rigid.joints",
                       "expected an array, got " + describe(*joints));
    for (size_t k = 0; k < joints->size(); ++k) {
      ObjReader jr(joints->at(k), "rigid.joints[" + std::to_string(k) + "]");
      JointDef j;
      jr.choice("type", 0, {"revolute"});
      j.body_a = find(jr, "body_a", true);
      j.body_b = find(jr, "body_b", false);
      if (j.body_a == j.body_b) jr.fail("body_b", "a joint needs two different bodies");
      if (world->def(j.body_a).type != BodyType::Dynamic &&
          (j.body_b < 0 || world->def(j.body_b).type != BodyType::Dynamic))
        jr.fail("body_a", "a joint needs at least one dynamic body");
      j.anchor = to_d(jr.vec2_required("anchor"));
      if (jr.has("max_motor_torque")) {
        j.motor = true;
        j.max_motor_torque = jr.number("max_motor_torque", 0.0, 0.0, 1e12);
      }
      j.motor_speed = jr.number("motor_speed", 0.0, -1e4, 1e4);
      if (jr.has("motor_speed") && !j.motor)
        jr.fail("motor_speed", "a motor needs max_motor_torque (N m) as well");
      if (jr.has("lower_angle") || jr.has("upper_angle")) {
        j.limit = true;
        j.lower = jr.number("lower_angle", 0.0, -360.0, 360.0) * kDeg;
        j.upper = jr.number("upper_angle", 0.0, -360.0, 360.0) * kDeg;
        if (j.upper < j.lower) jr.fail("upper_angle", "must not be below lower_angle");
      }
      jr.finish();
      world->add_joint(j);
    }
  }
  r.finish();
  return world;
}

namespace {

Json pair_json(double x, double y) {
  Json a = Json::array();
  a.push_back(Json::number(x));
  a.push_back(Json::number(y));
  return a;
}

}  // namespace

Json rigid_section_json(const RigidWorld& w, const Json& old) {
  Json out = old.is_object() ? old : Json::object();
  // A body the section already had keeps its object as written (shapes, pose,
  // formatting), with the edited fields set: the file reads back bit for bit.
  auto written = [&](const std::string& name) -> const Json* {
    const Json* ob = out.find("bodies");
    if (!ob || !ob->is_array()) return nullptr;
    for (size_t k = 0; k < ob->size(); ++k) {
      const Json* n = ob->at(k).is_object() ? ob->at(k).find("name") : nullptr;
      if (n && n->is_string() && n->as_string() == name) return &ob->at(k);
    }
    return nullptr;
  };
  Json bodies = Json::array();
  for (size_t i = 0; i < w.body_count(); ++i) {
    const BodyDef& d = w.def(static_cast<int>(i));
    Json b = Json::object();
    if (const Json* o = written(d.name)) {
      b = *o;
    } else {
      b.set("name", Json::string(d.name));
      b.set("type", Json::string(body_type_name(d.type)));
      Json parts = Json::array();
      for (const PartDef& p : d.parts) {
        Json q = Json::object();
        if (p.shape == ColliderShape::Disk) {
          q.set("shape", Json::string("disk"));
          q.set("radius", Json::number(p.radius));
          q.set("offset", pair_json(p.center.x, p.center.y));
        } else {
          q.set("shape", Json::string("polygon"));
          Json v = Json::array();
          for (const Vec2d& c : p.vertices) v.push_back(pair_json(c.x, c.y));
          q.set("vertices", v);
        }
        parts.push_back(q);
      }
      b.set("parts", parts);
      b.set("position", pair_json(d.position.x, d.position.y));
      if (d.angle != 0.0) b.set("angle", Json::number(d.angle / kDeg));
      if (d.velocity.x != 0.0 || d.velocity.y != 0.0)
        b.set("velocity", pair_json(d.velocity.x, d.velocity.y));
      if (d.angular_velocity != 0.0) b.set("angular_velocity", Json::number(d.angular_velocity));
      if (d.fixed_rotation) b.set("fixed_rotation", Json::boolean(true));
      if (d.bullet) b.set("bullet", Json::boolean(true));
      Json col = Json::array();
      for (float c : d.color) col.push_back(Json::number(c));
      b.set("color", col);
    }
    b.set("density", Json::number(d.density));
    b.set("friction", Json::number(d.friction));
    b.set("restitution", Json::number(d.restitution));
    bodies.push_back(b);
  }
  // Joints are not edited in the window: the section's own stay as written.
  out.set("bodies", bodies);
  return out;
}

std::string bodies_csv(const RigidWorld& w) {
  std::string out = "id,name,type,x,y,angle,vx,vy,omega,mass,inertia,com_x,com_y\n";
  char buf[512];
  for (size_t i = 0; i < w.body_count(); ++i) {
    const BodyState s = w.state(static_cast<int>(i));
    const BodyDef& d = w.def(static_cast<int>(i));
    std::snprintf(buf, sizeof buf, "%zu,%s,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n",
                  i + 1, d.name.c_str(), body_type_name(d.type), s.position.x, s.position.y,
                  s.angle, s.velocity.x, s.velocity.y, s.omega, s.mass, s.inertia, s.com.x,
                  s.com.y);
    out += buf;
  }
  return out;
}

std::string bodies_vtk(const RigidWorld& w) {
  std::vector<std::vector<Vec2d>> all;
  std::vector<size_t> owner;
  std::vector<std::vector<Vec2d>> parts;
  for (size_t i = 0; i < w.body_count(); ++i) {
    w.outline(static_cast<int>(i), parts);
    for (auto& p : parts) {
      all.push_back(p);
      owner.push_back(i);
    }
  }
  size_t npts = 0, nidx = 0;
  for (const auto& p : all) {
    npts += p.size();
    nidx += p.size() + 1;
  }
  std::string out =
      "# vtk DataFile Version 3.0\nParticle Sandbox rigid bodies\nASCII\nDATASET POLYDATA\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "POINTS %zu double\n", npts);
  out += buf;
  for (const auto& p : all)
    for (const Vec2d& q : p) {
      std::snprintf(buf, sizeof buf, "%.9g %.9g 0\n", q.x, q.y);
      out += buf;
    }
  std::snprintf(buf, sizeof buf, "POLYGONS %zu %zu\n", all.size(), nidx);
  out += buf;
  size_t base = 0;
  for (const auto& p : all) {
    out += std::to_string(p.size());
    for (size_t k = 0; k < p.size(); ++k) out += " " + std::to_string(base + k);
    out += "\n";
    base += p.size();
  }
  std::snprintf(buf, sizeof buf, "CELL_DATA %zu\nSCALARS body_id int 1\nLOOKUP_TABLE default\n",
                all.size());
  out += buf;
  for (size_t o : owner) out += std::to_string(o + 1) + "\n";
  out += "SCALARS speed double 1\nLOOKUP_TABLE default\n";
  for (size_t o : owner) {
    const BodyState s = w.state(static_cast<int>(o));
    std::snprintf(buf, sizeof buf, "%.9g\n",
                  std::sqrt(s.velocity.x * s.velocity.x + s.velocity.y * s.velocity.y));
    out += buf;
  }
  return out;
}

}  // namespace rigid
}  // namespace ps
