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

/// min/max clamp that compiles to minss/maxss (fminf/fmaxf are libm calls
/// with NaN rules on the x86-64 baseline).
PS_HD float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

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

/// Applies plasticity (snow, sand) to F and returns the Kirchhoff stress tau.
/// `C` is the particle's velocity gradient (used for fluid viscosity).
PS_HD Mat2 constitutive(const MaterialParams& m, Mat2& F, float J, float& Jp, const Mat2& C) {
  switch (m.type) {
    case MaterialType::Tracer:
      return Mat2{};
    case MaterialType::Fluid: {
      // Weakly compressible (mpm88/mpm99 fluid): tau = K J (J - 1) I, plus a
      // Newtonian viscous term tau_v = J mu (C + C^T).
      float p = m.bulk_modulus * J * (J - 1.f);
      Mat2 tau = Mat2::diag(p, p);
      if (m.viscosity > 0.f) tau += (J * m.viscosity) * (C + transpose(C));
      return tau;
    }
    case MaterialType::Jelly: {
      // Fixed-corotated (Stomakhin et al. 2012): tau = 2 mu (F - R) F^T + lambda J (J - 1) I.
      float mu, la;
      lame(m, mu, la);
      Mat2 R, S;
      polar2(F, R, S);
      float Jf = det(F);
      return (2.f * mu) * ((F - R) * transpose(F)) + Mat2::diag(la * Jf * (Jf - 1.f), la * Jf * (Jf - 1.f));
    }
    case MaterialType::Snow: {
      // Stomakhin et al. 2013: clamp singular values to [1 - theta_c, 1 + theta_s],
      // move the rest into Jp, harden Lame parameters by exp(xi (1 - Jp)).
      float mu, la;
      lame(m, mu, la);
      Mat2 U, V;
      Vec2 sig;
      svd2(F, U, sig, V);
      float old_j = sig.x * sig.y;
      sig.x = clampf(sig.x, 1.f - m.theta_c, 1.f + m.theta_s);
      sig.y = clampf(sig.y, 1.f - m.theta_c, 1.f + m.theta_s);
      float new_j = sig.x * sig.y;
      // Jp is bounded to [0.01, 100]: the hardening factor is already clamped
      // at Jp ~ 0.84 and ~ 1.23, so this only keeps torn-off particles finite.
      Jp = clampf(Jp * (old_j / new_j), 1e-2f, 1e2f);
      F = U * Mat2::diag(sig.x, sig.y) * transpose(V);
      // mpm128 clamps the hardening factor to [0.1, 5] so snow neither liquefies nor locks.
      float h = clampf(expf(m.hardening * (1.f - Jp)), 0.1f, 5.f);
      mu *= h;
      la *= h;
      Mat2 R = U * transpose(V);
      return (2.f * mu) * ((F - R) * transpose(F)) + Mat2::diag(la * new_j * (new_j - 1.f), la * new_j * (new_j - 1.f));
    }
    case MaterialType::Sand:
    default: {
      // Drucker-Prager return mapping in Hencky strain (Klar et al. 2016), cohesionless.
      float mu, la;
      lame(m, mu, la);
      Mat2 U, V;
      Vec2 sig;
      svd2(F, U, sig, V);
      float old_j = sig.x * sig.y;
      Vec2 eps{logf(fmaxf(fabsf(sig.x), 1e-6f)), logf(fmaxf(fabsf(sig.y), 1e-6f))};
      float tr = eps.x + eps.y;
      Vec2 dev{eps.x - 0.5f * tr, eps.y - 0.5f * tr};
      float dev_norm = length(dev);
      float sin_phi = sinf(m.friction_angle * 3.14159265f / 180.f);
      float alpha = sqrtf(2.f / 3.f) * 2.f * sin_phi / (3.f - sin_phi);
      if (tr >= 0.f || dev_norm <= 0.f) {
        eps = Vec2{0.f, 0.f};  // tension: project to the cone tip (no cohesion)
      } else {
        float dgamma = dev_norm + (2.f * la + 2.f * mu) / (2.f * mu) * tr * alpha;
        if (dgamma > 0.f) eps = eps - (dgamma / dev_norm) * dev;
      }
      sig = Vec2{expf(eps.x), expf(eps.y)};
      F = U * Mat2::diag(sig.x, sig.y) * transpose(V);
      Jp = clampf(Jp * (old_j / (sig.x * sig.y)), 1e-2f, 1e2f);
      float t = eps.x + eps.y;
      Mat2 d = Mat2::diag(2.f * mu * eps.x + la * t, 2.f * mu * eps.y + la * t);
      return U * d * transpose(U);
    }
  }
}

/// Largest elastic wave speed of a material, for the CFL bound.
inline float wave_speed(const MaterialParams& m) {
  float mu, la;
  lame(m, mu, la);
  switch (m.type) {
    case MaterialType::Tracer: return 0.f;
    case MaterialType::Fluid: return sqrtf(m.bulk_modulus / m.density);
    case MaterialType::Snow: return sqrtf(5.f * (la + 2.f * mu) / m.density);  // max hardening 5
    default: return sqrtf((la + 2.f * mu) / m.density);
  }
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

/// Normalises one node, stores v_old (for FLIP) and applies gravity, the point
/// force and the boundary condition. `mv` holds momentum in, velocity out.
PS_HD void grid_update_node(int i, int j, float m, Vec2& mv, Vec2& v_old, const GridUpdateParams& p) {
  if (m <= 0.f) { mv = Vec2{}; v_old = Vec2{}; return; }
  Vec2 v = mv / m;
  v_old = v;
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
  mv = v;
}

/// Position clamp that keeps every kernel's stencil inside the node array.
PS_HD Vec2 clamp_to_grid(const GridSpec& g, Vec2 x) {
  const float lo_x = g.origin.x + g.dx, hi_x = g.origin.x + (g.nx - 1.001f) * g.dx;
  const float lo_y = g.origin.y + g.dx, hi_y = g.origin.y + (g.ny - 1.001f) * g.dx;
  return {clampf(x.x, lo_x, hi_x), clampf(x.y, lo_y, hi_y)};
}

/// Combines the gathered grid velocities into the particle's new velocity.
/// PIC: v = sum w v_i. APIC: the same plus C kept for P2G. FLIP blend:
/// v = v_pic + alpha (v_p + sum w (v_i - v_i_old) - v_pic); alpha = 0 is PIC exactly.
PS_HD Vec2 transfer_velocity(Transfer t, float alpha, Vec2 v_p, Vec2 v_pic, Vec2 dv_grid) {
  if (t != Transfer::FLIP) return v_pic;
  Vec2 v_flip = v_p + dv_grid;
  return v_pic + alpha * (v_flip - v_pic);
}

}  // namespace mpm
}  // namespace ps
