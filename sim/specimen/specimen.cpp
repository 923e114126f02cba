#include "sim/specimen/specimen.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include "sim/core/atomic_write.h"
#include "sim/io/p4.h"
#include "sim/mpm/mpm_particles.h"

namespace ps {

// [SECTION] Images -------------------------------------------------------------------

// [SECTION] Mask -----------------------------------------------------------------------

size_t Mask::count() const {
  size_t n = 0;
  for (uint8_t v : inside) n += v != 0;
  return n;
}

Mask make_mask(const Image& image, const MaskParams& params) {
  Mask m;
  m.width = image.width;
  m.height = image.height;
  m.inside.assign(static_cast<size_t>(m.width) * m.height, 0);
  for (int row = 0; row < image.height; ++row)
    for (int c = 0; c < image.width; ++c) {
      const uint8_t* px = image.at(c, row);
      bool in;
      if (params.rule == MaskRule::Dark) {
        // Integer luminance (ITU-R BT.601 weights), exact for grey.
        int lum1000 = 299 * px[0] + 587 * px[1] + 114 * px[2];
        in = lum1000 < params.threshold * 1000;
      } else {
        in = false;
        for (int k = 0; k < 3; ++k)
          in = in || std::abs(px[k] - params.background[k]) > params.tolerance;
      }
      if (params.invert) in = !in;
      const int j = image.height - 1 - row;
      m.inside[static_cast<size_t>(j) * m.width + c] = in ? 1 : 0;
    }
  return m;
}

// [SECTION] Contours (marching squares) -------------------------------------------------
//
// Lattice point (i, j) is the centre of pixel column i, y-up row j, at
// (i + 0.5, j + 0.5); points outside the image are outside. Every pair of
// 4-neighbours (p inside, q outside) gives one contour point m = (p + q) / 2
// with direction d = rot(q - p) = (u.y, -u.x) for u = q - p, which keeps p on
// the right. Each point leads into one lattice cell; inside that cell it is
// joined to the cell's outgoing point (in saddle cells, the one that cuts off
// the outside corner next to it, so diagonal inside pixels stay joined).

namespace {

struct Lattice {
  const Mask& m;
  int W, H;       // cells span i in [-1, W-1], j in [-1, H-1]
  int hx, hy;     // horizontal crossings: lattice edge (i,j)-(i+1,j), i in [-1, W-1], j in [0, H-1]
  size_t hcount;  // vertical crossings: (i,j)-(i,j+1), i in [0, W-1], j in [-1, H-1]
  explicit Lattice(const Mask& mask) : m(mask), W(mask.width), H(mask.height) {
    hx = W + 1;
    hy = H;
    hcount = static_cast<size_t>(hx) * hy;
  }
  bool in(int i, int j) const { return m.at(i, j); }
  size_t hid(int i, int j) const { return static_cast<size_t>(j) * hx + (i + 1); }
  size_t vid(int i, int j) const { return hcount + static_cast<size_t>(j + 1) * W + i; }
  size_t total() const { return hcount + static_cast<size_t>(H + 1) * W; }
};

}  // namespace

std::vector<Contour> trace_contours(const Mask& mask) {
  std::vector<Contour> out;
  if (mask.width <= 0 || mask.height <= 0) return out;
  Lattice L(mask);
  const size_t N = L.total();
  const uint32_t kNone = 0xFFFFFFFFu;
  std::vector<uint32_t> next(N, kNone);
  std::vector<Vec2> pos(N);
  std::vector<uint8_t> is_crossing(N, 0);

  // Crossing at lattice edge between a=(ai,aj) and b=(bi,bj) (b = a + unit step).
  // Returns the cell it enters, or false when the edge is not a crossing.
  auto crossing_dir = [&](int ai, int aj, int bi, int bj, int& di, int& dj) {
    bool ia = L.in(ai, aj), ib = L.in(bi, bj);
    if (ia == ib) return false;
    int pi = ia ? ai : bi, pj = ia ? aj : bj;  // inside
    int qi = ia ? bi : ai, qj = ia ? bj : aj;  // outside
    int ux = qi - pi, uy = qj - pj;
    di = uy;
    dj = -ux;
    return true;
  };

  // Cell (i, j): corners BL (i,j), BR (i+1,j), TR (i+1,j+1), TL (i,j+1);
  // edges bottom h(i,j), right v(i+1,j), top h(i,j+1), left v(i,j).
  for (int j = -1; j < L.H; ++j)
    for (int i = -1; i < L.W; ++i) {
      const bool c[4] = {L.in(i, j), L.in(i + 1, j), L.in(i + 1, j + 1), L.in(i, j + 1)};
      // Edge k joins corner k and corner k+1.
      const int ci[4] = {i, i + 1, i + 1, i}, cj[4] = {j, j, j + 1, j + 1};
      size_t eid[4];
      bool valid[4];
      valid[0] = j >= 0 && j < L.H;  // bottom: horizontal lattice edge at row j
      valid[2] = j + 1 >= 0 && j + 1 < L.H;
      valid[1] = i + 1 >= 0 && i + 1 < L.W;  // right: vertical lattice edge at column i+1
      valid[3] = i >= 0 && i < L.W;
      eid[0] = valid[0] ? L.hid(i, j) : 0;
      eid[2] = valid[2] ? L.hid(i, j + 1) : 0;
      eid[1] = valid[1] ? L.vid(i + 1, j) : 0;
      eid[3] = valid[3] ? L.vid(i, j) : 0;
      int enter[4], exit_[4];
      int ne = 0, nx = 0;
      for (int k = 0; k < 4; ++k) {
        const int k1 = (k + 1) & 3;
        if (c[k] == c[k1]) continue;
        int di = 0, dj = 0;
        crossing_dir(ci[k], cj[k], ci[k1], cj[k1], di, dj);
        // Outward normal of edge k of this cell: bottom (0,-1), right (1,0), top (0,1), left (-1,0).
        static const int on[4][2] = {{0, -1}, {1, 0}, {0, 1}, {-1, 0}};
        const bool leaving = di * on[k][0] + dj * on[k][1] > 0;
        if (leaving)
          exit_[nx++] = k;
        else
          enter[ne++] = k;
        if (valid[k]) {
          is_crossing[eid[k]] = 1;
          pos[eid[k]] = Vec2{0.5f * (ci[k] + ci[k1]) + 0.5f, 0.5f * (cj[k] + cj[k1]) + 0.5f};
        }
      }
      if (ne == 1 && nx == 1) {
        next[eid[enter[0]]] = static_cast<uint32_t>(eid[exit_[0]]);
      } else if (ne == 2 && nx == 2) {
        for (int q = 0; q < 2; ++q) {
          const int k = enter[q];
          // Cut off the outside corner next to edge k.
          const int kx = !c[(k + 1) & 3] ? (k + 1) & 3 : (k + 3) & 3;
          next[eid[k]] = static_cast<uint32_t>(eid[kx]);
        }
      }
    }

  std::vector<uint8_t> seen(N, 0);
  for (size_t s = 0; s < N; ++s) {
    if (!is_crossing[s] || seen[s]) continue;
    Contour ct;
    size_t e = s;
    while (!seen[e]) {
      seen[e] = 1;
      ct.points.push_back(pos[e]);
      if (next[e] == kNone) break;  // cannot happen for a closed lattice; guard anyway
      e = next[e];
    }
    ct.hole = signed_area(ct) > 0.0;
    out.push_back(std::move(ct));
  }
  return out;
}

double signed_area(const Contour& c) {
  double a = 0.0;
  const size_t n = c.points.size();
  for (size_t k = 0; k < n; ++k) {
    const Vec2 p = c.points[k], q = c.points[(k + 1) % n];
    a += static_cast<double>(p.x) * q.y - static_cast<double>(q.x) * p.y;
  }
  return 0.5 * a;
}

// [SECTION] Contour index ------------------------------------------------------------------

ContourIndex::ContourIndex(const std::vector<Contour>& contours, float cell)
    : c_(contours), cell_(cell) {
  Vec2 lo{std::numeric_limits<float>::max(), std::numeric_limits<float>::max()};
  Vec2 hi{-lo.x, -lo.y};
  for (const Contour& c : c_)
    for (Vec2 p : c.points) {
      lo.x = std::min(lo.x, p.x);
      lo.y = std::min(lo.y, p.y);
      hi.x = std::max(hi.x, p.x);
      hi.y = std::max(hi.y, p.y);
      ++total_;
    }
  if (total_ == 0) return;
  min_ = lo;
  nx_ = static_cast<int>(std::floor((hi.x - lo.x) / cell_)) + 1;
  ny_ = static_cast<int>(std::floor((hi.y - lo.y) / cell_)) + 1;
  std::vector<uint32_t> count(static_cast<size_t>(nx_) * ny_ + 1, 0);
  auto bucket = [&](Vec2 p) {
    int bx = std::min(nx_ - 1, static_cast<int>((p.x - min_.x) / cell_));
    int by = std::min(ny_ - 1, static_cast<int>((p.y - min_.y) / cell_));
    return static_cast<size_t>(by) * nx_ + bx;
  };
  for (const Contour& c : c_)
    for (Vec2 p : c.points) ++count[bucket(p) + 1];
  for (size_t b = 1; b < count.size(); ++b) count[b] += count[b - 1];
  start_ = count;
  items_.resize(total_);
  std::vector<uint32_t> cur(count.begin(), count.end() - 1);
  for (size_t ci = 0; ci < c_.size(); ++ci)
    for (size_t k = 0; k < c_[ci].points.size(); ++k)
      items_[cur[bucket(c_[ci].points[k])]++] = {static_cast<int>(ci), static_cast<int>(k)};
}

ContourIndex::Nearest ContourIndex::nearest(Vec2 p) const {
  Nearest best;
  if (total_ == 0) return best;
  best.d2 = std::numeric_limits<double>::infinity();
  const int cx = static_cast<int>(std::floor((p.x - min_.x) / cell_));
  const int cy = static_cast<int>(std::floor((p.y - min_.y) / cell_));
  // Cells at Chebyshev ring k; after ring k every unvisited point is at least
  // (k) * cell away (p lies inside its own cell).
  const int kmax =
      std::max({std::abs(cx), std::abs(cx - nx_ + 1), std::abs(cy), std::abs(cy - ny_ + 1)});
  for (int k = 0; k <= kmax; ++k) {
    for (int by = cy - k; by <= cy + k; ++by) {
      if (by < 0 || by >= ny_) continue;
      const bool edge_row = by == cy - k || by == cy + k;
      for (int bx = cx - k; bx <= cx + k; bx += edge_row ? 1 : 2 * k) {
        if (bx >= 0 && bx < nx_) {
          const size_t b = static_cast<size_t>(by) * nx_ + bx;
          for (uint32_t s = start_[b]; s < start_[b + 1]; ++s) {
            const auto& it = items_[s];
            const Vec2 q = c_[static_cast<size_t>(it.first)].points[static_cast<size_t>(it.second)];
            const double dx = static_cast<double>(q.x) - p.x, dy = static_cast<double>(q.y) - p.y;
            const double d2 = dx * dx + dy * dy;
            if (d2 < best.d2 ||
                (d2 == best.d2 && (it.first < best.contour ||
                                   (it.first == best.contour && it.second < best.index)))) {
              best.d2 = d2;
              best.contour = it.first;
              best.index = it.second;
            }
          }
        }
        if (k == 0) break;
      }
    }
    const double reach = static_cast<double>(k) * cell_;
    if (best.contour >= 0 && best.d2 < reach * reach) break;
  }
  return best;
}

bool ContourIndex::inside_nearest(Vec2 p, bool oriented) const {
  const Nearest nb = nearest(p);
  if (nb.contour < 0) return false;
  const std::vector<Vec2>& pts = c_[static_cast<size_t>(nb.contour)].points;
  const size_t n = pts.size(), i = static_cast<size_t>(nb.index);
  const Vec2 a = pts[i], prev = pts[(i + n - 1) % n], next = pts[(i + 1) % n];
  // B1 = A_i - A_{i-1}, B2 = A_{i+1} - A_i (double; coordinates are exact halves).
  const double b1x = static_cast<double>(a.x) - prev.x, b1y = static_cast<double>(a.y) - prev.y;
  const double b2x = static_cast<double>(next.x) - a.x, b2y = static_cast<double>(next.y) - a.y;
  // (R B1)^T B2 with R = [[0, 1], [-1, 0]]: R B1 = (B1y, -B1x).
  const double turn = b1y * b2x - b1x * b2y;
  const double dx = static_cast<double>(p.x) - a.x, dy = static_cast<double>(p.y) - a.y;
  const double s1 = b1y * dx - b1x * dy;
  const double s2 = b2y * dx - b2x * dy;
  // As printed, "(R B1)^T B2 <= 0" labels a vertex convex. With material on
  // the right (the orientation under which s_k >= 0 means inside), that sign
  // is a left turn, i.e. a reflex vertex; `oriented` swaps the branches.
  const bool all_k = oriented ? turn > 0.0 : turn <= 0.0;
  if (all_k) return s1 >= 0.0 && s2 >= 0.0;  // "convex": for all k
  return s1 >= 0.0 || s2 >= 0.0;             // "concave": for some k
}

int ContourIndex::winding(Vec2 p) const {
  int wn = 0;
  const double px = p.x, py = p.y;
  for (const Contour& c : c_) {
    const size_t n = c.points.size();
    for (size_t k = 0; k < n; ++k) {
      const Vec2 a = c.points[k], b = c.points[(k + 1) % n];
      const double ay = a.y, by = b.y;
      if (ay <= py && by > py) {
        const double x = a.x + (py - ay) * (static_cast<double>(b.x) - a.x) / (by - ay);
        if (x > px) ++wn;
      } else if (ay > py && by <= py) {
        const double x = a.x + (py - ay) * (static_cast<double>(b.x) - a.x) / (by - ay);
        if (x > px) --wn;
      }
    }
  }
  return wn;
}

std::vector<uint8_t> ContourIndex::inside_winding_many(const std::vector<Vec2>& pts) const {
  std::vector<uint8_t> out(pts.size(), 0);
  std::vector<uint32_t> order(pts.size());
  for (size_t i = 0; i < pts.size(); ++i) order[i] = static_cast<uint32_t>(i);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return pts[a].y < pts[b].y; });
  std::vector<std::pair<double, int>> xs;  // crossing x, +1 up / -1 down
  std::vector<int> suffix;
  size_t s = 0;
  while (s < order.size()) {
    const double py = pts[order[s]].y;
    size_t e = s;
    while (e < order.size() && pts[order[e]].y == pts[order[s]].y) ++e;
    xs.clear();
    for (const Contour& c : c_) {
      const size_t n = c.points.size();
      for (size_t k = 0; k < n; ++k) {
        const Vec2 a = c.points[k], b = c.points[(k + 1) % n];
        const double ay = a.y, by = b.y;
        int dir = 0;
        if (ay <= py && by > py)
          dir = 1;
        else if (ay > py && by <= py)
          dir = -1;
        if (!dir) continue;
        xs.emplace_back(a.x + (py - ay) * (static_cast<double>(b.x) - a.x) / (by - ay), dir);
      }
    }
    std::sort(xs.begin(), xs.end());
    suffix.assign(xs.size() + 1, 0);
    for (size_t k = xs.size(); k-- > 0;) suffix[k] = suffix[k + 1] + xs[k].second;
    for (size_t q = s; q < e; ++q) {
      const double px = pts[order[q]].x;
      // First crossing strictly right of px.
      size_t k = static_cast<size_t>(std::upper_bound(xs.begin(), xs.end(), std::make_pair(px, 2)) -
                                     xs.begin());
      out[order[q]] = suffix[k] != 0;
    }
    s = e;
  }
  return out;
}

// [SECTION] Specimen ----------------------------------------------------------------------------

std::vector<Vec2> grid_points(int width, int height, const GridParams& grid) {
  std::vector<Vec2> pts;
  const double step = 2.0 * grid.radius_px;
  if (!(step > 0.0) || width <= 0 || height <= 0) return pts;
  const double ox = grid.origin_px.x, oy = grid.origin_px.y;
  // i, j >= 0 with the centre inside [0, W) x [0, H).
  const long nx = ox < width ? static_cast<long>(std::floor((width - ox) / step - 1e-9)) + 1 : 0;
  const long ny = oy < height ? static_cast<long>(std::floor((height - oy) / step - 1e-9)) + 1 : 0;
  if (nx <= 0 || ny <= 0) return pts;
  pts.reserve(static_cast<size_t>(nx) * ny);
  for (long j = ny - 1; j >= 0; --j)  // top row first
    for (long i = 0; i < nx; ++i)
      pts.push_back(Vec2{static_cast<float>(ox + step * i), static_cast<float>(oy + step * j)});
  return pts;
}

void pixel_under(int width, int height, Vec2 p, int& column, int& row) {
  column = std::min(width - 1, std::max(0, static_cast<int>(std::floor(p.x))));
  const int j = std::min(height - 1, std::max(0, static_cast<int>(std::floor(p.y))));
  row = height - 1 - j;
}

namespace {

std::vector<uint8_t> classify(const std::vector<Vec2>& pts, const ContourIndex& index,
                              InsideTest test) {
  if (test == InsideTest::Winding) return index.inside_winding_many(pts);
  const bool oriented = test == InsideTest::NearestContourOriented;
  std::vector<uint8_t> in(pts.size());
  for (size_t i = 0; i < pts.size(); ++i) in[i] = index.inside_nearest(pts[i], oriented) ? 1 : 0;
  return in;
}

}  // namespace

Specimen make_specimen(const Image& image, const Mask& mask, const std::vector<Contour>& contours,
                       const SpecimenParams& params) {
  (void)mask;
  Specimen s;
  s.image_width = image.width;
  s.image_height = image.height;
  s.radius_px = params.grid.radius_px;
  s.metres_per_pixel = params.metres_per_pixel;
  s.origin = params.origin;
  const std::vector<Vec2> pts = grid_points(image.width, image.height, params.grid);
  ContourIndex index(contours);
  const std::vector<uint8_t> in = classify(pts, index, params.test);
  for (size_t k = 0; k < pts.size(); ++k) {
    if (!in[k]) continue;
    s.id.push_back(static_cast<uint32_t>(s.id.size() + 1));
    s.pos_px.push_back(pts[k]);
    s.pos.push_back(params.origin + params.metres_per_pixel * pts[k]);
    int c, r;
    pixel_under(image.width, image.height, pts[k], c, r);
    const uint8_t* px = image.at(c, r);
    s.rgb.push_back({px[0], px[1], px[2]});
  }
  return s;
}

Specimen make_specimen(const Image& image, const SpecimenParams& params) {
  Mask mask = make_mask(image, params.mask);
  return make_specimen(image, mask, trace_contours(mask), params);
}

std::vector<Disagreement> inside_test_disagreements(const Mask& mask,
                                                    const std::vector<Contour>& contours,
                                                    const GridParams& grid, InsideTest test) {
  std::vector<Disagreement> out;
  const std::vector<Vec2> pts = grid_points(mask.width, mask.height, grid);
  ContourIndex index(contours);
  const std::vector<uint8_t> w = classify(pts, index, InsideTest::Winding);
  const std::vector<uint8_t> nc = classify(pts, index, test);
  for (size_t k = 0; k < pts.size(); ++k)
    if (w[k] != nc[k]) out.push_back(Disagreement{pts[k], nc[k] != 0, w[k] != 0});
  return out;
}

// [SECTION] Colours and groups -------------------------------------------------------------

std::string color_csv_text(const Specimen& s) {
  std::string out = "ID, R, G, B\n";
  char buf[64];
  for (size_t i = 0; i < s.size(); ++i) {
    out += std::to_string(s.id[i]);
    for (int c = 0; c < 3; ++c) {
      // Single-precision c / 255 printed with %g: what a C++ stream writes for a float.
      std::snprintf(buf, sizeof buf, ",%g",
                    static_cast<double>(s.rgb[i][static_cast<size_t>(c)] / 255.f));
      out += buf;
    }
    out += '\n';
  }
  return out;
}

void save_color_csv(const Specimen& s, const std::string& path) {
  write_file_atomic(path, color_csv_text(s));
}

std::vector<uint32_t> select_bright(const Specimen& s, int t) {
  std::vector<uint32_t> ids;
  for (size_t i = 0; i < s.size(); ++i)
    if (s.rgb[i][0] > t && s.rgb[i][1] > t && s.rgb[i][2] > t) ids.push_back(s.id[i]);
  return ids;
}

std::vector<uint32_t> select_color_range(const Specimen& s, const uint8_t lo[3],
                                         const uint8_t hi[3]) {
  std::vector<uint32_t> ids;
  for (size_t i = 0; i < s.size(); ++i) {
    bool ok = true;
    for (size_t c = 0; c < 3; ++c) ok = ok && s.rgb[i][c] >= lo[c] && s.rgb[i][c] <= hi[c];
    if (ok) ids.push_back(s.id[i]);
  }
  return ids;
}

SgfGroup make_group(const std::string& name, const std::vector<uint32_t>& ids,
                    const float color[3]) {
  SgfGroup g;
  g.name = name;
  for (int c = 0; c < 3; ++c) g.color[c] = color[c];
  g.ids = ids;
  return g;
}

// [SECTION] Conversions ----------------------------------------------------------------------

uint32_t append_to_mpm(const Specimen& s, MpmParticles& p, float density, uint8_t material,
                       uint16_t group) {
  const uint32_t offset = p.next_id - 1u;  // above every ID ever used
  const float side = 2.f * s.radius();
  const float vol = side * side;
  p.reserve(p.size() + s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    size_t k = p.add(s.pos[i], Vec2{}, density * vol, vol, material, group);
    p.id[k] = offset + s.id[i];
  }
  p.note_ids();
  return offset;
}

P4ParticleFrame p4_from_specimen(const Specimen& s, double density, int64_t group) {
  P4ParticleFrame f;
  const double r = static_cast<double>(s.radius());
  const double volume = 4.0 / 3.0 * 3.14159265358979323846 * r * r * r;
  for (size_t i = 0; i < s.size(); ++i) {
    P4Particle q;
    q.id = s.id[i];
    q.group = group;
    q.volume = volume;
    q.mass = density * volume;
    q.px = s.pos[i].x;
    q.py = s.pos[i].y;
    f.particles.push_back(q);
  }
  return f;
}

}  // namespace ps
