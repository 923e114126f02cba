// Particle resampling: narrow-band signed distance of the particle body,
// merging of close particles and Poisson-disk insertion into interior holes.
// The method and its limits are described in resample.h.
#include "sim/mpm/resample.h"

#include "sim/core/hash.h"

#include "sim/mpm/material_table.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace ps {

namespace {

// [SECTION] Helpers ---------------------------------------------------------------

enum CellState : uint8_t {
  kUnknown = 0,  ///< outside the disks, not yet classified
  kCovered = 1,  ///< cell centre inside the union of disks: inside
  kOutside = 2,  ///< outside the disks, connected to the domain border
  kCavity = 3,   ///< enclosed, small: an interior hole, inside
  kVoid = 4,     ///< enclosed, large: stays outside
};

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kMaxCells =
    1024.f;  ///< upper bound of the lengths in cells (parameters are clamped)

inline bool inside_state(uint8_t s) { return s == kCovered || s == kCavity; }

/// The weighted mean of deformation gradients, taken apart (F = R S, polar2):
/// the rotations' chordal mean (the weighted sum of the R, projected back to
/// a rotation; Moakher 2002, SIAM J. Matrix Anal. Appl. 24(1), section 3.1)
/// times the weighted mean of the stretches S. The plain mean of F shrinks
/// where the donors are turned against each other: two pieces of cookie
/// turned +-80 degrees averaged to 0.17 I, a particle born compressed to 3 %
/// of its volume whose pressure blew the scene up at grid x3.
struct FMean {
  double c = 0.0, s = 0.0, S[4] = {0, 0, 0, 0};
  void add(double w, const Mat2& F) {
    Mat2 R, St;
    polar2(F, R, St);
    c += w * R.a00;
    s += w * R.a10;
    S[0] += w * St.a00;
    S[1] += w * St.a01;
    S[2] += w * St.a10;
    S[3] += w * St.a11;
  }
  /// The mean, for weights summing to 1 / `inv_w`.
  Mat2 mean(double inv_w) const {
    const double n = std::hypot(c, s);
    const float rc = n > 0.0 ? static_cast<float>(c / n) : 1.f,
                rs = n > 0.0 ? static_cast<float>(s / n) : 0.f;
    const Mat2 Sm{static_cast<float>(S[0] * inv_w), static_cast<float>(S[1] * inv_w),
                  static_cast<float>(S[2] * inv_w), static_cast<float>(S[3] * inv_w)};
    return rotation(rc, rs) * Sm;
  }
};

/// Clamp that also maps NaN to `lo`, so float -> int conversions stay defined.
inline float clamp_finite(float v, float lo, float hi) {
  if (!(v >= lo)) return lo;
  return v > hi ? hi : v;
}

/// floor / ceil to int of a finite float in int range (no libm call on the x86-64 baseline).
inline int ifloor(float x) {
  int i = static_cast<int>(x);
  return i - (x < static_cast<float>(i) ? 1 : 0);
}
inline int iceil(float x) {
  int i = static_cast<int>(x);
  return i + (x > static_cast<float>(i) ? 1 : 0);
}

inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

/// Position in cell units (dx = 1, origin at 0).
inline Vec2 to_cells(Vec2 x, const GridSpec& g, float inv_dx) {
  return {(x.x - g.origin.x) * inv_dx, (x.y - g.origin.y) * inv_dx};
}

/// 1D quadratic B-spline of a distance t >= 0 in cells (support 1.5).
inline float bspline2(float t) {
  if (t < 0.5f) return 0.75f - t * t;
  if (t < 1.5f) {
    float s = 1.5f - t;
    return 0.5f * s * s;
  }
  return 0.f;
}

inline float dist_point_segment(Vec2 p, Vec2 a, Vec2 b) {
  Vec2 ab = b - a, ap = p - a;
  float l2 = length2(ab);
  float t = l2 > 0.f ? clampf(dot(ap, ab) / l2, 0.f, 1.f) : 0.f;
  return length(ap - t * ab);
}

/// Uniform in [0, 1) with 24 random bits.
inline float uniform01(uint64_t& s) {
  return static_cast<float>(splitmix64(s) >> 40) * (1.f / 16777216.f);
}

template <class T>
void compact(std::vector<T>& a, const std::vector<uint8_t>& state) {
  size_t w = 0;
  for (size_t r = 0; r < a.size(); ++r)
    if (state[r] != 2) a[w++] = a[r];
  a.resize(w);
}

template <class T>
size_t cap_bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

}  // namespace

// [SECTION] Bucketing ---------------------------------------------------------------

void Resampler::bucket(const MpmParticles& p, const GridSpec& g) {
  nx_ = std::max(g.nx, 1);
  ny_ = std::max(g.ny, 1);
  const int ncell = nx_ * ny_;
  const int n = static_cast<int>(p.size());
  const float inv_dx = 1.f / g.dx;
  cell_count_.assign(ncell, 0);
  cell_start_.assign(ncell + 1, 0);
  cell_of_.resize(n);
  order_.resize(n);
  bi0_ = nx_;
  bi1_ = -1;
  bj0_ = ny_;
  bj1_ = -1;
  for (int i = 0; i < n; ++i) {
    Vec2 u = to_cells(p.x[i], g, inv_dx);
    int ci = clampi(ifloor(clamp_finite(u.x, -1.f, nx_ + 1.f)), 0, nx_ - 1);
    int cj = clampi(ifloor(clamp_finite(u.y, -1.f, ny_ + 1.f)), 0, ny_ - 1);
    bi0_ = std::min(bi0_, ci);
    bi1_ = std::max(bi1_, ci);
    bj0_ = std::min(bj0_, cj);
    bj1_ = std::max(bj1_, cj);
    int c = cj * nx_ + ci;
    cell_of_[i] = c;
    ++cell_count_[c];
  }
  for (int c = 0; c < ncell; ++c) cell_start_[c + 1] = cell_start_[c] + cell_count_[c];
  // Stable fill: cell_start_ is used as the running cursor, then restored.
  for (int i = 0; i < n; ++i) order_[cell_start_[cell_of_[i]]++] = i;
  for (int c = ncell; c > 0; --c) cell_start_[c] = cell_start_[c - 1];
  cell_start_[0] = 0;
}

// [SECTION] Signed distance ---------------------------------------------------------

void Resampler::compute_sdf(const MpmParticles& p, const GridSpec& g, const ResampleParams& rp) {
  const int ncell = nx_ * ny_;
  const int n = static_cast<int>(p.size());
  const float inv_dx = 1.f / g.dx;
  // Lengths are clamped to [0, kMaxCells] so the cell ranges below stay in int range.
  const float r = clamp_finite(rp.smoothing, 1e-3f, kMaxCells);
  const float band = clamp_finite(rp.band, 0.f, kMaxCells);
  const float e = std::max(0.f, r - 0.5f * clamp_finite(rp.particle_spacing, 0.f, kMaxCells));

  // Every loop below runs over the window: the particles' cells grown by
  // r + band + e + 2, clamped to the grid. Outside it no cell is covered or
  // within the band, so it is outside at distance >= band: the result is the
  // same as over the whole grid (every window-border cell reaches the domain
  // border through uncovered cells), at a cost that follows the body's size.
  const int pad = iceil(r + band + e) + 2;
  if (n == 0 || bi1_ < bi0_) {
    wi0_ = wj0_ = 0;
    wi1_ = wj1_ = -1;  // empty: everything is outside
  } else {
    wi0_ = std::max(0, bi0_ - pad);
    wi1_ = std::min(nx_ - 1, bi1_ + pad);
    wj0_ = std::max(0, bj0_ - pad);
    wj1_ = std::min(ny_ - 1, bj1_ + pad);
  }

  // 1. Distance to the union of disks: exact for the covered cells by stamping
  // (the squared distance first; the root once per cell).
  const float r2 = r * r;
  phi_u_.assign(ncell, kInf);
  for (int i = 0; i < n; ++i) {
    // The body is made of the resampled materials only: water or sand next to
    // a jelly is outside it, so the gap between them is never refilled.
    if (!eligible(p.material[i])) continue;
    Vec2 u = to_cells(p.x[i], g, inv_dx);
    float ux = clamp_finite(u.x, -r - 2.f, nx_ + r + 2.f),
          uy = clamp_finite(u.y, -r - 2.f, ny_ + r + 2.f);
    int i0 = std::max(0, iceil(ux - r - 0.5f));
    int i1 = std::min(nx_ - 1, ifloor(ux + r - 0.5f));
    int j0 = std::max(0, iceil(uy - r - 0.5f));
    int j1 = std::min(ny_ - 1, ifloor(uy + r - 0.5f));
    for (int cj = j0; cj <= j1; ++cj)
      for (int ci = i0; ci <= i1; ++ci) {
        float dxc = ci + 0.5f - u.x, dyc = cj + 0.5f - u.y;
        float d2 = dxc * dxc + dyc * dyc;
        float& phi = phi_u_[cj * nx_ + ci];
        if (d2 < phi) phi = d2;
      }
  }
  state_.assign(ncell, kOutside);
  for (int cj = wj0_; cj <= wj1_; ++cj)
    for (int ci = wi0_; ci <= wi1_; ++ci) {
      const int c = cj * nx_ + ci;
      if (phi_u_[c] < r2) {
        phi_u_[c] = std::sqrt(phi_u_[c]) - r;
        state_[c] = kCovered;
      } else {
        state_[c] = kUnknown;
      }
    }

  // Rim: uncovered cells with a covered 8-neighbour get their exact distance
  // (the nearest particle is within r + sqrt 2 of the centre).
  const int K = std::max(1, iceil(r + 1.41422f - 0.5f));
  for (int cj = wj0_; cj <= wj1_; ++cj)
    for (int ci = wi0_; ci <= wi1_; ++ci) {
      const int c = cj * nx_ + ci;
      if (state_[c] == kCovered) continue;
      bool rim = false;
      for (int dj = -1; dj <= 1 && !rim; ++dj)
        for (int di = -1; di <= 1; ++di) {
          int a = ci + di, b = cj + dj;
          if (a < 0 || b < 0 || a >= nx_ || b >= ny_) continue;
          if (state_[b * nx_ + a] == kCovered) {
            rim = true;
            break;
          }
        }
      if (!rim) continue;
      float best = kInf;
      for (int b = std::max(0, cj - K); b <= std::min(ny_ - 1, cj + K); ++b)
        for (int a = std::max(0, ci - K); a <= std::min(nx_ - 1, ci + K); ++a) {
          const int cc = b * nx_ + a;
          for (int k = cell_start_[cc]; k < cell_start_[cc + 1]; ++k) {
            if (!eligible(p.material[order_[k]])) continue;
            Vec2 u = to_cells(p.x[order_[k]], g, inv_dx);
            float dxc = ci + 0.5f - u.x, dyc = cj + 0.5f - u.y;
            float d2 = dxc * dxc + dyc * dyc;
            if (d2 < best) best = d2;
          }
        }
      phi_u_[c] = std::max(0.f, std::sqrt(best) - r);
    }

  // 2. Topology: flood the outside from the border through uncovered cells,
  // then classify the enclosed components by size.
  queue_.resize(ncell);
  int head = 0, tail = 0;
  auto seed_cell = [&](int c) {
    if (state_[c] == kUnknown) {
      state_[c] = kOutside;
      queue_[tail++] = c;
    }
  };
  for (int ci = wi0_; ci <= wi1_; ++ci) {
    seed_cell(wj0_ * nx_ + ci);
    seed_cell(wj1_ * nx_ + ci);
  }
  for (int cj = wj0_; cj <= wj1_; ++cj) {
    seed_cell(cj * nx_ + wi0_);
    seed_cell(cj * nx_ + wi1_);
  }
  auto flood = [&](uint8_t label) {
    while (head < tail) {
      const int c = queue_[head++];
      const int ci = c % nx_, cj = c / nx_;
      const int nb[4] = {ci > 0 ? c - 1 : -1, ci < nx_ - 1 ? c + 1 : -1, cj > 0 ? c - nx_ : -1,
                         cj < ny_ - 1 ? c + nx_ : -1};
      for (int q : nb)
        if (q >= 0 && state_[q] == kUnknown) {
          state_[q] = label;
          queue_[tail++] = q;
        }
    }
  };
  flood(kOutside);
  for (int c0 = 0; c0 < (wi1_ - wi0_ + 1) * (wj1_ - wj0_ + 1); ++c0) {
    const int c = (wj0_ + c0 / (wi1_ - wi0_ + 1)) * nx_ + wi0_ + c0 % (wi1_ - wi0_ + 1);
    if (state_[c] != kUnknown) continue;
    const int start = tail;
    state_[c] = kCavity;
    queue_[tail++] = c;
    flood(kCavity);
    if (tail - start > rp.max_cavity_cells)
      for (int k = start; k < tail; ++k) state_[queue_[k]] = kVoid;
  }

  // 3. Interface by marching squares on the cell centres.
  segments_.clear();
  auto psi = [&](int c) {
    switch (state_[c]) {
      case kCovered: return phi_u_[c];
      case kCavity: return -std::max(phi_u_[c], 1e-3f);
      default: return std::max(phi_u_[c], 0.f);
    }
  };
  for (int cj = wj0_; cj + 1 <= wj1_; ++cj)
    for (int ci = wi0_; ci + 1 <= wi1_; ++ci) {
      const int cs[4] = {cj * nx_ + ci, cj * nx_ + ci + 1, (cj + 1) * nx_ + ci + 1,
                         (cj + 1) * nx_ + ci};
      bool in[4];
      int nin = 0;
      for (int k = 0; k < 4; ++k) nin += (in[k] = inside_state(state_[cs[k]])) ? 1 : 0;
      if (nin == 0 || nin == 4) continue;
      const Vec2 pc[4] = {{ci + 0.5f, cj + 0.5f},
                          {ci + 1.5f, cj + 0.5f},
                          {ci + 1.5f, cj + 1.5f},
                          {ci + 0.5f, cj + 1.5f}};
      float v[4];
      for (int k = 0; k < 4; ++k) v[k] = psi(cs[k]);
      Vec2 cross_pt[4];
      int edges[4], ne = 0;
      for (int k = 0; k < 4; ++k) {
        const int k1 = (k + 1) & 3;
        if (in[k] == in[k1]) continue;
        const float den = v[k] - v[k1];
        float t = den != 0.f ? clampf(v[k] / den, 0.f, 1.f) : 0.5f;
        cross_pt[k] = pc[k] + t * (pc[k1] - pc[k]);
        edges[ne++] = k;
      }
      if (ne == 2) {
        segments_.push_back({cross_pt[edges[0]], cross_pt[edges[1]]});
      } else if (ne == 4) {
        // Saddle: the quad average decides which diagonal is connected.
        const bool centre_in = (v[0] + v[1] + v[2] + v[3]) < 0.f;
        if (centre_in == in[0]) {  // corners 0 and 2 joined: cut off corners 1 and 3
          segments_.push_back({cross_pt[0], cross_pt[1]});
          segments_.push_back({cross_pt[2], cross_pt[3]});
        } else {
          segments_.push_back({cross_pt[3], cross_pt[0]});
          segments_.push_back({cross_pt[1], cross_pt[2]});
        }
      }
    }

  // 4. Distance to the interface within the band, signed, shifted by the erosion.
  const float Rd = band + e;
  dist_.assign(ncell, Rd);
  for (const Segment& s : segments_) {
    float lox = std::min(s.a.x, s.b.x) - Rd, hix = std::max(s.a.x, s.b.x) + Rd;
    float loy = std::min(s.a.y, s.b.y) - Rd, hiy = std::max(s.a.y, s.b.y) + Rd;
    int i0 = std::max(0, iceil(lox - 0.5f));
    int i1 = std::min(nx_ - 1, ifloor(hix - 0.5f));
    int j0 = std::max(0, iceil(loy - 0.5f));
    int j1 = std::min(ny_ - 1, ifloor(hiy - 0.5f));
    for (int cj = j0; cj <= j1; ++cj)
      for (int ci = i0; ci <= i1; ++ci) {
        float d = dist_point_segment({ci + 0.5f, cj + 0.5f}, s.a, s.b);
        float& dd = dist_[cj * nx_ + ci];
        if (d < dd) dd = d;
      }
  }
  sdf_.assign(ncell,
              clampf(e + Rd, -band, band) * g.dx);  // outside the window: outside, beyond the band
  for (int cj = wj0_; cj <= wj1_; ++cj)
    for (int ci = wi0_; ci <= wi1_; ++ci) {
      const int c = cj * nx_ + ci;
      float s = inside_state(state_[c]) ? e - dist_[c] : e + dist_[c];
      sdf_[c] = clampf(s, -band, band) * g.dx;
    }
}

void Resampler::clear_new() {
  new_head_.assign(static_cast<size_t>(nx_) * static_cast<size_t>(ny_), -1);
  new_next_.clear();
  new_pos_.clear();
  hole_.assign(static_cast<size_t>(nx_) * static_cast<size_t>(ny_), 0);
}

float Resampler::sdf_at(Vec2 u) const {
  float ax = clampf(u.x - 0.5f, 0.f, static_cast<float>(nx_ - 1));
  float ay = clampf(u.y - 0.5f, 0.f, static_cast<float>(ny_ - 1));
  int i0 = std::min(static_cast<int>(ax), std::max(nx_ - 2, 0));
  int j0 = std::min(static_cast<int>(ay), std::max(ny_ - 2, 0));
  int i1 = std::min(i0 + 1, nx_ - 1), j1 = std::min(j0 + 1, ny_ - 1);
  float tx = ax - i0, ty = ay - j0;
  float s00 = sdf_[j0 * nx_ + i0], s10 = sdf_[j0 * nx_ + i1];
  float s01 = sdf_[j1 * nx_ + i0], s11 = sdf_[j1 * nx_ + i1];
  float a = s00 + tx * (s10 - s00), b = s01 + tx * (s11 - s01);
  return a + ty * (b - a);
}

bool Resampler::has_room(const MpmParticles& p, const GridSpec& g, Vec2 u, float sp) const {
  const float sp2 = sp * sp, inv_dx = 1.f / g.dx;
  const int a0 = std::max(0, ifloor(u.x - sp));
  const int a1 = std::min(nx_ - 1, ifloor(u.x + sp));
  const int b0 = std::max(0, ifloor(u.y - sp));
  const int b1 = std::min(ny_ - 1, ifloor(u.y + sp));
  for (int b = b0; b <= b1; ++b)
    for (int a = a0; a <= a1; ++a) {
      const int cc = b * nx_ + a;
      for (int k = cell_start_[cc]; k < cell_start_[cc + 1]; ++k)
        if (length2(to_cells(p.x[order_[k]], g, inv_dx) - u) < sp2) return false;
      for (int q = new_head_[cc]; q >= 0; q = new_next_[q])
        if (length2(new_pos_[q] - u) < sp2) return false;
    }
  return true;
}

int Resampler::count_holes(const MpmParticles& p, const GridSpec& g, const ResampleParams& rp) {
  // A hole: an interior cell with fewer than min_per_cell particles that has
  // room for one more (a point of a 4 x 4 lattice in the cell, inside, at
  // least insert_spacing from every particle): a cell of 3 particles whose
  // neighbours sit at the seeding spacing is not a hole.
  const float lim = -rp.inside_margin * g.dx;
  const float sp = clamp_finite(rp.insert_spacing, 0.f, kMaxCells);
  std::fill(hole_.begin(), hole_.end(), uint8_t{0});
  int holes = 0;
  for (int cj = wj0_; cj <= wj1_; ++cj)
    for (int ci = wi0_; ci <= wi1_; ++ci) {
      const int c = cj * nx_ + ci;
      if (!(sdf_[c] <= lim) || cell_count_[c] >= rp.min_per_cell) continue;
      // Only where a resampled material could give a particle (sand or water nearby: not a hole).
      bool donor = false;
      // (cells within the B-spline reach, 1.5 cells, of some point of this one)
      for (int b = std::max(0, cj - 2); b <= std::min(ny_ - 1, cj + 2) && !donor; ++b)
        for (int a = std::max(0, ci - 2); a <= std::min(nx_ - 1, ci + 2) && !donor; ++a)
          for (int k = cell_start_[b * nx_ + a]; k < cell_start_[b * nx_ + a + 1]; ++k)
            if (eligible(p.material[order_[k]])) {
              donor = true;
              break;
            }
      if (!donor) continue;
      bool room = false;
      for (int k = 0; k < 16 && !room; ++k) {
        const Vec2 u{ci + (static_cast<float>(k % 4) + 0.5f) * 0.25f,
                     cj + (static_cast<float>(k / 4) + 0.5f) * 0.25f};
        room = sdf_at(u) <= lim && has_room(p, g, u, sp);
      }
      if (room) ++holes;
      hole_[c] = room ? 1 : 0;
    }
  return holes;
}

// [SECTION] Merging -----------------------------------------------------------------

void Resampler::merge(MpmParticles& p, const GridSpec& g, const ResampleParams& rp) {
  const int n = static_cast<int>(p.size());
  merged_.assign(n, 0);
  const float md = clamp_finite(rp.merge_distance, 0.f, kMaxCells);
  const float md2 = md * g.dx * md * g.dx;
  const float inv_dx = 1.f / g.dx;
  int pairs = 0;
  for (int i = 0; i < n; ++i) {
    if (merged_[i] || !eligible(p.material[i])) continue;
    Vec2 u = to_cells(p.x[i], g, inv_dx);
    // Clamped into the domain: a particle outside it searches the border cells,
    // where its neighbours outside the domain are binned.
    float ux = clamp_finite(u.x, 0.f, static_cast<float>(nx_)),
          uy = clamp_finite(u.y, 0.f, static_cast<float>(ny_));
    int i0 = std::max(0, ifloor(ux - md));
    int i1 = std::min(nx_ - 1, ifloor(ux + md));
    int j0 = std::max(0, ifloor(uy - md));
    int j1 = std::min(ny_ - 1, ifloor(uy + md));
    int best = -1;
    float bestd2 = md2;
    for (int cj = j0; cj <= j1; ++cj)
      for (int ci = i0; ci <= i1; ++ci) {
        const int c = cj * nx_ + ci;
        for (int k = cell_start_[c]; k < cell_start_[c + 1]; ++k) {
          const int j = order_[k];
          if (j == i || merged_[j] || p.material[j] != p.material[i]) continue;
          float d2 = length2(p.x[j] - p.x[i]);
          if (d2 < bestd2 || (best >= 0 && d2 == bestd2 && j < best)) {
            bestd2 = d2;
            best = j;
          }
        }
      }
    if (best < 0) continue;
    const int s = p.id[i] < p.id[best] ? i : best, o = s == i ? best : i;
    const double ma = p.mass[s], mb = p.mass[o], M = ma + mb;
    const double wa = M > 0.0 ? ma / M : 0.5, wb = M > 0.0 ? mb / M : 0.5;
    auto mix = [&](float a, float b) { return static_cast<float>(wa * a + wb * b); };
    auto mix2 = [&](Vec2 a, Vec2 b) { return Vec2{mix(a.x, b.x), mix(a.y, b.y)}; };
    auto mixm = [&](const Mat2& a, const Mat2& b) {
      return Mat2{mix(a.a00, b.a00), mix(a.a01, b.a01), mix(a.a10, b.a10), mix(a.a11, b.a11)};
    };
    // Velocity as momentum / mass in double (the same weights: exact to rounding).
    p.x[s] = mix2(p.x[s], p.x[o]);
    p.v[s] = mix2(p.v[s], p.v[o]);
    p.C[s] = mixm(p.C[s], p.C[o]);
    if (!p.poly
             .empty())  // PolyPIC's modes, like C (unit-norm modes: their energy m/2 sum |c_r|^2 cannot rise)
      for (int r = 0; r < 6; ++r) p.poly[s].c[r] = mix2(p.poly[s].c[r], p.poly[o].c[r]);
    FMean fm;
    fm.add(wa, p.F[s]);
    fm.add(wb, p.F[o]);
    p.F[s] = fm.mean(1.0);
    p.J[s] = mix(p.J[s], p.J[o]);
    p.Jp[s] = mix(p.Jp[s], p.Jp[o]);
    p.temp[s] = mix(p.temp[s], p.temp[o]);  // heat: mass-weighted (equal heat capacities)
    p.melt[s] = mix(p.melt[s], p.melt[o]);
    p.vwater[s] = static_cast<float>(static_cast<double>(p.vwater[s]) + p.vwater[o]);
    p.mass[s] = static_cast<float>(M);
    p.vol0[s] = static_cast<float>(static_cast<double>(p.vol0[s]) + p.vol0[o]);
    p.fext[s] = p.fext[s] + p.fext[o];
    merged_[s] = 1;
    merged_[o] = 2;
    report_.retired_ids.push_back(p.id[o]);
    report_.merged_ids.push_back(p.id[s]);
    ++pairs;
  }
  report_.merged = pairs;
  if (pairs == 0) return;
  p.for_each_array([this](auto& a) { compact(a, merged_); });
}

// [SECTION] Insertion ---------------------------------------------------------------

void Resampler::insert(MpmParticles& p, const GridSpec& g,
                       const std::vector<MaterialParams>& materials, const ResampleParams& rp,
                       uint64_t seed) {
  const int n0 = static_cast<int>(p.size());
  const float dx = g.dx, inv_dx = 1.f / dx;
  const float lim = -rp.inside_margin * dx;
  const float sp = clamp_finite(rp.insert_spacing, 0.f, kMaxCells);
  const int target = std::max(rp.target_per_cell, rp.min_per_cell);
  const size_t nmat = materials.size();
  // A particle gives at most a third of its mass per insertion and only while
  // its rest volume is at least half a seeded particle's (spacing
  // particle_spacing cells), so no particle is drained to a sliver: repeated
  // insertions had left a cookie particle at 1/300 of its mass, whose stress
  // on nearly empty nodes blew the scene up at grid x2.
  const float seeded = clamp_finite(rp.particle_spacing, 0.f, kMaxCells) * dx;
  const float vol_floor = 0.5f * seeded * seeded;
  clear_new();

  // Row-major over the window: the same cell order (so the same new particles) as over the grid.
  for (int cj = wj0_; cj <= wj1_; ++cj)
    for (int ci = wi0_; ci <= wi1_; ++ci) {
      const int c = cj * nx_ + ci;
      if (!(sdf_[c] <= lim) || cell_count_[c] >= rp.min_per_cell) continue;
      uint64_t rng = seed ^ (static_cast<uint64_t>(c) + 1u) * 0xD1B54A32D192ED03ull;
      splitmix64(rng);
      int placed = 0;
      // Random darts first; then the 4 x 4 lattice the hole count tests for
      // room, so a cell counted as a hole always gets a particle when it can.
      const int darts = std::max(rp.darts_per_cell, 0);
      for (int dart = 0; dart < darts + 16; ++dart) {
        if (placed >= rp.max_insert_per_cell || cell_count_[c] + placed >= target) break;
        float rx, ry;
        if (dart < darts) {
          rx = uniform01(rng);
          ry = uniform01(rng);
        } else {
          const int k = dart - darts;
          rx = (static_cast<float>(k % 4) + 0.5f) * 0.25f;
          ry = (static_cast<float>(k / 4) + 0.5f) * 0.25f;
        }
        const Vec2 u{ci + rx, cj + ry};
        if (!(sdf_at(u) <= lim)) continue;

        // Poisson-disk test against the existing and the new particles.
        if (!has_room(p, g, u, sp)) continue;

        // Donors: existing particles within the quadratic B-spline support.
        donor_idx_.clear();
        donor_w_.clear();
        // The new particle's material: the one with the largest summed kernel
        // weight here (by count, not mass, so a dense neighbour body does not
        // claim a hole in a light one).
        mat_w_.assign(nmat, 0.f);
        const int d0 = std::max(0, ifloor(u.x - 1.5f));
        const int d1 = std::min(nx_ - 1, ifloor(u.x + 1.5f));
        const int e0 = std::max(0, ifloor(u.y - 1.5f));
        const int e1 = std::min(ny_ - 1, ifloor(u.y + 1.5f));
        for (int b = e0; b <= e1; ++b)
          for (int a = d0; a <= d1; ++a) {
            const int cc = b * nx_ + a;
            for (int k = cell_start_[cc]; k < cell_start_[cc + 1]; ++k) {
              const int j = order_[k];
              if (p.material[j] >= nmat || !(p.mass[j] > 0.f)) continue;
              Vec2 d = to_cells(p.x[j], g, inv_dx) - u;
              float w = bspline2(std::fabs(d.x)) * bspline2(std::fabs(d.y));
              if (!(w > 0.f)) continue;
              mat_w_[p.material[j]] += w;
              if (p.vol0[j] < vol_floor)
                continue;  // drained enough: a donor keeps a third of a seeded particle
              donor_idx_.push_back(j);
              donor_w_.push_back(w);
            }
          }
        if (donor_idx_.empty()) continue;
        size_t best_mat = 0;
        for (size_t m = 1; m < nmat; ++m)
          if (mat_w_[m] > mat_w_[best_mat]) best_mat = m;
        // A hole among water, sand or snow is theirs: no jelly or viscoplastic
        // particle is put there (an inserted jelly particle amid splashing
        // water inverted and blew mpm99 up).
        if (!eligible(static_cast<uint8_t>(best_mat))) continue;
        const uint8_t mat = static_cast<uint8_t>(best_mat);
        double W = 0.0;
        float wmax = 0.f;
        for (size_t k = 0; k < donor_idx_.size(); ++k)
          if (p.material[donor_idx_[k]] == mat) {
            W += donor_w_[k];
            wmax = std::max(wmax, donor_w_[k]);
          }
        if (!(W > 0.0)) continue;
        const double f = std::min(1.0 / W, 1.0 / (3.0 * wmax));

        // Take dm_k = f w_k m_k; the exact float difference is what moves.
        double M = 0.0, V = 0.0, px = 0.0, py = 0.0, J = 0.0, Jp = 0.0, Tm = 0.0, melt = 0.0,
               Wv = 0.0;
        double Cs[4] = {0, 0, 0, 0};
        FMean Fs;
        int grp_src = -1;
        double grp_dm = -1.0;
        for (size_t k = 0; k < donor_idx_.size(); ++k) {
          const int j = donor_idx_[k];
          if (p.material[j] != mat) continue;
          const double fw = f * donor_w_[k];
          const float m_old = p.mass[j], v_old = p.vol0[j];
          const float m_new = static_cast<float>(m_old - fw * m_old);
          const float vol_new = static_cast<float>(v_old - fw * v_old);
          const double dm = static_cast<double>(m_old) - m_new;
          if (!(dm > 0.0)) continue;
          p.mass[j] = m_new;
          p.vol0[j] = vol_new;
          // Virtual water (heat, sim/mpm/heat.h) leaves with its share of the mass.
          const float w_old = p.vwater[j],
                      w_new = std::min(m_new, static_cast<float>(w_old - fw * w_old));
          p.vwater[j] = w_new;
          Wv += static_cast<double>(w_old) - w_new;
          M += dm;
          V += static_cast<double>(v_old) - vol_new;
          px += dm * p.v[j].x;
          py += dm * p.v[j].y;
          J += dm * p.J[j];
          Jp += dm * p.Jp[j];
          Tm += dm * p.temp[j];
          melt += dm * p.melt[j];
          const Mat2& Cj = p.C[j];
          const Mat2& Fj = p.F[j];
          Cs[0] += dm * Cj.a00;
          Cs[1] += dm * Cj.a01;
          Cs[2] += dm * Cj.a10;
          Cs[3] += dm * Cj.a11;
          Fs.add(dm, Fj);
          if (dm > grp_dm || (dm == grp_dm && j < grp_src)) {
            grp_dm = dm;
            grp_src = j;
          }
        }
        if (!(M > 0.0)) continue;  // nothing moved (masses too small to split)
        const double im = 1.0 / M;
        auto fl = [](double v) { return static_cast<float>(v); };
        // Every array grows by one (geometrically, through push_back), then the
        // new slot is written: a per-particle array added later cannot be missed.
        const uint16_t grp = p.group[grp_src];
        const size_t q = p.size();
        p.for_each_array([](auto& a) { a.emplace_back(); });
        p.x[q] = {g.origin.x + u.x * dx, g.origin.y + u.y * dx};
        p.v[q] = {fl(px * im), fl(py * im)};
        p.C[q] = Mat2{fl(Cs[0] * im), fl(Cs[1] * im), fl(Cs[2] * im), fl(Cs[3] * im)};
        p.F[q] = Fs.mean(im);
        p.J[q] = fl(J * im);
        p.Jp[q] = fl(Jp * im);
        p.mass[q] = fl(M);
        p.vol0[q] = fl(V);
        p.material[q] = mat;
        p.group[q] = grp;
        p.id[q] = p.next_id;
        p.fext[q] = Vec2{};
        p.temp[q] =
            fl(Tm * im);  // heat (sim/mpm/heat.h): the donors' mean temperature and their water
        p.melt[q] = fl(melt * im);
        p.vwater[q] = std::min(p.mass[q], fl(Wv));
        report_.new_ids.push_back(p.next_id);
        ++p.next_id;

        new_pos_.push_back(u);
        new_next_.push_back(new_head_[c]);
        new_head_[c] = static_cast<int>(new_pos_.size()) - 1;
        ++placed;
      }
      cell_count_[c] += placed;
    }
  report_.inserted = static_cast<int>(p.size()) - n0;
}

// [SECTION] Public entry points -----------------------------------------------------

const ResampleReport& Resampler::run(MpmParticles& p, const GridSpec& g,
                                     const std::vector<MaterialParams>& materials,
                                     const ResampleParams& rp, uint64_t seed) {
  const auto t0 = std::chrono::steady_clock::now();
  report_.inserted = report_.merged = 0;
  report_.interior_holes_before = report_.interior_holes_after = 0;
  report_.new_ids.clear();
  report_.retired_ids.clear();
  report_.merged_ids.clear();
  set_materials(&materials);
  if (g.nx > 0 && g.ny > 0 && g.dx > 0.f) {
    bucket(p, g);
    if (rp.merge_distance > 0.f) {
      merge(p, g, rp);
      if (report_.merged > 0) bucket(p, g);
    }
    compute_sdf(p, g, rp);
    clear_new();
    report_.interior_holes_before = count_holes(p, g, rp);
    insert(p, g, materials, rp, seed);
    report_.interior_holes_after = count_holes(p, g, rp);
  }
  report_.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return report_;
}

int Resampler::count_interior_holes(const MpmParticles& p, const GridSpec& g,
                                    const ResampleParams& rp) {
  set_materials(nullptr);
  return count_now(p, g, rp);
}

int Resampler::count_interior_holes(const MpmParticles& p, const GridSpec& g,
                                    const std::vector<MaterialParams>& materials,
                                    const ResampleParams& rp) {
  set_materials(&materials);
  return count_now(p, g, rp);
}

int Resampler::count_now(const MpmParticles& p, const GridSpec& g, const ResampleParams& rp) {
  if (g.nx <= 0 || g.ny <= 0 || !(g.dx > 0.f)) return 0;
  bucket(p, g);
  compute_sdf(p, g, rp);
  clear_new();
  return count_holes(p, g, rp);
}

void Resampler::set_materials(const std::vector<MaterialParams>* materials) {
  all_eligible_ = materials == nullptr;
  mat_ok_.assign(materials ? materials->size() : 0, 0);
  for (size_t m = 0; m < mat_ok_.size(); ++m) {
    const int t = static_cast<int>((*materials)[m].type);
    mat_ok_[m] =
        t >= 0 && t < kMaterialTypeCount && material_kind((*materials)[m].type).resampled ? 1 : 0;
  }
}

size_t Resampler::scratch_bytes() const {
  return cap_bytes(cell_count_) + cap_bytes(cell_start_) + cap_bytes(order_) + cap_bytes(cell_of_) +
         cap_bytes(phi_u_) + cap_bytes(state_) + cap_bytes(queue_) + cap_bytes(segments_) +
         cap_bytes(dist_) + cap_bytes(sdf_) + cap_bytes(merged_) + cap_bytes(new_head_) +
         cap_bytes(hole_) + cap_bytes(new_next_) + cap_bytes(new_pos_) + cap_bytes(donor_idx_) +
         cap_bytes(donor_w_) + cap_bytes(mat_w_) + cap_bytes(report_.new_ids) +
         cap_bytes(report_.retired_ids) + cap_bytes(report_.merged_ids);
}

}  // namespace ps
