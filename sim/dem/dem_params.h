/// DEM parameters: plain structs with defaults in their initialisers (SI
/// units: m, kg, s, Pa). The window edits an app-owned copy; the world reads
/// them at the start of every step, so edits apply at once (bond stiffness
/// included, see DemBondParams).
#pragma once
#include <cstdint>
#include "sim/dem/dem_vec.h"

namespace ps {
namespace dem {

/// Contact material of particles and walls (Hertz-Mindlin).
struct DemMaterial {
  double density = 2500.0;        ///< kg/m^3 (particles are spheres, see docs/dem.md)
  double E = 1e7;                 ///< Young's modulus, Pa
  double nu = 0.25;               ///< Poisson's ratio
  double restitution = 0.5;       ///< coefficient of restitution e in (0, 1]
  double friction = 0.5;          ///< Coulomb sliding friction mu
  double rolling_friction = 0.0;  ///< mu_r: rolling moment cap mu_r R* F_n
  /// eta_r: viscous rolling damping as a fraction of the critical
  /// 2 sqrt(I_r k_r) (Ai et al. 2011, model C), active while the rolling
  /// spring is below its cap (0 = pure elastic-plastic spring).
  double rolling_damping = 0.3;
  float color[3] = {0.8f, 0.7f, 0.5f};  ///< display colour (linear RGB in [0,1])
};

/// Edinburgh Bonded Particle Model parameters (Brown, Chen & Ooi 2014),
/// shared by all bonds. Bonds store only their rest length and accumulated
/// displacements/rotations; stiffnesses, bond radius and stresses are
/// recomputed every step from these values, so editing E, nu or
/// radius_ratio while running changes the existing bonds' forces at once.
struct DemBondParams {
  bool enabled = true;                      ///< form bonds at scene start
  double E = 1e7;                           ///< bond Young's modulus, Pa
  double nu = 0.25;                         ///< bond Poisson's ratio (G = E / 2(1 + nu))
  double radius_ratio = 1.0;                ///< lambda: bond radius r_b = lambda min(R_i, R_j)
  double contact_radius_multiplier = 1.05;  ///< bond when |x_j - x_i| < m (R_i + R_j)
  double tensile_strength = 1e30;           ///< Pa
  double compressive_strength = 1e30;       ///< Pa
  double shear_strength = 1e30;             ///< Pa
  double damping = 0.0;                     ///< fraction of critical damping of each bond spring
};

enum class WallType : uint8_t {
  Plane = 0,    ///< infinite line through `a` with unit normal `n`; solid on the -n side
  Segment = 1,  ///< finite segment a-b, two-sided
  Disk = 2,     ///< solid disk of centre `a` and radius `radius`; particles stay outside
  Polygon = 3,  ///< solid convex polygon `v[0..count)`, counter-clockwise; particles stay outside
};

/// Most vertices of a Polygon wall (Box2D's b2_maxPolygonVertices).
constexpr int kMaxWallVertices = 8;

/// A rigid wall. Its material sets the pair properties with the particle
/// (E* and G* combine as for two bodies; e, mu, mu_r are averaged); the wall
/// itself has infinite mass, radius and inertia.
///
/// Walls may move: the backends never move them, the caller does (or
/// DemWorld::advance_walls, with move_wall below). `vel` and `omega` are the
/// rigid velocity of the wall at its reference point `c`; the wall's velocity
/// at a point p is vel + omega x (p - c). They enter the contact's relative
/// velocity (normal damping, Mindlin spring) and its rolling term. With zero
/// motion (the default) every result is what a fixed wall gives.
struct DemWall {
  WallType type = WallType::Plane;
  Vec2d a{0.0, 0.0};  ///< plane point, segment start, disk centre
  Vec2d b{1.0, 0.0};  ///< segment end
  Vec2d n{0.0, 1.0};  ///< plane normal (unit), pointing into the free side
  int material = 0;
  double radius = 0.0;        ///< disk radius
  int count = 0;              ///< polygon: number of vertices, 3 .. kMaxWallVertices
  Vec2d v[kMaxWallVertices];  ///< polygon vertices, counter-clockwise, strictly convex
  Vec2d c{0.0, 0.0};          ///< reference point of the rigid motion (a body's centre of mass)
  Vec2d vel{0.0, 0.0};        ///< velocity of the point c, m/s
  double omega = 0.0;         ///< angular velocity, rad/s (counter-clockwise)
};

struct DemSolverParams {
  double dt = 1e-5;        ///< fixed step (used when dt_safety <= 0)
  double dt_safety = 0.0;  ///< > 0: dt = safety x the stable estimate (DemTimeStep)
  int substeps = 50;       ///< steps per displayed frame
  Vec2d gravity{0.0, -9.81};
  double velocity_limit = 1e3;  ///< |v| beyond this (or a non-finite state) is a blow-up
  /// Cundall's local non-viscous damping alpha (Potyondy & Cundall 2004,
  /// sec. 2.4): F_k -= alpha |F_k| sign(v_k) per component. 0 = off; 0.7 is
  /// PFC's quasi-static value. It removes energy without a dashpot, so it
  /// does not change static equilibria (used to settle beams and piles).
  double local_damping = 0.0;
  double expected_speed = 1.0;  ///< impact speed used for the Hertz time estimate, m/s
};

/// A load on a group: `force + rate * t` in total, shared equally by the
/// group's particles (tip loads, ramps to failure).
struct DemLoad {
  uint16_t group = 0;
  Vec2d force{0.0, 0.0};  ///< N
  Vec2d rate{0.0, 0.0};   ///< N/s
};

}  // namespace dem
}  // namespace ps
