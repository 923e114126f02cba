/// Four particles at a time: the CPU backend's quadratic-kernel transfers
/// across SIMD lanes (GCC / Clang vector extensions, so any target: SSE2 on
/// the x86-64 baseline, NEON on arm64).
///
/// Each lane does the scalar arithmetic of mpm_kernels.h (make_stencil's
/// quadratic weights, the gather's sums, the scatter's node terms) operation
/// for operation, in the same order, and the build has -ffp-contract=off, so
/// a lane's results are bit for bit the scalar ones: the state hashes do not
/// change (tests/sim/mpm/test_simd.cpp compares them particle by particle).
/// Only the arithmetic is shared across lanes; the grid reads and the
/// scatter's node updates stay per particle and in particle order, which
/// keeps the coloured scatter's fixed summation order.
///
/// CPU only (sim/cuda never includes it). The node type is a template
/// parameter: anything with float members vx, vy, m, pad (MpmCpuBackend::Node).
#pragma once
#include <cstddef>
#include <cstdint>
#include "sim/core/vec.h"
#include "sim/mpm/materials.h"
#include "sim/mpm/mpm_kernels.h"
#include "sim/mpm/mpm_params.h"

namespace ps {
namespace simd {

typedef float f4 __attribute__((vector_size(16)));
typedef int32_t i4 __attribute__((vector_size(16)));

// Lane shuffle: Clang's builtin, which GCC has from version 12 (Debian 12's);
// older GCC spells it __builtin_shuffle with a mask vector.
#if defined(__clang__) || !defined(__GNUC__) || __GNUC__ >= 12
#define PS_SHUFFLE4(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
#define PS_SHUFFLE4(a, b, i, j, k, l) __builtin_shuffle(a, b, i4{i, j, k, l})
#endif

/// Lanes of one quadratic stencil per particle (mpm::Stencil, four wide).
struct QuadStencil4 {
  i4 base_x, base_y;
  f4 fx, fy;
  f4 wx[3], wy[3];
};

/// mpm::axis_weights for the quadratic kernel, per lane: base = floor(X - 0.5)
/// (mpm::fast_floor: truncate, then step down where that rounded up), f = X - base.
inline i4 quad_base4(f4 X) {
  const f4 Y = X - 0.5f;
  const i4 t = __builtin_convertvector(Y, i4);
  return t + (Y < __builtin_convertvector(t, f4));  // a true comparison is -1
}
inline void quad_axis4(f4 X, i4& base, f4& f, f4* w) {
  base = quad_base4(X);
  f = X - __builtin_convertvector(base, f4);
  const f4 a = 1.5f - f, b = f - 1.f, c = f - 0.5f;
  w[0] = 0.5f * a * a;
  w[1] = 0.75f - b * b;
  w[2] = 0.5f * c * c;
}

/// mpm::make_stencil(Kernel::Quadratic, g, x[k]) for k = 0..3 at once.
inline QuadStencil4 quad_stencil4(const GridSpec& g, f4 px, f4 py) {
  QuadStencil4 s;
  const float inv_dx = 1.f / g.dx;
  quad_axis4((px - g.origin.x) * inv_dx, s.base_x, s.fx, s.wx);
  quad_axis4((py - g.origin.y) * inv_dx, s.base_y, s.fy, s.wy);
  return s;
}

/// Positions of particles idx[0..3] as lanes.
inline void load_positions(const Vec2* x, const uint32_t* idx, f4& px, f4& py) {
  px = f4{x[idx[0]].x, x[idx[1]].x, x[idx[2]].x, x[idx[3]].x};
  py = f4{x[idx[0]].y, x[idx[1]].y, x[idx[2]].y, x[idx[3]].y};
}
inline void load_positions(const Vec2* x, f4& px, f4& py) {
  px = f4{x[0].x, x[1].x, x[2].x, x[3].x};
  py = f4{x[0].y, x[1].y, x[2].y, x[3].y};
}

/// sqrtf per lane (IEEE, correctly rounded either way).
inline f4 sqrt4(f4 x) {
  f4 r{};
  for (int l = 0; l < 4; ++l) r[l] = __builtin_sqrtf(x[l]);
  return r;
}

using PolyAxis4 = mpm::PolyAxisT<f4>;  ///< mpm::poly_axis per lane
}  // namespace simd
/// mpm::poly_axis's square root, per lane.
template <>
struct mpm::PolySqrt<simd::f4> {
  static simd::f4 of(simd::f4 x) { return simd::sqrt4(x); }
};
namespace simd {

/// PolyPIC's six extra modes of four particles: mode r of lane l is (cx[r][l], cy[r][l]).
/// Not zeroed on construction (the transfers without PolyPIC never touch it):
/// quad_gather4 clears it, quad_scatter4 loads it.
struct PolyModes4 {
  f4 cx[mpm::kPolyModes];
  f4 cy[mpm::kPolyModes];
  PolyModes lane(int l) const {
    PolyModes m;
    for (int r = 0; r < mpm::kPolyModes; ++r) m.c[r] = Vec2{cx[r][l], cy[r][l]};
    return m;
  }
};

/// What the gather of four particles yields, per lane: the PIC velocity
/// sum w v_i, FLIP's increment sum w (v_i - v_i_old) (FLIP only), and the
/// velocity gradient B = 4/dx sum w v_i (x_i - x_p)^T / dx (APIC's C), and
/// the volume sum w (node volume) (the fluids' volume correction).
struct Gather4 {
  f4 vx, vy, dvx, dvy;
  f4 vol;
  f4 b00, b01, b10, b11;
  Vec2 v_pic(int l) const { return {vx[l], vy[l]}; }
  Vec2 dv(int l) const { return {dvx[l], dvy[l]}; }
  Mat2 B(int l) const { return {b00[l], b01[l], b10[l], b11[l]}; }
};

/// The quadratic G2P sums of MpmCpuBackend::gather for four particles at
/// positions (px, py): node (a, c) of lane l is grid[(base_y + c) stride +
/// base_x + a]; `old` is FLIP's old grid velocity (FLIP only). POLY also
/// projects the node velocities on PolyPIC's extra modes into `*modes`
/// (mpm::poly_gather_node per lane).
template <bool FLIP, bool POLY = false, class NodeT>
inline Gather4 quad_gather4(const NodeT* grid, const Vec2* old, size_t stride, const GridSpec& g,
                            f4 px, f4 py, PolyModes4* modes = nullptr) {
  static_assert(!(FLIP && POLY), "PolyPIC: no FLIP");
  const QuadStencil4 s = quad_stencil4(g, px, py);
  PolyAxis4 pax, pay;
  if constexpr (POLY) {
    pax = mpm::poly_axis(s.wx, s.fx);
    pay = mpm::poly_axis(s.wy, s.fy);
    for (int m = 0; m < mpm::kPolyModes; ++m) modes->cx[m] = modes->cy[m] = f4{};
  }
  Gather4 r{};
  size_t row[4];
  for (int l = 0; l < 4; ++l)
    row[l] = static_cast<size_t>(s.base_y[l]) * stride + static_cast<size_t>(s.base_x[l]);
  for (int c = 0; c < 3; ++c) {
    const f4 dy = static_cast<float>(c) - s.fy;
    for (int a = 0; a < 3; ++a) {
      const size_t k0 = row[0] + a, k1 = row[1] + a, k2 = row[2] + a, k3 = row[3] + a;
      // Each lane's node as one 16-byte load, then (vx, vy) of the four gathered.
      static_assert(sizeof(NodeT) == sizeof(f4), "a node is four floats");
      f4 n0, n1, n2, n3;
      __builtin_memcpy(&n0, &grid[k0], sizeof n0);
      __builtin_memcpy(&n1, &grid[k1], sizeof n1);
      __builtin_memcpy(&n2, &grid[k2], sizeof n2);
      __builtin_memcpy(&n3, &grid[k3], sizeof n3);
      const f4 lo = PS_SHUFFLE4(n0, n1, 0, 1, 4, 5);  // vx0 vy0 vx1 vy1
      const f4 hi = PS_SHUFFLE4(n2, n3, 0, 1, 4, 5);
      const f4 vx = PS_SHUFFLE4(lo, hi, 0, 2, 4, 6);
      const f4 vy = PS_SHUFFLE4(lo, hi, 1, 3, 5, 7);
      const f4 lo2 = PS_SHUFFLE4(n0, n1, 2, 3, 6, 7);  // m0 vol0 m1 vol1
      const f4 hi2 = PS_SHUFFLE4(n2, n3, 2, 3, 6, 7);
      const f4 vol = PS_SHUFFLE4(lo2, hi2, 1, 3, 5, 7);
      const f4 w = s.wx[a] * s.wy[c];
      r.vx += w * vx;
      r.vy += w * vy;
      r.vol += w * vol;
      if constexpr (FLIP) {
        const f4 ox{old[k0].x, old[k1].x, old[k2].x, old[k3].x};
        const f4 oy{old[k0].y, old[k1].y, old[k2].y, old[k3].y};
        r.dvx += w * (vx - ox);
        r.dvy += w * (vy - oy);
      }
      if constexpr (POLY) {
        for (int m = 0; m < mpm::kPolyModes; ++m) {
          const f4 e = pax.we[mpm::poly_deg_x(m)][a] * pay.we[mpm::poly_deg_y(m)][c];
          modes->cx[m] += e * vx;
          modes->cy[m] += e * vy;
        }
      }
      const f4 ux = w * vx, uy = w * vy;
      const f4 dx = static_cast<float>(a) - s.fx;
      r.b00 += ux * dx;
      r.b01 += ux * dy;
      r.b10 += uy * dx;
      r.b11 += uy * dy;
    }
    for (int l = 0; l < 4; ++l) row[l] += stride;
  }
  const float scale = 4.f * (1.f / g.dx);  // mpm::dinv_factor(Quadratic) * inv_dx
  r.b00 = scale * r.b00;
  r.b01 = scale * r.b01;
  r.b10 = scale * r.b10;
  r.b11 = scale * r.b11;
  return r;
}

/// Columns of the 4 x 4 matrix with rows r0..r3: out[l] = {r0[l], r1[l], r2[l], r3[l]}.
inline void transpose4(f4 r0, f4 r1, f4 r2, f4 r3, f4* out) {
  const f4 t0 = PS_SHUFFLE4(r0, r1, 0, 4, 1, 5);
  const f4 t1 = PS_SHUFFLE4(r0, r1, 2, 6, 3, 7);
  const f4 t2 = PS_SHUFFLE4(r2, r3, 0, 4, 1, 5);
  const f4 t3 = PS_SHUFFLE4(r2, r3, 2, 6, 3, 7);
  out[0] = PS_SHUFFLE4(t0, t2, 0, 1, 4, 5);
  out[1] = PS_SHUFFLE4(t0, t2, 2, 3, 6, 7);
  out[2] = PS_SHUFFLE4(t1, t3, 0, 1, 4, 5);
  out[3] = PS_SHUFFLE4(t1, t3, 2, 3, 6, 7);
}

/// One particle's P2G terms, as MpmCpuBackend::scatter reads them.
struct ScatterLane {
  Vec2 x;                           ///< position
  Vec2 mv;                          ///< momentum with the external impulse
  Mat2 A;                           ///< the folded affine-stress matrix
  float mp;                         ///< mass
  Vec2 mv0;                         ///< FLIP: transferred momentum m_p v_p
  const PolyModes* poly = nullptr;  ///< PolyPIC: the particle's extra modes
  float vol = 0.f;  ///< its volume now (mpm::particle_volume), the node's fourth channel
};

/// The quadratic P2G of MpmCpuBackend::scatter for four particles of one
/// block, in order: lane l adds w (mv + A (x_i - x_p)) and w m_p to its nine
/// nodes (and FLIP's w m_p v_p to `old`), lane 0's nine first, then lane 1's,
/// so every node sums its terms in particle order as the scalar loop does.
/// POLY adds PolyPIC's extra modes, m_p sum_r w e_r c_r (mpm::poly_node_velocity per lane).
template <bool FLIP, bool POLY = false, class NodeT>
inline void quad_scatter4(NodeT* grid, Vec2* old, size_t stride, const GridSpec& g,
                          const ScatterLane* p) {
  static_assert(!(FLIP && POLY), "PolyPIC: no FLIP");
  const f4 px{p[0].x.x, p[1].x.x, p[2].x.x, p[3].x.x};
  const f4 py{p[0].x.y, p[1].x.y, p[2].x.y, p[3].x.y};
  const QuadStencil4 s = quad_stencil4(g, px, py);
  PolyAxis4 pax, pay;
  PolyModes4 modes;
  if constexpr (POLY) {
    pax = mpm::poly_axis(s.wx, s.fx);
    pay = mpm::poly_axis(s.wy, s.fy);
    for (int m = 0; m < mpm::kPolyModes; ++m) {
      modes.cx[m] = f4{p[0].poly->c[m].x, p[1].poly->c[m].x, p[2].poly->c[m].x, p[3].poly->c[m].x};
      modes.cy[m] = f4{p[0].poly->c[m].y, p[1].poly->c[m].y, p[2].poly->c[m].y, p[3].poly->c[m].y};
    }
  }
  const f4 mvx{p[0].mv.x, p[1].mv.x, p[2].mv.x, p[3].mv.x};
  const f4 mvy{p[0].mv.y, p[1].mv.y, p[2].mv.y, p[3].mv.y};
  const f4 a00{p[0].A.a00, p[1].A.a00, p[2].A.a00, p[3].A.a00};
  const f4 a01{p[0].A.a01, p[1].A.a01, p[2].A.a01, p[3].A.a01};
  const f4 a10{p[0].A.a10, p[1].A.a10, p[2].A.a10, p[3].A.a10};
  const f4 a11{p[0].A.a11, p[1].A.a11, p[2].A.a11, p[3].A.a11};
  const f4 mp{p[0].mp, p[1].mp, p[2].mp, p[3].mp};
  const f4 vol{p[0].vol, p[1].vol, p[2].vol, p[3].vol};
  f4 rec[9][4];  // [node][lane]: {vx, vy, m, volume} to add
  f4 ox[9], oy[9];
  for (int c = 0; c < 3; ++c) {
    const f4 dy = (static_cast<float>(c) - s.fy) * g.dx;
    for (int a = 0; a < 3; ++a) {
      const f4 w = s.wx[a] * s.wy[c];
      const f4 dx = (static_cast<float>(a) - s.fx) * g.dx;
      f4 dvx = w * (mvx + (a00 * dx + a01 * dy));
      f4 dvy = w * (mvy + (a10 * dx + a11 * dy));
      if constexpr (POLY) {
        f4 vx{}, vy{};
        for (int m = 0; m < mpm::kPolyModes; ++m) {
          const f4 e = pax.we[mpm::poly_deg_x(m)][a] * pay.we[mpm::poly_deg_y(m)][c];
          vx += e * modes.cx[m];
          vy += e * modes.cy[m];
        }
        dvx += mp * vx;
        dvy += mp * vy;
      }
      transpose4(dvx, dvy, w * mp, w * vol, rec[c * 3 + a]);
      if constexpr (FLIP) {
        const f4 m0x{p[0].mv0.x, p[1].mv0.x, p[2].mv0.x, p[3].mv0.x};
        const f4 m0y{p[0].mv0.y, p[1].mv0.y, p[2].mv0.y, p[3].mv0.y};
        ox[c * 3 + a] = w * m0x;
        oy[c * 3 + a] = w * m0y;
      }
    }
  }
  for (int l = 0; l < 4; ++l) {
    const size_t row0 =
        static_cast<size_t>(s.base_y[l]) * stride + static_cast<size_t>(s.base_x[l]);
    for (int c = 0; c < 3; ++c)
      for (int a = 0; a < 3; ++a) {
        const size_t k = row0 + static_cast<size_t>(c) * stride + static_cast<size_t>(a);
        static_assert(sizeof(NodeT) == sizeof(f4), "a node is four floats");
        f4 node;
        __builtin_memcpy(&node, &grid[k], sizeof node);
        node += rec[c * 3 + a][l];
        __builtin_memcpy(&grid[k], &node, sizeof node);
        if constexpr (FLIP) {
          old[k].x += ox[c * 3 + a][l];
          old[k].y += oy[c * 3 + a][l];
        }
      }
  }
}

/// mpm::clampf per lane: x < lo ? lo : (x > hi ? hi : x) (a NaN stays NaN).
inline f4 clamp4(f4 x, float lo, float hi) {
  const f4 lo4 = f4{} + lo, hi4 = f4{} + hi;
  const f4 upper = x > hi4 ? hi4 : x;
  return x < lo4 ? lo4 : upper;
}

/// The end of G2P for four consecutive particles x[0..3] with no rigid
/// bodies in the scene (MpmCpuBackend::finish_particle): mpm::update_deformation
/// (fluid lanes: J relaxed by mpm::volume_corrected_J with the lane's step
/// fraction `beta` and volume fraction `phi`, then J *= 1 + dt tr B, F = I;
/// the others F = (I + dt B) F),
/// x += dt v_move, mpm::clamp_to_grid, and the quadratic stencil's 8 x 8
/// block key for the next bucketing (MpmCpuBackend::block_key).
struct Finish4 {
  const GridSpec* grid;
  float dt;
  int blocks_x, blocks_y, block;  ///< block counts and size (cells)
};
inline void quad_finish4(const Finish4& f, i4 fluid, const Gather4& q, f4 mvx, f4 mvy, Mat2* F,
                         float* J, Vec2* x, uint32_t* key, f4 beta, f4 phi) {
  const float dt = f.dt;
  f4 r[4];
  __builtin_memcpy(r, F, sizeof r);  // Mat2 is four floats, row-major
  f4 F00, F01, F10, F11;
  {
    f4 col[4];
    transpose4(r[0], r[1], r[2], r[3], col);
    F00 = col[0];
    F01 = col[1];
    F10 = col[2];
    F11 = col[3];
  }
  // (I + dt B) F, as Mat2::identity() + dt * B, then Mat2 * Mat2.
  const f4 m00 = 1.f + dt * q.b00, m01 = 0.f + dt * q.b01, m10 = 0.f + dt * q.b10,
           m11 = 1.f + dt * q.b11;
  const f4 n00 = m00 * F00 + m01 * F10, n01 = m00 * F01 + m01 * F11;
  const f4 n10 = m10 * F00 + m11 * F10, n11 = m10 * F01 + m11 * F11;
  f4 Jv;
  __builtin_memcpy(&Jv, J, sizeof Jv);
  for (int l = 0; l < 4; ++l) Jv[l] = mpm::volume_corrected_J(Jv[l], phi[l], beta[l]);
  const f4 Jf = Jv * (1.f + dt * (q.b00 + q.b11));
  const f4 one = f4{} + 1.f, zero = f4{};
  Jv = fluid ? Jf : Jv;
  transpose4(fluid ? one : n00, fluid ? zero : n01, fluid ? zero : n10, fluid ? one : n11, r);
  __builtin_memcpy(static_cast<void*>(F), r, sizeof r);
  __builtin_memcpy(J, &Jv, sizeof Jv);
  // Advect and clamp (mpm::clamp_to_grid).
  const GridSpec& g = *f.grid;
  f4 px, py;
  load_positions(x, px, py);
  px = clamp4(px + dt * mvx, g.origin.x + g.dx, g.origin.x + (g.nx - 1.001f) * g.dx);
  py = clamp4(py + dt * mvy, g.origin.y + g.dx, g.origin.y + (g.ny - 1.001f) * g.dx);
  const f4 xy0 = PS_SHUFFLE4(px, py, 0, 4, 1, 5), xy1 = PS_SHUFFLE4(px, py, 2, 6, 3, 7);
  __builtin_memcpy(static_cast<void*>(x), &xy0, sizeof xy0);
  __builtin_memcpy(static_cast<void*>(x + 2), &xy1, sizeof xy1);
  // Block key: the stencil's base node (mpm::stencil_base) over the block size, clamped.
  const float inv_dx = 1.f / g.dx;
  const i4 bx = quad_base4((px - g.origin.x) * inv_dx), by = quad_base4((py - g.origin.y) * inv_dx);
  for (int l = 0; l < 4; ++l) {
    const int kx = static_cast<int>(static_cast<unsigned>(bx[l] > 0 ? bx[l] : 0) /
                                    static_cast<unsigned>(f.block));
    const int ky = static_cast<int>(static_cast<unsigned>(by[l] > 0 ? by[l] : 0) /
                                    static_cast<unsigned>(f.block));
    key[l] = static_cast<uint32_t>((ky < f.blocks_y - 1 ? ky : f.blocks_y - 1) * f.blocks_x +
                                   (kx < f.blocks_x - 1 ? kx : f.blocks_x - 1));
  }
}

// [SECTION] Constitutive update in lanes ---------------------------------------------
//
// mpm::fluid_stress, mpm::jelly_stress and mpm::snow_update (materials.h)
// and the polar2 / svd2 they use (vec.h), four particles of one material
// type at a time. Branches become selects: both sides are computed and each
// lane keeps the side its scalar code would have taken (an unused side may
// divide by zero; nothing traps). Every expression keeps the scalar code's
// operands and order, including Mat2's products with the zeros of a
// diagonal matrix, so the lanes match it bit for bit
// (tests/sim/mpm/test_simd.cpp also checks degenerate and inverted F).

/// Mat2 in lanes, with vec.h's operations written out the same way.
struct M4 {
  f4 a00, a01, a10, a11;
};
inline M4 operator+(const M4& a, const M4& b) {
  return {a.a00 + b.a00, a.a01 + b.a01, a.a10 + b.a10, a.a11 + b.a11};
}
inline M4 operator-(const M4& a, const M4& b) {
  return {a.a00 - b.a00, a.a01 - b.a01, a.a10 - b.a10, a.a11 - b.a11};
}
inline M4 operator*(f4 s, const M4& a) { return {s * a.a00, s * a.a01, s * a.a10, s * a.a11}; }
inline M4 operator*(const M4& a, const M4& b) {
  return {a.a00 * b.a00 + a.a01 * b.a10, a.a00 * b.a01 + a.a01 * b.a11,
          a.a10 * b.a00 + a.a11 * b.a10, a.a10 * b.a01 + a.a11 * b.a11};
}
inline M4 transpose(const M4& a) { return {a.a00, a.a10, a.a01, a.a11}; }
inline f4 det(const M4& a) { return a.a00 * a.a11 - a.a01 * a.a10; }
inline M4 diag4(f4 d0, f4 d1) { return {d0, f4{}, f4{}, d1}; }
inline M4 identity4() { return diag4(f4{} + 1.f, f4{} + 1.f); }
/// Rows base[idx[l]] (Mat2: four floats, row-major) as lanes, and back.
inline M4 load_mats(const Mat2* base, const uint32_t* idx) {
  f4 r[4], c[4];
  for (int l = 0; l < 4; ++l) __builtin_memcpy(&r[l], &base[idx[l]], sizeof r[l]);
  transpose4(r[0], r[1], r[2], r[3], c);
  return {c[0], c[1], c[2], c[3]};
}
inline void store_mats(const M4& m, Mat2* base, const uint32_t* idx) {
  f4 r[4];
  transpose4(m.a00, m.a01, m.a10, m.a11, r);
  for (int l = 0; l < 4; ++l)
    __builtin_memcpy(static_cast<void*>(&base[idx[l]]), &r[l], sizeof r[l]);
}
/// Lane-wise m ? a : b (m: a comparison's -1 / 0).
inline f4 sel(i4 m, f4 a, f4 b) { return m ? a : b; }
inline M4 sel(i4 m, const M4& a, const M4& b) {
  return {sel(m, a.a00, b.a00), sel(m, a.a01, b.a01), sel(m, a.a10, b.a10), sel(m, a.a11, b.a11)};
}
inline f4 abs4(f4 x) {
  i4 bits;
  __builtin_memcpy(&bits, &x, sizeof bits);
  bits &= 0x7fffffff;
  __builtin_memcpy(&x, &bits, sizeof x);
  return x;
}
inline f4 clamp4(f4 x, f4 lo, f4 hi) {
  const f4 upper = x > hi ? hi : x;
  return x < lo ? lo : upper;
}

/// ps::polar2: F = R S, R = rotation(c, s); F itself where F is degenerate.
inline void polar4(const M4& F, M4& R, M4& S) {
  const f4 x = F.a00 + F.a11, y = F.a10 - F.a01;
  const f4 scale = 1.f / sqrt4(x * x + y * y);
  const i4 ok = scale < 1e30f;
  const f4 c = x * scale, s = y * scale;
  const M4 Rr{c, -s, s, c};
  R = sel(ok, Rr, identity4());
  S = sel(ok, transpose(Rr) * F, F);
}

/// ps::svd2: F = U diag(sx, sy) V^T, sx >= sy.
inline void svd4(const M4& F, M4& U, f4& sx, f4& sy, M4& V) {
  M4 R, S;
  polar4(F, R, S);
  const i4 diagonal = abs4(S.a01) < 1e-12f;
  const f4 tao = 0.5f * (S.a00 - S.a11);
  const f4 w = sqrt4(tao * tao + S.a01 * S.a01);
  const f4 t = tao > 0.f ? S.a01 / (tao + w) : S.a01 / (tao - w);
  const f4 cr = 1.f / sqrt4(t * t + 1.f);
  const f4 sr = -t * cr;
  const f4 gx = cr * cr * S.a00 - 2.f * cr * sr * S.a01 + sr * sr * S.a11;
  const f4 gy = sr * sr * S.a00 + 2.f * cr * sr * S.a01 + cr * cr * S.a11;
  const f4 c = sel(diagonal, f4{} + 1.f, cr), s = sel(diagonal, f4{}, sr);
  const f4 x = sel(diagonal, S.a00, gx), y = sel(diagonal, S.a11, gy);
  const i4 swap = x < y;
  sx = sel(swap, y, x);
  sy = sel(swap, x, y);
  V = sel(swap, M4{-s, c, -c, -s}, M4{c, s, -s, c});
  U = R * V;
}

/// One material's parameters per lane (each lane's own material, of one type).
struct MaterialLanes {
  f4 mu, la;                       ///< Lame parameters (mpm::lame)
  f4 bulk, visc;                   ///< fluid
  f4 theta_c, theta_s, hardening;  ///< snow
  /// Lane l takes material m's parameters (its Lame pair through ps::lame, as the scalar code).
  void set(int l, const MaterialParams& m) {
    float mu_l, la_l;
    lame(m, mu_l, la_l);
    mu[l] = mu_l;
    la[l] = la_l;
    bulk[l] = m.bulk_modulus;
    visc[l] = m.viscosity;
    theta_c[l] = m.theta_c;
    theta_s[l] = m.theta_s;
    hardening[l] = m.hardening;
  }
};

/// mpm::fluid_stress.
inline M4 fluid_stress4(const MaterialLanes& m, f4 J, const M4& C) {
  const f4 p = m.bulk * J * (J - 1.f);
  const M4 tau = diag4(p, p);
  return sel(m.visc > 0.f, tau + (J * m.visc) * (C + transpose(C)), tau);
}

/// mpm::jelly_stress (fixed corotated).
inline M4 jelly_stress4(const MaterialLanes& m, const M4& F) {
  M4 R, S;
  polar4(F, R, S);
  const f4 Jf = det(F);
  return (2.f * m.mu) * ((F - R) * transpose(F)) +
         diag4(m.la * Jf * (Jf - 1.f), m.la * Jf * (Jf - 1.f));
}

/// mpm::snow_update: clamps F's singular values, moves the rest into Jp,
/// hardens (expf per lane, the same libm call) and returns the stress.
inline M4 snow_update4(const MaterialLanes& m, M4& F, f4& Jp) {
  M4 U, V;
  f4 sx, sy;
  svd4(F, U, sx, sy, V);
  const f4 old_j = sx * sy;
  const f4 lo = 1.f - m.theta_c, hi = 1.f + m.theta_s;
  sx = clamp4(sx, lo, hi);
  sy = clamp4(sy, lo, hi);
  const f4 new_j = sx * sy;
  Jp = clamp4(Jp * (old_j / new_j), f4{} + 1e-2f, f4{} + 1e2f);
  F = U * diag4(sx, sy) * transpose(V);
  f4 h;
  for (int l = 0; l < 4; ++l) {
    const float e = __builtin_expf(m.hardening[l] * (1.f - Jp[l]));
    h[l] = e < 0.1f ? 0.1f : (e > 5.f ? 5.f : e);  // mpm::clampf
  }
  const f4 mu = m.mu * h, la = m.la * h;
  const M4 R = U * transpose(V);
  return (2.f * mu) * ((F - R) * transpose(F)) +
         diag4(la * new_j * (new_j - 1.f), la * new_j * (new_j - 1.f));
}

}  // namespace simd
}  // namespace ps
