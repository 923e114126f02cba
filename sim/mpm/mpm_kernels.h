/// MLS-MPM per-particle and per-node math, written once for every backend.
///
/// One substep (GAMES201 lecture 7; Hu et al. 2018, "A Moving Least Squares
/// Material Point Method"):
///   clear grid -> P2G (scatter mass and momentum, stress folded into the
///   affine term) -> grid update (normalise, gravity, forces, boundary)
///   -> G2P (gather velocity and its gradient C, update F, advect).
/// The CPU backend calls these from loops; the CUDA backend from kernels.
#pragma once
#include <cmath>
#include "sim/core/vec.h"
#include "sim/mpm/materials.h"
#include "sim/mpm/mpm_params.h"

namespace ps {
namespace mpm {

constexpr int kMaxSupport = 4;

/// Interpolation stencil of one particle: the first node and per-axis weights,
/// plus the per-axis weight derivatives (in grid units).
struct Stencil {
  int base_x = 0, base_y = 0;
  int n = 3;  ///< support per axis
  float fx = 0.f, fy = 0.f;  ///< particle position relative to base node, grid units
  float wx[kMaxSupport], wy[kMaxSupport];
  float dwx[kMaxSupport], dwy[kMaxSupport];
};

PS_HD_CONST int kernel_support(Kernel k) { return static_cast<int>(k) + 1; }

/// Cubic B-spline N(d) and N'(d), d in grid units.
PS_HD float cubic_n(float d) {
  float a = fabsf(d);
  if (a < 1.f) return 0.5f * a * a * a - a * a + 2.f / 3.f;
  if (a < 2.f) { float t = 2.f - a; return t * t * t / 6.f; }
  return 0.f;
}
PS_HD float cubic_dn(float d) {
  float a = fabsf(d);
  float s = d < 0.f ? -1.f : 1.f;
  if (a < 1.f) return 1.5f * d * a - 2.f * d;
  if (a < 2.f) { float t = 2.f - a; return -0.5f * t * t * s; }
  return 0.f;
}

/// floor() without a libm call (x86-64 baseline has no SSE4.1 round): truncate,
/// then correct negative non-integers. Exact for |x| < 2^31.
PS_HD int fast_floor(float x) {
  int i = static_cast<int>(x);
  return i - (x < static_cast<float>(i) ? 1 : 0);
}

/// First stencil node along one axis for grid-space coordinate X.
PS_HD int stencil_base(Kernel k, float X) {
  return k == Kernel::Linear ? fast_floor(X) : (k == Kernel::Cubic ? fast_floor(X) - 1 : fast_floor(X - 0.5f));
}

/// Fills the per-axis weights for grid-space coordinate X (= (x - origin)/dx).
PS_HD void axis_weights(Kernel k, float X, int& base, float& f, float* w, float* dw) {
  switch (k) {
    case Kernel::Linear: {
      base = fast_floor(X);
      f = X - base;
      w[0] = 1.f - f; w[1] = f;
      dw[0] = -1.f; dw[1] = 1.f;
      break;
    }
    case Kernel::Cubic: {
      base = fast_floor(X) - 1;
      f = X - base;
      for (int a = 0; a < 4; ++a) { w[a] = cubic_n(f - a); dw[a] = cubic_dn(f - a); }
      break;
    }
    case Kernel::Quadratic:
    default: {
      // base = floor(X - 0.5), fx in [0.5, 1.5): the lecture's w0, w1, w2.
      base = fast_floor(X - 0.5f);
      f = X - base;
      w[0] = 0.5f * (1.5f - f) * (1.5f - f);
      w[1] = 0.75f - (f - 1.f) * (f - 1.f);
      w[2] = 0.5f * (f - 0.5f) * (f - 0.5f);
      dw[0] = f - 1.5f;
      dw[1] = -2.f * (f - 1.f);
      dw[2] = f - 0.5f;
      break;
    }
  }
}

PS_HD Stencil make_stencil(Kernel k, const GridSpec& g, Vec2 x) {
  Stencil s;
  s.n = kernel_support(k);
  float inv_dx = 1.f / g.dx;
  axis_weights(k, (x.x - g.origin.x) * inv_dx, s.base_x, s.fx, s.wx, s.dwx);
  axis_weights(k, (x.y - g.origin.y) * inv_dx, s.base_y, s.fy, s.wy, s.dwy);
  return s;
}

/// The "gradient vector" g_ip of node (a, b) such that the velocity gradient
/// is C_p = sum_i v_i g_ip^T and the MLS-MPM internal force is
/// f_i = -vol0 tau g_ip. For quadratic and cubic B-splines this is the APIC /
/// MLS form w D^-1 (x_i - x_p) with D = dx^2/4 resp. dx^2/3; for the linear
/// kernel (D singular) it is grad w, as in Jiang et al. 2015.
PS_HD Vec2 grad_vector(Kernel k, const Stencil& s, int a, int b, float inv_dx) {
  float w = s.wx[a] * s.wy[b];
  switch (k) {
    case Kernel::Linear:
      return {s.dwx[a] * s.wy[b] * inv_dx, s.wx[a] * s.dwy[b] * inv_dx};
    case Kernel::Cubic:
      return {w * 3.f * inv_dx * (a - s.fx), w * 3.f * inv_dx * (b - s.fy)};
    case Kernel::Quadratic:
    default:
      return {w * 4.f * inv_dx * (a - s.fx), w * 4.f * inv_dx * (b - s.fy)};
  }
}

/// D^-1 of the APIC inertia-like tensor D = sum w (x_i - x_p)(x_i - x_p)^T,
/// a multiple of the identity for quadratic (4/dx^2) and cubic (3/dx^2)
/// B-splines; 0 for the linear kernel, which uses grad w instead.
PS_HD_CONST float dinv_factor(Kernel k) {
  return k == Kernel::Quadratic ? 4.f : (k == Kernel::Cubic ? 3.f : 0.f);
}

/// Everything the grid update needs besides the node itself.
struct GridUpdateParams {
  GridSpec grid;
  Vec2 gravity;
  float dt;
  Boundary boundary;
  int boundary_nodes;
  PointForce point;
};

/// FLIP's "old" grid velocity of a node: the momentum the particles brought,
/// sum_p w_ip m_p v_p, over the node mass. It must be scattered on its own:
/// in MLS-MPM the P2G momentum already holds this substep's stress impulse
/// (folded into the affine term), so taking the old velocity from it would
/// leave every internal force (elasticity, pressure) out of the FLIP
/// increment v_new - v_old. With this, the increment carries stress,
/// pressure, gravity, external forces, boundary and tool forces: all that
/// the grid update and P2G's force terms add (Zhu & Bridson 2005; Jiang et
/// al. 2016, "The material point method for simulating continuum
/// materials", SIGGRAPH course, on PIC/FLIP blends).
PS_HD Vec2 flip_old_velocity(float m, Vec2 transferred_momentum) {
  return m > 0.f ? transferred_momentum / m : Vec2{};
}

/// The grid boundary condition on the outer `boundary_nodes` layer.
PS_HD Vec2 apply_boundary(int i, int j, Vec2 v, const GridUpdateParams& p) {
  int b = p.boundary_nodes;
  bool lo_x = i < b, hi_x = i > p.grid.nx - b, lo_y = j < b, hi_y = j > p.grid.ny - b;
  if (lo_x || hi_x || lo_y || hi_y) {
    if (p.boundary == Boundary::Sticky) {
      v = Vec2{};
    } else if (p.boundary == Boundary::Slip) {
      if (lo_x || hi_x) v.x = 0.f;
      if (lo_y || hi_y) v.y = 0.f;
    } else {  // Separate
      if ((lo_x && v.x < 0.f) || (hi_x && v.x > 0.f)) v.x = 0.f;
      if ((lo_y && v.y < 0.f) || (hi_y && v.y > 0.f)) v.y = 0.f;
    }
  }
  return v;
}

/// Normalises one node and applies gravity, the point force and the
/// boundary condition. `mv` holds momentum in, velocity out.
PS_HD void grid_update_node(int i, int j, float m, Vec2& mv, const GridUpdateParams& p) {
  if (m <= 0.f) { mv = Vec2{}; return; }
  Vec2 v = mv / m;
  v += p.dt * p.gravity;
  if (p.point.active) {
    Vec2 node{p.grid.origin.x + i * p.grid.dx, p.grid.origin.y + j * p.grid.dx};
    Vec2 d = p.point.pos - node;
    float r = length(d);
    if (r < p.point.radius && r > 1e-12f) {
      float fall = 1.f - r / p.point.radius;
      v += (p.dt * p.point.strength * fall / r) * d;
    }
  }
  v = apply_boundary(i, j, v, p);
  mv = v;
}

/// MUSL's second grid velocity (linear kernel): the particles' new momentum
/// over the node mass, with the boundary condition (see MpmCpuBackend::musl_linear).
PS_HD Vec2 musl_node_velocity(int i, int j, float m, Vec2 momentum, const GridUpdateParams& p) {
  if (m <= 0.f) return Vec2{};
  return apply_boundary(i, j, momentum / m, p);
}

/// G2P's update of a particle's deformation from its velocity gradient B.
/// Solids: F <- (I + dt B) F (J is unused, 1). Fluids carry the volume ratio
/// directly, J <- J (1 + dt tr B) (mpm88), and keep F = I: their stress
/// depends on J only, and an integrated F would accumulate the flow's shear
/// until it overflows (a refined mpm88 blew up at step 8214 with a finite
/// velocity and det F = nan).
PS_HD void update_deformation(MaterialType type, const Mat2& B, float dt, Mat2& F, float& J) {
  if (type == MaterialType::Fluid) {
    J *= 1.f + dt * trace(B);
    F = Mat2::identity();
  } else {
    F = (Mat2::identity() + dt * B) * F;
  }
}

/// Position clamp that keeps every kernel's stencil inside the node array.
PS_HD Vec2 clamp_to_grid(const GridSpec& g, Vec2 x) {
  const float lo_x = g.origin.x + g.dx, hi_x = g.origin.x + (g.nx - 1.001f) * g.dx;
  const float lo_y = g.origin.y + g.dx, hi_y = g.origin.y + (g.ny - 1.001f) * g.dx;
  return {clampf(x.x, lo_x, hi_x), clampf(x.y, lo_y, hi_y)};
}

/// Combines the gathered grid velocities into the particle's new velocity.
/// PIC: v = sum w v_i. APIC: the same plus C kept for P2G. FLIP blend:
/// v = v_pic + alpha (v_p + sum w (v_i - v_i_old) - v_pic); alpha = 0 is PIC
/// bit for bit (the blend is skipped, so no -0 / +0 or NaN * 0 differences).
PS_HD Vec2 transfer_velocity(Transfer t, float alpha, Vec2 v_p, Vec2 v_pic, Vec2 dv_grid) {
  if (t != Transfer::FLIP || !(alpha > 0.f)) return v_pic;
  Vec2 v_flip = v_p + dv_grid;
  return v_pic + alpha * (v_flip - v_pic);
}

/// The velocity a particle is advected with: x += dt * advect_velocity(...).
/// Only FLIP distinguishes: `FlipAdvect::Pic` (default) moves particles with
/// the grid velocity v_pic = sum w v_i, the same motion that updates F, as in
/// Brackbill & Ruppel's FLIP (1986) and Sulsky et al. (1994), where
/// x_p += dt sum_i N_i(x_p) v_i; `FlipAdvect::Blend` moves them with their new
/// blended velocity, as the lecture's demo and many FLIP fluid codes do.
PS_HD Vec2 advect_velocity(Transfer t, FlipAdvect a, Vec2 v_new, Vec2 v_pic) {
  return (t == Transfer::FLIP && a == FlipAdvect::Pic) ? v_pic : v_new;
}

}  // namespace mpm
}  // namespace ps
