#include "sim/scene/scene.h"

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include "sim/core/atomic_write.h"
#include "sim/core/format.h"
#include "sim/io/json_read.h"

#include "sim/core/image.h"
#include "sim/core/limits.h"
#include "sim/core/progress.h"
#include "sim/mpm/mpm_kernels.h"

namespace fs = std::filesystem;

namespace ps {

// [SECTION] Names ---------------------------------------------------------------

const char* transfer_name(Transfer t) { return kTransferNames(t); }
const char* kernel_name(Kernel k) { return kKernelNames(k); }
const char* boundary_name(Boundary b) { return kBoundaryNames(b); }
// [SECTION] Overrides -----------------------------------------------------------

namespace {

/// An override's own errors: "<flag> <assignment>: field 'PATH': ..." on the
/// command line; in a file, at the entry with its field ("set[1]") and the
/// assignment quoted before the scene field.
struct OverrideOrigin {
  SourceLoc loc;
  std::string entry;  ///< the file's field holding the assignment; empty on the command line
  std::string assignment;
  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    if (entry.empty()) throw InputError(loc, path, msg);
    throw InputError(
        loc, entry,
        "\"" + assignment + "\": " + (path.empty() ? "" : "scene field '" + path + "': ") + msg);
  }
};

void apply_override_at(Json& doc, const OverrideOrigin& origin) {
  const std::string& assignment = origin.assignment;
  const SourceLoc& loc = origin.loc;
  size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    origin.fail("", "expected key=value (e.g. solver.transfer=pic)");
  std::string key = assignment.substr(0, eq), value = assignment.substr(eq + 1);
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const auto& p : parts)
    if (p.empty()) origin.fail(key, "empty path segment");
  Json parsed;
  try {
    parsed = Json::parse(value, loc.file);
  } catch (const InputError&) {
    parsed = Json::string(value);  // bare words: pic, apic, quadratic...
  }
  // Every value gets the override's location so later errors point at it.
  struct Relocate {
    static void run(Json& j, const SourceLoc& l) {
      j.set_loc(l);
      if (j.is_array())
        for (size_t i = 0; i < j.size(); ++i) run(j.at(i), l);
      if (j.is_object())
        for (auto& m : j.members()) run(m.second, l);
    }
  };
  Relocate::run(parsed, loc);

  Json* node = &doc;
  std::string path;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    path += (i ? "." : "") + part;
    bool last = i + 1 == parts.size();
    if (node->is_array()) {
      char* end = nullptr;
      long idx = std::strtol(part.c_str(), &end, 10);
      if (*end != '\0' || idx < 0 || static_cast<size_t>(idx) >= node->size())
        origin.fail(path, "no array element '" + part + "' (the array has " +
                              std::to_string(node->size()) + " elements)");
      if (last) {
        node->at(static_cast<size_t>(idx)) = parsed;
        return;
      }
      node = &node->at(static_cast<size_t>(idx));
    } else if (node->is_object()) {
      Json* child = node->find(part);
      if (last) {
        node->set(part, parsed);
        return;
      }
      if (!child) {
        Json obj = Json::object();
        obj.set_loc(loc);
        child = &node->set(part, obj);
      }
      node = child;
    } else {
      origin.fail(path,
                  "cannot set a member inside a " + std::string(Json::type_name(node->type())));
    }
  }
}

}  // namespace

void apply_override(Json& doc, const std::string& assignment, const std::string& flag) {
  apply_override_at(doc, OverrideOrigin{SourceLoc{flag + " " + assignment, 0, 0}, "", assignment});
}

void apply_override(Json& doc, const std::string& assignment, const SourceLoc& where,
                    const std::string& entry) {
  apply_override_at(doc, OverrideOrigin{where, entry, assignment});
}

Json read_scene_document(const std::string& path, const std::vector<std::string>& overrides) {
  Json doc = Json::parse_file(path);
  if (!doc.is_object()) throw InputError(doc.loc(), "", "a scene file must be a JSON object {...}");
  for (const auto& o : overrides) apply_override(doc, o);
  return doc;
}

std::string scene_kind(const Json& doc) {
  const Json* k = doc.find("kind");
  if (k && k->is_string()) return k->as_string();
  return "mpm";
}

// [SECTION] Shapes --------------------------------------------------------------

namespace {

struct Shape {
  virtual ~Shape() = default;
  virtual bool inside(Vec2 p) const = 0;
  virtual void bounds(Vec2& lo, Vec2& hi) const = 0;
};

struct BoxShape : Shape {
  Vec2 lo, hi;
  bool inside(Vec2 p) const override {
    return p.x >= lo.x && p.x <= hi.x && p.y >= lo.y && p.y <= hi.y;
  }
  void bounds(Vec2& a, Vec2& b) const override {
    a = lo;
    b = hi;
  }
};

struct DiskShape : Shape {
  Vec2 c;
  float r = 0.f;
  bool inside(Vec2 p) const override { return length2(p - c) <= r * r; }
  void bounds(Vec2& a, Vec2& b) const override {
    a = c - Vec2{r, r};
    b = c + Vec2{r, r};
  }
};

struct PolygonShape : Shape {
  std::vector<Vec2> pts;
  // Winding number (Sunday 2001): robust for concave and self-touching outlines.
  bool inside(Vec2 p) const override {
    int wn = 0;
    for (size_t i = 0; i < pts.size(); ++i) {
      Vec2 a = pts[i], b = pts[(i + 1) % pts.size()];
      float side = cross(b - a, p - a);
      if (a.y <= p.y) {
        if (b.y > p.y && side > 0.f) ++wn;
      } else if (b.y <= p.y && side < 0.f) {
        --wn;
      }
    }
    return wn != 0;
  }
  void bounds(Vec2& a, Vec2& b) const override {
    a = b = pts[0];
    for (Vec2 q : pts) {
      a.x = std::min(a.x, q.x);
      a.y = std::min(a.y, q.y);
      b.x = std::max(b.x, q.x);
      b.y = std::max(b.y, q.y);
    }
  }
};

struct ImageShape : Shape {
  int w = 0, h = 0;
  std::vector<uint8_t> inside_px;  // row 0 = top row of the image
  Vec2 origin;                     // world position of the image's bottom-left corner
  float px = 1.f;                  // metres per pixel
  bool inside(Vec2 p) const override {
    int ix = static_cast<int>(std::floor((p.x - origin.x) / px));
    int iy_up = static_cast<int>(std::floor((p.y - origin.y) / px));
    if (ix < 0 || iy_up < 0 || ix >= w || iy_up >= h) return false;
    int row = h - 1 - iy_up;  // image y is flipped
    return inside_px[static_cast<size_t>(row) * w + ix] != 0;
  }
  void bounds(Vec2& a, Vec2& b) const override {
    a = origin;
    b = origin + Vec2{w * px, h * px};
  }
};

uint32_t hash_u32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

std::string dir_of(const std::string& path) {
  fs::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

std::unique_ptr<Shape> read_shape(ObjReader& r, const std::string& scene_dir) {
  int kind = r.choice("shape", -1, {"box", "disk", "polygon", "image"});
  if (kind < 0)
    throw InputError(r.json().loc(), r.field("shape"),
                     "required field is missing (box, disk, polygon or image)");
  if (kind == 0) {
    auto s = std::make_unique<BoxShape>();
    s->lo = r.vec2_required("min");
    s->hi = r.vec2_required("max");
    if (!(s->hi.x > s->lo.x && s->hi.y > s->lo.y))
      r.fail("max", "max must be greater than min in x and y");
    return s;
  }
  if (kind == 1) {
    auto s = std::make_unique<DiskShape>();
    s->c = r.vec2_required("center");
    s->r = static_cast<float>(r.number_required("radius", 1e-6, 1e6));
    return s;
  }
  if (kind == 2) {
    auto s = std::make_unique<PolygonShape>();
    const Json* pts = r.get("points");
    if (!pts) throw InputError(r.json().loc(), r.field("points"), "required field is missing");
    if (!pts->is_array() || pts->size() < 3)
      throw InputError(pts->loc(), r.field("points"),
                       "expected an array of at least 3 points [[x, y], ...]");
    for (size_t i = 0; i < pts->size(); ++i)
      s->pts.push_back(json_vec2(pts->at(i), r.field("points") + "[" + std::to_string(i) + "]"));
    return s;
  }
  // Image mask: dark pixels (luminance < threshold) are inside, or light ones when inverted.
  auto s = std::make_unique<ImageShape>();
  std::string file = r.string_required("file");
  const Json* file_json = r.get("file");
  s->origin = r.vec2("origin", Vec2{0.f, 0.f});
  float width = static_cast<float>(r.number_required("width", 1e-6, 1e6));
  int threshold = r.integer("threshold", 128, 0, 255);
  bool invert = r.boolean("invert", false);
  std::string full = fs::path(file).is_absolute() ? file : (fs::path(scene_dir) / file).string();
  Image img;
  try {
    img = load_image(full);
  } catch (const InputError& e) {
    throw InputError(file_json->loc(), r.field("file"), e.message() + " ('" + full + "')");
  }
  s->w = img.width;
  s->h = img.height;
  s->inside_px.resize(static_cast<size_t>(img.width) * img.height);
  for (size_t i = 0; i < s->inside_px.size(); ++i) {
    const uint8_t* px = &img.rgb[i * 3];
    const float lum = 0.299f * px[0] + 0.587f * px[1] + 0.114f * px[2];
    const bool dark = lum < threshold;  // transparent pixels were composited on white
    s->inside_px[i] = (dark != invert) ? 1 : 0;
  }
  s->px = width / static_cast<float>(img.width);
  return s;
}

void read_material(ObjReader& r, MaterialParams& m, std::string& melts_into) {
  std::vector<const char*> names;
  for (int k = 0; k < kMaterialTypeCount; ++k) names.push_back(material_kinds()[k].name);
  int type = r.choice("type", -1, names);
  if (type < 0)
    throw InputError(r.json().loc(), r.field("type"),
                     "required field is missing (" + material_kind_list() + ")");
  m = MaterialParams{};
  m.type = static_cast<MaterialType>(type);
  const MaterialKind& kind = material_kind(m.type);
  m.density = static_cast<float>(r.number("density", m.density, 1e-6, 1e9));
  for (int c = 0; c < 3; ++c) m.color[c] = kind.color[c];  // "color" overrides
  r.color("color", m.color);
  for (int f = 0; f < kind.field_count; ++f) {
    const MaterialField& fd = kind.fields[f];
    m.*fd.member = static_cast<float>(r.number(fd.key, m.*fd.member, fd.min, fd.max));
  }
  for (int f = 0; f < thermal_field_count(); ++f) {
    const MaterialField& fd = thermal_fields()[f];
    m.*fd.member = static_cast<float>(r.number(fd.key, m.*fd.member, fd.min, fd.max));
  }
  if (m.type == MaterialType::Sand && m.dilatancy > m.friction_angle)
    r.fail("dilatancy",
           "the dilatancy angle psi (" + fmt("%g", m.dilatancy) +
               " deg) cannot exceed friction_angle (" + fmt("%g", m.friction_angle) +
               " deg, the angle of repose): psi = phi is the most a sand dilates here");
  melts_into = r.string("melts_into", "");
  if (!melts_into.empty() && !(m.latent_heat > 0.f))
    r.fail("melts_into", "a melting material needs latent_heat > 0");
  r.finish();
}

void read_heat(ObjReader& r, HeatParams& h) {
  h.enabled = r.boolean("enabled", true);
  h.only = r.boolean("only", h.only);
  h.interval = r.integer("interval", h.interval, 1, 100000);
  h.time_scale = static_cast<float>(r.number("time_scale", h.time_scale, 1e-6, 1e9));
  h.flip = static_cast<float>(r.number("flip", h.flip, 0.0, 1.0));
  h.tolerance = r.number("tolerance", h.tolerance, 1e-14, 0.1);
  h.max_iterations = r.integer("max_iterations", h.max_iterations, 1, 100000);
  h.preconditioner = static_cast<HeatPreconditioner>(
      r.choice("preconditioner", static_cast<int>(h.preconditioner), {"jacobi", "ic0"}));
  h.device_solve = static_cast<HeatDeviceSolve>(
      r.choice("device_solve", static_cast<int>(h.device_solve),
               std::vector<const char*>(std::begin(kHeatDeviceSolveNames),
                                        std::end(kHeatDeviceSolveNames))));
  if (const Json* ws = r.get("walls")) {
    ObjReader wr(*ws, r.field("walls"));
    const char* sides[4] = {"left", "right", "bottom", "top"};
    for (int k = 0; k < 4; ++k) {
      const Json* wj = wr.get(sides[k]);
      if (!wj) continue;
      if (wj->is_string()) {
        if (wj->as_string() != "insulated")
          throw InputError(wj->loc(), wr.field(sides[k]),
                           "expected \"insulated\" or {\"temperature\": T}");
        h.walls[k].fixed = false;
        continue;
      }
      ObjReader sr(*wj, wr.field(sides[k]));
      h.walls[k].temperature = static_cast<float>(sr.number_required("temperature", -273.15, 1e5));
      h.walls[k].fixed = true;
      sr.finish();
    }
    wr.finish();
  }
  if (const Json* ps = r.get("plates")) {
    if (!ps->is_array())
      throw InputError(ps->loc(), r.field("plates"), "expected an array of plates");
    for (size_t k = 0; k < ps->size(); ++k) {
      ObjReader pr(ps->at(k), r.field("plates") + "[" + std::to_string(k) + "]");
      HeatPlate pl;
      pl.lo = pr.vec2_required("min");
      pl.hi = pr.vec2_required("max");
      if (!(pl.hi.x >= pl.lo.x && pl.hi.y >= pl.lo.y)) pr.fail("max", "max must not be below min");
      pl.temperature = static_cast<float>(pr.number_required("temperature", -273.15, 1e5));
      pr.finish();
      h.plates.push_back(pl);
    }
  }
  if (const Json* ls = r.get("lamps")) {
    if (!ls->is_array())
      throw InputError(ls->loc(), r.field("lamps"), "expected an array of lamps");
    for (size_t k = 0; k < ls->size(); ++k) {
      ObjReader lr(ls->at(k), r.field("lamps") + "[" + std::to_string(k) + "]");
      HeatLamp L;
      L.pos = lr.vec2_required("pos");
      L.radius = static_cast<float>(lr.number("radius", L.radius, 1e-6, 1e6));
      L.power = static_cast<float>(lr.number("power", L.power, -1e12, 1e12));
      lr.finish();
      h.lamps.push_back(L);
    }
  }
  if (const Json* aj = r.get("air")) {
    ObjReader ar(*aj, r.field("air"));
    h.air = static_cast<AirModel>(
        ar.choice("model", static_cast<int>(h.air), {"none", "photons", "convection"}));
    h.air_temperature =
        static_cast<float>(ar.number("temperature", h.air_temperature, -273.15, 1e5));
    h.emissivity = static_cast<float>(ar.number("emissivity", h.emissivity, 0.0, 1.0));
    h.photons = ar.integer("photons", h.photons, 1, 10000000);
    h.convection_h = static_cast<float>(ar.number("h", h.convection_h, 0.0, 1e9));
    ar.finish();
  }
  if (const Json* wj = r.get("water")) {
    ObjReader wr(*wj, r.field("water"));
    h.water_flow = wr.boolean("flow", h.water_flow);
    h.flow_down_rate = static_cast<float>(wr.number("down_rate", h.flow_down_rate, 0.0, 1e9));
    h.flow_level_rate = static_cast<float>(wr.number("level_rate", h.flow_level_rate, 0.0, 1e9));
    h.emit_volume = static_cast<float>(wr.number("emit_volume", h.emit_volume, 0.0, 1e6));
    wr.finish();
  }
  r.finish();
}

void read_solver(ObjReader& r, SolverParams& s) {
  s.transfer = r.choice("transfer", s.transfer, kTransferNames);
  s.flip_blend = static_cast<float>(r.number("flip_blend", s.flip_blend, 0.0, 1.0));
  s.flip_advect = r.choice("flip_advect", s.flip_advect, kFlipAdvectNames);
  s.kernel = r.choice("kernel", s.kernel, kKernelNames);
  if (const char* why = mpm::transfer_kernel_error(s.transfer, s.kernel))
    r.fail(r.has("kernel") ? "kernel" : "transfer", why);
  s.dt = static_cast<float>(r.number("dt", s.dt, 1e-8, 0.1));
  s.substeps = r.integer("substeps", s.substeps, 1, 100000);
  s.adaptive_dt = r.boolean("adaptive_dt", s.adaptive_dt);
  s.cfl = static_cast<float>(r.number("cfl", s.cfl, 0.01, 1.0));
  s.dt_min = static_cast<float>(r.number("dt_min", s.dt_min, 1e-9, 0.1));
  s.boundary = r.choice("boundary", s.boundary, kBoundaryNames);
  s.boundary_nodes = r.integer("boundary_nodes", s.boundary_nodes, 2, 16);
  if (r.has("wall_friction"))
    s.wall_friction = static_cast<float>(r.number("wall_friction", 0.0, 0.0, 100.0));
  s.gravity = r.vec2("gravity", s.gravity);
  s.velocity_limit = static_cast<float>(r.number("velocity_limit", s.velocity_limit, 1e-3, 1e12));
  s.deterministic = r.boolean("deterministic", s.deterministic);
  r.finish();
}

void read_resampling(ObjReader& r, ResampleParams& q) {
  q.enabled = r.boolean("enabled", q.enabled);
  q.interval = r.integer("interval", q.interval, 1, 100000);
  q.min_per_cell = r.integer("min_per_cell", q.min_per_cell, 1, 64);
  const bool target_given = r.get("target_per_cell") != nullptr;
  q.target_per_cell = r.integer("target_per_cell", q.target_per_cell, 1, 64);
  if (q.target_per_cell < q.min_per_cell) {
    if (target_given) r.fail("target_per_cell", "must be at least min_per_cell");
    q.target_per_cell = q.min_per_cell;  // only min_per_cell written: refill to it
  }
  q.max_insert_per_cell = r.integer("max_insert_per_cell", q.max_insert_per_cell, 1, 64);
  q.smoothing = static_cast<float>(r.number("smoothing", q.smoothing, 0.05, 8.0));
  q.band = static_cast<float>(r.number("band", q.band, 0.5, 32.0));
  q.inside_margin = static_cast<float>(r.number("inside_margin", q.inside_margin, 0.0, 8.0));
  q.particle_spacing =
      static_cast<float>(r.number("particle_spacing", q.particle_spacing, 0.01, 4.0));
  q.insert_spacing = static_cast<float>(r.number("insert_spacing", q.insert_spacing, 0.01, 4.0));
  q.merge_distance = static_cast<float>(r.number("merge_distance", q.merge_distance, 0.0, 1.0));
  q.max_cavity_cells = r.integer("max_cavity_cells", q.max_cavity_cells, 0, 1 << 24);
  q.darts_per_cell = r.integer("darts_per_cell", q.darts_per_cell, 1, 1024);
  r.finish();
}

}  // namespace

// [SECTION] Building -------------------------------------------------------------

MpmScene build_mpm_scene(const Json& doc, const std::string& path) {
  MpmScene scene;
  scene.doc = doc;
  scene.info.path = path;
  scene.world = std::make_unique<MpmWorld>();
  MpmWorld& w = *scene.world;
  const std::string scene_dir = dir_of(path);

  ObjReader root(doc, "");
  scene.info.name = root.string("name", fs::path(path).stem().string());
  scene.info.description = root.string("description", "");
  std::string kind = root.string("kind", "mpm");
  if (kind != "mpm") root.fail("kind", "this loader reads MPM scenes; got kind '" + kind + "'");
  scene.info.kind = kind;
  scene.info.frames = root.integer("frames", scene.info.frames, 1, 10000000);

  // Domain.
  const Json* dom = root.get("domain");
  if (!dom) throw InputError(doc.loc(), "domain", "required field is missing");
  {
    ObjReader r(*dom, "domain");
    Vec2 size = r.vec2("size", Vec2{1.f, 1.f});
    if (!(size.x > 0.f && size.y > 0.f)) r.fail("size", "domain size must be positive");
    int grid = r.integer("grid", 128, 8, 8192);
    w.grid.origin = r.vec2("origin", Vec2{0.f, 0.f});
    w.grid.dx = size.x / static_cast<float>(grid);
    w.grid.nx = grid;
    w.grid.ny = std::max(8, static_cast<int>(std::lround(size.y / w.grid.dx)));
    const int64_t max_nodes = input_limits().max_grid_nodes;
    if (static_cast<int64_t>(w.grid.nx + 1) * (w.grid.ny + 1) > max_nodes)
      r.fail("grid", "grid too large: " + std::to_string(w.grid.nx) + " x " +
                         std::to_string(w.grid.ny) + " cells; at most " +
                         std::to_string(max_nodes) + " nodes (e.g. 4096 x 4096)");
    r.finish();
  }
  // Solver.
  if (const Json* sol = root.get("solver")) {
    ObjReader r(*sol, "solver");
    read_solver(r, w.solver);
  }
  if (const Json* rs = root.get("resampling")) {
    ObjReader r(*rs, "resampling");
    read_resampling(r, w.resampling);
  }
  if (const Json* hj = root.get("heat")) {
    ObjReader r(*hj, "heat");
    read_heat(r, w.heat);
  }
  if (w.solver.boundary_nodes * 2 + 2 > std::min(w.grid.nx, w.grid.ny))
    throw InputError(doc.loc(), "solver.boundary_nodes", "boundary layer too thick for the grid");

  // Materials (named, in file order).
  const Json* mats = root.get("materials");
  if (!mats) throw InputError(doc.loc(), "materials", "required field is missing");
  if (!mats->is_object() || mats->size() == 0)
    throw InputError(mats->loc(), "materials",
                     "expected an object of named materials {\"water\": {...}}");
  if (mats->size() > 255) throw InputError(mats->loc(), "materials", "at most 255 materials");
  std::vector<std::string> melt_names;
  for (const auto& m : mats->members()) {
    ObjReader r(m.second, "materials." + m.first);
    MaterialParams mp;
    std::string melt;
    read_material(r, mp, melt);
    w.materials.push_back(mp);
    w.material_names.push_back(m.first);
    melt_names.push_back(melt);
  }
  {
    size_t k = 0;
    for (const auto& m : mats->members()) {
      const std::string& melt = melt_names[k];
      if (!melt.empty()) {
        const Json* loc = m.second.find("melts_into");
        auto it = std::find(w.material_names.begin(), w.material_names.end(), melt);
        if (it == w.material_names.end())
          throw InputError(loc->loc(), "materials." + m.first + ".melts_into",
                           "no material named '" + melt + "' in 'materials'");
        if (static_cast<size_t>(it - w.material_names.begin()) == k)
          throw InputError(loc->loc(), "materials." + m.first + ".melts_into",
                           "a material cannot melt into itself");
        w.materials[k].melts_into = static_cast<int>(it - w.material_names.begin());
      }
      ++k;
    }
  }

  // Bodies.
  const Json* bodies = root.get("bodies");
  if (!bodies) throw InputError(doc.loc(), "bodies", "required field is missing");
  if (!bodies->is_array()) throw InputError(bodies->loc(), "bodies", "expected an array of bodies");
  const float lo_x = w.grid.origin.x + w.grid.dx * w.solver.boundary_nodes;
  const float lo_y = w.grid.origin.y + w.grid.dx * w.solver.boundary_nodes;
  const float hi_x = w.grid.origin.x + w.grid.dx * (w.grid.nx - w.solver.boundary_nodes);
  const float hi_y = w.grid.origin.y + w.grid.dx * (w.grid.ny - w.solver.boundary_nodes);
  struct PendingPreset {
    Preset p;
    float speed;
    std::vector<uint32_t> idx;
  };
  std::vector<PendingPreset> presets;
  for (size_t b = 0; b < bodies->size(); ++b) {
    std::string bpath = "bodies[" + std::to_string(b) + "]";
    ObjReader r(bodies->at(b), bpath);
    std::unique_ptr<Shape> shape = read_shape(r, scene_dir);
    std::string mat_name = r.string_required("material");
    auto it = std::find(w.material_names.begin(), w.material_names.end(), mat_name);
    if (it == w.material_names.end())
      r.fail("material", "no material named '" + mat_name + "' in 'materials'");
    uint8_t mat = static_cast<uint8_t>(it - w.material_names.begin());
    float h = static_cast<float>(r.number("spacing", 0.5 * w.grid.dx, 1e-6, 1e6));
    if (h < 0.1f * w.grid.dx)
      r.fail("spacing", "spacing below dx/10 would put more than 100 particles in a cell");
    float jitter = static_cast<float>(r.number("jitter", 0.0, 0.0, 0.5));
    Vec2 vel = r.vec2("velocity", Vec2{});
    const float temperature =
        static_cast<float>(r.number("temperature", w.heat.air_temperature, -273.15, 1e5));
    int group = r.integer("group", static_cast<int>(b) + 1, 0, 65535);
    bool have_preset = false;
    Preset preset = Preset::Translation;
    float preset_speed = 1.f;
    if (const Json* pj = r.get("preset")) {
      have_preset = true;
      if (pj->is_string()) {
        // Short form: "preset": "rotation" (speed 1).
        Json wrap = Json::object();
        wrap.set_loc(pj->loc());
        wrap.set("preset", *pj);
        ObjReader pr(wrap, bpath);
        preset = pr.choice("preset", Preset::Translation, kPresetNames);
      } else {
        ObjReader pr(*pj, bpath + ".preset");
        int k = pr.choice("kind", -1, kPresetNames.names);
        if (k < 0) throw InputError(pj->loc(), bpath + ".preset.kind", "required field is missing");
        preset = static_cast<Preset>(k);
        preset_speed = static_cast<float>(pr.number("speed", 1.0, -1e6, 1e6));
        pr.finish();
      }
    }
    r.finish();

    Vec2 blo, bhi;
    shape->bounds(blo, bhi);
    const MaterialParams& mp = w.materials[mat];
    size_t first = w.particles.size();
    // Bounded before the lattice is built (and before any int conversion): a
    // huge request is an error, not an allocation.
    const double fnx = std::floor((static_cast<double>(bhi.x) - blo.x) / h + 1e-4);
    const double fny = std::floor((static_cast<double>(bhi.y) - blo.y) / h + 1e-4);
    const double max_particles = input_limits().max_mpm_particles;
    if (!(static_cast<double>(w.particles.size()) + fnx * fny <= max_particles))
      r.fail("spacing", "the body's bounding box holds " + format_number(fnx * fny) +
                            " lattice points; a scene may hold at most " +
                            format_number(max_particles) +
                            " particles (larger spacing or a smaller body)");
    // The host memory the scene will need while it steps (the costs measured in sim/core/limits.h)
    // against what the machine has: a scene that does not fit is an error with the estimate, not
    // a swap storm or an out-of-memory kill part way through building.
    {
      const double count = static_cast<double>(w.particles.size()) + fnx * fny;
      const bool poly = w.solver.transfer == Transfer::PolyPIC;
      const double need =
          mpm_memory_estimate(count, static_cast<double>(w.grid.nx + 1) * (w.grid.ny + 1), poly);
      const double have = memory_budget_bytes();
      auto gb = [](double b) {
        char t[32];
        std::snprintf(t, sizeof t, "%.2f GB", b / 1e9);
        return std::string(t);
      };
      if (have > 0.0 && need > have)
        r.fail("spacing", "the scene would need about " + gb(need) + " of memory while it runs (" +
                              format_number(count) + " particles at about " +
                              format_number(poly ? MpmMemoryCost::kPerParticlePolyPic
                                                 : MpmMemoryCost::kPerParticle) +
                              " bytes each, " +
                              format_number(static_cast<double>(w.grid.nx + 1) * (w.grid.ny + 1)) +
                              " grid nodes at " + format_number(MpmMemoryCost::kPerNode) + "); " +
                              gb(have) + " available (larger spacing or a smaller body)");
    }
    const int nx = static_cast<int>(fnx), ny = static_cast<int>(fny);
    // Room for the whole lattice at once: growing the arrays one particle at a time doubles them
    // (old and new copies resident together: the build of 19.8 M particles peaked at 3.1 GB).
    // A shape smaller than its box leaves part of the room untouched, which costs no memory.
    w.particles.reserve(w.particles.size() + static_cast<size_t>(fnx * fny));
    // Centre the lattice in the bounding box so symmetric shapes stay symmetric.
    float ox = blo.x + 0.5f * ((bhi.x - blo.x) - (nx - 1) * h);
    float oy = blo.y + 0.5f * ((bhi.y - blo.y) - (ny - 1) * h);
    // Progress (sim/core/progress.h) every 64 rows: the bodies share 90 % of the bar equally.
    const bool report = progress_listened();
    const double nb = static_cast<double>(bodies->size());
    const std::string stage =
        report ? "body " + std::to_string(b + 1) + " of " + std::to_string(bodies->size()) : "";
    for (int j = 0; j < ny; ++j) {
      if (report && (j & 63) == 0)
        progress(stage, 0.9 * (static_cast<double>(b) + static_cast<double>(j) / ny) / nb);
      for (int i = 0; i < nx; ++i) {
        Vec2 p{ox + i * h, oy + j * h};
        if (jitter > 0.f) {
          uint32_t hsh =
              hash_u32(static_cast<uint32_t>(j) * 73856093u ^ static_cast<uint32_t>(i) * 19349663u ^
                       static_cast<uint32_t>(b) * 83492791u);
          p.x += jitter * h * ((hsh & 0xffff) / 65535.f - 0.5f) * 2.f;
          p.y += jitter * h * ((hsh >> 16) / 65535.f - 0.5f) * 2.f;
        }
        if (!shape->inside(p)) continue;
        if (p.x < lo_x || p.x > hi_x || p.y < lo_y || p.y > hi_y)
          continue;  // outside the usable domain
        w.particles.add(p, vel, mp.density * h * h, h * h, mat, static_cast<uint16_t>(group),
                        temperature);
      }
    }
    if (w.particles.size() == first)
      throw InputError(
          bodies->at(b).loc(), bpath,
          "body contains no particles inside the domain (check its position and spacing)");
    if (have_preset) {
      PendingPreset pp{preset, preset_speed, {}};
      for (size_t i = first; i < w.particles.size(); ++i)
        pp.idx.push_back(static_cast<uint32_t>(i));
      presets.push_back(std::move(pp));
    }
  }
  // Handles: the particles inside a shape follow a straight path (the grab spring).
  if (const Json* hs = root.get("handles")) {
    if (!hs->is_array()) throw InputError(hs->loc(), "handles", "expected an array of handles");
    for (size_t k = 0; k < hs->size(); ++k) {
      const std::string hpath = "handles[" + std::to_string(k) + "]";
      ObjReader r(hs->at(k), hpath);
      std::unique_ptr<Shape> shape = read_shape(r, scene_dir);
      MpmHandle h;
      h.velocity = r.vec2("velocity", Vec2{});
      h.start = r.number("start", 0.0, 0.0, 1e9);
      h.stop = r.number("stop", 1e9, 0.0, 1e9);
      if (h.stop < h.start) r.fail("stop", "stop must not be before start");
      h.stiffness = static_cast<float>(r.number("stiffness", h.stiffness, 0.0, 1e12));
      r.finish();
      for (size_t i = 0; i < w.particles.size(); ++i)
        if (shape->inside(w.particles.x[i])) {
          h.ids.push_back(w.particles.id[i]);
          h.anchor.push_back(w.particles.x[i]);
        }
      if (h.ids.empty())
        throw InputError(hs->at(k).loc(), hpath, "the handle's shape holds no particle");
      w.handles.push_back(std::move(h));
    }
  }
  root.finish();
  w.host_changed();
  for (const auto& pp : presets) w.apply_preset(pp.p, pp.speed, &pp.idx);
  if (w.heat.enabled)
    w.start_heat();  // melting masses on the quantum before step 0: the total is exact from there
  return scene;
}

MpmScene load_mpm_scene(const std::string& path, const std::vector<std::string>& overrides) {
  return build_mpm_scene(read_scene_document(path, overrides), path);
}

// [SECTION] Saving ---------------------------------------------------------------

static Json vec_json(Vec2 v) {
  Json a = Json::array();
  a.push_back(Json::number(v.x));
  a.push_back(Json::number(v.y));
  return a;
}

static double f2d(float f) {
  // Shortest decimal that reads back as the same float, so saved files stay tidy.
  char buf[32];
  for (int prec = 1; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, static_cast<double>(f));
    if (std::strtof(buf, nullptr) == f) break;
  }
  return std::strtod(buf, nullptr);
}

Json mpm_scene_to_json(const MpmScene& scene) {
  Json doc = scene.doc;
  const MpmWorld& w = *scene.world;
  Json* dom = doc.find("domain");
  if (dom && dom->is_object()) dom->set("grid", Json::number(w.grid.nx));
  Json solver = Json::object();
  if (const Json* old = doc.find("solver")) solver = *old;
  const SolverParams& s = w.solver;
  solver.set("transfer", Json::string(transfer_name(s.transfer)));
  solver.set("flip_blend", Json::number(f2d(s.flip_blend)));
  solver.set("flip_advect", Json::string(s.flip_advect == FlipAdvect::Pic ? "pic" : "blend"));
  solver.set("kernel", Json::string(kernel_name(s.kernel)));
  solver.set("dt", Json::number(f2d(s.dt)));
  solver.set("substeps", Json::number(s.substeps));
  solver.set("adaptive_dt", Json::boolean(s.adaptive_dt));
  solver.set("cfl", Json::number(f2d(s.cfl)));
  solver.set("boundary", Json::string(boundary_name(s.boundary)));
  if (s.wall_friction >= 0.f)
    solver.set("wall_friction", Json::number(f2d(s.wall_friction)));
  else
    solver.erase("wall_friction");  // switched off in the window
  if (s.deterministic || solver.find("deterministic"))
    solver.set("deterministic", Json::boolean(s.deterministic));
  Json g = vec_json(s.gravity);
  g.at(0) = Json::number(f2d(s.gravity.x));
  g.at(1) = Json::number(f2d(s.gravity.y));
  solver.set("gravity", g);
  doc.set("solver", solver);
  if (w.resampling.enabled || doc.find("resampling")) {
    Json rs = Json::object();
    if (const Json* old = doc.find("resampling")) rs = *old;
    // Everything the Resampling panel edits (the rest stays as written).
    const ResampleParams& q = w.resampling;
    rs.set("enabled", Json::boolean(q.enabled));
    rs.set("interval", Json::number(q.interval));
    rs.set("min_per_cell", Json::number(q.min_per_cell));
    rs.set("target_per_cell", Json::number(q.target_per_cell));
    rs.set("merge_distance", Json::number(f2d(q.merge_distance)));
    rs.set("smoothing", Json::number(f2d(q.smoothing)));
    doc.set("resampling", rs);
  }
  if (w.heat.enabled || doc.find("heat")) {
    // What the Heat panel edits (plates and lamps stay as written).
    Json hj = Json::object();
    if (const Json* old = doc.find("heat")) hj = *old;
    const HeatParams& h = w.heat;
    hj.set("enabled", Json::boolean(h.enabled));
    hj.set("only", Json::boolean(h.only));
    hj.set("interval", Json::number(h.interval));
    hj.set("time_scale", Json::number(f2d(h.time_scale)));
    hj.set("flip", Json::number(f2d(h.flip)));
    hj.set("preconditioner",
           Json::string(h.preconditioner == HeatPreconditioner::IC0 ? "ic0" : "jacobi"));
    if (h.device_solve != HeatDeviceSolve::Auto || hj.find("device_solve"))
      hj.set("device_solve", Json::string(kHeatDeviceSolveNames[static_cast<int>(h.device_solve)]));
    Json air = Json::object();
    if (const Json* old = hj.find("air")) air = *old;
    const char* models[3] = {"none", "photons", "convection"};
    air.set("model", Json::string(models[static_cast<int>(h.air)]));
    air.set("temperature", Json::number(f2d(h.air_temperature)));
    hj.set("air", air);
    Json walls = Json::object();
    const char* sides[4] = {"left", "right", "bottom", "top"};
    for (int k = 0; k < 4; ++k) {
      if (h.walls[k].fixed) {
        Json wj = Json::object();
        wj.set("temperature", Json::number(f2d(h.walls[k].temperature)));
        walls.set(sides[k], wj);
      } else {
        walls.set(sides[k], Json::string("insulated"));
      }
    }
    hj.set("walls", walls);
    doc.set("heat", hj);
  }
  Json* mats = doc.find("materials");
  if (mats && mats->is_object()) {
    for (size_t i = 0; i < w.materials.size() && i < w.material_names.size(); ++i) {
      Json* mj = mats->find(w.material_names[i]);
      if (!mj) continue;
      const MaterialParams& m = w.materials[i];
      mj->set("density", Json::number(f2d(m.density)));
      const MaterialKind& kind = material_kind(m.type);
      for (int f = 0; f < kind.field_count; ++f)
        mj->set(kind.fields[f].key, Json::number(f2d(m.*kind.fields[f].member)));
      // Heat fields: where the file has them, or in a scene with heat on.
      for (int f = 0; f < thermal_field_count(); ++f) {
        const MaterialField& fd = thermal_fields()[f];
        if (w.heat.enabled || mj->find(fd.key)) mj->set(fd.key, Json::number(f2d(m.*fd.member)));
      }
    }
  }
  return doc;
}

void save_json_file(const std::string& path, const Json& doc) {
  write_file_atomic(path, doc.dump());
}

// [SECTION] Built-in scenes -------------------------------------------------------

std::string scenes_dir() {
  if (const char* env = std::getenv("PS_ASSETS_DIR")) return (fs::path(env) / "scenes").string();
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path d = exe.parent_path(); !d.empty() && d != d.root_path(); d = d.parent_path()) {
      if (fs::exists(d / "assets" / "scenes")) return (d / "assets" / "scenes").string();
    }
  }
  return (fs::path(PS_SOURCE_DIR) / "assets" / "scenes").string();
}

std::string resolve_scene_path(const std::string& name_or_path) {
  if (fs::exists(name_or_path) && fs::is_regular_file(name_or_path)) return name_or_path;
  fs::path cand = fs::path(scenes_dir()) / (name_or_path + ".json");
  if (fs::exists(cand)) return cand.string();
  std::string names;
  for (const auto& p : builtin_scene_paths())
    names += (names.empty() ? "" : ", ") + fs::path(p).stem().string();
  throw InputError({name_or_path, 0, 0}, "",
                   "no such scene file or built-in scene (built-ins: " + names + ")");
}

std::vector<std::string> builtin_scene_paths() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(scenes_dir(), ec))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string default_scene_name() { return "mpm99"; }

}  // namespace ps
