// CUDA MPM backend: the same per-particle / per-node math as the CPU reference
// (sim/mpm/mpm_kernels.h, compiled by both compilers).
//
// One substep is six kernels on one stream:
//   control_begin (dt from the last max |v|, on the device) -> grab -> clear
//   -> P2G (constitutive update fused; block-tiled shared-memory scatter)
//   -> grid update -> G2P (advect, blow-up check, max |v|) -> control_end;
// the linear kernel adds four (the MUSL pass: clear, scatter, grid, G2P).
// dt, the simulated time, the max speed and the blow-up flag live in a small
// device control block; advance() reads it back once per call, not per
// substep. A substep's launches are captured once into a CUDA graph (one
// graph per parameter set and buffer parity) and replayed.
//
// Particles are reordered by an 8x8-cell tile key every kSortInterval
// substeps (CUB radix sort + one gather kernel); perm[slot] keeps each slot's
// host index, so host arrays, IDs, picking and dumps stay in host order and
// sync_to_host() scatters back through perm on the device.
//
// P2G: a block of 256 consecutive (sorted) particles takes the bounding box of
// its stencils; when it fits kTileNodes nodes the block accumulates in shared
// memory and flushes one global atomic per touched node, else it falls back
// to global atomics (correct in any order, just slower).
//
// Deterministic mode (solver.deterministic): contributions are converted to
// 64-bit fixed point before the scatter, so the integer sums do not depend on
// the order of the atomics and repeated runs are bit-identical.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/core/backend_error.h"
#include "sim/cuda/background_copy.cuh"
#include "sim/cuda/cuda_check.h"
#include "sim/cuda/cuda_info.h"
#include "sim/mpm/heat_cuda.h"
#include "sim/mpm/mpm_backend.h"
#include "sim/mpm/mpm_fixed.h"
#include "sim/mpm/mpm_kernels.h"

namespace ps {

namespace cg = cooperative_groups;

namespace {

// Errors are BackendErrors: MpmWorld falls back to the CPU backend on them
// (docs/reliability.md). state_intact is set only where advance() knows that
// nothing was launched yet.
void check(cudaError_t e, const char* what) { cuda_check(e, what); }

constexpr int kThreads = 256;
constexpr int kTileNodes = 1024;   // shared-memory tile capacity, nodes
constexpr int kTile = 8;           // sort tile, cells per side
constexpr int kSortInterval = 16;  // substeps between reorders

struct DevParticles {
  Vec2* x = nullptr;
  Vec2* v = nullptr;
  Mat2* C = nullptr;
  Mat2* F = nullptr;
  float* J = nullptr;
  float* Jp = nullptr;
  float* mass = nullptr;
  float* vol0 = nullptr;
  uint8_t* material = nullptr;
  uint32_t* perm = nullptr;  // slot -> host index
  PolyModes* poly = nullptr;  // PolyPIC's extra modes; allocated only while the world steps with PolyPIC
};

/// Lives on the device; advance() uploads it at the start of a call and reads
/// it back at the end.
struct DevControl {
  double time;
  float dt;              // this substep's dt
  float last_dt;
  float last_max_speed;  // max |v| after the last finished substep
  unsigned int vmax2_bits;       // this substep's max |v|^2, bits of a non-negative float
  unsigned long long bad;        // lowest host index that blew up this substep, or ~0
  unsigned long long fail_index; // the blown-up particle once halted
  int halted;            // a substep blew up: later substeps do nothing
  int steps;             // substeps finished during this call
  int pending;           // a substep was started and not yet finished
};

/// Fixed-point accumulator of one node in deterministic mode (ox, oy: FLIP's
/// transferred momentum, see mpm::flip_old_velocity).
struct FixedNode {
  unsigned long long m, px, py, ox, oy;
};


// ---- control ------------------------------------------------------------------

// A substep's control work runs in the first thread of the grid-clearing
// kernel that opens the next substep (one launch fewer per substep): it
// finishes the previous substep (time, max speed, halt) and starts this one
// (its dt). control_end_kernel finishes the last substep of a call.
__device__ void control_finish(DevControl* c) {
  if (!c->pending) return;
  c->pending = 0;
  if (c->halted) return;
  const float dt = c->dt;
  c->steps += 1;
  c->time += static_cast<double>(dt);
  c->last_dt = dt;
  c->last_max_speed = sqrtf(__uint_as_float(c->vmax2_bits));
  if (c->bad != ~0ull) {
    c->halted = 1;
    c->fail_index = c->bad;
  }
}

__device__ void control_begin(DevControl* c, const StepRule& rule) {
  control_finish(c);
  if (c->halted) return;
  c->dt = next_substep_dt(rule, c->last_max_speed);
  c->vmax2_bits = 0u;
  c->bad = ~0ull;
  c->pending = 1;
}

__global__ void control_end_kernel(DevControl* c) { control_finish(c); }

// ---- grab, clear ------------------------------------------------------------------

__global__ void grab_kernel(DevParticles p, int n, const uint32_t* inv_perm, const uint32_t* idx, const Vec2* off,
                            const float* ks_each, int count, Vec2 target, float ks_all, const DevControl* ctrl) {
  if (ctrl->halted) return;
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= count) return;
  const uint32_t h = idx[q];
  if (h >= static_cast<uint32_t>(n)) return;
  const uint32_t i = inv_perm[h];
  const float dt = ctrl->dt;
  const float ks = ks_each ? ks_each[q] : ks_all;
  const float kd = 2.f * sqrtf(ks);
  const Vec2 d = target + off[q] - p.x[i];
  p.v[i] += dt * (ks * d - kd * p.v[i]);
}

/// Opens a substep: control (first thread, see control_begin) and the grid
/// cleared (no other thread reads the control block here; clearing a halted
/// run's grid is harmless).
__global__ void clear_kernel(float* gm, Vec2* gv, Vec2* gv_old, FixedNode* gi, int nodes, DevControl* ctrl,
                             StepRule rule) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k == 0) control_begin(ctrl, rule);
  if (k >= nodes) return;
  if (gi) {
    gi[k] = FixedNode{0ull, 0ull, 0ull, 0ull, 0ull};
  } else {
    gm[k] = 0.f;
    gv[k] = Vec2{};
    if (gv_old) gv_old[k] = Vec2{};
  }
}

// ---- P2G ------------------------------------------------------------------------

/// Shared-memory tile: channels mass, momentum x, y and, for FLIP, the
/// transferred momentum x, y (float, or 64-bit fixed point when DET). The
/// deterministic FLIP tile holds 512 nodes (20 KiB instead of 40), enough for
/// a sorted block's ~200-node box, so occupancy does not halve on sm_75-89.
template <bool DET, bool FLIP>
struct TileStore {
  static constexpr int kChannels = FLIP ? 5 : 3;
  static constexpr int kNodes = (DET && FLIP) ? kTileNodes / 2 : kTileNodes;
  typename std::conditional<DET, unsigned long long, float>::type c[kChannels][kNodes];
};

/// POLY (quadratic kernel, no FLIP): PolyPIC's extra modes add
/// m_p sum_r w e_r c_r to each node's momentum (mpm::poly_node_velocity, as
/// MpmCpuBackend::scatter does).
template <Kernel K, bool DET, bool FLIP, bool POLY = false>
__global__ void __launch_bounds__(kThreads) p2g_kernel(DevParticles p, int n, const MaterialParams* mats, GridSpec g,
                                                       bool apic, const Vec2* fext, float* gm, Vec2* gv, Vec2* gv_old,
                                                       FixedNode* gi, FixedScale fs, const DevControl* ctrl) {
  static_assert(!POLY || (K == Kernel::Quadratic && !FLIP), "PolyPIC: quadratic kernel, no FLIP");
  if (ctrl->halted) return;  // uniform over the block
  constexpr int N = mpm::kernel_support(K);
  constexpr int CH = TileStore<DET, FLIP>::kChannels;
  __shared__ TileStore<DET, FLIP> tile;
  __shared__ int box[4];  // min base x, min base y, max base x, max base y
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool active = i < n;
  const float dt = ctrl->dt;
  const float inv_dx = 1.f / g.dx;
  if (threadIdx.x == 0) {
    box[0] = box[1] = 0x7fffffff;
    box[2] = box[3] = -0x7fffffff;
  }
  // Constitutive update and the particle's contribution terms.
  mpm::Stencil s;
  Vec2 mv{}, mv0{};
  Mat2 Q{}, stress{}, affine{};
  float mp = 0.f;
  PolyModes modes;
  mpm::PolyAxis px, py;
  if (active) {
    const MaterialParams& mat = mats[p.material[i]];
    Mat2 F = p.F[i];
    float Jp = p.Jp[i];
    const Mat2 C = p.C[i];
    const Mat2 tau = mpm::constitutive(mat, F, p.J[i], Jp, C, dt);
    p.F[i] = F;
    p.Jp[i] = Jp;
    mp = p.mass[i];
    mv0 = mp * p.v[i];
    mv = mv0 + (fext ? dt * fext[i] : Vec2{});
    stress = (-dt * p.vol0[i]) * tau;
    affine = apic ? mp * C : Mat2{};
    if (K != Kernel::Linear) Q = (mpm::dinv_factor(K) * inv_dx * inv_dx) * stress + affine;
    s = mpm::make_stencil(K, g, p.x[i]);
    if constexpr (POLY) {
      modes = p.poly[i];
      px = mpm::poly_axis(s.wx, s.fx);
      py = mpm::poly_axis(s.wy, s.fy);
    }
  }
  __syncthreads();
  if (active) {
    atomicMin(&box[0], s.base_x);
    atomicMin(&box[1], s.base_y);
    atomicMax(&box[2], s.base_x);
    atomicMax(&box[3], s.base_y);
  }
  __syncthreads();
  const int bx0 = box[0], by0 = box[1];
  const int tw = box[2] - bx0 + N, th = box[3] - by0 + N;
  const bool any = box[2] >= box[0];
  const bool tiled = any && tw * th <= TileStore<DET, FLIP>::kNodes;
  if (tiled) {
    for (int k = threadIdx.x; k < tw * th; k += blockDim.x)
#pragma unroll
      for (int ch = 0; ch < CH; ++ch) tile.c[ch][k] = 0;
  }
  __syncthreads();
  const int stride = g.nodes_x();
  if constexpr (!DET) {
    if (tiled) {
      // Warp pre-reduction (float atomics only): sorted particles of one cell
      // are consecutive lanes with the same stencil, so their contributions
      // are summed with shuffles and the group's first lane adds the sum to
      // the tile: one shared atomic per node and cell instead of per
      // particle (same-address atomics serialise). A non-contiguous group
      // (between reorders) keeps per-particle atomics.
      const unsigned full = 0xffffffffu;
      const int lane = static_cast<int>(threadIdx.x & 31u);
      const int gkey = active ? s.base_y * stride + s.base_x : -1 - lane;
      const unsigned mask = __match_any_sync(full, gkey);
      const int first = __ffs(mask) - 1, last = 31 - __clz(mask);
      const bool contiguous = last - first + 1 == __popc(mask);
      const int end = contiguous ? last : lane;
      const bool leader = active && (!contiguous || lane == first);
      int maxlen = contiguous ? __popc(mask) : 1;
      for (int o = 16; o > 0; o >>= 1) maxlen = max(maxlen, __shfl_xor_sync(full, maxlen, o));
#pragma unroll
      for (int c = 0; c < N; ++c)
#pragma unroll
        for (int a = 0; a < N; ++a) {
          float dm = 0.f;
          Vec2 dmv{}, dmv0{};
          if (active) {
            const float w = s.wx[a] * s.wy[c];
            const Vec2 dpos{(a - s.fx) * g.dx, (c - s.fy) * g.dx};
            if (K == Kernel::Linear) dmv = w * mv + w * (affine * dpos) + stress * mpm::grad_vector(K, s, a, c, inv_dx);
            else dmv = w * (mv + Q * dpos);
            if constexpr (POLY) dmv += mp * mpm::poly_node_velocity(modes, px, py, a, c);
            dm = w * mp;
            if constexpr (FLIP) dmv0 = w * mv0;
          }
          for (int o = 1; o < maxlen; o <<= 1) {
            const float t0 = __shfl_down_sync(full, dm, o);
            const float t1 = __shfl_down_sync(full, dmv.x, o);
            const float t2 = __shfl_down_sync(full, dmv.y, o);
            float t3 = 0.f, t4 = 0.f;
            if constexpr (FLIP) {
              t3 = __shfl_down_sync(full, dmv0.x, o);
              t4 = __shfl_down_sync(full, dmv0.y, o);
            }
            if (lane + o <= end) {
              dm += t0;
              dmv.x += t1;
              dmv.y += t2;
              if constexpr (FLIP) {
                dmv0.x += t3;
                dmv0.y += t4;
              }
            }
          }
          if (leader) {
            const int t = (s.base_y + c - by0) * tw + (s.base_x + a - bx0);
            atomicAdd(&tile.c[0][t], dm);
            atomicAdd(&tile.c[1][t], dmv.x);
            atomicAdd(&tile.c[2][t], dmv.y);
            if constexpr (FLIP) {
              atomicAdd(&tile.c[CH - 2][t], dmv0.x);
              atomicAdd(&tile.c[CH - 1][t], dmv0.y);
            }
          }
        }
    }
  }
  if ((DET || !tiled) && active) {
#pragma unroll
    for (int c = 0; c < N; ++c)
#pragma unroll
      for (int a = 0; a < N; ++a) {
        const float w = s.wx[a] * s.wy[c];
        const Vec2 dpos{(a - s.fx) * g.dx, (c - s.fy) * g.dx};
        Vec2 dmv;
        if (K == Kernel::Linear) dmv = w * mv + w * (affine * dpos) + stress * mpm::grad_vector(K, s, a, c, inv_dx);
        else dmv = w * (mv + Q * dpos);
        if constexpr (POLY) dmv += mp * mpm::poly_node_velocity(modes, px, py, a, c);
        const float dm = w * mp;
        const Vec2 dmv0 = w * mv0;  // FLIP only
        if (tiled) {
          const int t = (s.base_y + c - by0) * tw + (s.base_x + a - bx0);
          if constexpr (DET) {
            atomicAdd(&tile.c[0][t], to_fixed(dm, fs.mass));
            atomicAdd(&tile.c[1][t], to_fixed(dmv.x, fs.momentum));
            atomicAdd(&tile.c[2][t], to_fixed(dmv.y, fs.momentum));
            if constexpr (FLIP) {
              atomicAdd(&tile.c[CH - 2][t], to_fixed(dmv0.x, fs.momentum));
              atomicAdd(&tile.c[CH - 1][t], to_fixed(dmv0.y, fs.momentum));
            }
          } else {
            atomicAdd(&tile.c[0][t], dm);
            atomicAdd(&tile.c[1][t], dmv.x);
            atomicAdd(&tile.c[2][t], dmv.y);
            if constexpr (FLIP) {
              atomicAdd(&tile.c[CH - 2][t], dmv0.x);
              atomicAdd(&tile.c[CH - 1][t], dmv0.y);
            }
          }
        } else {
          const int node = (s.base_y + c) * stride + s.base_x + a;
          if constexpr (DET) {
            atomicAdd(&gi[node].m, to_fixed(dm, fs.mass));
            atomicAdd(&gi[node].px, to_fixed(dmv.x, fs.momentum));
            atomicAdd(&gi[node].py, to_fixed(dmv.y, fs.momentum));
            if constexpr (FLIP) {
              atomicAdd(&gi[node].ox, to_fixed(dmv0.x, fs.momentum));
              atomicAdd(&gi[node].oy, to_fixed(dmv0.y, fs.momentum));
            }
          } else {
            atomicAdd(&gm[node], dm);
            atomicAdd(&gv[node].x, dmv.x);
            atomicAdd(&gv[node].y, dmv.y);
            if constexpr (FLIP) {
              atomicAdd(&gv_old[node].x, dmv0.x);
              atomicAdd(&gv_old[node].y, dmv0.y);
            }
          }
        }
      }
  }
  if (!tiled) return;  // uniform over the block
  __syncthreads();
  for (int k = threadIdx.x; k < tw * th; k += blockDim.x) {
    const int node = (by0 + k / tw) * stride + bx0 + k % tw;
    if constexpr (DET) {
      const unsigned long long m = tile.c[0][k], px = tile.c[1][k], py = tile.c[2][k];
      if (m | px | py) {
        atomicAdd(&gi[node].m, m);
        atomicAdd(&gi[node].px, px);
        atomicAdd(&gi[node].py, py);
      }
      if constexpr (FLIP) {
        const unsigned long long ox = tile.c[CH - 2][k], oy = tile.c[CH - 1][k];
        if (ox | oy) {
          atomicAdd(&gi[node].ox, ox);
          atomicAdd(&gi[node].oy, oy);
        }
      }
    } else {
      const float m = tile.c[0][k], px = tile.c[1][k], py = tile.c[2][k];
      if (m != 0.f || px != 0.f || py != 0.f) {
        atomicAdd(&gm[node], m);
        atomicAdd(&gv[node].x, px);
        atomicAdd(&gv[node].y, py);
      }
      if constexpr (FLIP) {
        const float ox = tile.c[CH - 2][k], oy = tile.c[CH - 1][k];
        if (ox != 0.f || oy != 0.f) {
          atomicAdd(&gv_old[node].x, ox);
          atomicAdd(&gv_old[node].y, oy);
        }
      }
    }
  }
}

// ---- grid -----------------------------------------------------------------------

__global__ void grid_kernel(mpm::GridUpdateParams gp, float* gm, Vec2* gv, Vec2* gv_old, bool keep_old,
                            const FixedNode* gi, FixedScale fs, const DevControl* ctrl) {
  if (ctrl->halted) return;
  const int sx = gp.grid.nodes_x(), sy = gp.grid.nodes_y();
  const int node = blockIdx.x * blockDim.x + threadIdx.x;
  if (node >= sx * sy) return;
  gp.dt = ctrl->dt;
  float m;
  Vec2 mv, mv0{};
  if (gi) {
    const FixedNode f = gi[node];
    m = from_fixed(f.m, fs.mass);
    mv = Vec2{from_fixed(f.px, fs.momentum), from_fixed(f.py, fs.momentum)};
    if (keep_old) mv0 = Vec2{from_fixed(f.ox, fs.momentum), from_fixed(f.oy, fs.momentum)};
    gm[node] = m;
  } else {
    m = gm[node];
    mv = gv[node];
    if (keep_old) mv0 = gv_old[node];
  }
  mpm::grid_update_node(node % sx, node / sx, m, mv, gp);
  gv[node] = mv;
  if (keep_old) gv_old[node] = mpm::flip_old_velocity(m, mv0);
}

// ---- rigid-body parts (issue #14; mirrors MpmCpuBackend::collide_grid) ---------------

/// The substep's rigid-body parts (uploaded per advance() call) and their
/// impulse accumulator: 3 doubles per part (x, y, angular about the body's
/// centre of mass), summed over the call's substeps.
struct DevColliders {
  const RigidCollider* c;
  int n;
  double* impulse;
};

/// The grid rule (mpm::collide_node) on every node, the parts in order as on
/// the CPU; the momentum each part gives its nodes is taken from the body:
/// one warp-reduced double atomic per part and warp that touched it.
__global__ void collide_kernel(GridSpec g, const float* gm, Vec2* gv, DevColliders cols, bool impulses,
                               const DevControl* ctrl) {
  if (ctrl->halted) return;
  const int sx = g.nodes_x(), sy = g.nodes_y();
  const int node = blockIdx.x * blockDim.x + threadIdx.x;
  const bool valid = node < sx * sy;
  const float m = valid ? gm[node] : 0.f;
  Vec2 v = valid ? gv[node] : Vec2{};
  const Vec2 xi{g.origin.x + static_cast<float>(node % sx) * g.dx, g.origin.y + static_cast<float>(node / sx) * g.dx};
  const float skin = mpm::kColliderSkin * g.dx;
  bool changed = false;
  for (int k = 0; k < cols.n; ++k) {
    double jx = 0.0, jy = 0.0, L = 0.0;
    const Vec2 v0 = v;
    if (m > 0.f && mpm::collide_node(cols.c[k], xi, v, skin)) {
      changed = true;
      const double dpx = static_cast<double>(m) * (static_cast<double>(v.x) - v0.x);
      const double dpy = static_cast<double>(m) * (static_cast<double>(v.y) - v0.y);
      jx = -dpx;
      jy = -dpy;
      L = -((static_cast<double>(xi.x) - cols.c[k].c.x) * dpy - (static_cast<double>(xi.y) - cols.c[k].c.y) * dpx);
    }
    if (!impulses) continue;
    // Every lane of the warp takes part (out-of-range nodes carry zeros).
    for (int o = 16; o > 0; o >>= 1) {
      jx += __shfl_down_sync(0xffffffffu, jx, o);
      jy += __shfl_down_sync(0xffffffffu, jy, o);
      L += __shfl_down_sync(0xffffffffu, L, o);
    }
    if ((threadIdx.x & 31) == 0 && (jx != 0.0 || jy != 0.0 || L != 0.0)) {
      atomicAdd(&cols.impulse[3 * k], jx);
      atomicAdd(&cols.impulse[3 * k + 1], jy);
      atomicAdd(&cols.impulse[3 * k + 2], L);
    }
  }
  if (changed) gv[node] = v;
}

// ---- G2P ------------------------------------------------------------------------

/// F, J, position and the blow-up / max-speed reductions of particle i once
/// its velocity v and gradient B are known (mirrors MpmCpuBackend::finish_particle).
__device__ __forceinline__ void finish_particle(DevParticles& p, int i, const MaterialParams* mats, const GridSpec& g,
                                                const Mat2& B, Vec2 v, Vec2 v_adv, float dt, float vlim2,
                                                const DevColliders& cols, DevControl* ctrl) {
  Mat2 F = p.F[i];
  float J = p.J[i];
  mpm::update_deformation(mats[p.material[i]].type, B, dt, F, J);
  p.F[i] = F;
  p.J[i] = J;
  Vec2 xn = p.x[i] + dt * v_adv;
  if (cols.n > 0) {  // kept out of the bodies (mpm::push_out, as on the CPU)
    const float r = 0.5f * sqrtf(p.vol0[i]);
    for (int k = 0; k < cols.n; ++k) mpm::push_out(cols.c[k], xn, r);
  }
  p.x[i] = mpm::clamp_to_grid(g, xn);
  const float s2 = length2(v);
  const bool bad = !(s2 <= vlim2) || !isfinite(J) || !isfinite(F.a00 + F.a01 + F.a10 + F.a11);
  if (bad) atomicMin(&ctrl->bad, static_cast<unsigned long long>(p.perm[i]));  // rare
  // One atomic per group of active lanes, not per particle.
  cg::coalesced_group lanes = cg::coalesced_threads();
  const unsigned bits = cg::reduce(lanes, bad ? 0u : __float_as_uint(s2), cg::greater<unsigned>());
  if (lanes.thread_rank() == 0 && bits) atomicMax(&ctrl->vmax2_bits, bits);
}

/// POLY (quadratic kernel, no FLIP): also projects the node velocities on
/// PolyPIC's extra modes (mpm::poly_gather_node, as MpmCpuBackend::gather does).
template <Kernel K, bool FLIP, bool POLY = false>
__global__ void __launch_bounds__(kThreads) g2p_kernel(DevParticles p, int n, const MaterialParams* mats, GridSpec g,
                                                       float alpha, FlipAdvect advect, float vlim2, const Vec2* gv,
                                                       const Vec2* gv_old, DevColliders cols, DevControl* ctrl) {
  static_assert(!POLY || (K == Kernel::Quadratic && !FLIP), "PolyPIC: quadratic kernel, no FLIP");
  if (ctrl->halted) return;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  constexpr int N = mpm::kernel_support(K);
  const float dt = ctrl->dt;
  const float inv_dx = 1.f / g.dx;
  const int stride = g.nodes_x();
  const Vec2 xp = p.x[i];
  const mpm::Stencil s = mpm::make_stencil(K, g, xp);
  Vec2 v_pic{}, dv{};
  Mat2 B{};
  PolyModes modes;
  mpm::PolyAxis px, py;
  if constexpr (POLY) {
    px = mpm::poly_axis(s.wx, s.fx);
    py = mpm::poly_axis(s.wy, s.fy);
  }
#pragma unroll
  for (int c = 0; c < N; ++c)
#pragma unroll
    for (int a = 0; a < N; ++a) {
      const float w = s.wx[a] * s.wy[c];
      const int node = (s.base_y + c) * stride + s.base_x + a;
      const Vec2 vi = gv[node];
      v_pic += w * vi;
      if constexpr (POLY) mpm::poly_gather_node(modes, px, py, a, c, vi);
      if (FLIP) dv += w * (vi - gv_old[node]);
      if (K == Kernel::Linear) B += outer(vi, mpm::grad_vector(K, s, a, c, inv_dx));
      else B += outer(w * vi, Vec2{a - s.fx, c - s.fy});
    }
  if (K != Kernel::Linear) B = (mpm::dinv_factor(K) * inv_dx) * B;
  const Vec2 v = FLIP ? mpm::transfer_velocity(Transfer::FLIP, alpha, p.v[i], v_pic, dv) : v_pic;
  p.v[i] = v;
  if (K == Kernel::Linear) return;  // F, J, x and the checks: musl_g2p_kernel
  p.C[i] = B;
  if constexpr (POLY) p.poly[i] = modes;
  finish_particle(p, i, mats, g, B, v, FLIP ? mpm::advect_velocity(Transfer::FLIP, advect, v, v_pic) : v, dt, vlim2,
                  cols, ctrl);
}

// ---- MUSL second pass (linear kernel; see MpmCpuBackend::musl_linear) ----------------

/// Momentum of the particles' new velocities, sum w m_p v_p, into gv (or the
/// fixed-point px, py in deterministic mode); masses stay from P2G.
template <bool DET>
__global__ void musl_clear_kernel(Vec2* gv, FixedNode* gi, int nodes, const DevControl* ctrl) {
  if (ctrl->halted) return;
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= nodes) return;
  if constexpr (DET) {
    gi[k].px = 0ull;
    gi[k].py = 0ull;
  } else {
    gv[k] = Vec2{};
  }
}

template <bool DET>
__global__ void musl_p2g_kernel(DevParticles p, int n, GridSpec g, Vec2* gv, FixedNode* gi, FixedScale fs,
                                const DevControl* ctrl) {
  if (ctrl->halted) return;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  constexpr Kernel K = Kernel::Linear;
  constexpr int N = mpm::kernel_support(K);
  const mpm::Stencil s = mpm::make_stencil(K, g, p.x[i]);
  const Vec2 mv = p.mass[i] * p.v[i];
  const int stride = g.nodes_x();
#pragma unroll
  for (int c = 0; c < N; ++c)
#pragma unroll
    for (int a = 0; a < N; ++a) {
      const Vec2 d = (s.wx[a] * s.wy[c]) * mv;
      const int node = (s.base_y + c) * stride + s.base_x + a;
      if constexpr (DET) {
        atomicAdd(&gi[node].px, to_fixed(d.x, fs.momentum));
        atomicAdd(&gi[node].py, to_fixed(d.y, fs.momentum));
      } else {
        atomicAdd(&gv[node].x, d.x);
        atomicAdd(&gv[node].y, d.y);
      }
    }
}

__global__ void musl_grid_kernel(mpm::GridUpdateParams gp, const float* gm, Vec2* gv, const FixedNode* gi,
                                 FixedScale fs, const DevControl* ctrl) {
  if (ctrl->halted) return;
  const int sx = gp.grid.nodes_x(), sy = gp.grid.nodes_y();
  const int node = blockIdx.x * blockDim.x + threadIdx.x;
  if (node >= sx * sy) return;
  const Vec2 mv = gi ? Vec2{from_fixed(gi[node].px, fs.momentum), from_fixed(gi[node].py, fs.momentum)} : gv[node];
  gv[node] = mpm::musl_node_velocity(node % sx, node / sx, gm[node], mv, gp);
}

template <bool FLIP>
__global__ void musl_g2p_kernel(DevParticles p, int n, const MaterialParams* mats, GridSpec g, FlipAdvect advect,
                                float vlim2, const Vec2* gv, DevColliders cols, DevControl* ctrl) {
  if (ctrl->halted) return;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  constexpr Kernel K = Kernel::Linear;
  constexpr int N = mpm::kernel_support(K);
  const float dt = ctrl->dt;
  const float inv_dx = 1.f / g.dx;
  const int stride = g.nodes_x();
  const Vec2 xp = p.x[i];
  const mpm::Stencil s = mpm::make_stencil(K, g, xp);
  Vec2 v_grid{};
  Mat2 B{};
#pragma unroll
  for (int c = 0; c < N; ++c)
#pragma unroll
    for (int a = 0; a < N; ++a) {
      const Vec2 vi = gv[(s.base_y + c) * stride + s.base_x + a];
      v_grid += (s.wx[a] * s.wy[c]) * vi;
      B += outer(vi, mpm::grad_vector(K, s, a, c, inv_dx));
    }
  const Vec2 v = p.v[i];
  p.C[i] = B;
  finish_particle(p, i, mats, g, B, v, FLIP ? mpm::advect_velocity(Transfer::FLIP, advect, v, v_grid) : v_grid, dt,
                  vlim2, cols, ctrl);
}

// ---- reordering -------------------------------------------------------------------

__global__ void sort_key_kernel(const Vec2* x, int n, GridSpec g, Kernel k, int tiles_x, uint32_t* keys,
                                uint32_t* vals) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float inv_dx = 1.f / g.dx;
  const int bx = max(mpm::stencil_base(k, (x[i].x - g.origin.x) * inv_dx), 0);
  const int by = max(mpm::stencil_base(k, (x[i].y - g.origin.y) * inv_dx), 0);
  const uint32_t tile = static_cast<uint32_t>((by / kTile) * tiles_x + bx / kTile);
  keys[i] = tile * (kTile * kTile) + static_cast<uint32_t>((by % kTile) * kTile + bx % kTile);
  vals[i] = static_cast<uint32_t>(i);
}

/// dst[k] = src[from[k]] for every particle column; from == null: identity.
__global__ void gather_kernel(DevParticles dst, DevParticles src, const uint32_t* from, int n) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const uint32_t j = from[k];
  dst.x[k] = src.x[j];
  dst.v[k] = src.v[j];
  dst.C[k] = src.C[j];
  dst.F[k] = src.F[j];
  dst.J[k] = src.J[j];
  dst.Jp[k] = src.Jp[j];
  dst.mass[k] = src.mass[j];
  dst.vol0[k] = src.vol0[j];
  dst.material[k] = src.material[j];
  dst.perm[k] = src.perm[j];
  if (src.poly) dst.poly[k] = src.poly[j];
}

__global__ void iota_kernel(uint32_t* a, uint32_t* b, int n) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  a[k] = static_cast<uint32_t>(k);
  if (b) b[k] = static_cast<uint32_t>(k);
}

__global__ void invert_kernel(const uint32_t* perm, uint32_t* inv, int n) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  inv[perm[k]] = static_cast<uint32_t>(k);
}

/// Host order from slot order: out[perm[k]] = in[k] for the columns the host reads.
__global__ void unpermute_kernel(DevParticles out, DevParticles in, int n) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const uint32_t h = in.perm[k];
  out.x[h] = in.x[k];
  out.v[h] = in.v[k];
  out.C[h] = in.C[k];
  out.F[h] = in.F[k];
  out.J[h] = in.J[k];
  out.Jp[h] = in.Jp[k];
  if (in.poly) out.poly[h] = in.poly[k];
}

/// fext in slot order from the host-order upload.
__global__ void permute_fext_kernel(Vec2* fext, const Vec2* host_order, const uint32_t* perm, int n) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  fext[k] = host_order[perm[k]];
}

// ---- totals (the window's plots) --------------------------------------------------------

constexpr int kTotalsBlocks = 512;  // fixed: the sums' order, hence their bits, never change

/// Per-block sums of mass, momentum, angular momentum about c and kinetic
/// energy (doubles, each thread strided over the slots, then a fixed tree),
/// and the block's max |v|^2.
__global__ void __launch_bounds__(kThreads) totals_kernel(const Vec2* x, const Vec2* v, const float* mass, int n,
                                                          Vec2 c, double* partial, float* vmax2) {
  __shared__ double sh[5][kThreads];
  __shared__ float shv[kThreads];
  double acc[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
  float vm = 0.f;
  for (int k = blockIdx.x * kThreads + threadIdx.x; k < n; k += gridDim.x * kThreads) {
    const double m = mass[k], vx = v[k].x, vy = v[k].y;
    const double rx = static_cast<double>(x[k].x) - c.x, ry = static_cast<double>(x[k].y) - c.y;
    acc[0] += m;
    acc[1] += m * vx;
    acc[2] += m * vy;
    acc[3] += m * (rx * vy - ry * vx);
    acc[4] += 0.5 * m * (vx * vx + vy * vy);
    vm = fmaxf(vm, v[k].x * v[k].x + v[k].y * v[k].y);
  }
  for (int q = 0; q < 5; ++q) sh[q][threadIdx.x] = acc[q];
  shv[threadIdx.x] = vm;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      for (int q = 0; q < 5; ++q) sh[q][threadIdx.x] += sh[q][threadIdx.x + w];
      shv[threadIdx.x] = fmaxf(shv[threadIdx.x], shv[threadIdx.x + w]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    for (int q = 0; q < 5; ++q) partial[5 * blockIdx.x + q] = sh[q][0];
    vmax2[blockIdx.x] = shv[0];
  }
}

struct DevTotals {
  double sum[5];
  float vmax2;
};

/// The blocks' sums in block order (one thread: a few hundred additions).
__global__ void totals_final_kernel(const double* partial, const float* vmax2, int blocks, DevTotals* out) {
  DevTotals t{};
  for (int b = 0; b < blocks; ++b) {
    for (int q = 0; q < 5; ++q) t.sum[q] += partial[5 * b + q];
    t.vmax2 = fmaxf(t.vmax2, vmax2[b]);
  }
  *out = t;
}

template <class T>
void dev_alloc(T*& ptr, size_t count) {
  if (ptr) cudaFree(ptr);
  ptr = nullptr;
  if (count) check(cudaMalloc(reinterpret_cast<void**>(&ptr), count * sizeof(T)), "cudaMalloc");
}

template <class T>
void upload(T* dst, const std::vector<T>& src, size_t n, cudaStream_t s) {
  if (n) check(cudaMemcpyAsync(dst, src.data(), n * sizeof(T), cudaMemcpyHostToDevice, s), "upload");
}

template <class T>
void download(std::vector<T>& dst, const T* src, size_t n, cudaStream_t s) {
  if (n) check(cudaMemcpyAsync(dst.data(), src, n * sizeof(T), cudaMemcpyDeviceToHost, s), "download");
}

int blocks_for(size_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

/// Everything one substep's launches depend on. Compared bytewise to decide
/// whether a captured graph can be replayed, so it is zero-filled first.
struct LaunchKey {
  DevParticles d;
  int n;
  GridSpec grid;
  Transfer transfer;
  Kernel kernel;
  Boundary boundary;
  uint8_t deterministic;
  uint8_t use_fext;
  FlipAdvect flip_advect;
  int boundary_nodes;
  float wall_friction;
  Vec2 gravity;
  float flip_blend;
  float velocity_limit;
  PointForce point;
  StepRule rule;
  const MaterialParams* mats;
  int grab_count;
  const uint32_t* grab_idx;
  const Vec2* grab_off;
  const float* grab_ks;
  Vec2 grab_target;
  float grab_stiffness;
  float* gm;
  Vec2* gv;
  Vec2* gv_old;
  FixedNode* gi;
  Vec2* fext;
  const uint32_t* inv_perm;
  FixedScale fs;
  DevColliders cols;
  DevControl* ctrl;
};

}  // namespace

namespace {

/// The stepper's stream, shared with the device state copies it made: a copy
/// frees its memory in stream order, also after the backend is gone.
struct StreamOwner {
  cudaStream_t stream = nullptr;
  ~StreamOwner() {
    if (stream) {
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
    }
  }
};

/// Byte offsets of the columns of a device state copy (and of a checkpoint):
/// x, v, C, F, J, Jp, mass, vol0, perm, material, then PolyPIC's modes.
struct ColumnLayout {
  enum { kX = 0, kV, kC, kF, kJ, kJp, kMass, kVol0, kPerm, kMat, kPoly, kCount };
  size_t off[kCount + 1] = {};
  ColumnLayout(size_t n, bool poly) {
    const size_t size[kCount] = {sizeof(Vec2), sizeof(Vec2), sizeof(Mat2), sizeof(Mat2), sizeof(float), sizeof(float),
                                 sizeof(float), sizeof(float), sizeof(uint32_t), sizeof(uint8_t),
                                 poly ? sizeof(PolyModes) : 0};
    ColumnPacker pack;
    for (int c = 0; c < kCount; ++c) off[c] = pack.add(size[c] * n);
    off[kCount] = pack.bytes();
  }
  size_t bytes() const { return off[kCount]; }
};

class CudaStateCopy final : public DeviceStateCopy {
 public:
  CudaStateCopy(std::shared_ptr<StreamOwner> owner, size_t n, bool poly, FixedScale fs)
      : owner_(std::move(owner)), layout_(n, poly), n_(n), poly_(poly), fs_(fs) {}
  ~CudaStateCopy() override {
    if (mem_ && owns_) cudaFreeAsync(mem_, owner_->stream);
  }
  size_t bytes() const override { return layout_.bytes(); }
  size_t count() const override { return n_; }
  bool has_poly() const override { return poly_; }

  std::shared_ptr<StreamOwner> owner_;
  ColumnLayout layout_;
  size_t n_;
  bool poly_;
  FixedScale fs_;  // the fixed-point scales of the particles saved (their heaviest mass)
  char* mem_ = nullptr;
  bool owns_ = true;  // false: a view of the checkpoint's staging buffer
};

}  // namespace

class MpmCudaBackend final : public MpmBackend {
 public:
  MpmCudaBackend() {
    auto devs = cuda_devices();
    device_name_ = devs.empty() ? std::string("?") : devs[0].name;
    check(cudaSetDevice(0), "cudaSetDevice");
    owner_ = std::make_shared<StreamOwner>();
    check(cudaStreamCreateWithFlags(&owner_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    stream_ = owner_->stream;
    check(cudaMalloc(reinterpret_cast<void**>(&ctrl_), sizeof(DevControl)), "cudaMalloc");
    check(cudaMallocHost(reinterpret_cast<void**>(&ctrl_host_), sizeof(DevControl)), "cudaMallocHost");
    for (auto& e : ev_) check(cudaEventCreate(&e), "cudaEventCreate");
    const char* env = std::getenv("PS_CUDA_GRAPHS");
    use_graphs_ = !(env && std::strcmp(env, "0") == 0);
  }
  ~MpmCudaBackend() override {
    cudaStreamSynchronize(stream_);
    heat_.reset();
    drop_graphs();
    free_particles();
    cudaFree(gm_); cudaFree(gv_); cudaFree(gv_old_); cudaFree(gi_);
    cudaFree(mats_); cudaFree(grab_idx_); cudaFree(grab_off_); cudaFree(grab_ks_); cudaFree(ctrl_);
    cudaFree(cols_); cudaFree(col_impulse_);
    cudaFreeHost(ctrl_host_);
    for (auto& e : ev_) cudaEventDestroy(e);
    cudaFree(tot_partial_); cudaFree(tot_vmax_); cudaFree(tot_out_); cudaFreeHost(tot_host_);
    // owner_ destroys the stream once the last device state copy is gone.
  }

  std::string name() const override { return "cuda (" + device_name_ + ")"; }
  void bind(MpmParticles* host) override { host_ = host; }

  void host_changed() override {
    const size_t n = host_->size();
    check(cudaStreamSynchronize(stream_), "sync");
    reserve_particles(n);
    n_ = n;
    upload(d_.x, host_->x, n, stream_); upload(d_.v, host_->v, n, stream_); upload(d_.C, host_->C, n, stream_);
    upload(d_.F, host_->F, n, stream_); upload(d_.J, host_->J, n, stream_); upload(d_.Jp, host_->Jp, n, stream_);
    upload(d_.mass, host_->mass, n, stream_); upload(d_.vol0, host_->vol0, n, stream_);
    upload(d_.material, host_->material, n, stream_);
    // PolyPIC's modes are on the device only while the host has them (the
    // world allocates them when PolyPIC starts, then calls host_changed).
    if (n && host_->poly.size() == n) {
      if (!d_.poly) alloc_poly();
      upload(d_.poly, host_->poly, n, stream_);
    } else {
      free_poly();
    }
    if (n) {
      iota_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(d_.perm, inv_perm_, static_cast<int>(n));
      check(cudaGetLastError(), "iota");
    }
    // Fixed-point scales from the heaviest particle (sim/mpm/mpm_fixed.h).
    float mmax = 0.f;
    for (size_t i = 0; i < n; ++i) mmax = std::max(mmax, host_->mass[i]);
    fs_ = fixed_scale_for(mmax);
    since_sort_ = kSortInterval;  // reorder before the next substep
    host_current_ = true;
    check(cudaStreamSynchronize(stream_), "upload");
  }

  void sync_to_host() override {
    if (n_ != host_->size() || host_current_) return;
    const int n = static_cast<int>(n_);
    if (n) {
      unpermute_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(alt_, d_, n);
      check(cudaGetLastError(), "unpermute");
    }
    // Into a host staging copy first: a failure part way (the device is lost)
    // leaves the host arrays whole, the last good state the world falls back on.
    stage_x_.resize(n_); stage_v_.resize(n_); stage_C_.resize(n_);
    stage_F_.resize(n_); stage_J_.resize(n_); stage_Jp_.resize(n_);
    download(stage_x_, alt_.x, n_, stream_); download(stage_v_, alt_.v, n_, stream_);
    download(stage_C_, alt_.C, n_, stream_); download(stage_F_, alt_.F, n_, stream_);
    download(stage_J_, alt_.J, n_, stream_); download(stage_Jp_, alt_.Jp, n_, stream_);
    const bool poly = d_.poly && host_->poly.size() == n_;
    if (poly) {
      stage_poly_.resize(n_);
      download(stage_poly_, alt_.poly, n_, stream_);
    }
    check(cudaStreamSynchronize(stream_), "sync_to_host");
    std::copy(stage_x_.begin(), stage_x_.end(), host_->x.begin());
    std::copy(stage_v_.begin(), stage_v_.end(), host_->v.begin());
    std::copy(stage_C_.begin(), stage_C_.end(), host_->C.begin());
    std::copy(stage_F_.begin(), stage_F_.end(), host_->F.begin());
    std::copy(stage_J_.begin(), stage_J_.end(), host_->J.begin());
    std::copy(stage_Jp_.begin(), stage_Jp_.end(), host_->Jp.begin());
    if (poly) std::copy(stage_poly_.begin(), stage_poly_.end(), host_->poly.begin());
    host_current_ = true;
  }

  SubstepResult substep(const SubstepInput& in) override {
    StepRule rule;
    rule.adaptive = false;
    rule.dt_max = in.dt;
    StepClock clock;
    return advance(in, 1, rule, clock);
  }

  SubstepResult advance(const SubstepInput& in, int count, const StepRule& rule, StepClock& clock) override {
    SubstepResult r;
    if (count <= 0) return r;
    if (in.solver.transfer == Transfer::PolyPIC) {
      if (const char* why = mpm::transfer_kernel_error(in.solver.transfer, in.solver.kernel))
        throw std::invalid_argument(why);
      if (!d_.poly && n_ > 0) {
        // Not uploaded (the world uploads them when PolyPIC starts): the
        // modes start at zero, as the world's do.
        try {
          alloc_poly();
          check(cudaMemsetAsync(d_.poly, 0, n_ * sizeof(PolyModes), stream_), "poly");
        } catch (const std::exception& e) {
          throw BackendError(e.what(), true);
        }
      }
    } else if (d_.poly) {
      free_poly();  // 96 bytes a particle back to the device
    }
    if (n_ == 0) {
      // Nothing on the device: the clock still advances as MpmBackend::advance's does
      // (substeps of no particles, max |v| 0).
      for (int s = 0; s < count; ++s) {
        const float dt = next_substep_dt(rule, clock.last_max_speed);
        ++clock.step;
        clock.time += dt;
        clock.last_dt = dt;
        clock.last_max_speed = 0.f;
      }
      return r;
    }
    const int n = static_cast<int>(n_);
    // fext_ is in slot order: permuted from the host-order upload before the
    // first substep and again after every reorder.
    bool fext_stale = in.use_fext;
    DevControl& hc = *ctrl_host_;
    try {
      // Nothing touches the particle state until the first launch below: a
      // failure here (out of memory for a new grid, say) leaves it intact.
      prepare(in);
      if (in.use_fext) upload(fext_staging_, host_->fext, n_, stream_);
      upload_colliders(in);
      std::memset(&hc, 0, sizeof hc);
      hc.time = clock.time;
      hc.last_dt = clock.last_dt;
      hc.last_max_speed = clock.last_max_speed;
      hc.bad = ~0ull;
      hc.fail_index = ~0ull;
      check(cudaMemcpyAsync(ctrl_, &hc, sizeof hc, cudaMemcpyHostToDevice, stream_), "control");
      check(cudaEventRecord(ev_[kEvBatchStart], stream_), "event");
    } catch (const std::exception& e) {
      throw BackendError(e.what(), true);
    }
    bool timed_sort = false;
    for (int s = 0; s < count;) {
      if (since_sort_ >= kSortInterval) {
        const bool time_it = !timed_sort;
        if (time_it) check(cudaEventRecord(ev_[kEvSortStart], stream_), "event");
        reorder(in);
        if (time_it) {
          check(cudaEventRecord(ev_[kEvSortEnd], stream_), "event");
          timed_sort = true;
        }
        since_sort_ = 0;
        fext_stale = in.use_fext;
      }
      if (fext_stale) {
        permute_fext_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(fext_, fext_staging_, d_.perm, n);
        check(cudaGetLastError(), "fext");
        fext_stale = false;
      }
      LaunchKey key = make_key(in, rule);
      // The first substep of a call is timed kernel by kernel; the rest up
      // to the next reorder go as one graph.
      const int chunk = s == 0 ? 1 : std::min(count - s, kSortInterval - since_sort_);
      if (s == 0) {
        launch_substep(key, true);
      } else if (!use_graphs_ || !launch_graph(key, chunk)) {
        for (int c = 0; c < chunk; ++c) launch_substep(key, false);
      }
      s += chunk;
      since_sort_ += chunk;
    }
    control_end_kernel<<<1, 1, 0, stream_>>>(ctrl_);
    check(cudaEventRecord(ev_[kEvBatchEnd], stream_), "event");
    check(cudaMemcpyAsync(ctrl_host_, ctrl_, sizeof(DevControl), cudaMemcpyDeviceToHost, stream_), "control");
    if (in.collider_count > 0)
      check(cudaMemcpyAsync(col_impulse_host_.data(), col_impulse_, 3 * sizeof(double) * in.collider_count,
                            cudaMemcpyDeviceToHost, stream_), "collider impulses");
    check(cudaStreamSynchronize(stream_), "advance");
    // The bodies' impulses over this call's substeps (the CPU adds per substep).
    if (in.collider_count > 0 && in.collider_impulse)
      for (int q = 0; q < 3 * in.collider_count; ++q) in.collider_impulse[q] += col_impulse_host_[static_cast<size_t>(q)];
    host_current_ = false;
    record_timings(count, timed_sort);
    clock.step += hc.steps;
    clock.time = hc.time;
    clock.last_dt = hc.last_dt;
    clock.last_max_speed = hc.last_max_speed;
    r.max_speed = hc.last_max_speed;
    if (hc.halted) {
      r.ok = false;
      r.bad_index = static_cast<int64_t>(hc.fail_index);
    }
    return r;
  }

  void read_grid(GridSpec& spec, std::vector<float>& mass, std::vector<Vec2>& velocity) const override {
    spec = last_grid_;
    mass.resize(nodes_);
    velocity.resize(nodes_);
    if (nodes_ == 0) return;
    check(cudaMemcpyAsync(mass.data(), gm_, nodes_ * sizeof(float), cudaMemcpyDeviceToHost, stream_), "grid");
    check(cudaMemcpyAsync(velocity.data(), gv_, nodes_ * sizeof(Vec2), cudaMemcpyDeviceToHost, stream_), "grid");
    check(cudaStreamSynchronize(stream_), "grid");
  }

  BackendStats stats() const override {
    BackendStats s;
    s.device = device_name_;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
      s.memory_total = total_b;
      s.memory_used = total_b - free_b;
    }
    const size_t per_particle = 2 * (sizeof(Vec2) * 2 + sizeof(Mat2) * 2 + sizeof(float) * 4 + 1 + 4) +
                                sizeof(Vec2) * 2 + 4 * 5 + (d_.poly ? 2 * sizeof(PolyModes) : 0);
    s.state_bytes = capacity_ * per_particle + nodes_ * (sizeof(float) + 2 * sizeof(Vec2)) +
                    (gi_ ? nodes_ * sizeof(FixedNode) : 0) + sort_temp_bytes_;
    static const char* names[kPhases] = {"control + grab + clear", "P2G (tiled, shared memory)", "grid update",
                                         "G2P + advect (+ MUSL, linear)", "sort + reorder (amortised)"};
    for (int k = 0; k < kPhases; ++k) s.phases.push_back(PhaseTiming{names[k], phase_ms_[k]});
    s.ms_per_substep = ms_per_substep_;
    s.notes = std::string("reordered every ") + std::to_string(kSortInterval) + " substeps; " +
              (use_graphs_ ? "one CUDA graph per run of substeps between reorders" : "direct launches (PS_CUDA_GRAPHS=0)") +
              (last_det_ ? "; deterministic fixed-point scatter" : "; float atomics");
    return s;
  }

  HeatLinearSolver* heat_linear_solver() override {
    if (!heat_) heat_ = make_cuda_heat_solver(stream_);
    return heat_.get();
  }

  const DeviceParticleView* device_view() override {
    view_.count = n_;
    view_.x = d_.x; view_.v = d_.v; view_.C = d_.C; view_.F = d_.F; view_.J = d_.J; view_.Jp = d_.Jp;
    view_.vol0 = d_.vol0;
    view_.material = d_.material;
    view_.perm = d_.perm;
    view_.materials = mats_;
    view_.material_count = mat_count_;
    view_.stream = stream_;
    view_.device = 0;
    return &view_;
  }

  bool device_totals(Vec2 centre, ParticleTotals& out) override {
    out = ParticleTotals{};
    if (n_ == 0) return true;
    if (!tot_out_) {
      dev_alloc(tot_partial_, 5 * kTotalsBlocks);
      dev_alloc(tot_vmax_, kTotalsBlocks);
      dev_alloc(tot_out_, 1);
      check(cudaMallocHost(reinterpret_cast<void**>(&tot_host_), sizeof(DevTotals)), "cudaMallocHost");
    }
    const int blocks = std::min(kTotalsBlocks, blocks_for(n_));
    totals_kernel<<<blocks, kThreads, 0, stream_>>>(d_.x, d_.v, d_.mass, static_cast<int>(n_), centre, tot_partial_,
                                                     tot_vmax_);
    totals_final_kernel<<<1, 1, 0, stream_>>>(tot_partial_, tot_vmax_, blocks, tot_out_);
    check(cudaGetLastError(), "totals");
    check(cudaMemcpyAsync(tot_host_, tot_out_, sizeof(DevTotals), cudaMemcpyDeviceToHost, stream_), "totals");
    check(cudaStreamSynchronize(stream_), "totals");
    out.mass = tot_host_->sum[0];
    out.momentum[0] = tot_host_->sum[1];
    out.momentum[1] = tot_host_->sum[2];
    out.angular_momentum = tot_host_->sum[3];
    out.kinetic_energy = tot_host_->sum[4];
    out.max_speed = std::sqrt(tot_host_->vmax2);
    return true;
  }

  std::shared_ptr<const DeviceStateCopy> save_device_state() override {
    if (n_ == 0) return nullptr;
    auto c = std::make_shared<CudaStateCopy>(owner_, n_, d_.poly != nullptr, fs_);
    void* mem = nullptr;
    // Stream-ordered: the copy sees the state after the launches before it.
    const cudaError_t e = cudaMallocAsync(&mem, c->bytes(), stream_);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return nullptr;  // the world copies to the host instead
    }
    check(e, "cudaMallocAsync (saved state)");
    c->mem_ = static_cast<char*>(mem);
    copy_columns(*c, true);
    return c;
  }

  bool load_device_state(const DeviceStateCopy& copy) override {
    const auto* c = dynamic_cast<const CudaStateCopy*>(&copy);
    if (!c || c->owner_ != owner_ || !c->mem_) return false;
    check(cudaStreamSynchronize(stream_), "sync");
    reserve_particles(c->n_);
    if (c->poly_ && !d_.poly) alloc_poly();
    if (!c->poly_) free_poly();
    n_ = c->n_;
    copy_columns(*c, false);
    if (n_) {
      invert_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(d_.perm, inv_perm_, static_cast<int>(n_));
      check(cudaGetLastError(), "invert");
    }
    fs_ = c->fs_;
    since_sort_ = kSortInterval;
    host_current_ = false;
    check(cudaStreamSynchronize(stream_), "load state");
    return true;
  }

  bool checkpoint_begin() override {
    if (n_ == 0) return false;
    const bool poly = d_.poly != nullptr;
    const ColumnLayout lay(n_, poly);
    // A device-side copy in stream order (microseconds), then the transfer on
    // the copy stream while the stepper goes on.
    CudaStateCopy view(owner_, n_, poly, fs_);
    view.mem_ = ckpt_.stage(lay.bytes(), stream_);
    view.owns_ = false;
    copy_columns(view, true);
    ckpt_.start(lay.bytes(), stream_);
    prev_n_ = ckpt_n_;
    prev_poly_ = ckpt_poly_;
    ckpt_n_ = n_;
    ckpt_poly_ = poly;
    return true;
  }

  bool checkpoint_arrived() override { return ckpt_.arrived(); }

  bool checkpoint_restore(bool previous) override {
    const char* mem = previous ? ckpt_.previous() : ckpt_.has_arrived() ? ckpt_.host() : nullptr;
    const size_t n = previous ? prev_n_ : ckpt_n_;
    const bool with = previous ? prev_poly_ : ckpt_poly_;
    if (!mem || !host_ || host_->size() != n) return false;
    const ColumnLayout lay(n, with);
    auto col = [&](int c) { return mem + lay.off[c]; };
    const auto* x = reinterpret_cast<const Vec2*>(col(ColumnLayout::kX));
    const auto* v = reinterpret_cast<const Vec2*>(col(ColumnLayout::kV));
    const auto* C = reinterpret_cast<const Mat2*>(col(ColumnLayout::kC));
    const auto* F = reinterpret_cast<const Mat2*>(col(ColumnLayout::kF));
    const auto* J = reinterpret_cast<const float*>(col(ColumnLayout::kJ));
    const auto* Jp = reinterpret_cast<const float*>(col(ColumnLayout::kJp));
    const auto* perm = reinterpret_cast<const uint32_t*>(col(ColumnLayout::kPerm));
    const auto* poly = reinterpret_cast<const PolyModes*>(col(ColumnLayout::kPoly));
    const bool with_poly = with && host_->poly.size() == n;
    for (size_t k = 0; k < n; ++k) {
      const uint32_t i = perm[k];
      if (i >= n) return false;  // not a permutation: keep the older host copy
    }
    for (size_t k = 0; k < n; ++k) {
      const uint32_t i = perm[k];
      host_->x[i] = x[k]; host_->v[i] = v[k]; host_->C[i] = C[k]; host_->F[i] = F[k];
      host_->J[i] = J[k]; host_->Jp[i] = Jp[k];
      if (with_poly) host_->poly[i] = poly[k];
    }
    return true;
  }

 private:
  enum { kEvBatchStart = 0, kEvBatchEnd, kEvSortStart, kEvSortEnd, kEvK0, kEvK1, kEvK2, kEvK3, kEvK4, kEvCount };
  static constexpr int kPhases = 5;

  /// Copies the current slot-ordered columns into a state copy (save) or
  /// back (load), device to device, in stream order.
  void copy_columns(const CudaStateCopy& c, bool save) {
    using L = ColumnLayout;
    auto cp = [&](auto* live, int col, size_t elem) {
      if (!live) return;
      void* saved = c.mem_ + c.layout_.off[col];
      check(cudaMemcpyAsync(save ? saved : static_cast<void*>(live), save ? static_cast<const void*>(live) : saved,
                            elem * c.n_, cudaMemcpyDeviceToDevice, stream_), "device state copy");
    };
    cp(d_.x, L::kX, sizeof(Vec2)); cp(d_.v, L::kV, sizeof(Vec2)); cp(d_.C, L::kC, sizeof(Mat2));
    cp(d_.F, L::kF, sizeof(Mat2)); cp(d_.J, L::kJ, sizeof(float)); cp(d_.Jp, L::kJp, sizeof(float));
    cp(d_.mass, L::kMass, sizeof(float)); cp(d_.vol0, L::kVol0, sizeof(float));
    cp(d_.perm, L::kPerm, sizeof(uint32_t)); cp(d_.material, L::kMat, sizeof(uint8_t));
    if (c.poly_) cp(d_.poly, L::kPoly, sizeof(PolyModes));
  }

  /// Both buffer sets and the per-particle scratch hold at least n particles
  /// (grown by a quarter beyond n; the contents are lost when they grow).
  void reserve_particles(size_t n) {
    if (n <= capacity_) return;
    drop_graphs();
    const bool poly = d_.poly != nullptr;
    free_particles();
    capacity_ = n + n / 4;
    for (DevParticles* d : {&d_, &alt_}) {
      dev_alloc(d->x, capacity_); dev_alloc(d->v, capacity_); dev_alloc(d->C, capacity_);
      dev_alloc(d->F, capacity_); dev_alloc(d->J, capacity_); dev_alloc(d->Jp, capacity_);
      dev_alloc(d->mass, capacity_); dev_alloc(d->vol0, capacity_); dev_alloc(d->material, capacity_);
      dev_alloc(d->perm, capacity_);
    }
    if (poly) alloc_poly();
    dev_alloc(fext_, capacity_);
    dev_alloc(fext_staging_, capacity_);
    dev_alloc(inv_perm_, capacity_);
    dev_alloc(keys_a_, capacity_); dev_alloc(keys_b_, capacity_);
    dev_alloc(vals_a_, capacity_); dev_alloc(vals_b_, capacity_);
    size_t bytes = 0;
    check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_a_, keys_b_, vals_a_, vals_b_,
                                          static_cast<int>(capacity_), 0, 32, stream_), "cub sort size");
    sort_temp_bytes_ = bytes;
    dev_alloc(sort_temp_, bytes);
  }

  /// Grid buffers, material table and grab list for this call's input.
  void prepare(const SubstepInput& in) {
    const size_t nodes = static_cast<size_t>(in.grid.nodes_x()) * in.grid.nodes_y();
    const bool det = in.solver.deterministic;
    if (nodes != nodes_ || (det && !gi_)) {
      check(cudaStreamSynchronize(stream_), "sync");
      drop_graphs();
      if (nodes != nodes_) {
        dev_alloc(gm_, nodes); dev_alloc(gv_, nodes); dev_alloc(gv_old_, nodes);
        if (gi_) dev_alloc(gi_, 0);
        nodes_ = nodes;
      }
      if (det && !gi_) dev_alloc(gi_, nodes);
    }
    last_det_ = det;
    last_grid_ = in.grid;
    // Material table: uploaded only when it changed (a few hundred bytes).
    const size_t mat_bytes = sizeof(MaterialParams) * static_cast<size_t>(in.material_count);
    if (mat_cache_.size() != mat_bytes || std::memcmp(mat_cache_.data(), in.materials, mat_bytes) != 0) {
      check(cudaStreamSynchronize(stream_), "sync");
      if (mat_cache_.size() != mat_bytes) {
        drop_graphs();
        dev_alloc(mats_, static_cast<size_t>(in.material_count));
      }
      mat_cache_.assign(reinterpret_cast<const char*>(in.materials),
                        reinterpret_cast<const char*>(in.materials) + mat_bytes);
      check(cudaMemcpyAsync(mats_, mat_cache_.data(), mat_bytes, cudaMemcpyHostToDevice, stream_), "materials");
      mat_count_ = in.material_count;
    }
    if (in.grab.count > 0) {
      const bool same = grab_cache_idx_.size() == static_cast<size_t>(in.grab.count) &&
                        std::memcmp(grab_cache_idx_.data(), in.grab.index, in.grab.count * sizeof(uint32_t)) == 0 &&
                        std::memcmp(grab_cache_off_.data(), in.grab.offset, in.grab.count * sizeof(Vec2)) == 0 &&
                        (in.grab.stiffness_each ? grab_cache_ks_.size() == static_cast<size_t>(in.grab.count) &&
                                                      std::memcmp(grab_cache_ks_.data(), in.grab.stiffness_each,
                                                                  in.grab.count * sizeof(float)) == 0
                                                : grab_cache_ks_.empty());
      if (!same) {
        check(cudaStreamSynchronize(stream_), "sync");
        if (grab_cache_idx_.size() != static_cast<size_t>(in.grab.count)) {
          drop_graphs();
          dev_alloc(grab_idx_, static_cast<size_t>(in.grab.count));
          dev_alloc(grab_off_, static_cast<size_t>(in.grab.count));
          dev_alloc(grab_ks_, static_cast<size_t>(in.grab.count));
        }
        grab_cache_idx_.assign(in.grab.index, in.grab.index + in.grab.count);
        grab_cache_off_.assign(in.grab.offset, in.grab.offset + in.grab.count);
        check(cudaMemcpyAsync(grab_idx_, grab_cache_idx_.data(), in.grab.count * sizeof(uint32_t),
                              cudaMemcpyHostToDevice, stream_), "grab");
        check(cudaMemcpyAsync(grab_off_, grab_cache_off_.data(), in.grab.count * sizeof(Vec2),
                              cudaMemcpyHostToDevice, stream_), "grab");
        if (in.grab.stiffness_each) {
          grab_cache_ks_.assign(in.grab.stiffness_each, in.grab.stiffness_each + in.grab.count);
          check(cudaMemcpyAsync(grab_ks_, grab_cache_ks_.data(), in.grab.count * sizeof(float),
                                cudaMemcpyHostToDevice, stream_), "grab");
        } else {
          grab_cache_ks_.clear();
        }
      }
    } else {
      grab_cache_idx_.clear();
      grab_cache_off_.clear();
      grab_cache_ks_.clear();
    }
  }

  /// The rigid-body parts of this call (a few hundred bytes per part) and a
  /// zeroed impulse accumulator: the only per-call exchange of the coupling.
  void upload_colliders(const SubstepInput& in) {
    if (in.collider_count <= 0) return;
    const size_t n = static_cast<size_t>(in.collider_count);
    if (n > col_capacity_) {
      check(cudaStreamSynchronize(stream_), "sync");
      drop_graphs();
      dev_alloc(cols_, n);
      dev_alloc(col_impulse_, 3 * n);
      col_capacity_ = n;
    }
    col_impulse_host_.resize(3 * n);
    check(cudaMemcpyAsync(cols_, in.colliders, n * sizeof(RigidCollider), cudaMemcpyHostToDevice, stream_), "colliders");
    check(cudaMemsetAsync(col_impulse_, 0, 3 * n * sizeof(double), stream_), "collider impulses");
  }

  LaunchKey make_key(const SubstepInput& in, const StepRule& rule) const {
    LaunchKey k;
    std::memset(&k, 0, sizeof k);
    k.d = d_;
    k.n = static_cast<int>(n_);
    k.grid = in.grid;
    k.transfer = in.solver.transfer;
    k.kernel = in.solver.kernel;
    k.boundary = in.solver.boundary;
    k.deterministic = in.solver.deterministic ? 1 : 0;
    k.use_fext = in.use_fext ? 1 : 0;
    k.boundary_nodes = in.solver.boundary_nodes;
    k.wall_friction = in.solver.wall_friction;
    k.gravity = in.solver.gravity;
    k.flip_blend = in.solver.flip_blend;
    k.flip_advect = in.solver.flip_advect;
    k.velocity_limit = in.solver.velocity_limit;
    // Field by field: a struct copy would bring the source's padding bytes
    // (bool members), and the key is compared bytewise.
    k.point.active = in.point.active;
    k.point.pos = in.point.pos;
    k.point.radius = in.point.radius;
    k.point.strength = in.point.strength;
    k.rule.adaptive = rule.adaptive;
    k.rule.dt_max = rule.dt_max;
    k.rule.dt_min = rule.dt_min;
    k.rule.cfl = rule.cfl;
    k.rule.dx = rule.dx;
    k.rule.wave_speed = rule.wave_speed;
    k.mats = mats_;
    k.grab_count = in.grab.count;
    k.grab_idx = grab_idx_;
    k.grab_off = grab_off_;
    k.grab_ks = grab_cache_ks_.empty() ? nullptr : grab_ks_;
    k.grab_target = in.grab.target;
    k.grab_stiffness = in.grab.stiffness;
    k.gm = gm_;
    k.gv = gv_;
    k.gv_old = gv_old_;
    k.gi = in.solver.deterministic ? gi_ : nullptr;
    k.fext = in.use_fext ? fext_ : nullptr;
    k.inv_perm = inv_perm_;
    k.fs = fs_;
    k.cols.c = in.collider_count > 0 ? cols_ : nullptr;
    k.cols.n = in.collider_count;
    k.cols.impulse = in.collider_count > 0 ? col_impulse_ : nullptr;
    k.ctrl = ctrl_;
    return k;
  }

  /// Enqueues one substep on stream_ (also used under graph capture).
  void launch_substep(const LaunchKey& k, bool timed) {
    cudaStream_t st = stream_;
    const int n = k.n;
    const size_t nodes = static_cast<size_t>(k.grid.nodes_x()) * k.grid.nodes_y();
    if (timed) cudaEventRecord(ev_[kEvK0], st);
    const bool flip = k.transfer == Transfer::FLIP;
    clear_kernel<<<blocks_for(nodes), kThreads, 0, st>>>(k.gm, k.gv, flip ? k.gv_old : nullptr, k.gi,
                                                         static_cast<int>(nodes), k.ctrl, k.rule);
    if (k.grab_count > 0)
      grab_kernel<<<blocks_for(static_cast<size_t>(k.grab_count)), kThreads, 0, st>>>(
          k.d, n, k.inv_perm, k.grab_idx, k.grab_off, k.grab_ks, k.grab_count, k.grab_target, k.grab_stiffness, k.ctrl);
    if (timed) cudaEventRecord(ev_[kEvK1], st);
    const bool poly = k.transfer == Transfer::PolyPIC;  // quadratic only (checked in advance)
    const bool apic = k.transfer == Transfer::APIC || poly;  // PolyPIC = APIC + higher modes
    const int pb = blocks_for(static_cast<size_t>(n));
#define PS_P2G(KK, DD, FF)                                                                              \
  p2g_kernel<KK, DD, FF><<<pb, kThreads, 0, st>>>(k.d, n, k.mats, k.grid, apic, k.fext, k.gm, k.gv, k.gv_old, \
                                                  k.gi, k.fs, k.ctrl)
#define PS_P2G_F(KK, DD) \
  do { if (flip) PS_P2G(KK, DD, true); else PS_P2G(KK, DD, false); } while (0)
    const bool det = k.gi != nullptr;
    switch (k.kernel) {
      case Kernel::Linear: if (det) PS_P2G_F(Kernel::Linear, true); else PS_P2G_F(Kernel::Linear, false); break;
      case Kernel::Cubic: if (det) PS_P2G_F(Kernel::Cubic, true); else PS_P2G_F(Kernel::Cubic, false); break;
      default:
        if (poly) {
          if (det) p2g_kernel<Kernel::Quadratic, true, false, true><<<pb, kThreads, 0, st>>>(
                       k.d, n, k.mats, k.grid, apic, k.fext, k.gm, k.gv, k.gv_old, k.gi, k.fs, k.ctrl);
          else p2g_kernel<Kernel::Quadratic, false, false, true><<<pb, kThreads, 0, st>>>(
                   k.d, n, k.mats, k.grid, apic, k.fext, k.gm, k.gv, k.gv_old, k.gi, k.fs, k.ctrl);
        } else if (det) {
          PS_P2G_F(Kernel::Quadratic, true);
        } else {
          PS_P2G_F(Kernel::Quadratic, false);
        }
        break;
    }
#undef PS_P2G_F
#undef PS_P2G
    if (timed) cudaEventRecord(ev_[kEvK2], st);
    mpm::GridUpdateParams gp{k.grid, k.gravity, 0.f, k.boundary, k.boundary_nodes, k.point, k.wall_friction};
    grid_kernel<<<blocks_for(nodes), kThreads, 0, st>>>(gp, k.gm, k.gv, k.gv_old, flip, k.gi, k.fs, k.ctrl);
    if (k.cols.n > 0) collide_kernel<<<blocks_for(nodes), kThreads, 0, st>>>(k.grid, k.gm, k.gv, k.cols, true, k.ctrl);
    if (timed) cudaEventRecord(ev_[kEvK3], st);
    const float vlim2 = k.velocity_limit * k.velocity_limit;
#define PS_G2P(KK, FF) \
  g2p_kernel<KK, FF><<<pb, kThreads, 0, st>>>(k.d, n, k.mats, k.grid, k.flip_blend, k.flip_advect, vlim2, k.gv, \
                                              k.gv_old, k.cols, k.ctrl)
    switch (k.kernel) {
      case Kernel::Linear: if (flip) PS_G2P(Kernel::Linear, true); else PS_G2P(Kernel::Linear, false); break;
      case Kernel::Cubic: if (flip) PS_G2P(Kernel::Cubic, true); else PS_G2P(Kernel::Cubic, false); break;
      default:
        if (poly) g2p_kernel<Kernel::Quadratic, false, true><<<pb, kThreads, 0, st>>>(
                      k.d, n, k.mats, k.grid, k.flip_blend, k.flip_advect, vlim2, k.gv, k.gv_old, k.cols, k.ctrl);
        else if (flip) PS_G2P(Kernel::Quadratic, true);
        else PS_G2P(Kernel::Quadratic, false);
        break;
    }
#undef PS_G2P
    if (k.kernel == Kernel::Linear) {
      if (det) musl_clear_kernel<true><<<blocks_for(nodes), kThreads, 0, st>>>(k.gv, k.gi, static_cast<int>(nodes), k.ctrl);
      else musl_clear_kernel<false><<<blocks_for(nodes), kThreads, 0, st>>>(k.gv, k.gi, static_cast<int>(nodes), k.ctrl);
      if (det) musl_p2g_kernel<true><<<pb, kThreads, 0, st>>>(k.d, n, k.grid, k.gv, k.gi, k.fs, k.ctrl);
      else musl_p2g_kernel<false><<<pb, kThreads, 0, st>>>(k.d, n, k.grid, k.gv, k.gi, k.fs, k.ctrl);
      // gp.dt is 0 here: the MUSL grid step only applies the boundary, which has no dt.
      musl_grid_kernel<<<blocks_for(nodes), kThreads, 0, st>>>(gp, k.gm, k.gv, k.gi, k.fs, k.ctrl);
      // The bodies again on the second grid, without impulses (as on the CPU).
      if (k.cols.n > 0) collide_kernel<<<blocks_for(nodes), kThreads, 0, st>>>(k.grid, k.gm, k.gv, k.cols, false, k.ctrl);
      if (flip) musl_g2p_kernel<true><<<pb, kThreads, 0, st>>>(k.d, n, k.mats, k.grid, k.flip_advect, vlim2, k.gv, k.cols, k.ctrl);
      else musl_g2p_kernel<false><<<pb, kThreads, 0, st>>>(k.d, n, k.mats, k.grid, k.flip_advect, vlim2, k.gv, k.cols, k.ctrl);
    }
    if (timed) cudaEventRecord(ev_[kEvK4], st);
    check(cudaGetLastError(), "substep launch");
  }

  /// Replays the captured graph of `count` substeps for this key, capturing
  /// it first when needed (a frame's substeps between two reorders are one
  /// graph launch). False when capture is unavailable (then launches go direct).
  bool launch_graph(const LaunchKey& key, int count) {
    GraphSlot* slot = nullptr;
    for (GraphSlot& g : graphs_)
      if (g.exec && g.count == count && std::memcmp(&g.key, &key, sizeof key) == 0) slot = &g;
    if (!slot) {
      slot = &graphs_[next_graph_];
      next_graph_ = (next_graph_ + 1) % kGraphSlots;
      if (slot->exec) {
        cudaGraphExecDestroy(slot->exec);
        slot->exec = nullptr;
      }
      cudaGraph_t graph = nullptr;
      if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        use_graphs_ = false;
        cudaGetLastError();
        return false;
      }
      for (int c = 0; c < count; ++c) launch_substep(key, false);
      cudaError_t e = cudaStreamEndCapture(stream_, &graph);
      if (e == cudaSuccess) e = cudaGraphInstantiate(&slot->exec, graph, 0);
      if (graph) cudaGraphDestroy(graph);
      if (e != cudaSuccess) {
        slot->exec = nullptr;
        use_graphs_ = false;
        cudaGetLastError();
        return false;
      }
      slot->key = key;
      slot->count = count;
    }
    check(cudaGraphLaunch(slot->exec, stream_), "cudaGraphLaunch");
    return true;
  }

  void drop_graphs() {
    for (GraphSlot& g : graphs_)
      if (g.exec) {
        cudaGraphExecDestroy(g.exec);
        g.exec = nullptr;
      }
  }

  /// Sorts particles by tile key and gathers every column into the other
  /// buffer set, which then becomes current.
  void reorder(const SubstepInput& in) {
    const int n = static_cast<int>(n_);
    const int tiles_x = (in.grid.nodes_x() + kTile - 1) / kTile;
    const int tiles_y = (in.grid.nodes_y() + kTile - 1) / kTile;
    const uint64_t max_key = static_cast<uint64_t>(tiles_x) * tiles_y * kTile * kTile;
    int bits = 1;
    while (bits < 32 && (1ull << bits) < max_key) ++bits;
    sort_key_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(d_.x, n, in.grid, in.solver.kernel, tiles_x, keys_a_,
                                                               vals_a_);
    size_t need = 0;
    check(cub::DeviceRadixSort::SortPairs(nullptr, need, keys_a_, keys_b_, vals_a_, vals_b_, n, 0, bits, stream_),
          "cub sort size");
    if (need > sort_temp_bytes_) {
      check(cudaStreamSynchronize(stream_), "sync");
      dev_alloc(sort_temp_, need);
      sort_temp_bytes_ = need;
    }
    size_t bytes = sort_temp_bytes_;
    check(cub::DeviceRadixSort::SortPairs(sort_temp_, bytes, keys_a_, keys_b_, vals_a_, vals_b_, n, 0, bits, stream_),
          "cub sort");
    gather_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(alt_, d_, vals_b_, n);
    invert_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(alt_.perm, inv_perm_, n);
    check(cudaGetLastError(), "reorder");
    std::swap(d_, alt_);
  }

  /// PolyPIC's modes in both buffer sets (the reorder gathers them too).
  void alloc_poly() {
    check(cudaStreamSynchronize(stream_), "sync");
    drop_graphs();
    dev_alloc(d_.poly, capacity_);
    dev_alloc(alt_.poly, capacity_);
  }

  void free_poly() {
    if (!d_.poly && !alt_.poly) return;
    cudaStreamSynchronize(stream_);
    drop_graphs();
    cudaFree(d_.poly);
    cudaFree(alt_.poly);
    d_.poly = alt_.poly = nullptr;
  }

  void record_timings(int count, bool sorted) {
    float ms[4] = {0.f, 0.f, 0.f, 0.f};
    for (int k = 0; k < 4; ++k) cudaEventElapsedTime(&ms[k], ev_[kEvK0 + k], ev_[kEvK0 + k + 1]);
    float batch = 0.f;
    cudaEventElapsedTime(&batch, ev_[kEvBatchStart], ev_[kEvBatchEnd]);
    float sort_ms = 0.f;
    if (sorted) cudaEventElapsedTime(&sort_ms, ev_[kEvSortStart], ev_[kEvSortEnd]);
    cudaGetLastError();
    const double a = timed_calls_ == 0 ? 1.0 : 0.1;
    for (int k = 0; k < 4; ++k) phase_ms_[k] += a * (ms[k] - phase_ms_[k]);
    if (sorted) phase_ms_[4] += (sorted_calls_ == 0 ? 1.0 : 0.1) * (sort_ms / kSortInterval - phase_ms_[4]);
    ms_per_substep_ += a * (batch / std::max(1, count) - ms_per_substep_);
    ++timed_calls_;
    if (sorted) ++sorted_calls_;
  }

  void free_particles() {
    for (DevParticles* d : {&d_, &alt_}) {
      cudaFree(d->x); cudaFree(d->v); cudaFree(d->C); cudaFree(d->F); cudaFree(d->J); cudaFree(d->Jp);
      cudaFree(d->mass); cudaFree(d->vol0); cudaFree(d->material); cudaFree(d->perm); cudaFree(d->poly);
      *d = DevParticles{};
    }
    cudaFree(fext_); cudaFree(fext_staging_); cudaFree(inv_perm_);
    cudaFree(keys_a_); cudaFree(keys_b_); cudaFree(vals_a_); cudaFree(vals_b_); cudaFree(sort_temp_);
    fext_ = fext_staging_ = nullptr;
    inv_perm_ = keys_a_ = keys_b_ = vals_a_ = vals_b_ = nullptr;
    sort_temp_ = nullptr;
    sort_temp_bytes_ = 0;
    capacity_ = 0;
  }

  static constexpr int kGraphSlots = 16;  // chunk lengths 1 .. kSortInterval, a few keys
  struct GraphSlot {
    LaunchKey key;
    int count = 0;
    cudaGraphExec_t exec = nullptr;
  };

  MpmParticles* host_ = nullptr;
  std::string device_name_;
  std::shared_ptr<StreamOwner> owner_;  // holds stream_ (device state copies free on it)
  cudaStream_t stream_ = nullptr;
  // The background checkpoint (columns as ColumnLayout) and what its last
  // copy and the one before hold.
  BackgroundCopy ckpt_;
  size_t ckpt_n_ = 0, prev_n_ = 0;
  bool ckpt_poly_ = false, prev_poly_ = false;
  // device_totals' scratch.
  double* tot_partial_ = nullptr;
  float* tot_vmax_ = nullptr;
  DevTotals* tot_out_ = nullptr;
  DevTotals* tot_host_ = nullptr;
  DevParticles d_, alt_;
  Vec2* fext_ = nullptr;
  Vec2* fext_staging_ = nullptr;
  uint32_t* inv_perm_ = nullptr;
  uint32_t *keys_a_ = nullptr, *keys_b_ = nullptr, *vals_a_ = nullptr, *vals_b_ = nullptr;
  uint8_t* sort_temp_ = nullptr;
  size_t sort_temp_bytes_ = 0;
  RigidCollider* cols_ = nullptr;          // rigid-body parts of the current call
  double* col_impulse_ = nullptr;          // 3 per part, summed over the call
  size_t col_capacity_ = 0;
  std::vector<double> col_impulse_host_;
  size_t n_ = 0, capacity_ = 0, nodes_ = 0;
  int since_sort_ = kSortInterval;
  bool host_current_ = true;
  float* gm_ = nullptr;
  Vec2* gv_ = nullptr;
  Vec2* gv_old_ = nullptr;
  FixedNode* gi_ = nullptr;
  FixedScale fs_;
  bool last_det_ = false;
  MaterialParams* mats_ = nullptr;
  int mat_count_ = 0;
  std::vector<char> mat_cache_;
  uint32_t* grab_idx_ = nullptr;
  Vec2* grab_off_ = nullptr;
  float* grab_ks_ = nullptr;
  std::vector<uint32_t> grab_cache_idx_;
  std::vector<Vec2> grab_cache_off_;
  std::vector<float> grab_cache_ks_;
  DevControl* ctrl_ = nullptr;
  DevControl* ctrl_host_ = nullptr;
  cudaEvent_t ev_[kEvCount] = {};
  GraphSlot graphs_[kGraphSlots];
  int next_graph_ = 0;
  bool use_graphs_ = true;
  double phase_ms_[kPhases] = {0.0, 0.0, 0.0, 0.0, 0.0};
  double ms_per_substep_ = 0.0;
  int64_t timed_calls_ = 0, sorted_calls_ = 0;
  GridSpec last_grid_;
  DeviceParticleView view_;
  // sync_to_host's host staging copy (the host arrays change only when all of it arrived).
  std::vector<Vec2> stage_x_, stage_v_;
  std::vector<Mat2> stage_C_, stage_F_;
  std::vector<float> stage_J_, stage_Jp_;
  std::vector<PolyModes> stage_poly_;
  std::unique_ptr<HeatLinearSolver> heat_;  ///< the heat pass's solve on this device (made on first use)
};

std::unique_ptr<MpmBackend> make_cuda_backend() { return std::make_unique<MpmCudaBackend>(); }

// Part of the self-check verdicts' build identity (cuda_build_stamp): changes
// whenever this file, or a header it includes, is compiled again.
const char* mpm_cuda_build_stamp() { return __DATE__ " " __TIME__; }

}  // namespace ps
