/// C++ builder API for DEM worlds: particles, packed bodies, walls, regions.
/// Scene files (dem_scene.h) and tests both build through these functions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>
#include "sim/dem/dem_world.h"

namespace ps {
namespace dem {

enum class Packing : uint8_t {
  Hex = 0,     ///< triangular lattice, 6 touching neighbours (rows sqrt(3) R apart)
  Square = 1,  ///< square lattice, 4 touching neighbours
};

/// Points: explicit particle centres (bodies made from images, see dem_scene).
enum class Shape : uint8_t { Box = 0, Disk = 1, Polygon = 2, Points = 3 };

/// A body filled with equal particles of radius `radius` on a regular
/// lattice; neighbours touch (centre spacing 2 R). Only particles whose whole
/// disk fits inside the shape are kept.
struct BodySpec {
  Shape shape = Shape::Box;
  Vec2d center{0.0, 0.0};      ///< box and disk centre
  Vec2d size{0.1, 0.1};        ///< box width and height
  double angle = 0.0;          ///< box rotation about its centre, radians (counter-clockwise)
  double disk_radius = 0.05;   ///< disk shape radius
  std::vector<Vec2d> polygon;  ///< polygon vertices, in order (either winding)
  std::vector<Vec2d> points;   ///< Points shape: the particle centres, in ID order
  double radius = 0.005;       ///< particle radius
  Packing packing = Packing::Hex;
  int material = 0;
  uint16_t group = 0;
  Vec2d velocity{0.0, 0.0};
  bool bonded = false;  ///< particles get a fresh body id so form_bonds() bonds them
};

struct BodyRange {
  size_t first = 0, count = 0;  ///< particle indices [first, first + count)
  uint32_t body = 0;            ///< bonding body id (0 when not bonded)
};

/// Adds one particle (sphere mass and inertia from the material's density).
size_t add_particle(DemWorld& w, Vec2d pos, double radius, int material, uint16_t group = 0,
                    Vec2d velocity = {}, uint32_t body = 0);
/// Lattice points of a body (centres), in the order add_body adds them.
std::vector<Vec2d> body_points(const BodySpec& spec);
/// An upper bound of body_points(spec).size(), computed without building
/// the lattice (lets loaders refuse absurd bodies before allocating).
double body_point_bound(const BodySpec& spec);
/// Fills a body with particles. Throws std::runtime_error on a bad spec.
BodyRange add_body(DemWorld& w, const BodySpec& spec);

/// Infinite wall through `point`; particles stay on the side `normal` points to.
void add_plane(DemWorld& w, Vec2d point, Vec2d normal, int material);
/// Two-sided wall segment a-b.
void add_segment(DemWorld& w, Vec2d a, Vec2d b, int material);
/// Walls as values, for `w.walls.push_back(...)` or to overwrite `w.walls[k]`
/// each step (a rigid body's fixture mapped to one wall). Their motion (c,
/// vel, omega) is zero; c is the shape's centre (the disk's centre, the
/// polygon's area centroid): set it to the body's centre of mass when the
/// wall belongs to a body. Throw std::runtime_error on a bad shape.
DemWall make_disk_wall(Vec2d centre, double radius, int material);
/// A convex polygon of 3 to kMaxWallVertices vertices, in either winding
/// (stored counter-clockwise).
DemWall make_polygon_wall(const std::vector<Vec2d>& vertices, int material);
/// A box of half-extents `half` turned by `angle` (radians, counter-clockwise)
/// about its centre (Box2D's b2MakeOffsetBox).
DemWall make_box_wall(Vec2d centre, Vec2d half, double angle, int material);

enum DomainSide : unsigned {
  kSideLeft = 1,
  kSideRight = 2,
  kSideBottom = 4,
  kSideTop = 8,
  kSideAll = 15
};
/// Plane walls on the chosen sides of [domain_min, domain_max], facing inwards.
void add_domain_walls(DemWorld& w, unsigned sides, int material);

/// Sets `fixed` (when fixed >= 0) and `group` (when group >= 0) of the
/// particles whose centre lies in [lo, hi]; returns how many matched.
size_t set_region(DemWorld& w, Vec2d lo, Vec2d hi, int fixed, int group);

}  // namespace dem
}  // namespace ps
