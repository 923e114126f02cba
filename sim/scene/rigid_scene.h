/// The scene file's "rigid" section (docs/scene-format.md, "rigid"): bodies,
/// joints and the rigid world's options, read with located errors.
#pragma once
#include <memory>
#include <string>
#include <vector>
#include "sim/io/json.h"
#include "sim/rigid/rigid_world.h"

namespace ps {
namespace rigid {

/// What the rest of the scene fixes for the bodies.
struct RigidSceneContext {
  Vec2d gravity{0.0, -9.81};
  Vec2d domain_lo{0.0, 0.0}, domain_hi{1.0, 1.0};
  double default_depth = 1.0;              ///< m (MPM: 1; DEM: the grains' mean diameter)
  std::vector<std::string> dem_materials;  ///< names, when the scene has DEM grains
};

/// Builds the rigid world from the "rigid" object. Throws InputError naming
/// file, line, column and the field ("rigid.bodies[2].vertices": "polygon is
/// not convex at vertex 3", "rigid.joints[0].body_b": "no body named ...").
std::unique_ptr<RigidWorld> read_rigid_section(const Json& rigid, const RigidSceneContext& ctx);

/// The "rigid" section that rebuilds this world's bodies as they were created
/// (pose and velocity at creation) with the edited density, friction and
/// restitution, bodies added in the window included. `old` (the section as
/// loaded, may be an empty object) keeps the options, the joints and each
/// loaded body's own object. Reading the result back gives the same world
/// (tested), provided added bodies were given float-exact coordinates, as
/// the window's are (the scene reader reads coordinates as floats).
Json rigid_section_json(const RigidWorld& w, const Json& old);

/// Writes the bodies' current state (one line per body) as CSV:
/// id,name,type,x,y,angle,vx,vy,omega,mass,inertia,com_x,com_y
std::string bodies_csv(const RigidWorld& w);
/// The bodies' outlines as legacy VTK polydata (one polygon per part, with
/// the body ID and speed as cell data).
std::string bodies_vtk(const RigidWorld& w);

}  // namespace rigid
}  // namespace ps
