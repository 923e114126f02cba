#include "sim/scene/dem_scene.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>
#include "sim/core/limits.h"
#include "sim/core/progress.h"
#include "sim/dem/dem_build.h"
#include "sim/dem/dem_kernels.h"
#include "sim/io/json_read.h"
#include "sim/specimen/specimen.h"

namespace ps {
namespace dem {

namespace {

constexpr double kTiny = 1e-300;  // lower bound for strictly positive values
constexpr double kHuge = 1e300;

Vec2d json_vec2d(const Json& v, const std::string& field) {
  if (!v.is_array() || v.size() != 2)
    throw InputError(v.loc(), field, "expected an array of two numbers [x, y], got " + describe(v));
  return {json_number(v.at(0), field + "[0]", -1e30, 1e30),
          json_number(v.at(1), field + "[1]", -1e30, 1e30)};
}

Vec2d vec2d(ObjReader& r, const char* key, Vec2d def) {
  const Json* v = r.get(key);
  return v ? json_vec2d(*v, r.field(key)) : def;
}

Vec2d vec2d_required(ObjReader& r, const char* key) {
  if (!r.has(key)) throw InputError(r.json().loc(), r.field(key), "required field is missing");
  return vec2d(r, key, Vec2d{});
}

int material_ref(ObjReader& r, const char* key, const DemWorld& w, bool required) {
  const Json* v = r.get(key);
  if (!v) {
    if (required) throw InputError(r.json().loc(), r.field(key), "required field is missing");
    return 0;
  }
  if (!v->is_string())
    throw InputError(v->loc(), r.field(key), "expected a material name, got " + describe(*v));
  int m = w.material_index(v->as_string());
  if (m < 0) {
    std::string names;
    for (size_t k = 0; k < w.material_names.size(); ++k)
      names += (k ? ", " : "") + w.material_names[k];
    throw InputError(v->loc(), r.field(key),
                     "unknown material \"" + v->as_string() + "\" (defined: " + names + ")");
  }
  return m;
}

void read_solver(const Json& j, DemSolverParams& s) {
  ObjReader r(j, "solver");
  if (const Json* dt = r.get("dt")) {
    if (dt->is_string()) {
      if (dt->as_string() != "auto")
        throw InputError(dt->loc(), r.field("dt"),
                         "expected a number of seconds or \"auto\", got " + describe(*dt));
      s.dt_safety = 0.2;
    } else {
      s.dt = json_number(*dt, r.field("dt"), 1e-12, 1.0);
      s.dt_safety = 0.0;
    }
  }
  if (r.has("dt_safety")) {
    if (s.dt_safety <= 0.0) r.fail("dt_safety", "only applies with \"dt\": \"auto\"");
    s.dt_safety = r.number("dt_safety", 0.2, 1e-3, 1.0);
  }
  s.substeps = r.integer("substeps", s.substeps, 1, 100000);
  s.gravity = vec2d(r, "gravity", s.gravity);
  s.velocity_limit = r.number("velocity_limit", s.velocity_limit, kTiny, kHuge);
  s.local_damping = r.number("local_damping", s.local_damping, 0.0, 0.99);
  s.expected_speed = r.number("expected_speed", s.expected_speed, kTiny, kHuge);
  r.finish();
}

void read_materials(const Json& j, DemWorld& w) {
  if (!j.is_object())
    throw InputError(j.loc(), "materials", "expected an object {name: {...}}, got " + describe(j));
  if (j.members().empty())
    throw InputError(j.loc(), "materials", "at least one material is needed");
  for (const auto& kv : j.members()) {
    ObjReader r(kv.second, "materials." + kv.first);
    DemMaterial m;
    m.density = r.number_required("density", kTiny, kHuge);
    m.E = r.number_required("E", kTiny, kHuge);
    m.nu = r.number("nu", m.nu, 0.0, 0.499);
    m.restitution = r.number("restitution", m.restitution, 1e-3, 1.0);
    m.friction = r.number("friction", m.friction, 0.0, 100.0);
    m.rolling_friction = r.number("rolling_friction", m.rolling_friction, 0.0, 100.0);
    m.rolling_damping = r.number("rolling_damping", m.rolling_damping, 0.0, 1.0);
    r.color("color", m.color);
    r.finish();
    if (w.materials.size() >= 256)
      throw InputError(j.key_loc(kv.first), "materials", "at most 256 materials");
    w.add_material(kv.first, m);
  }
}

void read_bond(const Json& j, DemBondParams& b) {
  ObjReader r(j, "bond");
  b.enabled = r.boolean("enabled", b.enabled);
  b.E = r.number("E", b.E, kTiny, kHuge);
  b.nu = r.number("nu", b.nu, 0.0, 0.499);
  b.radius_ratio = r.number("radius_ratio", b.radius_ratio, 1e-3, 10.0);
  b.contact_radius_multiplier =
      r.number("contact_radius_multiplier", b.contact_radius_multiplier, 1.0, 3.0);
  b.tensile_strength = r.number("tensile_strength", b.tensile_strength, kTiny, kHuge);
  b.compressive_strength = r.number("compressive_strength", b.compressive_strength, kTiny, kHuge);
  b.shear_strength = r.number("shear_strength", b.shear_strength, kTiny, kHuge);
  b.damping = r.number("damping", b.damping, 0.0, 10.0);
  r.finish();
}

void read_domain(const Json& j, DemWorld& w) {
  ObjReader r(j, "domain");
  w.domain_min = vec2d_required(r, "min");
  w.domain_max = vec2d_required(r, "max");
  if (!(w.domain_max.x > w.domain_min.x && w.domain_max.y > w.domain_min.y))
    r.fail("max", "must be greater than domain.min in x and y");
  unsigned sides = 0;
  if (const Json* v = r.get("walls")) {
    if (v->is_bool()) {
      sides = v->as_bool() ? kSideAll : 0u;
    } else if (v->is_array()) {
      for (size_t k = 0; k < v->size(); ++k) {
        const Json& s = v->at(k);
        const std::string f = r.field("walls") + "[" + std::to_string(k) + "]";
        if (!s.is_string())
          throw InputError(s.loc(), f, "expected a side name, got " + describe(s));
        const std::string& n = s.as_string();
        if (n == "left")
          sides |= kSideLeft;
        else if (n == "right")
          sides |= kSideRight;
        else if (n == "bottom")
          sides |= kSideBottom;
        else if (n == "top")
          sides |= kSideTop;
        else
          throw InputError(s.loc(), f,
                           "expected one of left, right, bottom, top; got " + describe(s));
      }
    } else {
      throw InputError(v->loc(), r.field("walls"),
                       "expected true, false or a list of sides, got " + describe(*v));
    }
  }
  int mat = sides ? material_ref(r, "wall_material", w, false) : 0;
  if (!sides && r.has("wall_material")) r.fail("wall_material", "has no walls to apply to");
  add_domain_walls(w, sides, mat);
  r.finish();
}

void read_wall(const Json& j, const std::string& path, DemWorld& w) {
  ObjReader r(j, path);
  int type = r.choice("type", 0, {"plane", "segment"});
  int mat = material_ref(r, "material", w, true);
  if (type == 0) {
    Vec2d p = vec2d_required(r, "point");
    Vec2d n = vec2d_required(r, "normal");
    if (!(length(n) > 0.0)) r.fail("normal", "must be non-zero");
    add_plane(w, p, n, mat);
  } else {
    Vec2d a = vec2d_required(r, "a");
    Vec2d b = vec2d_required(r, "b");
    if (a == b) r.fail("b", "segment end points coincide");
    add_segment(w, a, b, mat);
  }
  r.finish();
}

// An image specimen (seeds/000): silhouette -> mask -> contours -> particles on
// a square grid whose centres pass the inside test. Particles of pixels with
// all channels above belt.threshold join belt.group (and belt.material).
void read_image_points(ObjReader& r, const std::string& scene_dir, BodySpec& s, DemWorld& w,
                       std::vector<int>& materials, std::vector<uint16_t>& groups) {
  const std::string file = r.string_required("file");
  const Json* file_json = r.get("file");
  const Vec2d origin = vec2d_required(r, "origin");
  const double width = r.number_required("width", kTiny, 1e3);
  SpecimenParams sp;
  sp.mask.rule = static_cast<MaskRule>(r.choice("mask", 1, {"dark", "not_background"}));
  sp.mask.threshold = r.integer("threshold", 128, 0, 255);
  sp.mask.tolerance = r.integer("tolerance", 32, 0, 255);
  sp.mask.invert = r.boolean("invert", false);
  sp.test = static_cast<InsideTest>(
      r.choice("inside_test", 1, {"nearest_contour", "winding", "nearest_contour_oriented"}));
  int belt_threshold = -1, belt_material = s.material;
  uint16_t belt_group = s.group;
  if (const Json* b = r.get("belt")) {
    ObjReader br(*b, r.field("belt"));
    belt_threshold = br.integer("threshold", 160, 0, 255);
    belt_group = static_cast<uint16_t>(br.integer("group", s.group, 0, 65535));
    if (br.has("material")) belt_material = material_ref(br, "material", w, true);
    br.finish();
  }
  const std::string full = std::filesystem::path(file).is_absolute()
                               ? file
                               : (std::filesystem::path(scene_dir) / file).string();
  Image img;
  try {
    img = load_image(full);
  } catch (const std::exception& e) {
    throw InputError(file_json->loc(), r.field("file"), e.what());
  }
  sp.metres_per_pixel = static_cast<float>(width / img.width);
  sp.grid.radius_px = static_cast<float>(s.radius / sp.metres_per_pixel);
  if (sp.grid.radius_px < 0.5f)
    r.fail("radius", "particles smaller than half a pixel of the image");
  sp.origin = Vec2{static_cast<float>(origin.x), static_cast<float>(origin.y)};
  const Specimen spec = make_specimen(img, sp);
  for (size_t k = 0; k < spec.size(); ++k) {
    s.points.push_back(Vec2d{spec.pos[k].x, spec.pos[k].y});
    const auto& c = spec.rgb[k];
    const bool belt = belt_threshold >= 0 && c[0] > belt_threshold && c[1] > belt_threshold &&
                      c[2] > belt_threshold;
    materials.push_back(belt ? belt_material : s.material);
    groups.push_back(belt ? belt_group : s.group);
  }
}

void read_body(const Json& j, const std::string& path, const std::string& scene_dir, DemWorld& w) {
  ObjReader r(j, path);
  BodySpec s;
  std::vector<int> point_materials;    // image bodies: per-particle material
  std::vector<uint16_t> point_groups;  // and group (the belt)
  const int shape = r.choice("shape", 0, {"box", "disk", "polygon", "image"});
  s.shape = shape == 3 ? Shape::Points : static_cast<Shape>(shape);
  s.radius = r.number_required("radius", kTiny, 1e3);
  s.packing = static_cast<Packing>(r.choice("packing", 0, {"hex", "square"}));
  s.material = material_ref(r, "material", w, true);
  s.group = static_cast<uint16_t>(r.integer("group", 0, 0, 65535));
  s.velocity = vec2d(r, "velocity", Vec2d{});
  s.bonded = r.boolean("bonded", false);
  if (s.shape == Shape::Box) {
    s.center = vec2d_required(r, "center");
    s.size = vec2d_required(r, "size");
    if (!(s.size.x > 0.0 && s.size.y > 0.0)) r.fail("size", "width and height must be > 0");
    s.angle = r.number("angle", 0.0, -360.0, 360.0) * kPi / 180.0;
  } else if (s.shape == Shape::Disk) {
    s.center = vec2d_required(r, "center");
    s.disk_radius = r.number("disk_radius", s.radius, kTiny, 1e3);
  } else if (s.shape == Shape::Points) {
    read_image_points(r, scene_dir, s, w, point_materials, point_groups);
  } else {
    const Json* v = r.get("vertices");
    if (!v) throw InputError(j.loc(), r.field("vertices"), "required field is missing");
    if (!v->is_array() || v->size() < 3)
      throw InputError(v->loc(), r.field("vertices"),
                       "expected an array of at least 3 points [[x, y], ...]");
    for (size_t k = 0; k < v->size(); ++k)
      s.polygon.push_back(
          json_vec2d(v->at(k), r.field("vertices") + "[" + std::to_string(k) + "]"));
  }
  r.finish();
  const double max_particles = ps::input_limits().max_dem_particles;
  if (!(body_point_bound(s) <= max_particles))
    throw InputError(j.loc(), path,
                     "this body would hold more than " + format_number(max_particles) +
                         " particles (radius too small for its size)");
  const std::vector<Vec2d> pts = body_points(s);
  if (pts.empty())
    throw InputError(j.loc(), path,
                     "the shape holds no particle of radius " + format_number(s.radius));
  // A grain whose centre lies outside the domain starts where no wall holds it and the
  // neighbour grid does not reach: refused, saying how many and where the body reaches (a disk
  // of radius 5 in a 1 x 1 domain once made 949 000 grains, most of them outside).
  size_t outside = 0;
  Vec2d lo = pts.front(), hi = pts.front();
  for (const Vec2d& p : pts) {
    if (p.x < w.domain_min.x || p.x > w.domain_max.x || p.y < w.domain_min.y ||
        p.y > w.domain_max.y)
      ++outside;
    lo = {std::min(lo.x, p.x), std::min(lo.y, p.y)};
    hi = {std::max(hi.x, p.x), std::max(hi.y, p.y)};
  }
  if (outside > 0) {
    auto pt = [](Vec2d v) { return "[" + format_number(v.x) + ", " + format_number(v.y) + "]"; };
    throw InputError(j.loc(), path,
                     std::to_string(outside) + " of its " + std::to_string(pts.size()) +
                         " grains lie outside the domain " + pt(w.domain_min) + " to " +
                         pt(w.domain_max) + " (their centres reach " + pt(lo) + " to " + pt(hi) +
                         "): move or shrink the body, or enlarge the domain");
  }
  if (static_cast<double>(w.particles.size() + pts.size()) > max_particles)
    throw InputError(j.loc(), path,
                     "more than " + format_number(max_particles) + " particles in the scene");
  BodyRange range = add_body(w, s);
  for (size_t k = 0; k < point_materials.size(); ++k) {
    w.particles.material[range.first + k] = static_cast<uint8_t>(point_materials[k]);
    w.particles.group[range.first + k] = point_groups[k];
  }
}

void read_region(const Json& j, const std::string& path, DemWorld& w) {
  ObjReader r(j, path);
  Vec2d lo = vec2d_required(r, "min");
  Vec2d hi = vec2d_required(r, "max");
  if (!(hi.x >= lo.x && hi.y >= lo.y)) r.fail("max", "must not be below min in x or y");
  int fixed = -1, group = -1;
  if (r.has("fixed")) fixed = r.boolean("fixed", false) ? 1 : 0;
  if (r.has("group")) group = r.integer("group", 0, 0, 65535);
  if (fixed < 0 && group < 0)
    throw InputError(j.loc(), path, "a region needs \"fixed\" or \"group\"");
  r.finish();
  if (set_region(w, lo, hi, fixed, group) == 0)
    throw InputError(j.loc(), path, "no particle centre lies in this region");
}

void read_load(const Json& j, const std::string& path, DemWorld& w) {
  ObjReader r(j, path);
  DemLoad l;
  if (!r.has("group")) throw InputError(j.loc(), r.field("group"), "required field is missing");
  l.group = static_cast<uint16_t>(r.integer("group", 0, 0, 65535));
  l.force = vec2d(r, "force", Vec2d{});
  l.rate = vec2d(r, "rate", Vec2d{});
  r.finish();
  bool any = false;
  for (uint16_t g : w.particles.group) any = any || g == l.group;
  if (!any) r.fail("group", "no particle is in group " + std::to_string(l.group));
  w.loads.push_back(l);
}

template <class Fn>
void read_array(ObjReader& root, const char* key, Fn fn) {
  const Json* v = root.get(key);
  if (!v) return;
  if (!v->is_array())
    throw InputError(v->loc(), key, "expected an array [...], got " + describe(*v));
  for (size_t k = 0; k < v->size(); ++k)
    fn(v->at(k), std::string(key) + "[" + std::to_string(k) + "]");
}

}  // namespace

void load_dem_scene(const Json& root, const std::string& scene_dir, DemWorld& world) {
  ObjReader r(root, "");
  const std::string kind = r.string_required("kind");
  if (kind != "dem") r.fail("kind", "expected \"dem\", got \"" + kind + "\"");
  r.get("name");
  r.get("description");
  // Headless frame count: validated here, read by the runner (ps::SceneInfo).
  r.integer("frames", 200, 1, 10000000);

  // Build into a scratch world so that a bad file leaves `world` untouched.
  DemWorld tmp;
  tmp.set_backend(make_dem_backend("cpu", 1));
  DemWorld& w = tmp;

  const Json* mats = r.get("materials");
  if (!mats) throw InputError(root.loc(), "materials", "required field is missing");
  read_materials(*mats, w);
  if (const Json* v = r.get("solver")) read_solver(*v, w.solver);
  if (const Json* v = r.get("bond")) read_bond(*v, w.bond);
  const Json* dom = r.get("domain");
  if (!dom) throw InputError(root.loc(), "domain", "required field is missing");
  read_domain(*dom, w);
  read_array(r, "walls", [&](const Json& j, const std::string& p) { read_wall(j, p, w); });
  // Progress (sim/core/progress.h): the bodies take the first 80 %, the bonds to 90 %.
  const Json* bodies = root.find("bodies");
  const double nb = bodies && bodies->is_array() ? static_cast<double>(bodies->size()) : 1.0;
  double done = 0.0;
  read_array(r, "bodies", [&](const Json& j, const std::string& p) {
    progress("body " + std::to_string(static_cast<int>(done) + 1) + " of " +
                 std::to_string(static_cast<int>(nb)),
             0.8 * done / nb);
    ++done;
    read_body(j, p, scene_dir, w);
  });
  if (w.particles.size() == 0) throw InputError(root.loc(), "bodies", "the scene has no particles");
  read_array(r, "regions", [&](const Json& j, const std::string& p) { read_region(j, p, w); });
  read_array(r, "loads", [&](const Json& j, const std::string& p) { read_load(j, p, w); });
  r.finish();
  progress("bonding the grains", 0.8);
  w.form_bonds();

  world.clear();
  world.domain_min = w.domain_min;
  world.domain_max = w.domain_max;
  world.solver = w.solver;
  world.bond = w.bond;
  world.materials = std::move(w.materials);
  world.material_names = std::move(w.material_names);
  world.walls = std::move(w.walls);
  world.loads = std::move(w.loads);
  world.particles = std::move(w.particles);
  world.bonds = std::move(w.bonds);
  world.point_force = PointForce{};
  world.reset_clock();
  world.host_changed();
}

void load_dem_scene_file(const std::string& path, DemWorld& world) {
  Json root = Json::parse_file(path);
  std::string dir = path;
  size_t slash = dir.find_last_of('/');
  dir = slash == std::string::npos ? std::string(".") : dir.substr(0, slash);
  load_dem_scene(root, dir, world);
}

}  // namespace dem
}  // namespace ps
