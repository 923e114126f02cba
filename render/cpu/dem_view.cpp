#include "render/cpu/dem_view.h"

#include <algorithm>
#include <cmath>
#include "sim/dem/dem_kernels.h"

namespace ps {

BondStress normalise_bond_stress(const dem::DemBondParams& bp, double sigma, double sigma_c, double tau) {
  BondStress s;
  s.sigma = sigma;
  s.sigma_c = sigma_c;
  s.tau = tau;
  auto ratio = [](double stress, double strength) {
    if (!(strength > 0.0)) return stress > 0.0 ? 1e30 : 0.0;
    return stress / strength;
  };
  const double r[3] = {ratio(sigma, bp.tensile_strength), ratio(sigma_c, bp.compressive_strength),
                       ratio(tau, bp.shear_strength)};
  const dem::BondBreak modes[3] = {dem::BondBreak::Tensile, dem::BondBreak::Compressive, dem::BondBreak::Shear};
  for (int k = 0; k < 3; ++k) {
    if (r[k] > s.ratio) {
      s.ratio = r[k];
      s.critical = modes[k];
    }
  }
  return s;
}

BondStress bond_stress(const dem::DemWorld& w, size_t k) {
  const dem::DemBonds& b = w.bonds;
  const dem::DemParticles& p = w.particles;
  if (k >= b.size() || b.broken[k]) return BondStress{};
  const uint32_t i = b.i[k], j = b.j[k];
  if (i >= p.size() || j >= p.size()) return BondStress{};
  dem::BondResult r = dem::bond_force(w.bond, p.x[i], p.x[j], p.v[i], p.v[j], p.omega[i], p.omega[j], p.radius[i],
                                      p.radius[j], p.mass[i], p.mass[j], p.inertia[i], p.inertia[j], b.length0[k],
                                      b.shear_disp[k], b.bend_angle[k]);
  return normalise_bond_stress(w.bond, r.sigma, r.sigma_c, r.tau);
}

void bond_stress_ratios(const dem::DemWorld& w, std::vector<float>& out) {
  const size_t n = w.bonds.size();
  out.resize(n);
  for (size_t k = 0; k < n; ++k)
    out[k] = w.bonds.broken[k] ? -1.f : static_cast<float>(std::min(bond_stress(w, k).ratio, 1e30));
}

std::array<float, 3> bond_stress_rgb(Colormap cm, float ratio, float hi) {
  float t = hi > 0.f ? ratio / hi : 0.f;
  if (!std::isfinite(t)) t = ratio > 0.f ? 1.f : 0.f;
  return colormap_rgb(cm, std::clamp(t, 0.f, 1.f));
}

const char* bond_break_name(dem::BondBreak m) {
  switch (m) {
    case dem::BondBreak::None: return "intact";
    case dem::BondBreak::Tensile: return "tensile";
    case dem::BondBreak::Compressive: return "compressive";
    case dem::BondBreak::Shear: return "shear";
  }
  return "?";
}

void ForceScale::update(const std::vector<float>& magnitudes, std::vector<float>& scratch) {
  scratch.clear();
  for (float f : magnitudes)
    if (std::isfinite(f) && f > 0.f) scratch.push_back(f);
  if (scratch.empty()) return;  // keep the last reference: contacts come and go
  const size_t k = static_cast<size_t>(0.99 * static_cast<double>(scratch.size() - 1));
  std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(k), scratch.end());
  const float hi = scratch[k];
  ref = hi > ref ? hi : ref + 0.05f * (hi - ref);
}

float ForceScale::width_px(float f, float max_px) const {
  if (!(ref > 0.f) || !(f > 0.f) || !std::isfinite(f)) return 0.f;
  const float t = f / ref;
  if (t < 0.02f) return 0.f;
  return std::min(max_px, 0.5f + (max_px - 0.5f) * t);
}

void dem_rows_to_indices(const ParticleTable& t, const dem::DemWorld& w, const std::vector<uint32_t>& rows,
                         std::vector<uint32_t>& out) {
  out.clear();
  const size_t n = w.particles.size();
  for (uint32_t r : rows) {
    if (r >= t.size()) continue;
    const uint32_t id = t.id[r];
    if (r < n && w.particles.id[r] == id) {
      out.push_back(r);
      continue;
    }
    int64_t i = w.index_of(id);
    if (i >= 0) out.push_back(static_cast<uint32_t>(i));
  }
}

Vec2 dem_centroid(const dem::DemWorld& w, const std::vector<uint32_t>& idx) {
  double sx = 0.0, sy = 0.0;
  size_t n = 0;
  for (uint32_t i : idx) {
    if (i >= w.particles.size()) continue;
    sx += w.particles.x[i].x;
    sy += w.particles.x[i].y;
    ++n;
  }
  if (n == 0) return Vec2{0.f, 0.f};
  return Vec2{static_cast<float>(sx / static_cast<double>(n)), static_cast<float>(sy / static_cast<double>(n))};
}

bool wall_segment(const dem::DemWall& wall, Vec2 lo, Vec2 hi, Vec2& a, Vec2& b) {
  // Disks and polygons are solid shapes: rigid bodies' parts, drawn as bodies.
  if (wall.type == dem::WallType::Disk || wall.type == dem::WallType::Polygon) return false;
  if (wall.type == dem::WallType::Segment) {
    a = Vec2{static_cast<float>(wall.a.x), static_cast<float>(wall.a.y)};
    b = Vec2{static_cast<float>(wall.b.x), static_cast<float>(wall.b.y)};
    return true;
  }
  // Plane: the line through `a` along perp(n), clipped to the box (Liang-Barsky).
  const double px = wall.a.x, py = wall.a.y;
  const double dx = -wall.n.y, dy = wall.n.x;
  double t0 = -1e300, t1 = 1e300;
  auto clip = [&](double p, double d, double l, double h) {
    if (d == 0.0) return p >= l && p <= h;
    double ta = (l - p) / d, tb = (h - p) / d;
    if (ta > tb) std::swap(ta, tb);
    t0 = std::max(t0, ta);
    t1 = std::min(t1, tb);
    return t0 <= t1;
  };
  if (!clip(px, dx, lo.x, hi.x) || !clip(py, dy, lo.y, hi.y)) return false;
  if (dx == 0.0 && dy == 0.0) return false;
  a = Vec2{static_cast<float>(px + t0 * dx), static_cast<float>(py + t0 * dy)};
  b = Vec2{static_cast<float>(px + t1 * dx), static_cast<float>(py + t1 * dy)};
  return true;
}

void bonds_of(const dem::DemBonds& b, uint32_t index, std::vector<uint32_t>& out) {
  out.clear();
  for (size_t k = 0; k < b.size(); ++k)
    if (b.i[k] == index || b.j[k] == index) out.push_back(static_cast<uint32_t>(k));
}

LastBreak last_bond_break(const dem::DemWorld& w) {
  LastBreak lb;
  const dem::DemBonds& b = w.bonds;
  for (size_t k = 0; k < b.size(); ++k) {
    if (!b.broken[k]) continue;
    ++lb.broken;
    // The latest step wins; within one step the first bond in (i, j) order.
    if (b.break_step[k] > lb.step) {
      lb.step = b.break_step[k];
      lb.mode = b.mode[k];
      lb.id_i = b.i[k] < w.particles.size() ? w.particles.id[b.i[k]] : 0;
      lb.id_j = b.j[k] < w.particles.size() ? w.particles.id[b.j[k]] : 0;
    }
  }
  return lb;
}

}  // namespace ps
