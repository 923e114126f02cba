#include "sim/mpm/heat.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include "sim/core/hash.h"
#include "sim/mpm/mpm_kernels.h"

namespace ps {
namespace {

inline double uniform(uint64_t& s) {
  return static_cast<double>(splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

inline bool melts(const MaterialParams& m, size_t nmat) {
  return m.latent_heat > 0.f && m.melts_into >= 0 && static_cast<size_t>(m.melts_into) < nmat;
}

/// The largest multiple of q not above v (v >= 0), as an exact float.
inline float floor_to(double v, float q) {
  if (!(v > 0.0)) return 0.f;
  return static_cast<float>(std::floor(v / q) * static_cast<double>(q));
}

}  // namespace

// [SECTION] The linear system and PCG ------------------------------------------------

void HeatSystem::resize(int count) {
  n = count;
  diag.assign(count, 0.0);
  east.assign(count, 0.0);
  north.assign(count, 0.0);
  east_of.assign(count, -1);
  north_of.assign(count, -1);
  west_of.assign(count, -1);
  south_of.assign(count, -1);
}

HeatSystem HeatSystem::structured(int nx, int ny, double d, double kx, double ky) {
  HeatSystem A;
  A.resize(nx * ny);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const int u = j * nx + i;
      A.diag[u] = d;
      if (i + 1 < nx) {
        A.east[u] = kx;
        A.east_of[u] = u + 1;
        A.west_of[u + 1] = u;
      }
      if (j + 1 < ny) {
        A.north[u] = ky;
        A.north_of[u] = u + nx;
        A.south_of[u + nx] = u;
      }
    }
  return A;
}

void HeatSystem::apply(const std::vector<double>& x, std::vector<double>& y) const {
  y.resize(n);
  for (int i = 0; i < n; ++i) {
    double s = diag[i] * x[i];
    if (east_of[i] >= 0) s -= east[i] * x[east_of[i]];
    if (north_of[i] >= 0) s -= north[i] * x[north_of[i]];
    if (west_of[i] >= 0) s -= east[west_of[i]] * x[west_of[i]];
    if (south_of[i] >= 0) s -= north[south_of[i]] * x[south_of[i]];
    y[i] = s;
  }
}

namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

/// IC(0) on the 5-point structure (row-major order: west and south are the
/// earlier neighbours): A ~ L L^T with L's off-diagonals those of A. d holds
/// 1 / L_ii. A pivot that falls below a quarter of the diagonal (not SPD
/// enough for the incomplete factor) is replaced by the diagonal.
void ic0_factor(const HeatSystem& A, std::vector<double>& d) {
  d.assign(A.n, 0.0);
  for (int i = 0; i < A.n; ++i) {
    double e = A.diag[i];
    const int w = A.west_of[i], s = A.south_of[i];
    if (w >= 0) {
      const double a = A.east[w] * d[w];
      e -= a * a;
    }
    if (s >= 0) {
      const double a = A.north[s] * d[s];
      e -= a * a;
    }
    if (e < 0.25 * A.diag[i]) e = A.diag[i];
    d[i] = 1.0 / std::sqrt(e);
  }
}

void ic0_apply(const HeatSystem& A, const std::vector<double>& d, const std::vector<double>& r,
               std::vector<double>& z, std::vector<double>& q) {
  const int n = A.n;
  q.resize(n);
  for (int i = 0; i < n; ++i) {
    double t = r[i];
    const int w = A.west_of[i], s = A.south_of[i];
    if (w >= 0) t += A.east[w] * d[w] * q[w];
    if (s >= 0) t += A.north[s] * d[s] * q[s];
    q[i] = t * d[i];
  }
  for (int i = n - 1; i >= 0; --i) {
    double t = q[i];
    const int e = A.east_of[i], nn = A.north_of[i];
    if (e >= 0) t += A.east[i] * d[i] * z[e];
    if (nn >= 0) t += A.north[i] * d[i] * z[nn];
    z[i] = t * d[i];
  }
}

}  // namespace

PcgResult solve_pcg(const HeatSystem& A, const std::vector<double>& b, std::vector<double>& x,
                    double tol, int max_iterations, HeatPreconditioner pre, PcgWork& w) {
  PcgResult res;
  const int n = A.n;
  if (n == 0) {
    res.converged = true;
    return res;
  }
  x.resize(n);
  w.r.resize(n);
  w.z.resize(n);
  w.p.resize(n);
  w.q.resize(n);
  const double bnorm = std::sqrt(dot(b, b, n));
  if (!(bnorm > 0.0)) {
    std::fill(x.begin(), x.end(), 0.0);
    std::fill(w.q.begin(), w.q.end(), 0.0);  // A x
    res.converged = true;
    return res;
  }
  A.apply(x, w.q);
  for (int i = 0; i < n; ++i) w.r[i] = b[i] - w.q[i];
  auto precondition = [&](const std::vector<double>& r, std::vector<double>& z) {
    if (pre == HeatPreconditioner::IC0) {
      ic0_apply(A, w.ic_d, r, z, w.ic_q);
    } else {
      for (int i = 0; i < n; ++i) z[i] = r[i] / A.diag[i];
    }
  };
  if (pre == HeatPreconditioner::IC0) ic0_factor(A, w.ic_d);
  double rnorm = std::sqrt(dot(w.r, w.r, n));
  int it = 0;
  if (rnorm > tol * bnorm) {
    precondition(w.r, w.z);
    w.p = w.z;
    double rz = dot(w.r, w.z, n);
    for (it = 1; it <= max_iterations; ++it) {
      A.apply(w.p, w.q);
      const double pq = dot(w.p, w.q, n);
      if (!(pq > 0.0)) break;
      const double alpha = rz / pq;
      for (int i = 0; i < n; ++i) {
        x[i] += alpha * w.p[i];
        w.r[i] -= alpha * w.q[i];
      }
      rnorm = std::sqrt(dot(w.r, w.r, n));
      if (rnorm <= tol * bnorm) break;
      precondition(w.r, w.z);
      const double rz_new = dot(w.r, w.z, n);
      const double beta = rz_new / rz;
      rz = rz_new;
      for (int i = 0; i < n; ++i) w.p[i] = w.z[i] + beta * w.p[i];
    }
    if (it > max_iterations) it = max_iterations;
  }
  return pcg_finish(A, b, x, it, bnorm, rnorm, tol, w.q);
}

PcgResult pcg_finish(const HeatSystem& A, const std::vector<double>& b,
                     const std::vector<double>& x, int iterations, double bnorm, double rnorm,
                     double tol, std::vector<double>& q) {
  A.apply(x, q);
  double rr = 0.0;
  for (int i = 0; i < A.n; ++i) {
    const double e = b[i] - q[i];
    rr += e * e;
  }
  PcgResult res;
  res.iterations = iterations;
  res.relative_residual = std::sqrt(rr) / bnorm;
  res.converged = res.relative_residual <= tol * 1.0001 || rnorm <= tol * bnorm;
  return res;
}

// [SECTION] Particle quantities -----------------------------------------------------------

double HeatSolver::capacity(const MpmParticles& p, const std::vector<MaterialParams>& materials,
                            size_t i) {
  const MaterialParams& m = materials[p.material[i]];
  if (melts(m, materials.size())) {
    const double cw = materials[static_cast<size_t>(m.melts_into)].heat_capacity;
    const double w = p.vwater[i];
    return (static_cast<double>(p.mass[i]) - w) * m.heat_capacity + w * cw;
  }
  return static_cast<double>(p.mass[i]) * m.heat_capacity;
}

double HeatSolver::reference_temperature(const std::vector<MaterialParams>& materials) {
  double t = std::numeric_limits<double>::infinity();
  for (const MaterialParams& m : materials)
    if (melts(m, materials.size())) t = std::min(t, static_cast<double>(m.melting_point));
  return std::isfinite(t) ? t : 0.0;
}

HeatTotals HeatSolver::totals(const MpmParticles& p, const std::vector<MaterialParams>& materials) {
  HeatTotals t;
  const size_t nm = materials.size();
  // Latent heat of a liquid: that of the material melting into it.
  std::vector<double> liquid_L(nm, 0.0);
  std::vector<char> is_liquid(nm, 0);
  for (const MaterialParams& m : materials)
    if (melts(m, nm)) {
      liquid_L[static_cast<size_t>(m.melts_into)] = m.latent_heat;
      is_liquid[static_cast<size_t>(m.melts_into)] = 1;
    }
  const double Tref = reference_temperature(materials);
  t.min_T = std::numeric_limits<double>::infinity();
  t.max_T = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < p.size(); ++i) {
    const size_t k = p.material[i];
    if (k >= nm) continue;
    const MaterialParams& m = materials[k];
    const double cap = capacity(p, materials, i);
    t.sensible += cap * (static_cast<double>(p.temp[i]) - Tref);
    t.min_T = std::min(t.min_T, static_cast<double>(p.temp[i]));
    t.max_T = std::max(t.max_T, static_cast<double>(p.temp[i]));
    if (melts(m, nm)) {
      const double w = p.vwater[i];
      t.ice_mass += static_cast<double>(p.mass[i]) - w;
      t.virtual_water += w;
      t.water_mass += w;
      t.latent += m.latent_heat * w;
    } else if (is_liquid[k]) {
      t.water_mass += p.mass[i];
      t.latent += liquid_L[k] * p.mass[i];
    }
  }
  if (p.size() == 0) t.min_T = t.max_T = 0.0;
  return t;
}

// [SECTION] One pass ------------------------------------------------------------------------

void HeatSolver::transfer_to_grid(const MpmParticles& p, const GridSpec& g,
                                  const std::vector<MaterialParams>& mats) {
  const int NX = g.nodes_x(), NY = g.nodes_y();
  const size_t nn = static_cast<size_t>(NX) * NY;
  // One accumulator per node (capacity, capacity x T, volume x k, volume):
  // a particle's 9 nodes touch 9 cache lines instead of 36.
  acc_.assign(nn, NodeSums{});
  for (size_t i = 0; i < p.size(); ++i) {
    if (p.material[i] >= mats.size()) continue;
    const MaterialParams& m = mats[p.material[i]];
    const double cap = capacity(p, mats, i);
    double k = m.conductivity;
    if (melts(m, mats.size()) && p.mass[i] > 0.f) {
      const double w = p.vwater[i] / static_cast<double>(p.mass[i]);
      k = (1.0 - w) * m.conductivity + w * mats[static_cast<size_t>(m.melts_into)].conductivity;
    }
    const double vol = m.density > 0.f ? p.mass[i] / static_cast<double>(m.density) : 0.0;
    const double capT = cap * p.temp[i], volk = vol * k;
    const mpm::Stencil s = mpm::make_stencil(Kernel::Quadratic, g, p.x[i]);
    for (int b = 0; b < 3; ++b)
      for (int a = 0; a < 3; ++a) {
        const int ix = s.base_x + a, iy = s.base_y + b;
        if (ix < 0 || iy < 0 || ix >= NX || iy >= NY) continue;
        const double w = static_cast<double>(s.wx[a]) * s.wy[b];
        NodeSums& q = acc_[static_cast<size_t>(iy) * NX + ix];
        q.V += w * vol;
        q.C += w * cap;
        q.CT += w * capT;
        q.K += w * volk;
      }
  }
  C_.resize(nn);
  K_.resize(nn);
  V_.resize(nn);
  T_old_.resize(nn);
  // Conductivity times the share of the node's cell the material covers
  // (sum w V k / dx^2): a half-covered surface node conducts half as much,
  // as it holds half the heat capacity, so C_i / k_i stays the material's
  // and the surface does not conduct faster than the inside.
  const double inv_area = 1.0 / (static_cast<double>(g.dx) * g.dx);
  for (size_t n = 0; n < nn; ++n) {
    const NodeSums& q = acc_[n];
    C_[n] = q.C;
    V_[n] = q.V;
    K_[n] = q.K * inv_area;
    T_old_[n] = q.C > 0.0 ? q.CT / q.C : 0.0;
  }
}

void HeatSolver::classify(const GridSpec& g, const SolverParams& s, const HeatParams& hp) {
  const int NX = g.nodes_x(), NY = g.nodes_y();
  const size_t nn = static_cast<size_t>(NX) * NY;
  kind_.assign(nn, 0);
  T_fix_.assign(nn, 0.0);
  // A fixed wall holds its band and its face: the nodes i <= b (i >= nx - b,
  // ...). The face nodes (x = b dx, where the MPM walls stop the particles)
  // sit on the material's edge, so the wall's temperature acts where the wall
  // is drawn: a Dirichlet condition on the boundary node itself, the
  // zero-distance case of the ghost-node treatment of Gibou et al. 2002 (J.
  // Comput. Phys. 176, "A second-order-accurate symmetric discretization of
  // the Poisson equation on irregular domains"), and the first free node
  // (98 % covered) conducts to it over one cell with the material's own k.
  // Holding only the band (i < b) left the face node free but half covered:
  // it conducted to the band at half k, so the wall acted about 2.5 cells of
  // material behind its face and a wall-driven melt front lagged by about as
  // much (the verify case heat.stefan_wall).
  const int b = s.boundary_nodes;
  for (int j = 0; j < NY; ++j)
    for (int i = 0; i < NX; ++i) {
      const size_t n = static_cast<size_t>(j) * NX + i;
      const bool side[4] = {i <= b, i >= g.nx - b, j <= b, j >= g.ny - b};
      for (int k = 0; k < 4; ++k)
        if (side[k] && hp.walls[k].fixed) {
          kind_[n] = 2;
          T_fix_[n] = hp.walls[k].temperature;
        }
      const Vec2 x{g.origin.x + i * g.dx, g.origin.y + j * g.dx};
      for (const HeatPlate& pl : hp.plates)
        if (x.x >= pl.lo.x && x.x <= pl.hi.x && x.y >= pl.lo.y && x.y <= pl.hi.y) {
          kind_[n] = 2;
          T_fix_[n] = pl.temperature;
        }
      if (kind_[n] == 0 && C_[n] > 0.0) kind_[n] = 1;
    }
  unknown_of_.assign(nn, -1);
  node_of_.clear();
  for (size_t n = 0; n < nn; ++n)
    if (kind_[n] == 1) {
      unknown_of_[n] = static_cast<int>(node_of_.size());
      node_of_.push_back(static_cast<int>(n));
    }
}

void HeatSolver::deposit_sources(const MpmParticles&, const GridSpec& g, const SolverParams& s,
                                 const HeatParams& hp, double dt, uint64_t seed,
                                 const std::vector<HeatLamp>& extra) {
  const int NX = g.nodes_x(), NY = g.nodes_y();
  Q_.assign(static_cast<size_t>(NX) * NY, 0.0);
  P_.assign(static_cast<size_t>(NX) * NY, 0.0);
  air_T4_ = 0.0;
  // Lamps: power * dt over the material nodes within the radius.
  auto lamp = [&](const HeatLamp& L) {
    if (!(L.power != 0.f) || !(L.radius > 0.f)) return;
    const int i0 =
        std::max(0, static_cast<int>(std::floor((L.pos.x - L.radius - g.origin.x) / g.dx)));
    const int i1 =
        std::min(NX - 1, static_cast<int>(std::ceil((L.pos.x + L.radius - g.origin.x) / g.dx)));
    const int j0 =
        std::max(0, static_cast<int>(std::floor((L.pos.y - L.radius - g.origin.y) / g.dx)));
    const int j1 =
        std::min(NY - 1, static_cast<int>(std::ceil((L.pos.y + L.radius - g.origin.y) / g.dx)));
    // `power` is what the lamp gives a fully covered disk: the integral of
    // q (1 - r/R) over it is q pi R^2 / 3.
    const double q = 3.0 * L.power / (3.14159265358979 * static_cast<double>(L.radius) * L.radius);
    for (int pass = 1; pass < 2; ++pass)
      for (int j = j0; j <= j1; ++j)
        for (int i = i0; i <= i1; ++i) {
          const size_t n = static_cast<size_t>(j) * NX + i;
          if (kind_[n] != 1) continue;
          const double dxn = g.origin.x + i * g.dx - L.pos.x, dyn = g.origin.y + j * g.dx - L.pos.y;
          const double r = std::sqrt(dxn * dxn + dyn * dyn);
          if (r >= L.radius) continue;
          // Irradiance q (1 - r/R) on the node's area dx^2 times the share of
          // it the material covers (V_i / dx^2): a droplet under the lamp
          // gets its own share, not the whole lamp.
          const double cover = std::min(1.0, V_[n] / (g.dx * g.dx));
          const double e = q * (1.0 - r / L.radius) * g.dx * g.dx * cover * dt;
          if (pass == 1) {
            Q_[n] += e;
            report_.energy_lamps += e;
          }
        }
  };
  for (const HeatLamp& L : hp.lamps) lamp(L);
  for (const HeatLamp& L : extra) lamp(L);
  if (hp.air != AirModel::Photons || hp.photons <= 0) return;
  // Heat photons from the air (the paper's eq. 3): E = eps sigma T'^4 H dt / N
  // per photon, H the length of the air's boundary (the usable domain's
  // perimeter, per unit depth). Each starts at a uniform point of that
  // boundary, goes inwards in a cosine-weighted direction and gives its
  // energy to the first material node on its way (lost when it reaches a
  // fixed node or leaves the domain; a side held at a temperature is a wall,
  // not air: its face nodes are fixed, so the photons starting there end at
  // once).
  const int b = s.boundary_nodes;
  const double x0 = g.origin.x + b * g.dx, x1 = g.origin.x + (g.nx - b) * g.dx;
  const double y0 = g.origin.y + b * g.dx, y1 = g.origin.y + (g.ny - b) * g.dx;
  const double W = x1 - x0, H = y1 - y0, per = 2.0 * (W + H);
  const double Tk = hp.air_temperature + kCelsiusToKelvin;
  air_T4_ = Tk * Tk * Tk * Tk;
  const double E = hp.emissivity * kStefanBoltzmann * Tk * Tk * Tk * Tk * per * dt / hp.photons;
  // The box around every material or fixed node inside the air's boundary.
  double bb_lo[2] = {1e300, 1e300}, bb_hi[2] = {-1e300, -1e300};
  for (int j = 0; j < NY; ++j)
    for (int i = 0; i < NX; ++i) {
      if (kind_[static_cast<size_t>(j) * NX + i] == 0) continue;
      const double x = g.origin.x + i * g.dx, y = g.origin.y + j * g.dx;
      bb_lo[0] = std::min(bb_lo[0], x - g.dx);
      bb_hi[0] = std::max(bb_hi[0], x + g.dx);
      bb_lo[1] = std::min(bb_lo[1], y - g.dx);
      bb_hi[1] = std::max(bb_hi[1], y + g.dx);
    }
  uint64_t rng = seed ^ 0xF07035ull;
  for (int k = 0; k < hp.photons; ++k) {
    double u = uniform(rng) * per;
    double px, py, nx, ny;
    if (u < W) {
      px = x0 + u;
      py = y0;
      nx = 0;
      ny = 1;
    } else if ((u -= W) < H) {
      px = x1;
      py = y0 + u;
      nx = -1;
      ny = 0;
    } else if ((u -= H) < W) {
      px = x1 - u;
      py = y1;
      nx = 0;
      ny = -1;
    } else {
      u -= W;
      px = x0;
      py = y1 - u;
      nx = 1;
      ny = 0;
    }
    const double st = 2.0 * uniform(rng) - 1.0;  // sin of the angle to the normal: cosine-weighted
    const double ct = std::sqrt(std::max(0.0, 1.0 - st * st));
    const double dxr = ct * nx - st * ny, dyr = ct * ny + st * nx;
    const double step = 0.5 * g.dx;
    // Skip the empty air: jump to the first sample inside the box around
    // the material (the same samples as marching from the border) and stop
    // after leaving it.
    double t0 = 0.0, t1 = 1e300;
    const double dir[2] = {dxr, dyr}, org[2] = {px, py};
    for (int a = 0; a < 2; ++a) {
      if (std::fabs(dir[a]) < 1e-300) {
        if (org[a] < bb_lo[a] || org[a] > bb_hi[a]) t1 = -1.0;
        continue;
      }
      double ta = (bb_lo[a] - org[a]) / dir[a], tb = (bb_hi[a] - org[a]) / dir[a];
      if (ta > tb) std::swap(ta, tb);
      t0 = std::max(t0, ta);
      t1 = std::min(t1, tb);
    }
    if (!(t1 >= t0)) continue;
    const int k0 = std::max(0, static_cast<int>(std::floor(t0 / step)) - 1);
    const int k1 = static_cast<int>(std::ceil(t1 / step)) + 1;
    px += k0 * step * dxr;
    py += k0 * step * dyr;
    for (int it = k0; it < k1; ++it) {
      px += step * dxr;
      py += step * dyr;
      if (px < x0 - 1e-9 || px > x1 + 1e-9 || py < y0 - 1e-9 || py > y1 + 1e-9) break;
      const int i = static_cast<int>(std::floor((px - g.origin.x) / g.dx + 0.5));
      const int j = static_cast<int>(std::floor((py - g.origin.y) / g.dx + 0.5));
      if (i < 0 || j < 0 || i >= NX || j >= NY) break;
      const size_t n = static_cast<size_t>(j) * NX + i;
      if (kind_[n] == 2) break;
      if (kind_[n] == 1) {
        Q_[n] += E;
        P_[n] += E;
        report_.energy_air += E;
        break;
      }
    }
  }
}

void HeatSolver::assemble(const GridSpec& g, const HeatParams& hp, double dt) {
  const int NX = g.nodes_x(), NY = g.nodes_y();
  const int n = static_cast<int>(node_of_.size());
  A_.resize(n);
  b_.assign(n, 0.0);
  x_.assign(n, 0.0);
  robin_faces_.assign(n, 0);
  const bool conv = hp.air == AirModel::Convection;
  const bool photons = hp.air == AirModel::Photons;
  const double hdx = static_cast<double>(hp.convection_h) * g.dx;
  for (int u = 0; u < n; ++u) {
    const int node = node_of_[u];
    const int i = node % NX, j = node / NX;
    double d = C_[node] / dt;
    double rhs = C_[node] / dt * T_old_[node] + Q_[node] / dt;
    const int nb[4][2] = {{i + 1, j}, {i - 1, j}, {i, j + 1}, {i, j - 1}};
    for (int k = 0; k < 4; ++k) {
      const int a = nb[k][0], c = nb[k][1];
      if (a < 0 || c < 0 || a >= NX || c >= NY) continue;  // the grid's edge: insulated
      const int m = c * NX + a;
      if (kind_[m] == 1) {
        const double ki = K_[node], kj = K_[m];
        const double kf = (ki > 0.0 && kj > 0.0) ? 2.0 * ki * kj / (ki + kj) : 0.0;
        d += kf;
        const int v = unknown_of_[m];
        if (k == 0) {
          A_.east[u] = kf;
          A_.east_of[u] = v;
          A_.west_of[v] = u;
        }
        if (k == 2) {
          A_.north[u] = kf;
          A_.north_of[u] = v;
          A_.south_of[v] = u;
        }
      } else if (kind_[m] == 2) {
        d += K_[node];
        rhs += K_[node] * T_fix_[m];
      } else if (conv) {
        d += hdx;
        rhs += hdx * hp.air_temperature;
        ++robin_faces_[u];
      }
    }
    if (photons && P_[node] > 0.0 && air_T4_ > 0.0) {
      // The body's own emission, by reciprocity along the same photon paths:
      // a node that received energy Q from air at T_air gives back
      // Q (T / T_air)^4 (K), so the net exchange is eps sigma (T_air^4 - T^4)
      // over the surface the photons see; linearised about the old T:
      // out = beta (To^4 + 4 To^3 (T + 273.15 - To)), beta = Q / (dt T_air^4).
      const double To = std::max(1.0, T_old_[node] + kCelsiusToKelvin);
      const double beta = P_[node] / (dt * air_T4_);
      d += 4.0 * beta * To * To * To;
      rhs -= beta * (To * To * To * To + 4.0 * To * To * To * (kCelsiusToKelvin - To));
    }
    A_.diag[u] = d;
    b_[u] = rhs;
    x_[u] = T_old_[node];
  }
}

void HeatSolver::transfer_to_particles(MpmParticles& p, const GridSpec& g,
                                       const std::vector<MaterialParams>& mats) {
  const int NX = g.nodes_x(), NY = g.nodes_y();
  const size_t n = p.size();
  // Pass 1: the blended temperature, limited to the range of the particle's
  // own and its nodes' new temperatures. Moving particles meet nodes whose
  // mean came from other particles; the increment then pushes them past
  // every temperature around (ice at -29 C under a lamp in 25 C air, water at
  // 320 C beside a 60 C plate with flip 1). What the limiter takes off,
  // d_p = cap_p (T* - T_lim), goes back to the particles around it through
  // the grid (D_i = sum_p w d_p, particle q gets sum_i w cap_q D_i / C_i), so
  // the heat is where it was and the sum is unchanged.
  Tlim_.assign(n, 0.0);
  D_.assign(C_.size(), 0.0);
  for (size_t i = 0; i < n; ++i) {
    if (p.material[i] >= mats.size()) continue;
    const double cap = capacity(p, mats, i);
    if (!(cap > 0.0)) continue;
    const double Tp = p.temp[i];
    const mpm::Stencil s = mpm::make_stencil(Kernel::Quadratic, g, p.x[i]);
    double dT = 0.0, Tpic = 0.0, W = 0.0, wall = 0.0, lo = Tp, hi = Tp;
    for (int b = 0; b < 3; ++b)
      for (int a = 0; a < 3; ++a) {
        const int ix = s.base_x + a, iy = s.base_y + b;
        if (ix < 0 || iy < 0 || ix >= NX || iy >= NY) continue;
        const size_t node = static_cast<size_t>(iy) * NX + ix;
        if (kind_[node] == 0) continue;
        const double w = static_cast<double>(s.wx[a]) * s.wy[b];
        W += w;
        const double Tn = T_new_[node];  // T_fix on fixed nodes
        lo = std::min(lo, Tn);
        hi = std::max(hi, Tn);
        if (kind_[node] == 2) {
          // A wall node: the particle takes the wall's temperature with this
          // weight, in both parts (its own T_p, not the node's mean, in the
          // increment: the node's mean would overshoot particles already
          // near T_fix). Either way the particles gain C_i (T_fix - T_i).
          wall += w * (Tn - Tp);
          Tpic += w * Tn;
          continue;
        }
        dT += w * (Tn - T_old_[node]);
        Tpic += w * Tn;
      }
    // The weights sum to 1 only to float rounding; the particle keeps its own
    // temperature for the missing part, so sum_p cap_p (Tpic - T_p) is
    // sum_i C_i (T_i' - T_i) exactly (C_i T_i = sum_p w cap_p T_p).
    Tpic += (1.0 - W) * Tp;
    const double Tstar = flip_ * (Tp + dT + wall) + (1.0 - flip_) * Tpic;
    const double Tl = std::min(hi, std::max(lo, Tstar));
    Tlim_[i] = Tl;
    if (Tl == Tstar) continue;
    ++report_.limited;
    const double d = cap * (Tstar - Tl);
    report_.energy_limited += std::fabs(d);
    Tlim_[i] += (1.0 - W) * d / cap;  // the rounding deficit of the weights stays here
    for (int b = 0; b < 3; ++b)
      for (int a = 0; a < 3; ++a) {
        const int ix = s.base_x + a, iy = s.base_y + b;
        if (ix < 0 || iy < 0 || ix >= NX || iy >= NY) continue;
        const size_t node = static_cast<size_t>(iy) * NX + ix;
        if (kind_[node] != 0) D_[node] += static_cast<double>(s.wx[a]) * s.wy[b] * d;
      }
  }
  // Pass 2: the redistributed heat, then latent heat.
  const bool any = report_.limited > 0;
  for (size_t i = 0; i < n; ++i) {
    if (p.material[i] >= mats.size()) continue;
    const MaterialParams& m = mats[p.material[i]];
    const double cap = capacity(p, mats, i);
    if (!(cap > 0.0)) continue;
    double T = Tlim_[i];
    if (any) {
      const mpm::Stencil s = mpm::make_stencil(Kernel::Quadratic, g, p.x[i]);
      for (int b = 0; b < 3; ++b)
        for (int a = 0; a < 3; ++a) {
          const int ix = s.base_x + a, iy = s.base_y + b;
          if (ix < 0 || iy < 0 || ix >= NX || iy >= NY) continue;
          const size_t node = static_cast<size_t>(iy) * NX + ix;
          if (kind_[node] != 0 && D_[node] != 0.0)
            T += static_cast<double>(s.wx[a]) * s.wy[b] * D_[node] / C_[node];
        }
    }
    const double Tm = m.melting_point;
    const double ice = static_cast<double>(p.mass[i]) - p.vwater[i];
    if (melts(m, mats.size()) && T > Tm && ice > 0.0) {
      // Energy above the melting point goes into melting first (latent heat).
      const double E = cap * (T - Tm);
      const double want = E / m.latent_heat;
      const float dm = want >= ice ? static_cast<float>(ice) : floor_to(want, quantum_);
      const double cw = mats[static_cast<size_t>(m.melts_into)].heat_capacity;
      const double ice_new = ice - dm;
      p.vwater[i] += dm;  // exact: both multiples of the quantum
      const double cap_new = ice_new * m.heat_capacity + static_cast<double>(p.vwater[i]) * cw;
      const double left = E - static_cast<double>(dm) * m.latent_heat;
      T = cap_new > 0.0 ? Tm + left / cap_new : Tm;
      const double r = ice > 0.0 ? ice_new / ice : 0.0;
      p.melt[i] = static_cast<float>(1.0 - (1.0 - p.melt[i]) * r);
      p.vol0[i] = static_cast<float>(p.vol0[i] * r);
      report_.melted += dm;
    }
    p.temp[i] = static_cast<float>(T);
    report_.energy_rounding += capacity(p, mats, i) * (static_cast<double>(p.temp[i]) - T);
  }
}

void HeatSolver::flow_virtual_water(MpmParticles& p, const GridSpec& g, const SolverParams& s,
                                    const std::vector<MaterialParams>& mats, const HeatParams& hp,
                                    double dt, bool flow) {
  const size_t n = p.size(), nm = mats.size();
  const int nx = g.nx, ny = g.ny;
  // Cell buckets of the melting-material particles.
  cell_start_.assign(static_cast<size_t>(nx) * ny + 1, 0);
  auto cell_of = [&](Vec2 x) {
    const int a = std::min(nx - 1, std::max(0, static_cast<int>((x.x - g.origin.x) / g.dx)));
    const int b = std::min(ny - 1, std::max(0, static_cast<int>((x.y - g.origin.y) / g.dx)));
    return b * nx + a;
  };
  for (size_t i = 0; i < n; ++i)
    if (p.material[i] < nm && melts(mats[p.material[i]], nm)) ++cell_start_[cell_of(p.x[i]) + 1];
  for (size_t c = 0; c + 1 < cell_start_.size(); ++c) cell_start_[c + 1] += cell_start_[c];
  order_.assign(static_cast<size_t>(cell_start_.back()), 0);
  {
    std::vector<int>& fill = fill_;
    fill.assign(cell_start_.begin(), cell_start_.end() - 1);
    for (size_t i = 0; i < n; ++i)
      if (p.material[i] < nm && melts(mats[p.material[i]], nm))
        order_[static_cast<size_t>(fill[cell_of(p.x[i])]++)] = static_cast<int>(i);
  }
  if (!hp.water_flow || !flow) return;
  Vec2 gdir = s.gravity;
  const float gl = length(gdir);
  gdir = gl > 0.f ? gdir / gl : Vec2{0.f, -1.f};
  const float R = 0.8f * g.dx;  // neighbours: side and diagonal at the default spacing dx / 2
  const double f_down = std::min(1.0, static_cast<double>(hp.flow_down_rate) * dt);
  const double f_level = std::min(1.0, static_cast<double>(hp.flow_level_rate) * dt);
  recv_.assign(n, 0.0);
  gave_.assign(n, 0.0);
  dpx_.assign(n, 0.0);
  dpy_.assign(n, 0.0);
  dheat_.assign(n, 0.0);
  std::vector<int>& level = level_;
  for (size_t i = 0; i < n; ++i) {
    if (!(p.vwater[i] > 0.f) || p.material[i] >= nm || !melts(mats[p.material[i]], nm)) continue;
    const Vec2 xi = p.x[i];
    const int ci = cell_of(xi), a0 = ci % nx, b0 = ci / nx;
    int below = -1;
    float below_depth = 0.f;
    level.clear();
    for (int b = std::max(0, b0 - 1); b <= std::min(ny - 1, b0 + 1); ++b)
      for (int a = std::max(0, a0 - 1); a <= std::min(nx - 1, a0 + 1); ++a) {
        const int c = b * nx + a;
        for (int k = cell_start_[c]; k < cell_start_[c + 1]; ++k) {
          const int j = order_[k];
          if (static_cast<size_t>(j) == i) continue;
          const Vec2 d = p.x[j] - xi;
          if (dot(d, d) > R * R) continue;
          const float down = dot(d, gdir);
          if (down > 0.3f * R) {
            if (down > below_depth || (down == below_depth && j < below)) {
              below = j;
              below_depth = down;
            }
          } else if (down >= -0.3f * R && p.vwater[j] < p.vwater[i]) {
            level.push_back(j);
          }
        }
      }
    const double w = p.vwater[i];
    const double cw = mats[static_cast<size_t>(mats[p.material[i]].melts_into)].heat_capacity;
    double out = 0.0;
    auto give = [&](int j, double amount) {
      const float d = floor_to(std::min(amount, w - out), quantum_);
      if (!(d > 0.f)) return;
      const size_t jj = static_cast<size_t>(j);
      out += d;
      gave_[i] += d;
      recv_[jj] += d;
      dpx_[jj] += static_cast<double>(d) * p.v[i].x;
      dpy_[jj] += static_cast<double>(d) * p.v[i].y;
      dheat_[jj] += static_cast<double>(d) * cw * p.temp[i];
    };
    if (below >= 0) give(below, f_down * w);
    const double share = f_level / static_cast<double>(level.size() + 1);
    for (int j : level) give(j, share * 0.5 * (w - p.vwater[static_cast<size_t>(j)]));
  }
  // Apply: what a particle gave left with its own velocity and temperature;
  // what it received brings the giver's momentum and heat (mass-weighted
  // mean velocity, mixing at constant heat capacity). Masses are multiples
  // of the quantum, so m_old - gave + recv is exact.
  for (size_t i = 0; i < n; ++i) {
    if (gave_[i] == 0.0 && recv_[i] == 0.0) continue;
    const MaterialParams& m = mats[p.material[i]];
    const double cw = mats[static_cast<size_t>(m.melts_into)].heat_capacity;
    const double cap_old = capacity(p, mats, i);
    const double m_old = p.mass[i];
    const double kept = m_old - gave_[i];
    p.mass[i] = static_cast<float>(kept + recv_[i]);
    p.vwater[i] = static_cast<float>(static_cast<double>(p.vwater[i]) - gave_[i] + recv_[i]);
    const double m_new = p.mass[i];
    if (m_new > 0.0) {
      p.v[i].x = static_cast<float>((kept * p.v[i].x + dpx_[i]) / m_new);
      p.v[i].y = static_cast<float>((kept * p.v[i].y + dpy_[i]) / m_new);
    }
    const double cap_new = cap_old + (recv_[i] - gave_[i]) * cw;
    if (cap_new > 0.0) {
      const double T = ((cap_old - gave_[i] * cw) * p.temp[i] + dheat_[i]) / cap_new;
      p.temp[i] = static_cast<float>(T);
      report_.energy_rounding += cap_new * (static_cast<double>(p.temp[i]) - T);
    }
  }
}

void HeatSolver::emit_and_convert(MpmParticles& p, const GridSpec& g, const SolverParams& s,
                                  const std::vector<MaterialParams>& mats, const HeatParams& hp,
                                  bool emit) {
  const size_t n0 = p.size(), nm = mats.size();
  const int nx = g.nx, ny = g.ny;
  Vec2 gdir = s.gravity;
  const float gl = length(gdir);
  gdir = gl > 0.f ? gdir / gl : Vec2{0.f, -1.f};
  const float R = 0.8f * g.dx;
  const float lo_x = g.origin.x + g.dx * s.boundary_nodes,
              hi_x = g.origin.x + g.dx * (g.nx - s.boundary_nodes);
  const float lo_y = g.origin.y + g.dx * s.boundary_nodes,
              hi_y = g.origin.y + g.dx * (g.ny - s.boundary_nodes);
  for (size_t i = 0; i < n0; ++i) {
    if (p.material[i] >= nm) continue;
    const MaterialParams& m = mats[p.material[i]];
    if (!melts(m, nm)) continue;
    const size_t wm = static_cast<size_t>(m.melts_into);
    const MaterialParams& water = mats[wm];
    if (emit) {
      const double vol = hp.emit_volume > 0.f ? hp.emit_volume : 0.25 * g.dx * g.dx;
      const float mw = std::max(quantum_, floor_to(vol * water.density, quantum_));
      int guard = 0;
      while (p.vwater[i] >= mw && p.mass[i] - p.vwater[i] > 0.f && guard++ < 8) {
        // Outwards: away from the melting neighbours, tilted down.
        const int a0 =
            std::min(nx - 1, std::max(0, static_cast<int>((p.x[i].x - g.origin.x) / g.dx)));
        const int b0 =
            std::min(ny - 1, std::max(0, static_cast<int>((p.x[i].y - g.origin.y) / g.dx)));
        Vec2 away{0.f, 0.f};
        for (int b = std::max(0, b0 - 1); b <= std::min(ny - 1, b0 + 1); ++b)
          for (int a = std::max(0, a0 - 1); a <= std::min(nx - 1, a0 + 1); ++a) {
            const int c = b * nx + a;
            if (static_cast<size_t>(c + 1) >= cell_start_.size()) continue;
            for (int k = cell_start_[c]; k < cell_start_[c + 1]; ++k) {
              const int j = order_[k];
              if (static_cast<size_t>(j) == i || static_cast<size_t>(j) >= n0) continue;
              const Vec2 d = p.x[static_cast<size_t>(j)] - p.x[i];
              const float r2 = dot(d, d);
              if (r2 > R * R || !(r2 > 0.f)) continue;
              away -= d / std::sqrt(r2);
            }
          }
        const float al = length(away);
        Vec2 dir = al > 1e-3f ? away / al + 0.5f * gdir : gdir;
        const float dl = length(dir);
        dir = dl > 0.f ? dir / dl : Vec2{0.f, -1.f};
        Vec2 xn = p.x[i] + (0.35f * g.dx) * dir;
        xn.x = std::min(hi_x, std::max(lo_x, xn.x));
        xn.y = std::min(hi_y, std::max(lo_y, xn.y));
        p.mass[i] -= mw;  // exact: multiples of the quantum
        p.vwater[i] -= mw;
        const size_t q = p.size();
        p.for_each_array([](auto& a) { a.emplace_back(); });
        p.x[q] = xn;
        p.v[q] = p.v[i];
        p.C[q] = p.C[i];
        p.F[q] = Mat2::identity();
        p.J[q] = 1.f;
        p.Jp[q] = 1.f;
        p.mass[q] = mw;
        p.vol0[q] = mw / water.density;
        p.material[q] = static_cast<uint8_t>(wm);
        p.group[q] = p.group[i];
        p.id[q] = p.next_id++;
        p.fext[q] = Vec2{};
        p.temp[q] = p.temp[i];
        p.melt[q] = 1.f;
        p.vwater[q] = 0.f;
        report_.new_ids.push_back(p.id[q]);
        ++report_.emitted;
      }
    }
    if (!(p.mass[i] - p.vwater[i] > 0.f)) {
      // All ice is gone: the particle is the melt material now, in place.
      p.material[i] = static_cast<uint8_t>(wm);
      p.vol0[i] = p.mass[i] / water.density;
      p.F[i] = Mat2::identity();
      p.J[i] = 1.f;
      p.Jp[i] = 1.f;
      p.vwater[i] = 0.f;
      p.melt[i] = 1.f;
      ++report_.converted;
    }
  }
}

void HeatSolver::quantize(MpmParticles& p, const std::vector<MaterialParams>& mats) {
  const size_t nm = mats.size();
  // The mass quantum (see heat.h) and the masses of melting particles on it.
  if (!(quantum_ > 0.f)) {
    float mmax = 0.f;
    for (size_t i = 0; i < p.size(); ++i)
      if (p.material[i] < nm && melts(mats[p.material[i]], nm)) mmax = std::max(mmax, p.mass[i]);
    if (mmax > 0.f)
      quantum_ = 4.f * (std::nextafter(mmax, std::numeric_limits<float>::infinity()) - mmax);
  }
  if (quantum_ > 0.f)
    for (size_t i = 0; i < p.size(); ++i)
      if (p.material[i] < nm && melts(mats[p.material[i]], nm)) {
        const double q = quantum_;
        p.mass[i] = static_cast<float>(std::nearbyint(p.mass[i] / q) * q);
        p.vwater[i] = std::min(p.mass[i], static_cast<float>(std::nearbyint(p.vwater[i] / q) * q));
      }
}

const HeatReport& HeatSolver::run(MpmParticles& p, const GridSpec& g, const SolverParams& s,
                                  const std::vector<MaterialParams>& mats, const HeatParams& hp,
                                  double dt, uint64_t seed,
                                  const std::vector<HeatLamp>& extra_lamps) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<uint32_t> ids = std::move(report_.new_ids);  // keeps its capacity
  ids.clear();
  report_ = HeatReport{};
  report_.new_ids = std::move(ids);
  report_.dt = dt;
  quantize(p, mats);
  if (!(dt > 0.0) || p.size() == 0) return report_;
  transfer_to_grid(p, g, mats);
  classify(g, s, hp);
  deposit_sources(p, g, s, hp, dt, seed, extra_lamps);
  assemble(g, hp, dt);
  const auto ts = std::chrono::steady_clock::now();
  PcgResult r;
  const bool device = linear_ && A_.n > 0 &&
                      (hp.device_solve == HeatDeviceSolve::On ||
                       (hp.device_solve == HeatDeviceSolve::Auto && A_.n >= kDeviceSolveFrom));
  if (device) {
    // The same guess for the host if the device fails part way (x_ is then
    // half written): the pass goes on, the world hears of the failure.
    guess_ = x_;
    try {
      r = linear_->solve(A_, b_, x_, hp.tolerance, hp.max_iterations, work_);
      report_.on_device = true;
    } catch (const std::exception& e) {
      report_.device_error = e.what();
      x_ = guess_;
    }
  }
  if (!report_.on_device) {
    r = solve_pcg(A_, b_, x_, hp.tolerance, hp.max_iterations, hp.preconditioner, work_);
  } else if (!r.converged) {
    // The device's Jacobi stopped at max_iterations (it needs about three
    // times IC(0)'s iterations): the host finishes from its x with the
    // scene's preconditioner, so auto never turns a converging scene into
    // an unconverged one.
    const PcgResult f =
        solve_pcg(A_, b_, x_, hp.tolerance, hp.max_iterations, hp.preconditioner, work_);
    report_.host_finish = true;
    r.iterations += f.iterations;
    r.relative_residual = f.relative_residual;
    r.converged = f.converged;
  }
  report_.solve_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - ts).count();
  report_.iterations = r.iterations;
  report_.residual = r.relative_residual;
  report_.converged = r.converged;
  report_.unknowns = A_.n;
  // Row u of A x = b - r summed over u: sum C (T' - T) = (fluxes, which cancel
  // between free nodes) - dt sum r. The defect the tolerance leaves is -dt sum r.
  if (A_.n > 0) {  // work_.q holds A x_: every solve path above ends with pcg_finish
    for (int u = 0; u < A_.n; ++u)
      report_.energy_solver += (work_.q[static_cast<size_t>(u)] - b_[static_cast<size_t>(u)]) * dt;
  }
  // New grid temperatures and the energy ledger.
  const int NX = g.nodes_x();
  T_new_ = T_old_;
  for (size_t node = 0; node < kind_.size(); ++node)
    if (kind_[node] == 2) T_new_[node] = T_fix_[node];
  for (int u = 0; u < A_.n; ++u) T_new_[static_cast<size_t>(node_of_[u])] = x_[u];
  const bool conv = hp.air == AirModel::Convection;
  const double hdx = static_cast<double>(hp.convection_h) * g.dx;
  for (size_t node = 0; node < kind_.size(); ++node) {
    if (kind_[node] == 0) continue;
    report_.energy_grid += C_[node] * (T_new_[node] - T_old_[node]);
    if (kind_[node] == 2) {  // contact: the particles on a wall node take its temperature
      report_.energy_walls += C_[node] * (T_fix_[node] - T_old_[node]);
      continue;
    }
    const int i = static_cast<int>(node) % NX, j = static_cast<int>(node) / NX;
    const int nb[4][2] = {{i + 1, j}, {i - 1, j}, {i, j + 1}, {i, j - 1}};
    for (int k = 0; k < 4; ++k) {
      const int a = nb[k][0], c = nb[k][1];
      if (a < 0 || c < 0 || a >= NX || c >= g.nodes_y()) continue;
      const size_t m = static_cast<size_t>(c) * NX + a;
      if (kind_[m] == 2)
        report_.energy_walls += K_[node] * (T_fix_[m] - T_new_[node]) * dt;
      else if (kind_[m] == 0 && conv)
        report_.energy_air += hdx * (hp.air_temperature - T_new_[node]) * dt;
    }
    if (hp.air == AirModel::Photons && P_[node] > 0.0 && air_T4_ > 0.0) {
      const double To = std::max(1.0, T_old_[node] + kCelsiusToKelvin);
      const double beta = P_[node] / (dt * air_T4_);
      report_.energy_air -=
          beta * (To * To * To * To + 4.0 * To * To * To * (T_new_[node] + kCelsiusToKelvin - To)) *
          dt;
    }
  }
  flip_ = std::min(1.0, std::max(0.0, static_cast<double>(hp.flip)));
  transfer_to_particles(p, g, mats);
  flow_virtual_water(p, g, s, mats, hp, hp.only ? 0.0 : dt, !hp.only);
  emit_and_convert(p, g, s, mats, hp, !hp.only);
  report_.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return report_;
}

}  // namespace ps
