// CUDA DEM backend: the same per-contact and per-bond math as the CPU
// reference (sim/dem/dem_kernels.h), one thread per bond or particle.
//
// Differences from the CPU backend, by design:
// - each particle adds its unbonded contacts in the order it meets its
//   neighbours in the cell-sorted arrays, the CPU in index order (partners
//   j > i, then j < i). Sums of three or more terms round differently, so
//   granular scenes leave the CPU's bits (by round-off; docs/benchmarks.md,
//   DEM); with at most two unbonded contacts per particle the bits are equal.
//   No atomics on particle forces: the order is fixed by the state;
// - each particle keeps its unbonded contacts (partners j > i) in a fixed
//   number of slots, double-buffered, which carry the Mindlin and rolling
//   history from one step to the next; a particle with more simultaneous
//   partners than slots is reported as an error instead of dropping contacts.
// State stays on the device between steps; host_changed() uploads,
// sync_to_host() downloads (dumps, picking, statistics).
#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/backend_error.h"
#include "sim/cuda/background_copy.cuh"
#include "sim/cuda/cuda_check.h"
#include "sim/cuda/cuda_info.h"
#include "sim/cuda/device_buffer.cuh"
#include "sim/dem/dem_backend.h"
#include "sim/dem/dem_kernels.h"

namespace ps {
namespace dem {

namespace {

constexpr int kSlots = 24;  // unbonded partners j > i per particle
constexpr uint32_t kEmpty = 0xFFFFFFFFu;

// Errors are BackendErrors: DemWorld falls back to the CPU backend on them
// (docs/reliability.md); the device state is then treated as unknown.
void check(cudaError_t e, const char* what) { cuda_check(e, what); }

/// Grows a device array by a quarter beyond what is asked (dev_reserve).
template <class T>
void dev_resize(T*& ptr, size_t& cap, size_t count) {
  dev_reserve(ptr, cap, count, count / 4 + 16);
}

struct DevState {
  // Particles (host order; the backend's state).
  Vec2d *x, *v, *fext;
  double *theta, *omega, *radius, *mass, *inertia;
  uint8_t *material, *fixed;
  uint16_t* group;
  // Bonds (sorted by (i, j)), a CSR of each particle's bonds as i
  // (bond_start) and as j (bond_j_start into bond_j_list).
  uint32_t *bi, *bj, *bond_start, *bond_j_start, *bond_j_list;
  double *length0, *shear_disp, *bend_angle;
  uint8_t *broken, *mode;
  int64_t* break_step;
  float *sigma, *tau;
  Vec2d* bforce;        // force on i (on j: minus it)
  double *bt_i, *bt_j;  // moments on i and on j
  // Contact slots (previous / current), by host index of the pair's lower particle.
  uint32_t *slot_j_prev, *slot_j;
  double *slot_xi_prev, *slot_mr_prev, *slot_xi, *slot_mr;
  Vec2d *slot_f, *slot_point;
  double *slot_ti, *slot_tj, *slot_overlap;
  // Walls: dense history per (particle, wall).
  double *wall_xi, *wall_mr;
  uint8_t* wall_on;
  Vec2d *wall_f, *wall_point;
  double *wall_t, *wall_tw, *wall_overlap;  // moments on the particle and on the wall (about its c)
  // Broad phase: keys and indices (unsorted, sorted), cell ranges, and the
  // sorted copies the force pass reads.
  uint32_t *cell_key, *cell_item, *sorted_key, *sorted_item, *cell_start, *cell_end;
  Vec2d *xs, *vs;
  double *ws, *rs, *ms, *is;
  uint8_t* mats;
};

struct Counters {
  unsigned long long bad;           // lowest blown-up index or ~0
  unsigned long long vmax2;         // bits of the largest |v|^2 (non-negative double)
  unsigned long long first_broken;  // (k << 2) | mode of the lowest bond k broken this step, or ~0
  unsigned int broken;              // bonds broken this step
  unsigned int contacts, wall_contacts;
  unsigned int overflow;  // a particle ran out of contact slots
};

// Per-warp reductions: one global atomic per warp and counter instead of
// one per thread (the counters are the only atomics left in a step).
__device__ inline unsigned warp_sum(unsigned v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ inline unsigned long long warp_min(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}
__device__ inline unsigned long long warp_max(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}
__device__ inline bool lane0() { return (threadIdx.x & 31) == 0; }

// [SECTION] Bonds (EBPM) ----------------------------------------------------------
//
// One thread per bond computes its force and moments and stores them with
// the bond; each particle then sums its bonds' entries in the force pass
// (a gather over its bonds as i and as j): no atomics on particle forces.

__global__ void bond_kernel(DevState s, int nb, DemBondParams bp, int64_t step, Counters* c) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned broke = 0;
  // The lowest broken index, with its mode in the low bits (modes are 1..3).
  unsigned long long first = ~0ull;
  if (k < nb) {
    if (s.broken[k]) {
      s.bforce[k] = Vec2d{};
      s.bt_i[k] = s.bt_j[k] = 0.0;
      s.sigma[k] = s.tau[k] = 0.f;
    } else {
      const uint32_t i = s.bi[k], j = s.bj[k];
      BondResult r = bond_force(bp, s.x[i], s.x[j], s.v[i], s.v[j], s.omega[i], s.omega[j],
                                s.radius[i], s.radius[j], s.mass[i], s.mass[j], s.inertia[i],
                                s.inertia[j], s.length0[k], s.shear_disp[k], s.bend_angle[k]);
      s.sigma[k] = static_cast<float>(r.sigma);
      s.tau[k] = static_cast<float>(r.tau);
      const int mode = bond_break_mode(bp, r.sigma, r.sigma_c, r.tau);
      if (mode != 0) {
        s.broken[k] = 1;
        s.mode[k] = static_cast<uint8_t>(mode);
        s.break_step[k] = step;
        s.bforce[k] = Vec2d{};
        s.bt_i[k] = s.bt_j[k] = 0.0;
        broke = 1;
        first = (static_cast<unsigned long long>(k) << 2) | static_cast<unsigned>(mode);
      } else {
        s.bforce[k] = r.f_i;
        s.bt_i[k] = r.t_i;
        s.bt_j[k] = r.t_j;
      }
    }
  }
  broke = warp_sum(broke);
  first = warp_min(first);
  if (lane0() && broke) {
    atomicAdd(&c->broken, broke);
    atomicMin(&c->first_broken, first);
  }
}

__global__ void bond_advance_kernel(DevState s, int nb, double dt) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= nb || s.broken[k]) return;
  const uint32_t i = s.bi[k], j = s.bj[k];
  bond_advance(s.x[i], s.x[j], s.v[i], s.v[j], s.omega[i], s.omega[j], s.radius[i], s.radius[j], dt,
               s.shear_disp[k], s.bend_angle[k]);
}

// [SECTION] Broad phase: particles sorted by cell ----------------------------------
//
// Every step: a cell key per particle, a radix sort of (key, index), then a
// gather of what the contact search reads (position, radius, velocity, spin,
// mass, inertia, material) into cell order. Neighbours in one row of three
// cells are then one contiguous range of the sorted arrays, and a warp's
// threads (consecutive sorted particles) read overlapping ranges.

struct CellGrid {
  Vec2d lo;
  double cell;
  int gx, gy;
  __device__ int cx(double x) const {
    return isfinite(x) ? min(max(static_cast<int>((x - lo.x) / cell), 0), gx - 1) : 0;
  }
  __device__ int cy(double y) const {
    return isfinite(y) ? min(max(static_cast<int>((y - lo.y) / cell), 0), gy - 1) : 0;
  }
};

__global__ void cell_key_kernel(const Vec2d* x, int n, CellGrid g, uint32_t* key, uint32_t* item) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Vec2d p = x[i];
  // Clamping keeps neighbours neighbours: two particles within one cell of
  // each other land in the same or adjacent cells even outside the grid.
  key[i] = static_cast<uint32_t>(g.cy(p.y) * g.gx + g.cx(p.x));
  item[i] = static_cast<uint32_t>(i);
}

__global__ void gather_sorted_kernel(DevState s, int n) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const uint32_t i = s.sorted_item[k];
  s.xs[k] = s.x[i];
  s.vs[k] = s.v[i];
  s.ws[k] = s.omega[i];
  s.rs[k] = s.radius[i];
  s.ms[k] = s.mass[i];
  s.is[k] = s.inertia[i];
  s.mats[k] = s.material[i];
  const uint32_t c = s.sorted_key[k];
  if (k == 0 || s.sorted_key[k - 1] != c) s.cell_start[c] = static_cast<uint32_t>(k);
  if (k == n - 1 || s.sorted_key[k + 1] != c) s.cell_end[c] = static_cast<uint32_t>(k + 1);
}

// [SECTION] Forces and integration ---------------------------------------------------

__device__ bool bonded_intact(const DevState& s, uint32_t i, uint32_t j) {
  for (uint32_t k = s.bond_start[i]; k < s.bond_start[i + 1]; ++k)
    if (s.bj[k] == j) return !s.broken[k];
  return false;
}

struct IntegrateParams {
  double dt, alpha, vlim2;
  Vec2d g;
  bool use_fext;
  const DemLoad* loads;
  const Vec2d* load_share;
  int load_count;
  PointForce point;
  const int* grab_slot;  // per particle, -1 when not grabbed (null: no grab)
  const Vec2d* grab_offset;
  Vec2d grab_target;
  double grab_ks;
};

/// One thread per particle, in cell order: unbonded contacts with every
/// neighbour (both orders of each pair compute the same force: the pair is
/// always evaluated as (lower index, higher index), whose owner, the lower
/// index, keeps the Mindlin and rolling history in its slots), walls, its
/// bonds' stored forces, loads and tools; then symplectic Euler into the
/// state arrays (the pass reads only the sorted copies, so no thread sees
/// another's update). Deterministic: no atomics on particle forces (the
/// optional wall reactions are summed with double atomics, in any order).
__global__ void __launch_bounds__(128)
    force_kernel(DevState s, int n, const PairProps* props, int mc, const DemWall* walls, int nw,
                 double* reaction, CellGrid g, bool have_prev, IntegrateParams ip, Counters* c) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned n_contacts = 0, n_walls = 0, n_overflow = 0;
  unsigned long long bad = ~0ull, vmax2 = 0ull;
  if (k < n) {
    const uint32_t i = s.sorted_item[k];
    const Vec2d xi = s.xs[k];
    const double Ri = s.rs[k];
    const size_t base = static_cast<size_t>(i) * kSlots;
    const int cx = g.cx(xi.x), cy = g.cy(xi.y);
    int used = 0;
    Vec2d F{};
    double M = 0.0;
    for (int yy = max(cy - 1, 0); yy <= min(cy + 1, g.gy - 1); ++yy) {
      // Cells cx-1 .. cx+1 of this row are consecutive keys: one range.
      uint32_t b = kEmpty, e = 0;
      for (int xx = max(cx - 1, 0); xx <= min(cx + 1, g.gx - 1); ++xx) {
        const size_t cidx = static_cast<size_t>(yy) * g.gx + xx;
        const uint32_t cb = s.cell_start[cidx];
        if (cb == kEmpty) continue;
        if (b == kEmpty) b = cb;
        e = s.cell_end[cidx];
      }
      if (b == kEmpty) continue;
      for (uint32_t o = b; o < e; ++o) {
        if (o == static_cast<uint32_t>(k)) continue;
        const uint32_t j = s.sorted_item[o];
        // The pair as (lo, hi): both threads do the same arithmetic.
        const bool own = i < j;
        const uint32_t ka = own ? static_cast<uint32_t>(k) : o,
                       kb = own ? o : static_cast<uint32_t>(k);
        const double Ra = s.rs[ka], Rb = s.rs[kb];
        const double rr = Ra + Rb;
        const Vec2d xa = s.xs[ka];
        const Vec2d dx = s.xs[kb] - xa;
        if (!(length2(dx) < rr * rr)) continue;
        const uint32_t ia = own ? i : j, ib = own ? j : i;
        if (bonded_intact(s, ia, ib)) continue;  // bonds are handled by the bond pass
        if (own && used == kSlots) {
          ++n_overflow;
          continue;
        }
        ContactHistory h;
        if (have_prev) {
          const size_t hb = static_cast<size_t>(ia) * kSlots;
          for (int q = 0; q < kSlots; ++q)
            if (s.slot_j_prev[hb + q] == ib) {
              h.xi = s.slot_xi_prev[hb + q];
              h.mr = s.slot_mr_prev[hb + q];
              break;
            }
        }
        const double d = length(dx);
        const Vec2d nrm = d > 0.0 ? dx / d : Vec2d{1.0, 0.0};
        const Vec2d t = perp(nrm);
        const double delta = rr - d;
        const double aa = Ra - 0.5 * delta, ab = Rb - 0.5 * delta;
        const double wa = s.ws[ka], wb = s.ws[kb];
        const Vec2d dv = s.vs[kb] - s.vs[ka];
        const double vn = dot(dv, nrm);
        const double vt = dot(dv, t) - (aa * wa + ab * wb);
        const double R_eff = Ra * Rb / rr;
        const double ma = s.ms[ka], mb = s.ms[kb];
        const double m_eff = ma * mb / (ma + mb);
        const PairProps& pp = props[static_cast<size_t>(s.mats[ka]) * mc + s.mats[kb]];
        const double I_roll = rolling_inertia(s.is[ka], ma, Ra, s.is[kb], mb, Rb);
        const ContactForce f =
            hertz_mindlin(pp, R_eff, m_eff, I_roll, delta, vn, vt, wa - wb, ip.dt, h);
        const Vec2d f_a = -(f.fn * nrm + f.ft * t);
        const double t_a = -aa * f.ft + f.m_roll, t_b = -ab * f.ft - f.m_roll;
        if (own) {
          const size_t q = base + used++;
          s.slot_j[q] = j;
          s.slot_xi[q] = h.xi;
          s.slot_mr[q] = h.mr;
          s.slot_f[q] = f_a;
          s.slot_point[q] = xa + aa * nrm;
          s.slot_ti[q] = t_a;
          s.slot_tj[q] = t_b;
          s.slot_overlap[q] = delta;
          F += f_a;
          M += t_a;
        } else {
          F -= f_a;
          M += t_b;
        }
      }
    }
    for (int q = used; q < kSlots; ++q) s.slot_j[base + q] = kEmpty;
    n_contacts = static_cast<unsigned>(used);
    const Vec2d vi = s.vs[k];
    const double wi = s.ws[k], mi = s.ms[k], Ii = s.is[k];
    // Walls: the wall plays "i" (infinite radius, mass and inertia; it may
    // move); dense history per (particle, wall), touched by this thread only.
    // Reactions (forces on the walls) are summed with double atomics.
    for (int w = 0; w < nw; ++w) {
      const size_t kw = static_cast<size_t>(i) * nw + w;
      Vec2d nrm;
      double delta;
      if (!wall_contact(walls[w], xi, Ri, nrm, delta)) {
        s.wall_on[kw] = 0;
        continue;
      }
      ContactHistory h;
      if (have_prev && s.wall_on[kw]) {
        h.xi = s.wall_xi[kw];
        h.mr = s.wall_mr[kw];
      }
      const PairProps& pp = props[static_cast<size_t>(walls[w].material) * mc + s.mats[k]];
      const WallContact f = wall_force(walls[w], pp, nrm, delta, xi, vi, wi, Ri, mi, Ii, ip.dt, h);
      s.wall_on[kw] = 1;
      s.wall_xi[kw] = h.xi;
      s.wall_mr[kw] = h.mr;
      s.wall_f[kw] = f.f;
      s.wall_point[kw] = f.point;
      s.wall_t[kw] = f.t_p;
      s.wall_tw[kw] = f.t_w;
      s.wall_overlap[kw] = delta;
      F += f.f;
      M += f.t_p;
      if (reaction) {
        atomicAdd(&reaction[3 * w], -f.f.x);
        atomicAdd(&reaction[3 * w + 1], -f.f.y);
        atomicAdd(&reaction[3 * w + 2], f.t_w);
      }
      ++n_walls;
    }
    // Bonds: this particle's bonds as i, then as j.
    for (uint32_t kb = s.bond_start[i]; kb < s.bond_start[i + 1]; ++kb)
      if (!s.broken[kb]) {
        F += s.bforce[kb];
        M += s.bt_i[kb];
      }
    for (uint32_t q = s.bond_j_start[i]; q < s.bond_j_start[i + 1]; ++q) {
      const uint32_t kb = s.bond_j_list[q];
      if (!s.broken[kb]) {
        F -= s.bforce[kb];
        M += s.bt_j[kb];
      }
    }
    // Body forces, tools and damping, then symplectic Euler (as the CPU).
    const Vec2d x0 = xi;
    F += mi * ip.g;
    if (ip.use_fext) F += s.fext[i];
    if (ip.load_count > 0) {
      const uint16_t grp = s.group[i];
      for (int l = 0; l < ip.load_count; ++l)
        if (grp == ip.loads[l].group) F += ip.load_share[l];
    }
    if (ip.point.active) {
      Vec2d d = Vec2d{ip.point.pos.x, ip.point.pos.y} - x0;
      double r = length(d);
      if (r < ip.point.radius && r > 1e-12)
        F += (mi * ip.point.strength * (1.0 - r / ip.point.radius) / r) * d;
    }
    F.x = local_damp(F.x, vi.x, ip.alpha);
    F.y = local_damp(F.y, vi.y, ip.alpha);
    M = local_damp(M, wi, ip.alpha);
    if (ip.grab_slot && ip.grab_slot[i] >= 0) {
      const double kd = 2.0 * sqrt(ip.grab_ks);
      Vec2d d = ip.grab_target + ip.grab_offset[ip.grab_slot[i]] - x0;
      F += mi * (ip.grab_ks * d - kd * vi);
    }
    Vec2d v = vi;
    double omega = wi;
    if (!s.fixed[i]) {
      v += (ip.dt / mi) * F;
      omega += ip.dt * M / Ii;
    }
    const Vec2d x = x0 + ip.dt * v;
    const double theta = s.theta[i] + ip.dt * omega;
    s.v[i] = v;
    s.omega[i] = omega;
    s.x[i] = x;
    s.theta[i] = theta;
    const double s2 = length2(v);
    if (!(s2 <= ip.vlim2) || !isfinite(x.x) || !isfinite(x.y) || !isfinite(omega) ||
        !isfinite(theta))
      bad = i;
    else
      vmax2 = static_cast<unsigned long long>(__double_as_longlong(s2));
  }
  n_contacts = warp_sum(n_contacts);
  n_walls = warp_sum(n_walls);
  n_overflow = warp_sum(n_overflow);
  bad = warp_min(bad);
  vmax2 = warp_max(vmax2);
  if (lane0()) {
    if (n_contacts) atomicAdd(&c->contacts, n_contacts);
    if (n_walls) atomicAdd(&c->wall_contacts, n_walls);
    if (n_overflow) atomicAdd(&c->overflow, n_overflow);
    if (bad != ~0ull) atomicMin(&c->bad, bad);
    if (vmax2) atomicMax(&c->vmax2, vmax2);
  }
}

// [SECTION] Totals (the window's plots) -------------------------------------------------------
//
// A fixed-order reduction in double: each thread sums a strided set of
// particles, the block adds its threads in a fixed tree, one thread then adds
// the blocks in order. The grid is fixed (kTotalsBlocks), so the bits never
// depend on scheduling. Per particle the terms are compute_diagnostics'.

constexpr int kTotalsThreads = 256;
constexpr int kTotalsBlocks = 512;
constexpr int kTotalsSums = 6;  // mass, momentum x, y, angular momentum, kinetic, rotational energy

struct DevTotals {
  double sum[kTotalsSums];
  double vmax2;
};

__global__ void __launch_bounds__(kTotalsThreads)
    totals_kernel(const Vec2d* x, const Vec2d* v, const double* omega, const double* mass,
                  const double* inertia, int n, Vec2d c, double* partial, double* vmax2) {
  __shared__ double sh[kTotalsSums][kTotalsThreads];
  __shared__ double shv[kTotalsThreads];
  double acc[kTotalsSums] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  double vm = 0.0;
  for (int k = blockIdx.x * kTotalsThreads + threadIdx.x; k < n; k += gridDim.x * kTotalsThreads) {
    const double m = mass[k], vx = v[k].x, vy = v[k].y, w = omega[k], I = inertia[k];
    const double rx = x[k].x - c.x, ry = x[k].y - c.y;
    const double rot = 0.5 * I * w * w;
    acc[0] += m;
    acc[1] += m * vx;
    acc[2] += m * vy;
    acc[3] += m * (rx * vy - ry * vx) + I * w;
    acc[4] += 0.5 * m * (vx * vx + vy * vy) + rot;
    acc[5] += rot;
    vm = fmax(vm, vx * vx + vy * vy);
  }
  for (int q = 0; q < kTotalsSums; ++q) sh[q][threadIdx.x] = acc[q];
  shv[threadIdx.x] = vm;
  __syncthreads();
  for (int w = kTotalsThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      for (int q = 0; q < kTotalsSums; ++q) sh[q][threadIdx.x] += sh[q][threadIdx.x + w];
      shv[threadIdx.x] = fmax(shv[threadIdx.x], shv[threadIdx.x + w]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    for (int q = 0; q < kTotalsSums; ++q) partial[kTotalsSums * blockIdx.x + q] = sh[q][0];
    vmax2[blockIdx.x] = shv[0];
  }
}

/// The blocks' sums in block order (one thread: a few hundred additions).
__global__ void totals_final_kernel(const double* partial, const double* vmax2, int blocks,
                                    DevTotals* out) {
  DevTotals t{};
  for (int b = 0; b < blocks; ++b) {
    for (int q = 0; q < kTotalsSums; ++q) t.sum[q] += partial[kTotalsSums * b + q];
    t.vmax2 = fmax(t.vmax2, vmax2[b]);
  }
  *out = t;
}

/// Byte offsets of the columns the checkpoint copies (what a step changes):
/// x, v, theta, omega per particle; shear displacement, bend angle, broken,
/// mode, break step, sigma, tau and force per bond.
struct CheckpointLayout {
  enum {
    kX = 0,
    kV,
    kTheta,
    kOmega,
    kShear,
    kBend,
    kBroken,
    kMode,
    kBreakStep,
    kSigma,
    kTau,
    kForce,
    kCount
  };
  size_t off[kCount + 1] = {};
  CheckpointLayout(size_t n, size_t nb) {
    const size_t size[kCount] = {sizeof(Vec2d) * n,
                                 sizeof(Vec2d) * n,
                                 sizeof(double) * n,
                                 sizeof(double) * n,
                                 sizeof(double) * nb,
                                 sizeof(double) * nb,
                                 nb,
                                 nb,
                                 sizeof(int64_t) * nb,
                                 sizeof(float) * nb,
                                 sizeof(float) * nb,
                                 sizeof(Vec2d) * nb};
    ColumnPacker pack;
    for (int c = 0; c < kCount; ++c) off[c] = pack.add(size[c]);
    off[kCount] = pack.bytes();
  }
  size_t bytes() const { return off[kCount]; }
};

}  // namespace

// [SECTION] Backend ----------------------------------------------------------------------------

class DemCudaBackend final : public DemBackend {
 public:
  DemCudaBackend() {
    auto devs = cuda_devices();
    device_name_ = devs.empty() ? std::string("?") : devs[0].name;
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaMalloc(reinterpret_cast<void**>(&counters_), sizeof(Counters)), "cudaMalloc");
    check(cudaMallocHost(reinterpret_cast<void**>(&counters_host_), 2 * sizeof(Counters)),
          "cudaMallocHost");
    std::memset(&s_, 0, sizeof s_);
  }
  ~DemCudaBackend() override {
    for (void* p : allocations()) cudaFree(p);
    cudaFree(counters_);
    cudaFreeHost(counters_host_);
    cudaFree(sort_temp_);
    cudaFree(props_);
    cudaFree(walls_);
    cudaFree(reaction_);
    cudaFree(loads_);
    cudaFree(load_share_);
    cudaFree(grab_slot_);
    cudaFree(grab_offset_);
    cudaFree(tot_partial_);
    cudaFree(tot_vmax_);
    cudaFree(tot_out_);
    cudaFreeHost(tot_host_);
  }

  std::string name() const override { return "cuda (" + device_name_ + ")"; }
  void bind(DemParticles* particles, DemBonds* bonds) override {
    p_ = particles;
    b_ = bonds;
    host_changed();  // the state now, as the CPU backend takes it: the window draws it before any step
  }

  void host_changed() override {
    const size_t n = p_->size(), nb = b_->size();
    n_ = n;
    nb_ = nb;
    dev_resize(s_.x, cap_[0], n);
    dev_resize(s_.v, cap_[1], n);
    dev_resize(s_.fext, cap_[2], n);
    dev_resize(s_.theta, cap_[3], n);
    dev_resize(s_.omega, cap_[4], n);
    dev_resize(s_.radius, cap_[5], n);
    dev_resize(s_.mass, cap_[6], n);
    dev_resize(s_.inertia, cap_[7], n);
    dev_resize(s_.material, cap_[8], n);
    dev_resize(s_.fixed, cap_[9], n);
    dev_resize(s_.group, cap_[10], n);
    dev_resize(s_.bt_i, cap_[12], nb);
    dev_resize(s_.bt_j, cap_[11], nb);
    dev_resize(s_.bi, cap_[13], nb);
    dev_resize(s_.bj, cap_[14], nb);
    dev_resize(s_.bond_start, cap_[15], n + 1);
    dev_resize(s_.bond_j_start, cap_[47], n + 1);
    dev_resize(s_.bond_j_list, cap_[48], nb);
    dev_resize(s_.length0, cap_[16], nb);
    dev_resize(s_.shear_disp, cap_[17], nb);
    dev_resize(s_.bend_angle, cap_[18], nb);
    dev_resize(s_.broken, cap_[19], nb);
    dev_resize(s_.mode, cap_[20], nb);
    dev_resize(s_.break_step, cap_[21], nb);
    dev_resize(s_.sigma, cap_[22], nb);
    dev_resize(s_.tau, cap_[23], nb);
    dev_resize(s_.bforce, cap_[24], nb);
    const size_t ns = n * kSlots;
    dev_resize(s_.slot_j_prev, cap_[25], ns);
    dev_resize(s_.slot_j, cap_[26], ns);
    dev_resize(s_.slot_xi_prev, cap_[27], ns);
    dev_resize(s_.slot_mr_prev, cap_[28], ns);
    dev_resize(s_.slot_xi, cap_[29], ns);
    dev_resize(s_.slot_mr, cap_[30], ns);
    dev_resize(s_.slot_f, cap_[31], ns);
    dev_resize(s_.slot_point, cap_[32], ns);
    dev_resize(s_.slot_ti, cap_[33], ns);
    dev_resize(s_.slot_tj, cap_[34], ns);
    dev_resize(s_.slot_overlap, cap_[35], ns);
    dev_resize(s_.cell_key, cap_[36], n);
    dev_resize(s_.cell_item, cap_[37], n);
    dev_resize(s_.sorted_key, cap_[49], n);
    dev_resize(s_.sorted_item, cap_[50], n);
    dev_resize(s_.xs, cap_[51], n);
    dev_resize(s_.vs, cap_[52], n);
    dev_resize(s_.ws, cap_[53], n);
    dev_resize(s_.rs, cap_[54], n);
    dev_resize(s_.ms, cap_[55], n);
    dev_resize(s_.is, cap_[56], n);
    dev_resize(s_.mats, cap_[57], n);
    const DemParticles& p = *p_;
    upload(s_.x, p.x.data(), n);
    upload(s_.v, p.v.data(), n);
    upload(s_.fext, p.fext.data(), n);
    upload(s_.theta, p.theta.data(), n);
    upload(s_.omega, p.omega.data(), n);
    upload(s_.radius, p.radius.data(), n);
    upload(s_.mass, p.mass.data(), n);
    upload(s_.inertia, p.inertia.data(), n);
    upload(s_.material, p.material.data(), n);
    upload(s_.fixed, p.fixed.data(), n);
    upload(s_.group, p.group.data(), n);
    const DemBonds& b = *b_;
    upload(s_.bi, b.i.data(), nb);
    upload(s_.bj, b.j.data(), nb);
    upload(s_.length0, b.length0.data(), nb);
    upload(s_.shear_disp, b.shear_disp.data(), nb);
    upload(s_.bend_angle, b.bend_angle.data(), nb);
    upload(s_.broken, b.broken.data(), nb);
    std::vector<uint8_t> mode(nb);
    for (size_t k = 0; k < nb; ++k) mode[k] = static_cast<uint8_t>(b.mode[k]);
    upload(s_.mode, mode.data(), nb);
    upload(s_.break_step, b.break_step.data(), nb);
    upload(s_.sigma, b.sigma.data(), nb);
    upload(s_.tau, b.tau.data(), nb);
    upload(s_.bforce, b.force.data(), nb);
    // Each particle's bonds as i (bonds are sorted by (i, j)).
    std::vector<uint32_t> start(n + 1, 0);
    for (size_t k = 0; k < nb; ++k) ++start[b.i[k] + 1];
    for (size_t i = 0; i < n; ++i) start[i + 1] += start[i];
    upload(s_.bond_start, start.data(), n + 1);
    // ... and as j: bond indices grouped by j (ascending k within each j).
    std::vector<uint32_t> jstart(n + 1, 0), jlist(nb);
    for (size_t k = 0; k < nb; ++k) ++jstart[b.j[k] + 1];
    for (size_t i = 0; i < n; ++i) jstart[i + 1] += jstart[i];
    {
      std::vector<uint32_t> cursor(jstart.begin(), jstart.end() - 1);
      for (size_t k = 0; k < nb; ++k) jlist[cursor[b.j[k]]++] = static_cast<uint32_t>(k);
    }
    upload(s_.bond_j_start, jstart.data(), n + 1);
    upload(s_.bond_j_list, jlist.data(), nb);
    // Group sizes for the loads.
    group_count_.clear();
    for (uint16_t g : p.group) {
      if (g >= group_count_.size()) group_count_.resize(static_cast<size_t>(g) + 1, 0);
      ++group_count_[g];
    }
    host_extent();
    have_prev_ = false;
    host_current_ = true;
    walls_n_ = -1;
    grab_cache_.clear();
  }

  void sync_to_host() override {
    // Nothing to copy when no step ran since the host arrays were the state
    // (a click in the window syncs for the table, then again for the grab).
    if (n_ != p_->size() || nb_ != b_->size() || host_current_) return;
    check(cudaDeviceSynchronize(), "sync");
    // Into a host staging copy first: a failure part way (the device is lost)
    // leaves the host arrays whole, the last good state the world falls back on.
    Staging& t = stage_;
    t.x.resize(n_);
    t.v.resize(n_);
    t.theta.resize(n_);
    t.omega.resize(n_);
    t.shear_disp.resize(nb_);
    t.bend_angle.resize(nb_);
    t.broken.resize(nb_);
    t.break_step.resize(nb_);
    t.sigma.resize(nb_);
    t.tau.resize(nb_);
    t.force.resize(nb_);
    t.mode.resize(nb_);
    download(t.x.data(), s_.x, n_);
    download(t.v.data(), s_.v, n_);
    download(t.theta.data(), s_.theta, n_);
    download(t.omega.data(), s_.omega, n_);
    download(t.shear_disp.data(), s_.shear_disp, nb_);
    download(t.bend_angle.data(), s_.bend_angle, nb_);
    download(t.broken.data(), s_.broken, nb_);
    download(t.break_step.data(), s_.break_step, nb_);
    download(t.sigma.data(), s_.sigma, nb_);
    download(t.tau.data(), s_.tau, nb_);
    download(t.force.data(), s_.bforce, nb_);
    download(t.mode.data(), s_.mode, nb_);
    DemParticles& p = *p_;
    std::copy(t.x.begin(), t.x.end(), p.x.begin());
    std::copy(t.v.begin(), t.v.end(), p.v.begin());
    std::copy(t.theta.begin(), t.theta.end(), p.theta.begin());
    std::copy(t.omega.begin(), t.omega.end(), p.omega.begin());
    DemBonds& b = *b_;
    std::copy(t.shear_disp.begin(), t.shear_disp.end(), b.shear_disp.begin());
    std::copy(t.bend_angle.begin(), t.bend_angle.end(), b.bend_angle.begin());
    std::copy(t.broken.begin(), t.broken.end(), b.broken.begin());
    std::copy(t.break_step.begin(), t.break_step.end(), b.break_step.begin());
    std::copy(t.sigma.begin(), t.sigma.end(), b.sigma.begin());
    std::copy(t.tau.begin(), t.tau.end(), b.tau.begin());
    std::copy(t.force.begin(), t.force.end(), b.force.begin());
    for (size_t k = 0; k < nb_; ++k) b.mode[k] = static_cast<BondBreak>(t.mode[k]);
    host_extent();
    host_current_ = true;
  }

  DemStepResult step(const DemStepInput& in) override {
    if (p_->size() != n_ || b_->size() != nb_) host_changed();
    const int n = static_cast<int>(n_), nb = static_cast<int>(nb_);
    DemStepResult result;
    if (n == 0) return result;
    host_current_ =
        false;  // from the first launch on, the device state moves away from the host arrays
    // Host work per step: a few small tables when they changed, and one
    // read of the counters at the end (the step's only synchronisation).
    upload_tables(in);
    if (in.use_fext) upload(s_.fext, p_->fext.data(), n_);
    const CellGrid g = cell_grid(in);
    Counters& init = counters_host_[1];
    init = Counters{~0ull, 0ull, ~0ull, 0u, 0u, 0u, 0u};
    check(cudaMemcpyAsync(counters_, &init, sizeof init, cudaMemcpyHostToDevice, 0), "counters");
    const int pb = (n + 255) / 256;
    if (nb > 0) bond_kernel<<<(nb + 255) / 256, 256>>>(s_, nb, in.bond, in.step, counters_);
    // Broad phase: sort (cell, index) pairs, then gather into cell order.
    cell_key_kernel<<<pb, 256>>>(s_.x, n, g, s_.cell_key, s_.cell_item);
    size_t need = 0;
    check(cub::DeviceRadixSort::SortPairs(nullptr, need, s_.cell_key, s_.sorted_key, s_.cell_item,
                                          s_.sorted_item, n, 0, key_bits_),
          "cub sort size");
    if (need > sort_temp_bytes_) {
      if (sort_temp_) cudaFree(sort_temp_);
      sort_temp_ = nullptr;
      sort_temp_bytes_ = 0;
      check(cudaMalloc(&sort_temp_, need), "cudaMalloc");
      sort_temp_bytes_ = need;
    }
    size_t bytes = sort_temp_bytes_;
    check(cub::DeviceRadixSort::SortPairs(sort_temp_, bytes, s_.cell_key, s_.sorted_key,
                                          s_.cell_item, s_.sorted_item, n, 0, key_bits_),
          "cub sort");
    const size_t nc = static_cast<size_t>(g.gx) * g.gy;
    check(cudaMemsetAsync(s_.cell_start, 0xFF, nc * sizeof(uint32_t)), "cells");
    gather_sorted_kernel<<<pb, 256>>>(s_, n);
    // Last step's contacts become this step's history.
    std::swap(s_.slot_j, s_.slot_j_prev);
    std::swap(s_.slot_xi, s_.slot_xi_prev);
    std::swap(s_.slot_mr, s_.slot_mr_prev);
    std::swap(cap_[26], cap_[25]);
    std::swap(cap_[29], cap_[27]);
    std::swap(cap_[30], cap_[28]);
    IntegrateParams ip{};
    ip.dt = in.dt;
    ip.alpha = in.solver.local_damping;
    ip.vlim2 = in.solver.velocity_limit * in.solver.velocity_limit;
    ip.g = in.solver.gravity;
    ip.use_fext = in.use_fext;
    ip.loads = loads_;
    ip.load_share = load_share_;
    ip.load_count = in.load_count;
    ip.point = in.point;
    ip.grab_slot = in.grab.count > 0 ? grab_slot_ : nullptr;
    ip.grab_offset = grab_offset_;
    ip.grab_target = in.grab.target;
    ip.grab_ks = in.grab.stiffness;
    double* reaction = nullptr;
    const size_t nr = 3 * static_cast<size_t>(std::max(in.wall_count, 0));
    if (in.wall_reaction && nr > 0) {
      dev_resize(reaction_, reaction_cap_, nr);
      check(cudaMemsetAsync(reaction_, 0, nr * sizeof(double)), "wall reaction");
      reaction = reaction_;
    }
    force_kernel<<<(n + 127) / 128, 128>>>(s_, n, props_, in.material_count, walls_, in.wall_count,
                                           reaction, g, have_prev_, ip, counters_);
    have_prev_ = true;
    if (nb > 0) bond_advance_kernel<<<(nb + 255) / 256, 256>>>(s_, nb, in.dt);
    check(cudaGetLastError(), "DEM kernel launch");
    Counters& c = counters_host_[0];
    check(cudaMemcpyAsync(&c, counters_, sizeof c, cudaMemcpyDeviceToHost, 0), "counters");
    check(cudaStreamSynchronize(0), "DEM step");
    if (in.wall_reaction) {
      if (reaction)
        download(in.wall_reaction, reaction, nr);
      else
        std::fill(in.wall_reaction, in.wall_reaction + nr, 0.0);
    }
    if (c.overflow)
      throw std::runtime_error(
          "CUDA DEM: a particle has more than " + std::to_string(kSlots) +
          " simultaneous contacts (very polydisperse packing); use the CPU backend");
    if (c.bad != ~0ull) {
      result.ok = false;
      result.bad_index = static_cast<int64_t>(c.bad);
    }
    double vmax2;
    std::memcpy(&vmax2, &c.vmax2, sizeof vmax2);
    result.max_speed = std::sqrt(vmax2);
    result.bonds_broken = static_cast<int>(c.broken);
    if (c.broken && c.first_broken != ~0ull) {
      result.first_broken = static_cast<int64_t>(c.first_broken >> 2);
      result.first_broken_mode = static_cast<BondBreak>(c.first_broken & 3u);
    }
    result.contacts = c.contacts;
    result.wall_contacts = c.wall_contacts;
    return result;
  }

  const DemDeviceView* device_view() override {
    DemDeviceView& v = view_;
    v.count = n_;
    v.x = s_.x;
    v.v = s_.v;
    v.theta = s_.theta;
    v.omega = s_.omega;
    v.radius = s_.radius;
    v.mass = s_.mass;
    v.inertia = s_.inertia;
    v.material = s_.material;
    v.group = s_.group;
    v.bond_count = nb_;
    v.bond_i = s_.bi;
    v.bond_j = s_.bj;
    v.length0 = s_.length0;
    v.shear_disp = s_.shear_disp;
    v.bend_angle = s_.bend_angle;
    v.broken = s_.broken;
    v.mode = s_.mode;
    v.break_step = s_.break_step;
    v.sigma = s_.sigma;
    v.tau = s_.tau;
    v.force = s_.bforce;
    v.bond_start = s_.bond_start;
    v.bond_j_start = s_.bond_j_start;
    v.bond_j_list = s_.bond_j_list;
    v.stream = nullptr;  // every launch and copy of this backend is on the legacy default stream
    v.device = 0;
    return &view_;
  }

  bool device_totals(Vec2d centre, DemTotals& out) override {
    out = DemTotals{};
    if (n_ == 0 || n_ != p_->size()) return n_ == 0;
    if (!tot_out_) {
      check(cudaMalloc(reinterpret_cast<void**>(&tot_partial_),
                       sizeof(double) * kTotalsSums * kTotalsBlocks),
            "cudaMalloc");
      check(cudaMalloc(reinterpret_cast<void**>(&tot_vmax_), sizeof(double) * kTotalsBlocks),
            "cudaMalloc");
      check(cudaMalloc(reinterpret_cast<void**>(&tot_out_), sizeof(DevTotals)), "cudaMalloc");
      check(cudaMallocHost(reinterpret_cast<void**>(&tot_host_), sizeof(DevTotals)),
            "cudaMallocHost");
    }
    const int blocks = static_cast<int>(
        std::min<size_t>(kTotalsBlocks, (n_ + kTotalsThreads - 1) / kTotalsThreads));
    totals_kernel<<<blocks, kTotalsThreads>>>(s_.x, s_.v, s_.omega, s_.mass, s_.inertia,
                                              static_cast<int>(n_), centre, tot_partial_,
                                              tot_vmax_);
    totals_final_kernel<<<1, 1>>>(tot_partial_, tot_vmax_, blocks, tot_out_);
    check(cudaGetLastError(), "totals");
    check(cudaMemcpyAsync(tot_host_, tot_out_, sizeof(DevTotals), cudaMemcpyDeviceToHost, 0),
          "totals");
    check(cudaStreamSynchronize(0), "totals");
    out.mass = tot_host_->sum[0];
    out.momentum[0] = tot_host_->sum[1];
    out.momentum[1] = tot_host_->sum[2];
    out.angular_momentum = tot_host_->sum[3];
    out.kinetic_energy = tot_host_->sum[4];
    out.rotational_energy = tot_host_->sum[5];
    out.max_speed = std::sqrt(tot_host_->vmax2);
    return true;
  }

  bool checkpoint_begin() override {
    if (n_ == 0 || n_ != p_->size() || nb_ != b_->size()) return false;
    const CheckpointLayout lay(n_, nb_);
    // Device-side copies after the steps launched so far (legacy stream: in
    // order with them), then the transfer on the copy stream while stepping
    // goes on.
    char* dst = ckpt_.stage(lay.bytes(), 0);
    auto cp = [&](int col, const void* src, size_t bytes) {
      if (bytes)
        check(cudaMemcpyAsync(dst + lay.off[col], src, bytes, cudaMemcpyDeviceToDevice, 0),
              "checkpoint");
    };
    using L = CheckpointLayout;
    cp(L::kX, s_.x, sizeof(Vec2d) * n_);
    cp(L::kV, s_.v, sizeof(Vec2d) * n_);
    cp(L::kTheta, s_.theta, sizeof(double) * n_);
    cp(L::kOmega, s_.omega, sizeof(double) * n_);
    cp(L::kShear, s_.shear_disp, sizeof(double) * nb_);
    cp(L::kBend, s_.bend_angle, sizeof(double) * nb_);
    cp(L::kBroken, s_.broken, nb_);
    cp(L::kMode, s_.mode, nb_);
    cp(L::kBreakStep, s_.break_step, sizeof(int64_t) * nb_);
    cp(L::kSigma, s_.sigma, sizeof(float) * nb_);
    cp(L::kTau, s_.tau, sizeof(float) * nb_);
    cp(L::kForce, s_.bforce, sizeof(Vec2d) * nb_);
    ckpt_.start(lay.bytes(), 0);
    prev_n_ = ckpt_n_;
    prev_nb_ = ckpt_nb_;
    ckpt_n_ = n_;
    ckpt_nb_ = nb_;
    return true;
  }

  bool checkpoint_arrived() override { return ckpt_.arrived(); }

  bool checkpoint_restore(bool previous) override {
    const char* mem = previous ? ckpt_.previous() : ckpt_.has_arrived() ? ckpt_.host() : nullptr;
    const size_t n = previous ? prev_n_ : ckpt_n_, nb = previous ? prev_nb_ : ckpt_nb_;
    if (!mem || p_->size() != n || b_->size() != nb) return false;
    using L = CheckpointLayout;
    const L lay(n, nb);
    auto col = [&](int c, auto* dst, size_t count) {
      if (count) std::memcpy(dst, mem + lay.off[c], count * sizeof(*dst));
    };
    DemParticles& p = *p_;
    DemBonds& b = *b_;
    col(L::kX, p.x.data(), n);
    col(L::kV, p.v.data(), n);
    col(L::kTheta, p.theta.data(), n);
    col(L::kOmega, p.omega.data(), n);
    col(L::kShear, b.shear_disp.data(), nb);
    col(L::kBend, b.bend_angle.data(), nb);
    col(L::kBroken, b.broken.data(), nb);
    const uint8_t* mode = reinterpret_cast<const uint8_t*>(mem + lay.off[L::kMode]);
    for (size_t k = 0; k < nb; ++k) b.mode[k] = static_cast<BondBreak>(mode[k]);
    col(L::kBreakStep, b.break_step.data(), nb);
    col(L::kSigma, b.sigma.data(), nb);
    col(L::kTau, b.tau.data(), nb);
    col(L::kForce, b.force.data(), nb);
    return true;
  }

  void read_contacts(std::vector<DemContact>& pairs,
                     std::vector<DemContact>& walls) const override {
    pairs.clear();
    walls.clear();
    if (!have_prev_ || n_ == 0) return;
    const size_t ns = n_ * kSlots;
    std::vector<uint32_t> j(ns);
    std::vector<double> xi(ns), mr(ns), ti(ns), tj(ns), ov(ns);
    std::vector<Vec2d> f(ns), pt(ns);
    download(j.data(), s_.slot_j, ns);
    download(xi.data(), s_.slot_xi, ns);
    download(mr.data(), s_.slot_mr, ns);
    download(ti.data(), s_.slot_ti, ns);
    download(tj.data(), s_.slot_tj, ns);
    download(ov.data(), s_.slot_overlap, ns);
    download(f.data(), s_.slot_f, ns);
    download(pt.data(), s_.slot_point, ns);
    for (size_t k = 0; k < ns; ++k) {
      if (j[k] == kEmpty) continue;
      DemContact c;
      c.i = static_cast<uint32_t>(k / kSlots);
      c.j = j[k];
      c.point = pt[k];
      c.f_i = f[k];
      c.t_i = ti[k];
      c.t_j = tj[k];
      c.overlap = ov[k];
      c.xi = xi[k];
      c.mr = mr[k];
      pairs.push_back(c);
    }
    // Slots hold each particle's partners in cell order; the interface (and
    // the CPU) list pairs sorted by i, then j.
    std::sort(pairs.begin(), pairs.end(), [](const DemContact& a, const DemContact& b) {
      return a.i != b.i ? a.i < b.i : a.j < b.j;
    });
    if (walls_n_ <= 0) return;
    const size_t nw = n_ * static_cast<size_t>(walls_n_);
    std::vector<uint8_t> on(nw);
    std::vector<Vec2d> wf(nw), wp(nw);
    std::vector<double> wt(nw), wtw(nw), wxi(nw), wmr(nw), wov(nw);
    download(on.data(), s_.wall_on, nw);
    download(wf.data(), s_.wall_f, nw);
    download(wp.data(), s_.wall_point, nw);
    download(wt.data(), s_.wall_t, nw);
    download(wtw.data(), s_.wall_tw, nw);
    download(wxi.data(), s_.wall_xi, nw);
    download(wmr.data(), s_.wall_mr, nw);
    download(wov.data(), s_.wall_overlap, nw);
    for (size_t k = 0; k < nw; ++k) {
      if (!on[k]) continue;
      DemContact c;
      c.i = static_cast<uint32_t>(k / walls_n_);
      c.j = static_cast<uint32_t>(k % walls_n_);
      c.point = wp[k];
      c.f_i = wf[k];
      c.t_i = wt[k];
      c.t_j = wtw[k];
      c.overlap = wov[k];
      c.xi = wxi[k];
      c.mr = wmr[k];
      walls.push_back(c);
    }
  }

 private:
  std::vector<void*> allocations() {
    return {s_.x,
            s_.v,
            s_.fext,
            s_.theta,
            s_.omega,
            s_.radius,
            s_.mass,
            s_.inertia,
            s_.material,
            s_.fixed,
            s_.group,
            s_.bt_i,
            s_.bt_j,
            s_.bi,
            s_.bj,
            s_.bond_start,
            s_.bond_j_start,
            s_.bond_j_list,
            s_.length0,
            s_.shear_disp,
            s_.bend_angle,
            s_.broken,
            s_.mode,
            s_.break_step,
            s_.sigma,
            s_.tau,
            s_.bforce,
            s_.slot_j_prev,
            s_.slot_j,
            s_.slot_xi_prev,
            s_.slot_mr_prev,
            s_.slot_xi,
            s_.slot_mr,
            s_.slot_f,
            s_.slot_point,
            s_.slot_ti,
            s_.slot_tj,
            s_.slot_overlap,
            s_.wall_xi,
            s_.wall_mr,
            s_.wall_on,
            s_.wall_f,
            s_.wall_point,
            s_.wall_t,
            s_.wall_tw,
            s_.wall_overlap,
            s_.cell_key,
            s_.cell_item,
            s_.sorted_key,
            s_.sorted_item,
            s_.cell_start,
            s_.cell_end,
            s_.xs,
            s_.vs,
            s_.ws,
            s_.rs,
            s_.ms,
            s_.is,
            s_.mats};
  }

  /// The particles' bounding box and largest radius, from the host arrays
  /// (when they are the state: after host_changed and sync_to_host).
  void host_extent() {
    const DemParticles& p = *p_;
    double lx = 1e300, ly = 1e300, hx = -1e300, hy = -1e300, r = 0.0;
    for (size_t i = 0; i < p.size(); ++i) {
      const Vec2d x = p.x[i];
      r = std::max(r, p.radius[i]);
      if (!std::isfinite(x.x) || !std::isfinite(x.y)) continue;
      lx = std::min(lx, x.x);
      ly = std::min(ly, x.y);
      hx = std::max(hx, x.x);
      hy = std::max(hy, x.y);
    }
    if (!(lx <= hx)) lx = ly = hx = hy = 0.0;
    host_lo_ = Vec2d{lx, ly};
    host_hi_ = Vec2d{hx, hy};
    r_max_ = r;
  }

  /// Cells of 2 R_max (at least) over the scene's box and the particles'
  /// extent as last seen on the host, with a margin; at most max(1024, 4 n)
  /// cells. A particle that leaves it is clamped into the border cells, which
  /// keeps the search exact (only slower) until the next sync widens it.
  CellGrid cell_grid(const DemStepInput& in) {
    double cell = r_max_ > 0.0 ? 2.0 * r_max_ : 1.0;
    const Vec2d lo0{std::min(in.domain_lo.x, host_lo_.x), std::min(in.domain_lo.y, host_lo_.y)};
    const Vec2d hi0{std::max(in.domain_hi.x, host_hi_.x), std::max(in.domain_hi.y, host_hi_.y)};
    const double cap = std::max(1024.0, 4.0 * static_cast<double>(n_));
    auto cells = [&](double c) {
      return ((hi0.x - lo0.x) / c + 5.0) * ((hi0.y - lo0.y) / c + 5.0);
    };
    while (cells(cell) > cap) cell *= 2.0;
    CellGrid g;
    g.cell = cell;
    g.lo = Vec2d{lo0.x - 2.0 * cell, lo0.y - 2.0 * cell};
    g.gx = static_cast<int>((hi0.x - lo0.x) / cell) + 5;
    g.gy = static_cast<int>((hi0.y - lo0.y) / cell) + 5;
    const size_t nc = static_cast<size_t>(g.gx) * g.gy;
    if (nc > grid_cells_cap_) {
      dev_resize(s_.cell_start, cap_[38], nc);
      dev_resize(s_.cell_end, cap_[39], nc);
      grid_cells_cap_ = nc;
    }
    int bits = 1;
    while (bits < 32 && (1ull << bits) < nc) ++bits;
    key_bits_ = bits;
    grid_ = g;
    return g;
  }

  // Material pairs, walls, loads and the grab set: small tables uploaded
  // only when they change (loads: their shares, every step).
  void upload_tables(const DemStepInput& in) {
    const int mc = in.material_count;
    std::vector<PairProps> props(static_cast<size_t>(mc) * mc);
    for (int a = 0; a < mc; ++a)
      for (int c = 0; c < mc; ++c)
        props[static_cast<size_t>(a) * mc + c] = pair_props(in.materials[a], in.materials[c]);
    if (props_host_.size() != props.size() ||
        std::memcmp(props_host_.data(), props.data(), props.size() * sizeof(PairProps)) != 0) {
      size_t cap = 0;
      if (props_) cudaFree(props_);
      props_ = nullptr;
      dev_resize(props_, cap, props.size());
      upload(props_, props.data(), props.size());
      props_host_ = props;
    }
    // Walls: re-uploaded when edited (moving walls: every step), into a
    // buffer that is reallocated only when it must grow.
    if (walls_n_ != in.wall_count ||
        std::memcmp(walls_host_.data(), in.walls,
                    sizeof(DemWall) * static_cast<size_t>(in.wall_count)) != 0) {
      walls_host_.assign(in.walls, in.walls + in.wall_count);
      if (in.wall_count > 0) {
        dev_resize(walls_, walls_cap_, walls_host_.size());
        upload(walls_, walls_host_.data(), walls_host_.size());
      }
      // History is per (particle, wall index), as on the CPU: an edited or
      // moved wall keeps it; only a new layout (wall or particle count) drops it.
      const size_t nw = n_ * static_cast<size_t>(std::max(in.wall_count, 0));
      if (nw > 0 && walls_n_ != in.wall_count) {
        dev_resize(s_.wall_xi, cap_[40], nw);
        dev_resize(s_.wall_mr, cap_[41], nw);
        dev_resize(s_.wall_on, cap_[42], nw);
        dev_resize(s_.wall_f, cap_[43], nw);
        dev_resize(s_.wall_point, cap_[44], nw);
        dev_resize(s_.wall_t, cap_[45], nw);
        dev_resize(s_.wall_overlap, cap_[46], nw);
        dev_resize(s_.wall_tw, cap_[58], nw);
        check(cudaMemset(s_.wall_on, 0, nw), "walls");
      }
      walls_n_ = in.wall_count;
    }
    if (in.load_count > 0) {
      std::vector<Vec2d> share(static_cast<size_t>(in.load_count));
      for (int l = 0; l < in.load_count; ++l) {
        const uint16_t grp = in.loads[l].group;
        const size_t count = grp < group_count_.size() ? group_count_[grp] : 0;
        const Vec2d total = in.loads[l].force + in.time * in.loads[l].rate;
        share[static_cast<size_t>(l)] = count ? total / static_cast<double>(count) : Vec2d{};
      }
      size_t c1 = 0, c2 = 0;
      // The kernel reads the loads' groups: re-upload when one was edited.
      bool same = static_cast<int>(loads_host_.size()) == in.load_count;
      for (int l = 0; same && l < in.load_count; ++l)
        same = loads_host_[static_cast<size_t>(l)].group == in.loads[l].group;
      if (!same) {
        if (static_cast<int>(loads_host_.size()) != in.load_count) {
          if (loads_) cudaFree(loads_);
          if (load_share_) cudaFree(load_share_);
          loads_ = nullptr;
          load_share_ = nullptr;
          dev_resize(loads_, c1, share.size());
          dev_resize(load_share_, c2, share.size());
        }
        loads_host_.assign(in.loads, in.loads + in.load_count);
        upload(loads_, loads_host_.data(), loads_host_.size());
      }
      upload(load_share_, share.data(), share.size());
    }
    if (in.grab.count > 0) {
      std::vector<uint32_t> idx(in.grab.index, in.grab.index + in.grab.count);
      std::vector<Vec2d> off(in.grab.offset, in.grab.offset + in.grab.count);
      // A new grab of the same particles has new offsets: compare both.
      bool same_off = off.size() == grab_offset_cache_.size();
      for (size_t q = 0; same_off && q < off.size(); ++q)
        same_off = off[q] == grab_offset_cache_[q];
      if (idx != grab_cache_ || !same_off) {
        grab_cache_ = idx;
        grab_offset_cache_ = off;
        std::vector<int> slot(n_, -1);
        for (int q = 0; q < in.grab.count; ++q)
          if (idx[static_cast<size_t>(q)] < n_) slot[idx[static_cast<size_t>(q)]] = q;
        size_t c1 = 0, c2 = 0;
        if (grab_slot_) cudaFree(grab_slot_);
        if (grab_offset_) cudaFree(grab_offset_);
        grab_slot_ = nullptr;
        grab_offset_ = nullptr;
        dev_resize(grab_slot_, c1, n_);
        dev_resize(grab_offset_, c2, idx.size());
        upload(grab_slot_, slot.data(), n_);
        upload(grab_offset_, in.grab.offset, idx.size());
      }
    }
  }

  DemParticles* p_ = nullptr;
  DemBonds* b_ = nullptr;
  std::string device_name_;
  DevState s_;
  size_t cap_[64] = {};
  size_t n_ = 0, nb_ = 0;
  bool have_prev_ = false;
  bool host_current_ =
      false;  // the host arrays hold the device state (no step since host_changed / sync_to_host)
  Counters* counters_ = nullptr;
  PairProps* props_ = nullptr;
  std::vector<PairProps> props_host_;
  DemWall* walls_ = nullptr;
  size_t walls_cap_ = 0;
  std::vector<DemWall> walls_host_;
  double* reaction_ = nullptr;  // 3 per wall: Fx, Fy, torque about c (DemStepInput::wall_reaction)
  size_t reaction_cap_ = 0;
  int walls_n_ = -1;
  DemLoad* loads_ = nullptr;
  Vec2d* load_share_ = nullptr;
  std::vector<DemLoad> loads_host_;
  std::vector<size_t> group_count_;  // particles per group (loads share their force)
  // Cell grid: the particles' extent as last seen on the host (host_changed,
  // sync_to_host), their largest radius, and the grid of the last step.
  Vec2d host_lo_{0.0, 0.0}, host_hi_{0.0, 0.0};
  double r_max_ = 0.0;
  CellGrid grid_{};
  int key_bits_ = 1;
  size_t grid_cells_cap_ = 0;
  Counters* counters_host_ = nullptr;  // pinned: [0] read back, [1] initial values
  void* sort_temp_ = nullptr;
  size_t sort_temp_bytes_ = 0;
  int* grab_slot_ = nullptr;
  Vec2d* grab_offset_ = nullptr;
  std::vector<uint32_t> grab_cache_;
  std::vector<Vec2d> grab_offset_cache_;
  DemDeviceView view_;
  // device_totals' scratch.
  double *tot_partial_ = nullptr, *tot_vmax_ = nullptr;
  DevTotals *tot_out_ = nullptr, *tot_host_ = nullptr;
  // The background checkpoint (columns as CheckpointLayout) and the sizes of
  // its last copy and of the one before.
  BackgroundCopy ckpt_;
  size_t ckpt_n_ = 0, ckpt_nb_ = 0, prev_n_ = 0, prev_nb_ = 0;
  // sync_to_host's host staging copy.
  struct Staging {
    std::vector<Vec2d> x, v, force;
    std::vector<double> theta, omega, shear_disp, bend_angle;
    std::vector<uint8_t> broken, mode;
    std::vector<int64_t> break_step;
    std::vector<float> sigma, tau;
  } stage_;
};

std::unique_ptr<DemBackend> make_dem_cuda_backend() { return std::make_unique<DemCudaBackend>(); }

// Part of the self-check verdicts' build identity (cuda_build_stamp).
const char* dem_cuda_build_stamp() { return __DATE__ " " __TIME__; }

}  // namespace dem
}  // namespace ps
