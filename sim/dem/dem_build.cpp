#include "sim/dem/dem_build.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include "sim/dem/dem_kernels.h"

namespace ps {
namespace dem {

size_t add_particle(DemWorld& w, Vec2d pos, double radius, int material, uint16_t group,
                    Vec2d velocity, uint32_t body) {
  if (material < 0 || material >= static_cast<int>(w.materials.size()))
    throw std::runtime_error("DEM particle: material index " + std::to_string(material) +
                             " is not defined");
  if (!(radius > 0.0)) throw std::runtime_error("DEM particle: radius must be > 0");
  const double m = sphere_mass(w.materials[static_cast<size_t>(material)].density, radius);
  return w.particles.add(pos, velocity, radius, m, sphere_inertia(m, radius),
                         static_cast<uint8_t>(material), group, body);
}

// Even-odd rule.
static bool inside_polygon(const std::vector<Vec2d>& poly, Vec2d q) {
  bool in = false;
  for (size_t a = 0, b = poly.size() - 1; a < poly.size(); b = a++) {
    const Vec2d pa = poly[a], pb = poly[b];
    if ((pa.y > q.y) != (pb.y > q.y)) {
      const double x = pa.x + (q.y - pa.y) / (pb.y - pa.y) * (pb.x - pa.x);
      if (q.x < x) in = !in;
    }
  }
  return in;
}

static double segment_distance(Vec2d a, Vec2d b, Vec2d q) {
  const Vec2d ab = b - a;
  const double L2 = length2(ab);
  double s = L2 > 0.0 ? dot(q - a, ab) / L2 : 0.0;
  s = std::min(1.0, std::max(0.0, s));
  return length(q - (a + s * ab));
}

std::vector<Vec2d> body_points(const BodySpec& s) {
  if (s.shape == Shape::Points) return s.points;
  if (!(s.radius > 0.0)) throw std::runtime_error("DEM body: particle radius must be > 0");
  const double r = s.radius, eps = 1e-9 * r;
  const bool hex = s.packing == Packing::Hex;
  const double dy = hex ? std::sqrt(3.0) * r : 2.0 * r;
  std::vector<Vec2d> out;
  switch (s.shape) {
    case Shape::Box: {
      const double hw = 0.5 * s.size.x, hh = 0.5 * s.size.y;
      const double c = std::cos(s.angle), sn = std::sin(s.angle);
      for (int k = 0;; ++k) {
        const double y = -hh + r + k * dy;
        if (y > hh - r + eps) break;
        const double off = hex && (k & 1) ? r : 0.0;
        for (int m = 0;; ++m) {
          const double x = -hw + r + off + 2.0 * r * m;
          if (x > hw - r + eps) break;
          out.push_back(s.center + Vec2d{c * x - sn * y, sn * x + c * y});
        }
      }
      break;
    }
    case Shape::Points: break;  // returned above
    case Shape::Disk: {
      const double lim = s.disk_radius - r + eps;
      if (lim < 0.0) break;
      const int K = static_cast<int>(lim / dy) + 1;
      for (int k = -K; k <= K; ++k) {
        const double y = k * dy;
        const double off = hex && (k & 1) ? r : 0.0;
        const int M = static_cast<int>(lim / (2.0 * r)) + 2;
        for (int m = -M; m <= M; ++m) {
          const double x = off + 2.0 * r * m;
          if (x * x + y * y <= lim * lim) out.push_back(s.center + Vec2d{x, y});
        }
      }
      break;
    }
    case Shape::Polygon: {
      if (s.polygon.size() < 3)
        throw std::runtime_error("DEM body: a polygon needs at least 3 vertices");
      Vec2d lo = s.polygon[0], hi = s.polygon[0];
      for (Vec2d q : s.polygon) {
        lo.x = std::min(lo.x, q.x);
        lo.y = std::min(lo.y, q.y);
        hi.x = std::max(hi.x, q.x);
        hi.y = std::max(hi.y, q.y);
      }
      for (int k = 0;; ++k) {
        const double y = lo.y + r + k * dy;
        if (y > hi.y - r + eps) break;
        const double off = hex && (k & 1) ? r : 0.0;
        for (int m = 0;; ++m) {
          const double x = lo.x + r + off + 2.0 * r * m;
          if (x > hi.x - r + eps) break;
          const Vec2d q{x, y};
          if (!inside_polygon(s.polygon, q)) continue;
          bool fits = true;
          for (size_t a = 0, b = s.polygon.size() - 1; a < s.polygon.size() && fits; b = a++)
            fits = segment_distance(s.polygon[b], s.polygon[a], q) >= r - eps;
          if (fits) out.push_back(q);
        }
      }
      break;
    }
  }
  return out;
}

double body_point_bound(const BodySpec& s) {
  if (s.shape == Shape::Points) return static_cast<double>(s.points.size());
  if (!(s.radius > 0.0)) return 0.0;
  Vec2d ext{0.0, 0.0};
  if (s.shape == Shape::Box) {
    const double d = std::hypot(s.size.x, s.size.y);  // any rotation fits in the diagonal
    ext = Vec2d{d, d};
  } else if (s.shape == Shape::Disk) {
    ext = Vec2d{2.0 * s.disk_radius, 2.0 * s.disk_radius};
  } else if (!s.polygon.empty()) {
    Vec2d lo = s.polygon[0], hi = s.polygon[0];
    for (Vec2d q : s.polygon) {
      lo.x = std::min(lo.x, q.x);
      lo.y = std::min(lo.y, q.y);
      hi.x = std::max(hi.x, q.x);
      hi.y = std::max(hi.y, q.y);
    }
    ext = hi - lo;
  }
  // Rows are at least sqrt(3) r apart, columns 2 r apart.
  return (ext.x / (2.0 * s.radius) + 2.0) * (ext.y / (std::sqrt(3.0) * s.radius) + 2.0);
}

BodyRange add_body(DemWorld& w, const BodySpec& spec) {
  std::vector<Vec2d> pts = body_points(spec);
  BodyRange range;
  range.first = w.particles.size();
  range.count = pts.size();
  if (spec.bonded) {
    uint32_t next = 0;
    for (uint32_t b : w.particles.body) next = std::max(next, b);
    range.body = next + 1;
  }
  for (Vec2d q : pts)
    add_particle(w, q, spec.radius, spec.material, spec.group, spec.velocity, range.body);
  return range;
}

void add_plane(DemWorld& w, Vec2d point, Vec2d normal, int material) {
  const double L = length(normal);
  if (!(L > 0.0)) throw std::runtime_error("DEM wall: normal must be non-zero");
  DemWall wall;
  wall.type = WallType::Plane;
  wall.a = point;
  wall.n = normal / L;
  wall.material = material;
  w.walls.push_back(wall);
}

void add_segment(DemWorld& w, Vec2d a, Vec2d b, int material) {
  if (a == b) throw std::runtime_error("DEM wall: segment end points coincide");
  DemWall wall;
  wall.type = WallType::Segment;
  wall.a = a;
  wall.b = b;
  wall.n = perp(b - a) / length(b - a);
  wall.material = material;
  w.walls.push_back(wall);
}

DemWall make_disk_wall(Vec2d centre, double radius, int material) {
  DemWall wall;
  wall.type = WallType::Disk;
  wall.a = centre;
  wall.c = centre;
  wall.radius = radius;
  wall.material = material;
  const std::string why = check_wall(wall);
  if (!why.empty()) throw std::runtime_error("DEM disk wall: " + why);
  return wall;
}

DemWall make_polygon_wall(const std::vector<Vec2d>& vertices, int material) {
  const int m = static_cast<int>(vertices.size());
  if (m < 3 || m > kMaxWallVertices)
    throw std::runtime_error("DEM polygon wall: 3 to " + std::to_string(kMaxWallVertices) +
                             " vertices, not " + std::to_string(m));
  DemWall wall;
  wall.type = WallType::Polygon;
  wall.material = material;
  wall.count = m;
  // Area and centroid (shoelace, relative to the first vertex).
  double area2 = 0.0;
  Vec2d sum{};
  for (int k = 1; k + 1 < m; ++k) {
    const Vec2d e1 = vertices[k] - vertices[0], e2 = vertices[k + 1] - vertices[0];
    const double a = cross(e1, e2);
    area2 += a;
    sum += (a / 3.0) * (e1 + e2);
  }
  const bool ccw = area2 > 0.0;
  for (int k = 0; k < m; ++k) wall.v[k] = vertices[ccw ? k : m - 1 - k];
  wall.c = area2 != 0.0 ? vertices[0] + sum / area2 : vertices[0];
  wall.a = wall.c;
  const std::string why = check_wall(wall);
  if (!why.empty()) throw std::runtime_error("DEM polygon wall: " + why);
  return wall;
}

DemWall make_box_wall(Vec2d centre, Vec2d half, double angle, int material) {
  const double cs = std::cos(angle), sn = std::sin(angle);
  std::vector<Vec2d> v;
  for (Vec2d q : {Vec2d{-half.x, -half.y}, Vec2d{half.x, -half.y}, Vec2d{half.x, half.y},
                  Vec2d{-half.x, half.y}})
    v.push_back(centre + Vec2d{cs * q.x - sn * q.y, sn * q.x + cs * q.y});
  DemWall wall = make_polygon_wall(v, material);
  wall.c = centre;
  wall.a = centre;
  return wall;
}

void add_domain_walls(DemWorld& w, unsigned sides, int material) {
  if (sides & kSideLeft) add_plane(w, w.domain_min, Vec2d{1.0, 0.0}, material);
  if (sides & kSideRight) add_plane(w, w.domain_max, Vec2d{-1.0, 0.0}, material);
  if (sides & kSideBottom) add_plane(w, w.domain_min, Vec2d{0.0, 1.0}, material);
  if (sides & kSideTop) add_plane(w, w.domain_max, Vec2d{0.0, -1.0}, material);
}

size_t set_region(DemWorld& w, Vec2d lo, Vec2d hi, int fixed, int group) {
  size_t count = 0;
  DemParticles& p = w.particles;
  for (size_t i = 0; i < p.size(); ++i) {
    const Vec2d x = p.x[i];
    if (x.x < lo.x || x.x > hi.x || x.y < lo.y || x.y > hi.y) continue;
    if (fixed >= 0) p.fixed[i] = static_cast<uint8_t>(fixed ? 1 : 0);
    if (group >= 0) p.group[i] = static_cast<uint16_t>(group);
    ++count;
  }
  return count;
}

}  // namespace dem
}  // namespace ps
