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
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include "sim/core/vec.h"
#include "sim/mpm/materials.h"
#include "sim/mpm/mpm_collider.h"
#include "sim/mpm/mpm_params.h"
#include "sim/mpm/mpm_particles.h"

namespace ps {
namespace mpm {

constexpr int kMaxSupport = 4;

/// Interpolation stencil of one particle: the first node and per-axis weights,
/// plus the per-axis weight derivatives (in grid units).
struct Stencil {
  int base_x = 0, base_y = 0;
  int n = 3;                 ///< support per axis
  float fx = 0.f, fy = 0.f;  ///< particle position relative to base node, grid units
  float wx[kMaxSupport], wy[kMaxSupport];
  float dwx[kMaxSupport], dwy[kMaxSupport];
};

PS_HD_CONST int kernel_support(Kernel k) { return static_cast<int>(k) + 1; }

/// Cubic B-spline N(d) and N'(d), d in grid units.
PS_HD float cubic_n(float d) {
  float a = fabsf(d);
  if (a < 1.f) return 0.5f * a * a * a - a * a + 2.f / 3.f;
  if (a < 2.f) {
    float t = 2.f - a;
    return t * t * t / 6.f;
  }
  return 0.f;
}
PS_HD float cubic_dn(float d) {
  float a = fabsf(d);
  float s = d < 0.f ? -1.f : 1.f;
  if (a < 1.f) return 1.5f * d * a - 2.f * d;
  if (a < 2.f) {
    float t = 2.f - a;
    return -0.5f * t * t * s;
  }
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
  return k == Kernel::Linear ? fast_floor(X)
                             : (k == Kernel::Cubic ? fast_floor(X) - 1 : fast_floor(X - 0.5f));
}

/// Fills the per-axis weights for grid-space coordinate X (= (x - origin)/dx).
PS_HD void axis_weights(Kernel k, float X, int& base, float& f, float* w, float* dw) {
  switch (k) {
    case Kernel::Linear: {
      base = fast_floor(X);
      f = X - base;
      w[0] = 1.f - f;
      w[1] = f;
      dw[0] = -1.f;
      dw[1] = 1.f;
      break;
    }
    case Kernel::Cubic: {
      base = fast_floor(X) - 1;
      f = X - base;
      for (int a = 0; a < 4; ++a) {
        w[a] = cubic_n(f - a);
        dw[a] = cubic_dn(f - a);
      }
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
    case Kernel::Linear: return {s.dwx[a] * s.wy[b] * inv_dx, s.wx[a] * s.dwy[b] * inv_dx};
    case Kernel::Cubic: return {w * 3.f * inv_dx * (a - s.fx), w * 3.f * inv_dx * (b - s.fy)};
    case Kernel::Quadratic:
    default: return {w * 4.f * inv_dx * (a - s.fx), w * 4.f * inv_dx * (b - s.fy)};
  }
}

/// D^-1 of the APIC inertia-like tensor D = sum w (x_i - x_p)(x_i - x_p)^T,
/// a multiple of the identity for quadratic (4/dx^2) and cubic (3/dx^2)
/// B-splines; 0 for the linear kernel, which uses grad w instead.
PS_HD_CONST float dinv_factor(Kernel k) {
  return k == Kernel::Quadratic ? 4.f : (k == Kernel::Cubic ? 3.f : 0.f);
}

// [SECTION] PolyPIC -------------------------------------------------------------------
//
// Fu, Guo, Wang & Jiang 2017, "A polynomial particle-in-cell method", ACM TOG
// 36(6), 222. A particle carries the velocity field
//   v(x_i) = v_p + C_p (x_i - x_p) + sum_r c_r e_r(d),   d = (x_i - x_p) / dx,
// over its stencil, with modes e_r orthogonal under the stencil weights w_ip.
// G2P projects the grid velocities on each mode (weighted least squares, one
// mode at a time because they are orthogonal):
//   c_r = sum_i w_ip e_r(d) v_i / sum_i w_ip e_r(d)^2,
// and P2G scatters m_p w_ip v(x_i). For the quadratic B-spline (3 x 3 nodes)
// the modes are tensor products of 1D polynomials orthogonal under the 1D
// weights w_a: 1, d and G(d) = d^2 - (M3/M2) d - M2 (M_k = sum_a w_a d_a^k,
// M2 = 1/4), the paper's G polynomial. 1, x, y are PIC's and APIC's modes (v_p
// and C, left as they are: mass, momentum and angular momentum are conserved
// as in APIC, since the other six modes are orthogonal to 1, x and y and so
// carry neither momentum nor angular momentum). The six extra ones are
// xy, G(x), G(y), G(x) y, x G(y), G(x) G(y): with all nine, one particle's
// G2P then P2G reproduces its stencil's nine node velocities exactly.
//
// Closed form, nothing divides by a vanishing weight: on three nodes, the
// weighted complement of {1, d} is w_a G(d_a) = k s_a with s = (1, -2, 1),
// and G monic gives k = 2 / (1/w0 + 4/w1 + 1/w2) = 2 w0 w1 w2 / (w1 w2 +
// 4 w0 w2 + w0 w1) = 8 w0 w1 w2 (the quadratic B-spline's weights make that
// denominator 1/4 wherever the particle is), so sum_a w_a G_a^2 = 2k.
//
// The stored coefficients are those of the modes scaled to unit norm,
// e_r / sqrt(sum_i w_ip e_r^2), not of the paper's monic ones. Why: a
// particle's share of the transfer energy is (1/2) m_p sum_i w_ip |v(x_i)|^2,
// which P2G (Jensen) and G2P (a projection) never raise; but the particle
// moves between its G2P and the next P2G, and the weights move with it. With
// unit-norm modes that energy is (1/2) m_p sum_r |c_r|^2 wherever the
// particle is. With the monic G it is 2k(f) |c_r|^2, and k runs from 0 (a
// weight vanishes, f = 1/2) to 3/32 (on a node, f = 1): G2P fitted a
// curvature where it cost no energy, the particle carried it to where it
// did, and a spinning elastic block gained 16 times its energy in 3 s
// (verify case mpm.polypic_elastic_rotation; tests/sim/mpm/test_polypic.cpp).
// Per axis: d / sqrt(M2) = 2 d, and G / sqrt(2k), whose scatter weight
// w_a G_a / sqrt(2k) and gather weight w_a G_a / sqrt(2k) are both
// sqrt(k / 2) s_a = 2 sqrt(w0 w1 w2) s_a. Each coefficient is a velocity:
// the mode's weighted RMS over the stencil.
//
// F is still updated with APIC's C (the MLS-MPM gradient that the stress
// force uses, Hu et al. 2018): the extra modes change what is transferred,
// not the constitutive update.

/// The extra modes' 1D degrees along x and y, in PolyModes order.
PS_HD_CONST int poly_deg_x(int r) {
  return r == 0 ? 1 : (r == 1 || r == 3 || r == 5) ? 2 : (r == 4 ? 1 : 0);
}
PS_HD_CONST int poly_deg_y(int r) {
  return r == 0 ? 1 : (r == 2 || r == 4 || r == 5) ? 2 : (r == 3 ? 1 : 0);
}
constexpr int kPolyModes = 6;
static_assert(sizeof(PolyModes) == kPolyModes * sizeof(Vec2),
              "PolyModes holds the six extra modes");

/// One axis of a quadratic stencil in PolyPIC's unit-norm 1D basis {1, 2d,
/// G(d) / sqrt(2k)}: we[deg][a] = w_a e_deg(d_a). P2G scatters with it, and
/// G2P projects with it too: the projection weight w_a e / sum_a w_a e^2 is
/// the same number, every mode having unit norm. T is float, or four lanes of
/// floats (the CPU's mpm_simd.h, one particle per lane, the same arithmetic).
template <class T>
struct PolyAxisT {
  T we[3][3];
};
using PolyAxis = PolyAxisT<float>;

/// sqrtf for poly_axis; mpm_simd.h adds the four-lane twin (correctly rounded
/// both, so the lanes agree with the scalar code bit for bit).
template <class T>
struct PolySqrt;
template <>
struct PolySqrt<float> {
  PS_HD static float of(float x) { return sqrtf(x); }
};

/// `w`: the axis's quadratic weights; `f`: the particle's offset from the
/// first node (grid units), so d_a = a - f.
template <class T>
PS_HD PolyAxisT<T> poly_axis(const T* w, T f) {
  PolyAxisT<T> ax;
  const T q = 2.f * PolySqrt<T>::of(w[0] * w[1] * w[2]);  // sqrt(k / 2), k = 8 w0 w1 w2
  const float s[3] = {1.f, -2.f, 1.f};
  for (int a = 0; a < 3; ++a) {
    const T d = static_cast<float>(a) - f;
    ax.we[0][a] = w[a];
    ax.we[1][a] = 2.f * w[a] * d;
    ax.we[2][a] = q * s[a];
  }
  return ax;
}

/// P2G: the extra modes' velocity at node (a, b) times its weight,
/// sum_r w_ab e_r(d_ab) c_r (multiply by m_p for momentum). This and
/// poly_gather_node have lane twins in mpm_simd.h (quad_scatter4 and
/// quad_gather4 with POLY): a change here goes there too.
PS_HD Vec2 poly_node_velocity(const PolyModes& m, const PolyAxis& X, const PolyAxis& Y, int a,
                              int b) {
  Vec2 v{};
  for (int r = 0; r < kPolyModes; ++r)
    v += (X.we[poly_deg_x(r)][a] * Y.we[poly_deg_y(r)][b]) * m.c[r];
  return v;
}

/// G2P: adds node (a, b)'s velocity `vi` to the extra modes' projections.
PS_HD void poly_gather_node(PolyModes& m, const PolyAxis& X, const PolyAxis& Y, int a, int b,
                            Vec2 vi) {
  for (int r = 0; r < kPolyModes; ++r)
    m.c[r] += (X.we[poly_deg_x(r)][a] * Y.we[poly_deg_y(r)][b]) * vi;
}

/// A grid row of node velocities (and FLIP's old velocities) from some node
/// on, as mpm::g2p_gather reads it (the CUDA backend's rows).
template <bool FLIP>
struct GridRow {
  const Vec2* v_;
  PS_HD Vec2 v(int a) const { return v_[a]; }
};
template <>
struct GridRow<true> {
  const Vec2* v_;
  const Vec2* o_;
  PS_HD Vec2 v(int a) const { return v_[a]; }
  PS_HD Vec2 old(int a) const { return o_[a]; }
};

/// G2P's sums over a particle's stencil (g2p_gather).
struct G2PSums {
  Vec2 v_pic{};     ///< sum w v_i
  Vec2 dv{};        ///< FLIP: sum w (v_i - v_i_old)
  Mat2 B{};         ///< the velocity gradient (APIC's C; D^-1 applied)
  float vol = 0.f;  ///< VOL: sum w V_i, the volume channel (volume_corrected_J), in node units
};

/// G2P's gather, the one both backends run (MpmCpuBackend::gather, the CUDA
/// g2p_particle): the node velocities of the stencil `s` summed into v_PIC,
/// FLIP's increment, the velocity gradient B = D^-1 sum w v_i (x_i - x_p)^T
/// (the linear kernel: sum v_i grad w^T), the volume channel and PolyPIC's
/// modes (POLY: into `*modes`). `rows.row<FLIP>(x, y)` views grid row y
/// from node x: `.v(a)` is node (x + a, y)'s velocity, with FLIP `.old(a)`
/// its old velocity, with VOL `.vol(a)` its volume.
/// Every node adds in the same order (rows, then columns), so both backends
/// (and every thread count) sum alike.
template <Kernel K, bool FLIP, bool POLY, bool VOL, class Rows>
PS_HD G2PSums g2p_gather(const Stencil& s, float inv_dx, const Rows& rows,
                         PolyModes* modes_out = nullptr) {
  constexpr int N = kernel_support(K);
  // Sums in locals (registers), the result written once.
  Vec2 v_pic{}, dv{};
  Mat2 B{};
  float vol = 0.f;
  // PolyPIC's state only where it is used.
  [[maybe_unused]] std::conditional_t<POLY, PolyModes, char> modes{};
  [[maybe_unused]] std::conditional_t<POLY, PolyAxis, char> px{}, py{};
  if constexpr (POLY) {
    px = poly_axis(s.wx, s.fx);
    py = poly_axis(s.wy, s.fy);
  }
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int c = 0; c < N; ++c) {
    // Stencil row c: its nodes' velocities (and FLIP's old ones, the volumes) from x = base_x.
    const auto row = rows.template row<FLIP>(s.base_x, s.base_y + c);
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int a = 0; a < N; ++a) {
      const float w = s.wx[a] * s.wy[c];
      const Vec2 vi = row.v(a);
      v_pic += w * vi;
      if constexpr (VOL) vol += w * row.vol(a);
      if constexpr (POLY) poly_gather_node(modes, px, py, a, c, vi);
      if constexpr (FLIP) dv += w * (vi - row.old(a));
      if constexpr (K == Kernel::Linear) {
        B += outer(vi, grad_vector(K, s, a, c, inv_dx));
      } else {
        B += outer(w * vi, Vec2{a - s.fx, c - s.fy});  // grid units; D^-1 applied below
      }
    }
  }
  if constexpr (K != Kernel::Linear) B = (dinv_factor(K) * inv_dx) * B;
  if constexpr (POLY) *modes_out = modes;
  G2PSums q;
  q.v_pic = v_pic;
  q.dv = dv;
  q.B = B;
  q.vol = vol;
  return q;
}

/// Why a transfer cannot run with a kernel, or nullptr when it can (the scene
/// reader, the world and the window ask).
inline const char* transfer_kernel_error(Transfer t, Kernel k) {
  return t == Transfer::PolyPIC && k != Kernel::Quadratic
             ? "PolyPIC is implemented for the quadratic kernel only (its 3 x 3 modes); use kernel \"quadratic\""
             : nullptr;
}

/// Everything the grid update needs besides the node itself.
struct GridUpdateParams {
  GridSpec grid;
  Vec2 gravity;
  float dt;
  Boundary boundary;
  int boundary_nodes;
  PointForce point;
  float wall_friction = -1.f;  ///< SolverParams::wall_friction
  /// The walls hold matter at their faces (wall_contact, frictionless unless
  /// wall_friction says otherwise) even with wall_friction < 0: set where a
  /// fluid corrects its volume, which mirrors the water at the faces
  /// (wall_mirrored_volume), so matter may not sink past them.
  bool face_contact = false;
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
  bool lo_x = i<b, hi_x = i> p.grid.nx - b, lo_y = j<b, hi_y = j> p.grid.ny - b;
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

/// Coulomb contact of one component pair with a wall whose inward normal is
/// +n (sign = +1) or -n (sign = -1) along the normal component `vn`: a node
/// moving into the wall loses that motion, and its tangential speed falls by
/// mu times the normal speed removed, not past zero (Coulomb's law for an
/// impulse: |dv_t| <= mu |dv_n|; Stomakhin et al. 2013, section 8, the
/// collision-object rule of MPM codes). Moving away, nothing changes.
PS_HD void coulomb_wall(float& vn, float& vt, float sign, float mu) {
  const float into = sign * vn;  // < 0: towards the wall
  if (into >= 0.f) return;
  vn = 0.f;
  const float speed = vt < 0.f ? -vt : vt;
  const float left = speed + mu * into;  // into < 0
  vt = left > 0.f ? (vt < 0.f ? -left : left) : 0.f;
}

/// The wall's surface (the first nodes inside the boundary layer, which sit on
/// the wall: x = b dx, ...) holds matter at the face, with Coulomb friction
/// when wall_friction >= 0 (frictionless with face_contact alone). Without it
/// matter settles about a cell inside the boundary layer: a tank of water sank
/// 6.7 % of its depth into the floor's layer in its first second at grid 64,
/// and the dam break's front ran 8-10 % further ahead (`sandbox verify`'s
/// mpm.still_tank and mpm.dam_break). It also brakes thin films: a particle
/// layer thinner than a cell above a floor feels the boundary layer only
/// through the small stencil weight of the nodes below the wall, so a
/// spreading granular film slides on without basal friction
/// (mpm.granular_collapse); with friction mu the wall holds such a film, its
/// deceleration mu g.
PS_HD Vec2 wall_contact(int i, int j, Vec2 v, const GridUpdateParams& p) {
  const bool friction = p.wall_friction >= 0.f;
  if (!friction && !p.face_contact) return v;
  const int b = p.boundary_nodes;
  const float mu = friction ? p.wall_friction : 0.f;
  if (j == b) coulomb_wall(v.y, v.x, 1.f, mu);
  if (j == p.grid.ny - b) coulomb_wall(v.y, v.x, -1.f, mu);
  if (i == b) coulomb_wall(v.x, v.y, 1.f, mu);
  if (i == p.grid.nx - b) coulomb_wall(v.x, v.y, -1.f, mu);
  return v;
}

/// Normalises one node and applies gravity, the point force and the
/// boundary condition. `mv` holds momentum in, velocity out.
PS_HD void grid_update_node(int i, int j, float m, Vec2& mv, const GridUpdateParams& p) {
  if (m <= 0.f) {
    mv = Vec2{};
    return;
  }
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
  v = wall_contact(i, j, apply_boundary(i, j, v, p), p);
  mv = v;
}

/// MUSL's second grid velocity (linear kernel): the particles' new momentum
/// over the node mass, with the boundary condition (see MpmCpuBackend::musl_linear).
PS_HD Vec2 musl_node_velocity(int i, int j, float m, Vec2 momentum, const GridUpdateParams& p) {
  if (m <= 0.f) return Vec2{};
  return wall_contact(i, j, apply_boundary(i, j, momentum / m, p), p);
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

// [SECTION] Volume correction (fluids) -------------------------------------------------
//
// A weakly compressible fluid carries its volume ratio J and integrates it,
// J <- J (1 + dt tr C), while its particles move with the grid velocity. The
// two are consistent only to first order: over many substeps the particles'
// real spacing and their J drift apart, and nothing pulls them back. A tank of
// water at rest lost 9 % of its depth in 8 s while its mean J stayed at the
// hydrostatic value: the particles compacted towards the floor, each one still
// claiming its full volume vol0 J.
//
// The correction measures how densely the particles actually fill space and
// relaxes J towards that. P2G deposits every particle's volume into the node's
// fourth channel: a fluid particle its rest volume vol0, any other matter the
// volume it takes up now (particle_volume). Divided by the cell area that is
// the node's fraction of rest volume, 1 where the water sits at its rest
// density (the quadratic B-spline sums to exactly 1 over a lattice of 2 x 2
// particles a cell). The domain's walls are mirrors (wall_mirrored_volume):
// beside them the stencil is not missing neighbours. The channel is then
// filtered (volume_filter_121), which hides the grid's force-free pressure
// mode from the correction, and the walls mirror the fluid's stress too
// (wall_ghost_stress), so the rows next to a floor carry no extra pressure.
// Rigid bodies are mirrors too (body_mirrored_volume: each node near or in a
// body adds the deposit at its image across the body's surface), so the water
// beside and under a floating body is corrected like the rest and rests
// against it. (Left alone, that water packed into the grid rule's half-cell
// band and floating boxes sank up to 5.5 % too deep; docs/rigid.md.)
// Interpolated back to a particle it is phi_p, and 1 / phi_p is the volume
// ratio the particles really have there. J relaxes towards it at `rate` (1/s):
// both ways, in the interior only (volume_node_interior: a particle whose
// stencil reaches within two kernel widths of a free surface or a splash
// reads missing neighbours there, not thinner water, and is left alone):
// crowded particles (phi_p > 1) get a smaller J, so more pressure, and push
// apart; thinned ones a larger J, less pressure, and close up.
// Only J changes, so mass and momentum stay exact (the stress impulse sums to
// zero over the grid as before) away from the walls, whose ghost stress is
// their push. Where it is on, the walls hold matter at their faces
// (GridUpdateParams::face_contact), so the wall layer that mirrors the water
// holds none.
//
// The same idea as the density drift correction of FLIP fluids, where the
// measured particle density per cell lowers the target divergence of the
// pressure solve (M. Mueller, "Ten Minute Physics" 18, "FLIP fluid", 2022,
// github.com/matthias-research/pages, tenMinutePhysics/18-flip.html:
// compensateDrift), and the grid density constraint of Kugelstadt, Longva,
// Thuerey & Bender, "Implicit density projection for volume conserving
// liquids", IEEE TVCG 27(4), 2021; here it acts on the state J of the
// weakly compressible model instead of on a pressure solve.

/// The volume a particle brings to the volume channel: a fluid its rest volume
/// (the channel measures the fluid's density), the others the volume they take
/// up now (snow and sand: det F Jp, elastic times plastic; the others det F).
PS_HD float particle_volume(const MaterialParams& m, float vol0, const Mat2& F, float Jp) {
  switch (m.type) {
    case MaterialType::Fluid: return vol0;
    case MaterialType::Snow:
    case MaterialType::Sand: return vol0 * (det(F) * Jp);
    default: return vol0 * det(F);
  }
}

/// The fraction of J's error a fluid corrects in one substep of length dt
/// (0: the material has no correction or is not a fluid).
PS_HD float volume_correction_step(const MaterialParams& m, float dt) {
  if (m.type != MaterialType::Fluid || !(m.volume_correction > 0.f)) return 0.f;
  const float b = m.volume_correction * dt;
  return b < 1.f ? b : 1.f;
}

/// J relaxed towards the volume ratio measured on the grid, 1 / phi: phi is the
/// rest volume fraction interpolated at the particle (sum w (node volume) /
/// dx^2, the walls mirrored, the channel filtered), beta the step's fraction
/// (volume_correction_step). Crowded (phi > 1): J falls, the pressure rises
/// and spreads the particles; thinned out (phi < 1): J rises, the pressure
/// falls and gravity or the neighbours close the gap. Only in the interior:
/// a stencil that reaches a node outside the interior (volume_node_interior:
/// near a free surface or a splash; walls and bodies count as the mirror
/// image of the water in front of them) sums to phi < 0 and J is left alone.
PS_HD float volume_corrected_J(float J, float phi, float beta) {
  if (!(beta > 0.f) || !(phi > 0.f)) return J;
  return J + beta * (1.f / phi - J);
}

/// Where the volume channel can be trusted. A node's volume is a kernel-
/// weighted sum over the particles within its support; near a free surface
/// part of that support is air, and the node reads a smaller fraction than
/// the water really has. A particle's phi sums its stencil's nodes, so it is
/// unbiased only where every node of its stencil has a support full of
/// matter: about two kernel widths below the surface. Reading a surface-cut
/// phi as thinned water is not a small error: the correction holds J at
/// 1 / phi, and the pressure K (1 / J - 1) of a 1 % error in phi is 2 000 Pa
/// at K = 2e5, twice the hydrostatic pressure 8 cm down. (A threshold on phi
/// itself, phi >= 0.95, left the rows 1 to 3 cells under the surface reading
/// 0.95 to 0.99: their pressure zigzagged by -121 / +360 / -196 Pa and the
/// water below carried 3 to 5 % more than its weight; docs/rigid.md.)
/// So a node is interior when every node within volume_interior_radius of it
/// (a square: the kernel's half-width rounded up, plus the filter's node) is
/// at least half full, kVolumeOccupied, by matter or a wall. Half full is
/// where a flat surface lies; inside water a node reads about 1, far from
/// 0.5, so the test does not flicker with the particles' arrangement.
/// The test reads the filtered channel (volume_filter_121), not the raw one:
/// a few particles bunched together leave a node beside them nearly empty,
/// and read raw that hole counted as a surface, left a 5 x 5 block of nodes
/// around it uncorrected, and in that block the particles bunched further
/// unchecked. A still tank (grid 64, K = 1e6) grew such holes along its
/// floor and walls after 12 s, up to 12 particles in one cell beside one,
/// and sank 1 % below its equilibrium depth; filtered, a one-node hole in
/// water reads about 0.8 and the tank stays within 0.13 %. A filtered node
/// reaches a node further than a raw one, hence the radius's extra node.
constexpr float kVolumeOccupied = 0.5f;
PS_HD_CONST int volume_interior_radius(Kernel k) { return (kernel_support(k) + 1) / 2 + 1; }
/// The mark a node outside the interior gets in the volume channel: any
/// stencil that gives it weight sums to phi < 0 (volume_corrected_J).
constexpr float kVolumeNotInterior = -1e30f;

/// Whether node (i, j) of an sx x sy grid is interior (see above); `vol` is
/// the volume channel in units of the cell area (vol(i, j) returns node
/// (i, j)'s). Nodes beyond the grid's edge count as full (they are wall).
template <class Vol>
PS_HD bool volume_node_interior(const Vol& vol, int sx, int sy, int i, int j, Kernel k) {
  const int r = volume_interior_radius(k);
  for (int y = j - r; y <= j + r; ++y) {
    if (y < 0 || y >= sy) continue;
    for (int x = i - r; x <= i + r; ++x) {
      if (x < 0 || x >= sx) continue;
      if (!(vol(x, y) >= kVolumeOccupied)) return false;
    }
  }
  return true;
}

/// volume_node_interior for every node of an sx x sy grid, on the host, in
/// three passes over rows [y0, y1) (each pass needs the one before complete
/// on every row): 0 marks the occupied nodes in `occ`, 1 the nodes whose row
/// neighbours within r are all occupied in `rows`, 2 the nodes whose column
/// neighbours within r all passed 1 in `flags` (1: interior). Separable: each
/// node reads 2 (2 r + 1) bytes instead of (2 r + 1)^2 volumes. `occ`,
/// `rows`, `flags`: sx sy bytes each. Equal to volume_node_interior node by
/// node (tests/sim/mpm/test_volume_correction.cpp).
template <class Vol>
inline void volume_interior_pass(int pass, int y0, int y1, const Vol& vol, int sx, int sy, Kernel k,
                                 uint8_t* occ, uint8_t* rows, uint8_t* flags) {
  const int r = volume_interior_radius(k);
  for (int y = y0; y < y1; ++y) {
    const size_t row0 = static_cast<size_t>(y) * sx;
    if (pass == 0) {
      for (int x = 0; x < sx; ++x) occ[row0 + x] = vol(x, y) >= kVolumeOccupied ? 1 : 0;
    } else if (pass == 1) {  // every node within r along the row (beyond the edge: full)
      const uint8_t* o = occ + row0;
      for (int x = 0; x < sx; ++x) {
        const int a = x - r < 0 ? 0 : x - r, e = x + r >= sx ? sx - 1 : x + r;
        uint8_t all = 1;
        for (int xx = a; xx <= e; ++xx) all &= o[xx];
        rows[row0 + x] = all;
      }
    } else {  // ... of every row within r
      const int a = y - r < 0 ? 0 : y - r, e = y + r >= sy ? sy - 1 : y + r;
      for (int x = 0; x < sx; ++x) flags[row0 + x] = 1;
      for (int yy = a; yy <= e; ++yy) {
        const uint8_t* q = rows + static_cast<size_t>(yy) * sx;
        for (int x = 0; x < sx; ++x) flags[row0 + x] &= q[x];
      }
    }
  }
}

/// The node that mirrors node i across the nearer wall face (faces at node b
/// and n - b of nodes 0..n), for the nodes within b of a face (in the wall or
/// in front of it), or -1. A face node mirrors itself.
PS_HD_CONST int wall_mirror_node(int i, int n, int b) {
  return i <= 2 * b ? 2 * b - i : (i >= n - 2 * b ? 2 * (n - b) - i : -1);
}

/// Node (i, j)'s volume with the walls counted as the mirror image of the
/// matter in front of them: `vol(x, y)` is what the particles deposited, and
/// a node within b of a face adds its mirror node's deposit (corners: the
/// three mirrors). The same as ghost particles mirrored across the walls
/// (Libersky, Petschek, Carney, Hipp & Allahdadi, J. Comput. Phys. 109, 1993;
/// Randles & Libersky, Comput. Methods Appl. Mech. Eng. 139, 1996), exactly,
/// as the kernel is symmetric and the faces lie on nodes: water at rest on a
/// floor reads 1 at every node, whatever its rows' offset from the face. (A
/// wall filled as a continuum, the kernel's integral beyond the face, reads
/// the particle rows' discrete sum off by 0.5 % one node either side of the
/// face with the quadratic kernel: 1.005 in front, 0.995 behind, and at
/// K = 2e5 that is 700 Pa of spurious pressure in the bottom rows.)
template <class Vol>
PS_HD float wall_mirrored_volume(const Vol& vol, const GridSpec& g, int b, int i, int j) {
  const int mi = wall_mirror_node(i, g.nx, b), mj = wall_mirror_node(j, g.ny, b);
  float v = vol(i, j);
  if (mi >= 0) v += vol(mi, j);
  if (mj >= 0) {
    v += vol(i, mj);
    if (mi >= 0) v += vol(mi, mj);
  }
  return v;
}

/// `vol(i, j)` read bilinearly at the world point m (clamped into the node
/// array): a body's mirror image rarely falls on a node.
template <class Vol>
PS_HD float volume_bilinear(const Vol& vol, const GridSpec& g, Vec2 m) {
  const float inv_dx = 1.f / g.dx;
  const float hx = static_cast<float>(g.nx) - 0.001f, hy = static_cast<float>(g.ny) - 0.001f;
  const float fx = clampf((m.x - g.origin.x) * inv_dx, 0.f, hx);
  const float fy = clampf((m.y - g.origin.y) * inv_dx, 0.f, hy);
  const int i = static_cast<int>(fx), j = static_cast<int>(fy);
  const float a = fx - static_cast<float>(i), b = fy - static_cast<float>(j);
  return (1.f - b) * ((1.f - a) * vol(i, j) + a * vol(i + 1, j)) +
         b * ((1.f - a) * vol(i, j + 1) + a * vol(i + 1, j + 1));
}

/// The reach of a body's mirror (body_mirror_point): the kernel's half-width.
PS_HD float body_mirror_reach(const GridSpec& g, Kernel k) {
  return 0.5f * static_cast<float>(kernel_support(k)) * g.dx;
}

/// Node (i, j)'s volume with the rigid parts' mirror images added, part by
/// part in order (body_mirror_point): `vol` is the channel with the walls'
/// mirror already in (wall_mirrored_volume), read at the node and at each
/// image. Both backends add in this order, so they agree.
template <class Vol>
PS_HD float body_mirrored_volume(const Vol& vol, const GridSpec& g, Kernel k,
                                 const RigidCollider* parts, int n_parts, int i, int j) {
  float v = vol(i, j);
  const float reach = body_mirror_reach(g, k);
  const Vec2 xi{g.origin.x + static_cast<float>(i) * g.dx,
                g.origin.y + static_cast<float>(j) * g.dx};
  for (int p = 0; p < n_parts; ++p) {
    Vec2 m;
    if (body_mirror_point(parts[p], xi, reach, m)) v += volume_bilinear(vol, g, m);
  }
  return v;
}

/// The volume channel smoothed along one axis by the binomial filter
/// [1 2 1] / 4: `at(k)` is node k's value on that axis (n nodes; the edges
/// repeat their node). Applied along x, then along y, before G2P reads the
/// channel. Why: the weakly compressible fluid has a pressure mode the grid
/// cannot feel. With the quadratic B-spline and 2 x 2 particles a cell, a
/// pressure that alternates with the node nearest each particle (+d, -d, +d
/// from node to node) gives every node zero force (node j's two nearest rows
/// cancel by symmetry, its next rows belong to nodes j +- 1, which carry the
/// same sign): nothing holds it back. A still tank showed it as +-300 Pa
/// from row pair to row pair at K = 2e5 with the correction, +-1800 Pa
/// without. The correction, fed the raw channel, holds such a pattern
/// wherever the particles bunch at alternate nodes; the filter's response to
/// that pattern (period two nodes) is zero and to a straight line exactly
/// the line, so the correction reads the water's smooth density and relaxes
/// J's nodal mode away at its rate. (The same aim as the cell-averaged volume
/// of F-bar MPM: Coombs, Charlton, Cortis & Augarde, "Overcoming volumetric
/// locking in material point methods", Comput. Methods Appl. Mech. Eng. 333,
/// 2018.) The marks (volume_node_interior) come after the filter.
template <class At>
PS_HD float volume_filter_121(const At& at, int k, int n) {
  return 0.25f * (at(k > 0 ? k - 1 : 0) + 2.f * at(k) + at(k + 1 < n ? k + 1 : k));
}

/// One coordinate's ghost: x mirrored across the face lo or hi when it lies
/// closer than r to it (into m, true), else false.
PS_HD bool wall_ghost_coord(float x, float lo, float hi, float r, float& m) {
  if (x - lo < r) {
    m = 2.f * lo - x;
    return true;
  }
  if (hi - x < r) {
    m = 2.f * hi - x;
    return true;
  }
  return false;
}

/// The walls' mirror of a correcting fluid's stress (ghost particles, as in
/// wall_mirrored_volume). A node in front of a wall gathers the stress of the
/// particles within the kernel's reach on both sides; the wall side has none,
/// so near a floor the nodes one cell up were pushed down by the water's
/// pressure more than up, and the bottom rows carried 6-13 % more than
/// hydrostatic pressure to make up for it (mpm.still_tank, grid 64). Each
/// particle closer to a face than reach - 1 cells (0.5 for the quadratic
/// kernel, 1 for the cubic; the linear kernel's ghosts reach no node in
/// front of a face) adds its mirror image's stress term, mirrored (the
/// shear changes sign across one wall, not across a corner's two), to the
/// nodes strictly inside the walls' faces: the wall's pressure force. Only
/// the stress, not mass or momentum, so the particles' mass and momentum
/// move as before and the wall pushes back as walls do. `stress()`: the
/// particle's stress term as P2G folds it, D^-1 (-dt vol0 tau), asked only
/// when the particle has a ghost; `add(i, j, dp)` adds momentum dp to node
/// (i, j).
template <class Stress, class Add>
PS_HD void wall_ghost_stress(const GridSpec& g, int b, Kernel k, Vec2 x, Stress&& stress,
                             Add&& add) {
  const float reach = 0.5f * static_cast<float>(kernel_support(k)) - 1.f;  // cells
  if (!(reach > 0.f)) return;
  const float lo_x = g.origin.x + b * g.dx, hi_x = g.origin.x + (g.nx - b) * g.dx;
  const float lo_y = g.origin.y + b * g.dx, hi_y = g.origin.y + (g.ny - b) * g.dx;
  const float r = reach * g.dx;
  float mx = x.x, my = x.y;
  const bool gx = wall_ghost_coord(x.x, lo_x, hi_x, r, mx);
  const bool gy = wall_ghost_coord(x.y, lo_y, hi_y, r, my);
  if (!gx && !gy) return;
  const Mat2 Q = stress();
  const int n = kernel_support(k);
  for (int q = 1; q < 4; ++q) {  // the ghosts: mirrored in x (1), in y (2), in both (3)
    const bool qx = (q & 1) != 0, qy = (q & 2) != 0;
    if ((qx && !gx) || (qy && !gy)) continue;
    const Vec2 xg{qx ? mx : x.x, qy ? my : x.y};
    const Mat2 Qg = qx != qy ? Mat2{Q.a00, -Q.a01, -Q.a10, Q.a11} : Q;
    const Stencil st = make_stencil(k, g, xg);
    for (int c = 0; c < n; ++c) {
      const int j = st.base_y + c;
      if (j <= b || j >= g.ny - b) continue;
      for (int a = 0; a < n; ++a) {
        const int i = st.base_x + a;
        if (i <= b || i >= g.nx - b) continue;
        const Vec2 dpos{(a - st.fx) * g.dx, (c - st.fy) * g.dx};
        add(i, j, (st.wx[a] * st.wy[c]) * (Qg * dpos));
      }
    }
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
