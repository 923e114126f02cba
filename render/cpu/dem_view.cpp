#include "render/cpu/dem_view.h"

#include <algorithm>
#include <cmath>
#include "sim/dem/dem_kernels.h"

namespace ps {

BondStress bond_stress(const dem::DemWorld& w, size_t k) {
  const dem::DemBonds& b = w.bonds;
  const dem::DemParticles& p = w.particles;
  if (k >= b.size() || b.broken[k]) return BondStress{};
  const uint32_t i = b.i[k], j = b.j[k];
  if (i >= p.size() || j >= p.size()) return BondStress{};
  return bond_stress_now(w.bond, p.x[i], p.x[j], p.v[i], p.v[j], p.omega[i], p.omega[j],
                         p.radius[i], p.radius[j], p.mass[i], p.mass[j], p.inertia[i], p.inertia[j],
                         b.length0[k], b.shear_disp[k], b.bend_angle[k]);
}

void bond_stress_ratios(const dem::DemWorld& w, std::vector<float>& out) {
  const size_t n = w.bonds.size();
  out.resize(n);
  for (size_t k = 0; k < n; ++k)
    out[k] = w.bonds.broken[k] ? -1.f : bond_ratio_float(bond_stress(w, k).ratio);
}

std::array<float, 3> bond_stress_rgb(Colormap cm, float ratio, float hi) {
  return colormap_rgb(cm, bond_stress_t(ratio, hi));
}

void bond_color_lut(Colormap cm, std::vector<uint32_t>& out) {
  out.resize(kDemBondLut);
  // pack_rgba's bytes (render/gl_draw.h), alpha 1.
  auto q = [](float v) {
    return static_cast<uint32_t>(std::lround(std::clamp(v, 0.f, 1.f) * 255.f));
  };
  for (int k = 0; k < kDemBondLut; ++k) {
    const std::array<float, 3> c =
        colormap_rgb(cm, static_cast<float>(k) / static_cast<float>(kDemBondLut - 1));
    out[static_cast<size_t>(k)] = q(c[0]) | (q(c[1]) << 8) | (q(c[2]) << 16) | (255u << 24);
  }
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
  std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(k),
                   scratch.end());
  const float hi = scratch[k];
  ref = hi > ref ? hi : ref + 0.05f * (hi - ref);
}

float ForceScale::width_px(float f, float max_px) const {
  if (!(ref > 0.f) || !(f > 0.f) || !std::isfinite(f)) return 0.f;
  const float t = f / ref;
  if (t < 0.02f) return 0.f;
  return std::min(max_px, 0.5f + (max_px - 0.5f) * t);
}

void dem_rows_to_indices(const ParticleTable& t, const dem::DemWorld& w,
                         const std::vector<uint32_t>& rows, std::vector<uint32_t>& out) {
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
  return Vec2{static_cast<float>(sx / static_cast<double>(n)),
              static_cast<float>(sy / static_cast<double>(n))};
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

void DemBondIndex::update(const dem::DemWorld& w) {
  const dem::DemBonds& b = w.bonds;
  const size_t n = w.particles.size(), nb = b.size();
  if (generation_ == w.host_generation() && particles_ == n && bonds_ == nb) return;
  generation_ = w.host_generation();
  particles_ = n;
  bonds_ = nb;
  start_i_.assign(n + 1, 0);
  start_j_.assign(n + 1, 0);
  list_j_.resize(nb);
  max_length0 = 0.0;
  for (size_t k = 0; k < nb; ++k) {
    if (b.i[k] < n) ++start_i_[b.i[k] + 1];
    if (b.j[k] < n) ++start_j_[b.j[k] + 1];
    max_length0 = std::max(max_length0, b.length0[k]);
  }
  for (size_t i = 0; i < n; ++i) {
    start_i_[i + 1] += start_i_[i];
    start_j_[i + 1] += start_j_[i];
  }
  // Bonds as j in index order (a stable counting sort); bonds as i are the
  // range start_i_[i] .. start_i_[i + 1] when the bonds are sorted by i.
  std::vector<uint32_t> cursor(start_j_.begin(), start_j_.end() - 1);
  for (size_t k = 0; k < nb; ++k)
    if (b.j[k] < n) list_j_[cursor[b.j[k]]++] = static_cast<uint32_t>(k);
}

void DemBondIndex::bonds_of(uint32_t index, std::vector<uint32_t>& out) const {
  out.clear();
  if (static_cast<size_t>(index) + 1 >= start_i_.size()) return;
  // As j, then as i: every bond as j has i < index, so it comes first in
  // (i, j) order.
  for (uint32_t q = start_j_[index]; q < start_j_[index + 1]; ++q) out.push_back(list_j_[q]);
  for (uint32_t k = start_i_[index]; k < start_i_[index + 1]; ++k) out.push_back(k);
}

void dem_selected_from_host(const dem::DemWorld& w, const DemBondIndex& idx, uint32_t index,
                            DemSelected& out) {
  out.valid = false;
  out.bonds.clear();
  const dem::DemParticles& p = w.particles;
  const dem::DemBonds& b = w.bonds;
  if (index >= p.size()) return;
  out.valid = true;
  out.index = index;
  out.x = p.x[index];
  out.v = p.v[index];
  out.theta = p.theta[index];
  out.omega = p.omega[index];
  std::vector<uint32_t> ks;  // a particle's few bonds
  idx.bonds_of(index, ks);
  out.bond_total = static_cast<int>(ks.size());
  for (uint32_t k : ks) {
    DemSelectedBond s;
    s.bond = k;
    s.other = b.i[k] == index ? b.j[k] : b.i[k];
    s.other_x = s.other < p.size() ? p.x[s.other] : dem::Vec2d{};
    s.broken = b.broken[k] != 0;
    s.mode = b.mode[k];
    s.break_step = b.break_step[k];
    s.stress = bond_stress(w, k);
    out.bonds.push_back(s);
  }
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
