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

/// Sand: projects the principal Hencky strains eps = (e1, e2) of the elastic
/// F onto the plane-strain Mohr-Coulomb cone (friction angle phi, cohesion c),
/// returning along the deviatoric direction at fixed trace (no dilatancy,
/// as in the Hencky-strain return mapping of Klar et al. 2016, "Drucker-Prager
/// Elastoplasticity for Sand Animation", ACM TOG 35(4) 103), or to the apex
/// in tension.
///
/// Derivation for this solver's 2D state. The stress is the Kirchhoff stress
/// of the Hencky model with two principal values,
///   tau_i = 2 mu e_i + lambda (e1 + e2),  i = 1, 2,
/// and Cauchy sigma = tau / J with J = det F = exp(e1 + e2). In 2D (the in-plane
/// Mohr circle; e.g. Nedderman 1992, "Statics and Kinematics of Granular
/// Materials", ch. 2) Mohr-Coulomb is exactly (tension positive)
///   |s1 - s2| / 2 <= -(s1 + s2) / 2 sin(phi) + c cos(phi).
/// With tr = e1 + e2, dev = eps - tr/2 (1, 1) (the 2D deviator, trace over 2
/// dims) and |dev| = |e1 - e2| / sqrt(2):
///   (tau1 - tau2) / 2 = mu (e1 - e2)      ->  |tau1 - tau2| / 2 = sqrt(2) mu |dev|
///   (tau1 + tau2) / 2 = (mu + lambda) tr  (the 2D mean Kirchhoff stress p)
/// and multiplying the Cauchy criterion by J,
///   sqrt(2) mu |dev| <= -(mu + lambda) tr sin(phi) + J c cos(phi),
/// i.e. the yield function
///   y = |dev| + (mu + lambda) / mu * alpha * tr - J c cos(phi) / (sqrt(2) mu),
///   alpha = sin(phi) / sqrt(2)   (the 2D coefficient).
/// Klar's alpha = sqrt(2/3) 2 sin(phi) / (3 - sin(phi)) is the 3D (triaxial
/// compression) cone with a 3D deviator; used with this 2D deviator it is a
/// plane-strain cone of sin(phi_eff) = sqrt(2) alpha (27.5 deg for 30 deg).
/// A return along dev keeps tr and therefore J fixed, so the projection is
/// closed form: |dev| -> r = (J c cos(phi) - p sin(phi)) / (sqrt(2) mu).
/// When r < 0 (p sin(phi) > J c cos(phi): the mean Cauchy stress is beyond the
/// apex sigma_m = c cot(phi), the tension cut-off) the state goes to the apex:
/// dev = 0 and the hydrostatic stress equals the apex, (mu + lambda) t =
/// exp(t) c cot(phi) for the new trace t (t = 0 without cohesion: stress-free;
/// with cohesion a few Newton steps from t = c cot(phi) / (mu + lambda)).
/// Hydrostatic compression and every state inside the cone is untouched.
PS_HD void sand_return_map(float mu, float la, float sin_phi, float cos_phi, float cohesion, Vec2& eps) {
  const float tr = eps.x + eps.y;
  const Vec2 dev{0.5f * (eps.x - eps.y), 0.5f * (eps.y - eps.x)};
  const float dev_norm = length(dev);
  const float J = expf(tr);
  const float p = (mu + la) * tr;        // mean (2D) Kirchhoff stress
  const float cj = cohesion * J * cos_phi;
  if (p >= 0.f && p * sin_phi >= cj) {
    // Beyond the apex (pure tension without cohesion): project to it.
    float t = 0.f;
    if (cohesion > 0.f && sin_phi > 0.f) {
      const float a = cohesion * cos_phi / sin_phi;  // apex Cauchy stress c cot(phi)
      const float k = mu + la;
      t = a / k;
      for (int it = 0; it < 4; ++it) {
        const float e = a * expf(t);
        const float g = k * t - e, dg = k - e;
        if (!(dg > 0.f)) break;
        t -= g / dg;
      }
    }
    eps = Vec2{0.5f * t, 0.5f * t};
    return;
  }
  const float r = (cj - p * sin_phi) / (1.41421356f * mu);  // admissible |dev| (>= 0 here)
  if (dev_norm > r) {
    const float s = r / dev_norm;
    eps = Vec2{0.5f * tr + s * dev.x, 0.5f * tr + s * dev.y};
  }
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
      // Mohr-Coulomb return mapping in Hencky strain (Klar et al. 2016, with
      // the plane-strain cone of sand_return_map above), optional cohesion.
      float mu, la;
      lame(m, mu, la);
      Mat2 U, V;
      Vec2 sig;
      svd2(F, U, sig, V);
      float old_j = sig.x * sig.y;
      Vec2 eps{logf(fmaxf(fabsf(sig.x), 1e-6f)), logf(fmaxf(fabsf(sig.y), 1e-6f))};
      const float phi = m.friction_angle * 3.14159265f / 180.f;
      sand_return_map(mu, la, sinf(phi), cosf(phi), m.cohesion, eps);
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
