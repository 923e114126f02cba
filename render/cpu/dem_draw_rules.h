/// What the window draws of a DEM world, as formulas written once for the
/// host path (App::snapshot, dem_draw.cpp) and the CUDA-GL interop's kernels
/// (render/cuda/dem_fill.cu), as render/cpu/particle_scalars.h is for MPM:
/// bond stress normalised by the strengths, which bonds are drawn (the
/// on-screen rule), their line widths, the dashes of a broken bond and the
/// two triangles of a line. GL-free and host/device (PS_HD).
#pragma once
#include <cstdint>

#include "sim/core/hd.h"
#include "sim/core/vec.h"
#include "sim/dem/dem_kernels.h"
#include "sim/dem/dem_particles.h"

namespace ps {

// [SECTION] Bond stress ---------------------------------------------------------------------

/// A bond's stresses (Pa) and how close they are to breaking it.
struct BondStress {
  double sigma = 0.0;    ///< max tensile stress T/A + |M_b| r_b / I
  double sigma_c = 0.0;  ///< max compressive stress -T/A + |M_b| r_b / I
  double tau = 0.0;      ///< shear stress |F_s| / A
  /// max(sigma / sigma_t, sigma_c / sigma_c,max, tau / tau_max, 0): 1 breaks the bond.
  double ratio = 0.0;
  /// The criterion with the largest ratio (the mode it would break in);
  /// None when no stress is positive.
  dem::BondBreak critical = dem::BondBreak::None;
};

/// Normalises stresses by the bond strengths (ties in the order tensile,
/// compressive, shear, as the solver's break check). A strength of zero or
/// less reads as 1e30 times broken under any positive stress.
PS_HD BondStress normalise_bond_stress(const dem::DemBondParams& bp, double sigma, double sigma_c,
                                       double tau) {
  BondStress s;
  s.sigma = sigma;
  s.sigma_c = sigma_c;
  s.tau = tau;
  const double stress[3] = {sigma, sigma_c, tau};
  const double strength[3] = {bp.tensile_strength, bp.compressive_strength, bp.shear_strength};
  const dem::BondBreak modes[3] = {dem::BondBreak::Tensile, dem::BondBreak::Compressive,
                                   dem::BondBreak::Shear};
  for (int k = 0; k < 3; ++k) {
    const double r = strength[k] > 0.0 ? stress[k] / strength[k] : stress[k] > 0.0 ? 1e30 : 0.0;
    if (r > s.ratio) {
      s.ratio = r;
      s.critical = modes[k];
    }
  }
  return s;
}

/// An intact bond's stresses now: the solver's bond law (dem_kernels.h
/// bond_force) on the current positions, rotations and bond parameters, so an
/// edit of E, nu or the bond radius shows at once, even while paused.
PS_HD BondStress bond_stress_now(const dem::DemBondParams& bp, dem::Vec2d xi, dem::Vec2d xj,
                                 dem::Vec2d vi, dem::Vec2d vj, double wi, double wj, double Ri,
                                 double Rj, double mi, double mj, double Ii, double Ij, double L0,
                                 double shear_disp, double bend_angle) {
  const dem::BondResult r = dem::bond_force(bp, xi, xj, vi, vj, wi, wj, Ri, Rj, mi, mj, Ii, Ij, L0,
                                            shear_disp, bend_angle);
  return normalise_bond_stress(bp, r.sigma, r.sigma_c, r.tau);
}

/// The ratio as the colour bar's float (capped at 1e30; -1 for a broken bond,
/// which the auto range then ignores at its low end only).
PS_HD float bond_ratio_float(double ratio) {
  return static_cast<float>(ratio < 1e30 ? ratio : 1e30);
}

/// Where a ratio sits on a colour bar spanning [0, hi], in [0, 1].
PS_HD float bond_stress_t(float ratio, float hi) {
  float t = hi > 0.f ? ratio / hi : 0.f;
  if (!(fabsf(t) <= 3.402823466e38f)) t = ratio > 0.f ? 1.f : 0.f;  // infinite or NaN
  return t < 0.f ? 0.f : t > 1.f ? 1.f : t;
}

// [SECTION] Which bonds are drawn, and how ----------------------------------------------------

/// A bond is drawn only when its rest length is at least this many pixels on
/// screen: shorter bonds are hidden under their particles' sprites anyway
/// (a bonded packing's bond is about one particle diameter). A million-
/// particle specimen framed whole has bonds under a pixel long: none are
/// drawn and the DEM panel says to zoom in.
constexpr float kBondMinPx = 1.5f;

/// The drawing's parameters for one frame.
struct BondView {
  float scale = 1.f;                ///< logical pixels per world unit
  float px = 1.f;                   ///< one logical pixel in world units (1 / scale)
  Vec2 lo{0.f, 0.f}, hi{0.f, 0.f};  ///< the window in world units: segments outside it are skipped
};

/// The rest-length rule (the same for intact and broken bonds).
PS_HD bool bond_long_enough(double length0, float scale) {
  return static_cast<float>(length0) * scale >= kBondMinPx;
}

/// False only when the segment a-b, widened by `margin` (world units), lies
/// wholly on the far side of one edge of the window (it cannot touch a pixel).
PS_HD bool segment_in_view(Vec2 a, Vec2 b, float margin, const BondView& v) {
  if (a.x < v.lo.x - margin && b.x < v.lo.x - margin) return false;
  if (a.x > v.hi.x + margin && b.x > v.hi.x + margin) return false;
  if (a.y < v.lo.y - margin && b.y < v.lo.y - margin) return false;
  if (a.y > v.hi.y + margin && b.y > v.hi.y + margin) return false;
  return true;
}

/// Line width of a bond in pixels: 0.3 of the smaller radius, 1 to 3.5 px.
PS_HD float bond_width_px(double Ri, double Rj, float scale) {
  const float w = 0.3f * static_cast<float>(Ri < Rj ? Ri : Rj) * scale;
  return w < 1.f ? 1.f : w > 3.5f ? 3.5f : w;
}

/// A broken bond's dashes: drawn while its particles are within three rest
/// lengths (len: their distance, float as drawn); about 5 px dashes with 4 px
/// gaps, at least one. 0: not drawn.
PS_HD int broken_bond_dashes(float len, double length0, float scale) {
  if (!(len > 0.f) || len > 3.f * static_cast<float>(length0)) return 0;
  const int d = static_cast<int>(len * scale / 9.f);
  return d > 1 ? d : 1;
}
PS_HD float broken_bond_width_px(double Ri, double Rj, float scale) {
  const float w = 0.8f * bond_width_px(Ri, Rj, scale);
  return w > 1.f ? w : 1.f;
}
/// Dash q of a broken bond from a to e cut into `dashes`: from s0 to s1.
PS_HD void broken_bond_dash(Vec2 a, Vec2 e, int dashes, int q, Vec2& s0, Vec2& s1) {
  const Vec2 step = (e - a) / static_cast<float>(dashes);
  const float on = dashes == 1 ? 0.6f : 5.f / 9.f;
  s0 = a + static_cast<float>(q) * step + (dashes == 1 ? 0.2f : 0.f) * step;
  s1 = s0 + on * step;
}

/// A vertex of the overlay's triangles as ShapeBatch and the device's bond
/// lines write them (render/gl_draw.h): position in world units, RGBA8.
struct LineVertex {
  float x, y;
  uint32_t rgba;
};

/// The two triangles of a line from a to b, `width_px` wide (ShapeBatch::line):
/// a-n, b-n, b+n, a-n, b+n, a+n with n the half-width normal. False (nothing
/// written) for a zero-length line.
PS_HD bool line_triangles(Vec2 a, Vec2 b, float width_px, float px, Vec2 out[6]) {
  const Vec2 d = b - a;
  const float len = length(d);
  if (!(len > 0.f)) return false;
  const Vec2 n = perp(d / len) * (0.5f * width_px * px);
  out[0] = a - n;
  out[1] = b - n;
  out[2] = b + n;
  out[3] = a - n;
  out[4] = b + n;
  out[5] = a + n;
  return true;
}

/// A DEM particle's speed as the colour modes show it (from the float
/// velocity the host table holds).
PS_HD float dem_display_speed(dem::Vec2d v) {
  const float vx = static_cast<float>(v.x), vy = static_cast<float>(v.y);
  return sqrtf(vx * vx + vy * vy);
}

}  // namespace ps
