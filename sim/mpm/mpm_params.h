/// MLS-MPM parameters: plain structs with defaults in their initialisers.
/// The window edits an app-owned copy; the world applies it before a step.
#pragma once
#include <cstdint>
#include "sim/core/names.h"
#include "sim/core/vec.h"
#include "sim/mpm/materials.h"

namespace ps {

/// Particle-grid transfer scheme (GAMES201 lecture 7). PolyPIC (Fu et al.
/// 2017) is APIC plus the six higher polynomial modes of the quadratic
/// stencil (sim/mpm/mpm_kernels.h, [SECTION] PolyPIC); quadratic kernel only.
enum class Transfer : uint8_t { PIC = 0, APIC = 1, FLIP = 2, PolyPIC = 3 };
inline constexpr NameTable<Transfer, 4> kTransferNames{0, {"pic", "apic", "flip", "polypic"}};
/// What the window shows for each transfer (its Solver panel, the title line).
inline constexpr NameTable<Transfer, 4> kTransferLabels{0, {"PIC", "APIC", "FLIP", "PolyPIC"}};
/// What FLIP particles move with (the lecture: implementations differ).
/// Pic: the interpolated grid velocity sum w v_i, consistent with the F
/// update (the default). Blend: the particle's new blended velocity.
enum class FlipAdvect : uint8_t { Pic = 0, Blend = 1 };
inline constexpr NameTable<FlipAdvect, 2> kFlipAdvectNames{0, {"pic", "blend"}};
/// B-spline interpolation kernel: support 2, 3 or 4 nodes per axis.
enum class Kernel : uint8_t { Linear = 1, Quadratic = 2, Cubic = 3 };
inline constexpr NameTable<Kernel, 3> kKernelNames{1, {"linear", "quadratic", "cubic"}};
/// Grid boundary condition on the outer `boundary_nodes` layer of nodes.
/// Sticky: v = 0. Slip: normal component removed. Separate: normal component
/// removed only when it points into the wall (particles may leave the wall).
enum class Boundary : uint8_t { Sticky = 0, Slip = 1, Separate = 2 };
inline constexpr NameTable<Boundary, 3> kBoundaryNames{0, {"sticky", "slip", "separate"}};

/// Uniform background grid. Nodes sit at origin + (i, j) * dx for
/// i in [0, nx], j in [0, ny]; the domain is [origin, origin + (nx, ny) dx].
struct GridSpec {
  Vec2 origin{0.f, 0.f};
  float dx = 1.f / 128.f;
  int nx = 128, ny = 128;
  PS_HD float width() const { return nx * dx; }
  PS_HD float height() const { return ny * dx; }
  PS_HD int nodes_x() const { return nx + 1; }
  PS_HD int nodes_y() const { return ny + 1; }
};

struct SolverParams {
  Transfer transfer = Transfer::APIC;
  float flip_blend = 0.95f;  ///< alpha: v = alpha FLIP + (1 - alpha) PIC
  FlipAdvect flip_advect =
      FlipAdvect::Pic;  ///< FLIP: advect with the grid (PIC) or blended velocity
  Kernel kernel = Kernel::Quadratic;
  float dt = 1e-4f;          ///< fixed step, or the upper bound when adaptive
  int substeps = 20;         ///< substeps per displayed frame
  bool adaptive_dt = false;  ///< CFL-adaptive step
  float cfl = 0.5f;          ///< dt <= cfl dx / max(|v|, wave speed)
  float dt_min = 1e-7f;      ///< adaptive lower bound
  Boundary boundary = Boundary::Separate;
  int boundary_nodes = 3;  ///< thickness of the boundary layer, in nodes
  /// Coulomb friction coefficient of the walls' surface (the nodes on the
  /// wall, just inside the boundary layer; mpm_kernels.h, wall_contact), or
  /// negative: off, the surface nodes are free like the interior.
  float wall_friction = -1.f;
  Vec2 gravity{0.f, -9.8f};
  float velocity_limit = 1e4f;  ///< |v| beyond this is a blow-up
  /// CUDA: order-independent (fixed-point integer) P2G scatter, so repeated
  /// runs are bit-identical. The CPU backend is always deterministic.
  bool deterministic = false;
};

/// External point force on grid nodes: attract (strength > 0 towards pos) or
/// repel, with a linear falloff to zero at `radius` (mpm128's attractor).
struct PointForce {
  bool active = false;
  Vec2 pos{0.f, 0.f};
  float radius = 0.1f;
  float strength = 50.f;  ///< acceleration at the centre; negative repels
};

}  // namespace ps
