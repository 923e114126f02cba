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
//
// The fluids' volume correction (a fluid with volume_correction > 0; see
// mpm::volume_corrected_J): P2G scatters one more channel, each particle's
// volume, the grid update adds the walls' share and the rigid parts theirs,
// and G2P relaxes J towards the measured volume, as MpmCpuBackend does. The
// kernels take it as a template parameter (VOL), and its arrays are
// allocated only once a scene corrects its volume, so without it nothing
// changes.
//
// Small grids on sm_90 and later take the fused path instead: whole substeps,
// up to 64 per launch, in one kernel on one thread-block cluster that holds
// the grid in its shared memory (fused_kernel, which lists what takes it),
// when PS_CUDA_FUSED=1: on an H200 it was 3 to 8 times slower than the
// kernels below (docs/benchmarks.md), so it is off by default.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>
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
#include "sim/cuda/device_buffer.cuh"
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
  PolyModes* poly =
      nullptr;  // PolyPIC's extra modes; allocated only while the world steps with PolyPIC
};

/// What a device particle column is to the stepper.
enum class Col {
  Stepped,   ///< written by the substeps: read back by sync_to_host, kept by checkpoints
  Constant,  ///< uploaded with each host edit, never written on the device
  Order,     ///< perm: slot -> host index, on the device only
  Modes      ///< PolyPIC's modes: stepped, allocated only while PolyPIC steps
};

/// Every device particle column, once: f(use, host column, column of d...)
/// for each, in this order. `host` is the world's particles (its column, or
/// null for perm), or null (device code: every host column null). The one
/// list the uploads, read-backs, reorders, state copies and allocations use.
template <class H, class F, class... P>
__host__ __device__ void each_column(H* host, F&& f, P&... d) {
  auto h = [host](auto member) { return host ? &(host->*member) : nullptr; };
  f(Col::Stepped, h(&MpmParticles::x), d.x...);
  f(Col::Stepped, h(&MpmParticles::v), d.v...);
  f(Col::Stepped, h(&MpmParticles::C), d.C...);
  f(Col::Stepped, h(&MpmParticles::F), d.F...);
  f(Col::Stepped, h(&MpmParticles::J), d.J...);
  f(Col::Stepped, h(&MpmParticles::Jp), d.Jp...);
  f(Col::Constant, h(&MpmParticles::mass), d.mass...);
  f(Col::Constant, h(&MpmParticles::vol0), d.vol0...);
  f(Col::Constant, h(&MpmParticles::material), d.material...);
  f(Col::Order, static_cast<std::vector<uint32_t>*>(nullptr), d.perm...);
  f(Col::Modes, h(&MpmParticles::poly), d.poly...);
}
constexpr int kColumns = 11;
/// each_column without host columns (the device copies, allocations and kernels).
constexpr MpmParticles* kNoHost = nullptr;

/// Lives on the device; advance() uploads it at the start of a call and reads
/// it back at the end.
struct DevControl {
  double time;
  float dt;  // this substep's dt
  float last_dt;
  float last_max_speed;           // max |v| after the last finished substep
  unsigned int vmax2_bits;        // this substep's max |v|^2, bits of a non-negative float
  unsigned long long bad;         // lowest host index that blew up this substep, or ~0
  unsigned long long fail_index;  // the blown-up particle once halted
  int halted;                     // a substep blew up: later substeps do nothing
  int steps;                      // substeps finished during this call
  int pending;                    // a substep was started and not yet finished
  // fused_kernel's clock cycles in control, P2G, grid update and G2P (its
  // rank 0 block's first thread, each phase up to the cluster barrier that
  // ends it), summed over the call's fused launches: the phase split.
  unsigned long long fused_cycles[4];
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

__global__ void grab_kernel(DevParticles p, int n, const uint32_t* inv_perm, const uint32_t* idx,
                            const Vec2* off, const float* ks_each, int count, Vec2 target,
                            float ks_all, const DevControl* ctrl) {
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
/// run's grid is harmless). The volume channel where it is scattered (gvol,
/// deterministic: gvoli; the grid update writes gvol from gvoli).
__global__ void clear_kernel(float* gm, Vec2* gv, Vec2* gv_old, FixedNode* gi, float* gvol,
                             unsigned long long* gvoli, int nodes, DevControl* ctrl,
                             StepRule rule) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k == 0) control_begin(ctrl, rule);
  if (k >= nodes) return;
  if (gi) {
    gi[k] = FixedNode{0ull, 0ull, 0ull, 0ull, 0ull};
    if (gvoli) gvoli[k] = 0ull;
  } else {
    gm[k] = 0.f;
    gv[k] = Vec2{};
    if (gv_old) gv_old[k] = Vec2{};
    if (gvol) gvol[k] = 0.f;
  }
}

// ---- P2G ------------------------------------------------------------------------

/// P2G's channels of a node, in this order: mass, momentum x, y; FLIP: the
/// transferred momentum x, y; VOL: the volume channel, channel kVol.
template <bool FLIP, bool VOL>
struct P2GChannels {
  static constexpr int kVol = FLIP ? 5 : 3;
  static constexpr int kCount = kVol + (VOL ? 1 : 0);
};

/// Shared-memory tile: P2GChannels (float, or 64-bit fixed point when DET).
/// The deterministic FLIP or VOL tile holds 512 nodes (16 to 24 KiB instead
/// of 32 to 48), enough for a sorted block's ~200-node box, so occupancy does
/// not halve on sm_75-89.
template <bool DET, bool FLIP, bool VOL = false>
struct TileStore {
  static constexpr int kChannels = P2GChannels<FLIP, VOL>::kCount;
  static constexpr int kNodes = (DET && (FLIP || VOL)) ? kTileNodes / 2 : kTileNodes;
  typename std::conditional<DET, unsigned long long, float>::type c[kChannels][kNodes];
};

/// One particle's P2G terms, after its constitutive update (p2g_particle).
/// PolyPIC's modes and axis tables are filled only with POLY.
struct P2GParticle {
  mpm::Stencil s;
  Vec2 mv, mv0;  // momentum with and without the substep's external force
  Mat2 Q, stress, affine;
  float mp = 0.f;
  float vol = 0.f;  // VOL: the volume it brings to the volume channel (mpm::particle_volume)
  PolyModes modes;
  mpm::PolyAxis px, py;
};

/// Constitutive update of particle i (F and Jp written back) and its P2G
/// terms; the same for p2g_kernel and fused_kernel. POLY (quadratic kernel,
/// no FLIP): PolyPIC's extra modes add m_p sum_r w e_r c_r to each node's
/// momentum (mpm::poly_node_velocity, as MpmCpuBackend::scatter does). VOL:
/// the particle's volume after the update, as the CPU's scatter takes it.
template <Kernel K, bool POLY, bool VOL = false>
__device__ __forceinline__ void p2g_particle(const DevParticles& p, int i,
                                             const MaterialParams* mats, const GridSpec& g,
                                             bool apic, const Vec2* fext, float dt,
                                             P2GParticle& t) {
  const float inv_dx = 1.f / g.dx;
  const MaterialParams& mat = mats[p.material[i]];
  Mat2 F = p.F[i];
  float Jp = p.Jp[i];
  const Mat2 C = p.C[i];
  const Mat2 tau = mpm::constitutive(mat, F, p.J[i], Jp, C, dt);
  p.F[i] = F;
  p.Jp[i] = Jp;
  if constexpr (VOL) t.vol = mpm::particle_volume(mat, p.vol0[i], F, Jp);
  t.mp = p.mass[i];
  t.mv0 = t.mp * p.v[i];
  t.mv = t.mv0 + (fext ? dt * fext[i] : Vec2{});
  t.stress = (-dt * p.vol0[i]) * tau;
  t.affine = apic ? t.mp * C : Mat2{};
  if (K != Kernel::Linear) t.Q = (mpm::dinv_factor(K) * inv_dx * inv_dx) * t.stress + t.affine;
  t.s = mpm::make_stencil(K, g, p.x[i]);
  if constexpr (POLY) {
    t.modes = p.poly[i];
    t.px = mpm::poly_axis(t.s.wx, t.s.fx);
    t.py = mpm::poly_axis(t.s.wy, t.s.fy);
  }
}

/// The particle's contribution to stencil node (a, c): mass, momentum and,
/// for FLIP, the transferred momentum w m v (see mpm::flip_old_velocity);
/// VOL: its volume w V_p.
template <Kernel K, bool FLIP, bool POLY, bool VOL>
__device__ __forceinline__ void p2g_node(const P2GParticle& t, const GridSpec& g, float inv_dx,
                                         int a, int c, float& dm, Vec2& dmv, Vec2& dmv0,
                                         float& dvol) {
  const mpm::Stencil& s = t.s;
  const float w = s.wx[a] * s.wy[c];
  const Vec2 dpos{(a - s.fx) * g.dx, (c - s.fy) * g.dx};
  if (K == Kernel::Linear)
    dmv = w * t.mv + w * (t.affine * dpos) + t.stress * mpm::grad_vector(K, s, a, c, inv_dx);
  else
    dmv = w * (t.mv + t.Q * dpos);
  if constexpr (POLY) dmv += t.mp * mpm::poly_node_velocity(t.modes, t.px, t.py, a, c);
  dm = w * t.mp;
  if constexpr (FLIP) dmv0 = w * t.mv0;
  if constexpr (VOL) dvol = w * t.vol;
}

/// Scatters one particle: add(x, y, dm, dmv, dmv0, dvol) once per stencil
/// node (x, y), in a fixed order.
template <Kernel K, bool FLIP, bool POLY, bool VOL, class Add>
__device__ __forceinline__ void p2g_scatter(const P2GParticle& t, const GridSpec& g, float inv_dx,
                                            Add&& add) {
  constexpr int N = mpm::kernel_support(K);
#pragma unroll
  for (int c = 0; c < N; ++c)
#pragma unroll
    for (int a = 0; a < N; ++a) {
      float dm, dvol = 0.f;
      Vec2 dmv, dmv0{};
      p2g_node<K, FLIP, POLY, VOL>(t, g, inv_dx, a, c, dm, dmv, dmv0, dvol);
      add(t.s.base_x + a, t.s.base_y + c, dm, dmv, dmv0, dvol);
    }
}

/// Scatters a warp's particles with a pre-reduction: sorted particles of one
/// cell are consecutive lanes with the same stencil, so their contributions
/// are summed with shuffles and the group's first lane calls add() with the
/// sum: one atomic per node and cell instead of per particle (same-address
/// atomics serialise). A non-contiguous group (between reorders) keeps
/// per-particle calls. Every lane of the warp must call this. Float: add(x,
/// y, dm, dmv, dmv0, dvol). DET: each lane converts its contributions to
/// 64-bit fixed point first (scales fs) and the shuffles sum integers, which
/// no order changes, so the sums are the same bits as one atomic per
/// particle; add(x, y, v) gets the integers of P2GChannels (mass, momentum,
/// FLIP's transferred momentum, VOL's volume).
template <Kernel K, bool FLIP, bool POLY, bool VOL, bool DET = false, class Add>
__device__ __forceinline__ void p2g_scatter_warp(bool active, const P2GParticle& t,
                                                 const GridSpec& g, float inv_dx, Add&& add,
                                                 FixedScale fs = FixedScale{}) {
  using Acc = typename std::conditional<DET, unsigned long long, float>::type;
  using Ch = P2GChannels<FLIP, VOL>;
  constexpr int CH = Ch::kCount;
  constexpr int N = mpm::kernel_support(K);
  const mpm::Stencil& s = t.s;
  const unsigned full = 0xffffffffu;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int gkey = active ? s.base_y * g.nodes_x() + s.base_x : -1 - lane;
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
      Acc v[6] = {0, 0, 0, 0, 0, 0};
      if (active) {
        float dm = 0.f, dvol = 0.f;
        Vec2 dmv{}, dmv0{};
        p2g_node<K, FLIP, POLY, VOL>(t, g, inv_dx, a, c, dm, dmv, dmv0, dvol);
        if constexpr (DET) {
          v[0] = to_fixed(dm, fs.mass);
          v[1] = to_fixed(dmv.x, fs.momentum);
          v[2] = to_fixed(dmv.y, fs.momentum);
          if constexpr (FLIP) {
            v[3] = to_fixed(dmv0.x, fs.momentum);
            v[4] = to_fixed(dmv0.y, fs.momentum);
          }
          if constexpr (VOL) v[Ch::kVol] = to_fixed(dvol, fs.volume);
        } else {
          v[0] = dm;
          v[1] = dmv.x;
          v[2] = dmv.y;
          if constexpr (FLIP) {
            v[3] = dmv0.x;
            v[4] = dmv0.y;
          }
          if constexpr (VOL) v[Ch::kVol] = dvol;
        }
      }
      for (int o = 1; o < maxlen; o <<= 1) {
        Acc u[CH];
#pragma unroll
        for (int q = 0; q < CH; ++q) u[q] = __shfl_down_sync(full, v[q], o);
        if (lane + o <= end) {
#pragma unroll
          for (int q = 0; q < CH; ++q) v[q] += u[q];
        }
      }
      if (leader) {
        if constexpr (DET)
          add(s.base_x + a, s.base_y + c, v);
        else
          add(s.base_x + a, s.base_y + c, v[0], Vec2{v[1], v[2]}, FLIP ? Vec2{v[3], v[4]} : Vec2{},
              VOL ? v[Ch::kVol] : 0.f);
      }
    }
}

/// VOL: also the volume channel, into gvol (float) or gvoli (DET).
template <Kernel K, bool DET, bool FLIP, bool POLY = false, bool VOL = false>
__global__ void __launch_bounds__(kThreads)
    p2g_kernel(DevParticles p, int n, const MaterialParams* mats, GridSpec g, bool apic,
               const Vec2* fext, float* gm, Vec2* gv, Vec2* gv_old, FixedNode* gi, float* gvol,
               unsigned long long* gvoli, FixedScale fs, const DevControl* ctrl) {
  static_assert(!POLY || (K == Kernel::Quadratic && !FLIP), "PolyPIC: quadratic kernel, no FLIP");
  if (ctrl->halted) return;  // uniform over the block
  constexpr int N = mpm::kernel_support(K);
  using Tile = TileStore<DET, FLIP, VOL>;
  using Ch = P2GChannels<FLIP, VOL>;
  constexpr int CH = Ch::kCount;
  __shared__ Tile tile;
  __shared__ int box[4];  // min base x, min base y, max base x, max base y
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool active = i < n;
  const float inv_dx = 1.f / g.dx;
  if (threadIdx.x == 0) {
    box[0] = box[1] = 0x7fffffff;
    box[2] = box[3] = -0x7fffffff;
  }
  P2GParticle t;
  if (active) p2g_particle<K, POLY, VOL>(p, i, mats, g, apic, fext, ctrl->dt, t);
  __syncthreads();
  if (active) {
    atomicMin(&box[0], t.s.base_x);
    atomicMin(&box[1], t.s.base_y);
    atomicMax(&box[2], t.s.base_x);
    atomicMax(&box[3], t.s.base_y);
  }
  __syncthreads();
  const int bx0 = box[0], by0 = box[1];
  const int tw = box[2] - bx0 + N, th = box[3] - by0 + N;
  const bool any = box[2] >= box[0];
  const bool tiled = any && tw * th <= Tile::kNodes;
  if (tiled) {
    for (int k = threadIdx.x; k < tw * th; k += blockDim.x)
#pragma unroll
      for (int ch = 0; ch < CH; ++ch) tile.c[ch][k] = 0;
  }
  __syncthreads();
  const int stride = g.nodes_x();
  // Into the tile (a warp's pre-reduced sums: floats, or DET's fixed point),
  // or straight into the global grid when the block's box does not fit.
  auto to_tile = [&](int x, int y, float dm, Vec2 dmv, Vec2 dmv0, float dvol) {
    if constexpr (!DET) {
      const int k = (y - by0) * tw + (x - bx0);
      atomicAdd(&tile.c[0][k], dm);
      atomicAdd(&tile.c[1][k], dmv.x);
      atomicAdd(&tile.c[2][k], dmv.y);
      if constexpr (FLIP) {
        atomicAdd(&tile.c[3][k], dmv0.x);
        atomicAdd(&tile.c[4][k], dmv0.y);
      }
      if constexpr (VOL) atomicAdd(&tile.c[Ch::kVol][k], dvol);
    }
  };
  auto to_tile_fixed = [&](int x, int y, const unsigned long long* v) {
    if constexpr (DET) {
      const int k = (y - by0) * tw + (x - bx0);
#pragma unroll
      for (int ch = 0; ch < CH; ++ch) atomicAdd(&tile.c[ch][k], v[ch]);
    }
  };
  auto to_global = [&](int x, int y, float dm, Vec2 dmv, Vec2 dmv0, float dvol) {
    const int node = y * stride + x;
    if constexpr (DET) {
      atomicAdd(&gi[node].m, to_fixed(dm, fs.mass));
      atomicAdd(&gi[node].px, to_fixed(dmv.x, fs.momentum));
      atomicAdd(&gi[node].py, to_fixed(dmv.y, fs.momentum));
      if constexpr (FLIP) {
        atomicAdd(&gi[node].ox, to_fixed(dmv0.x, fs.momentum));
        atomicAdd(&gi[node].oy, to_fixed(dmv0.y, fs.momentum));
      }
      if constexpr (VOL) atomicAdd(&gvoli[node], to_fixed(dvol, fs.volume));
    } else {
      atomicAdd(&gm[node], dm);
      atomicAdd(&gv[node].x, dmv.x);
      atomicAdd(&gv[node].y, dmv.y);
      if constexpr (FLIP) {
        atomicAdd(&gv_old[node].x, dmv0.x);
        atomicAdd(&gv_old[node].y, dmv0.y);
      }
      if constexpr (VOL) atomicAdd(&gvol[node], dvol);
    }
  };
  if (tiled) {  // every lane: tiled is uniform over the block
    if constexpr (DET)
      p2g_scatter_warp<K, FLIP, POLY, VOL, true>(active, t, g, inv_dx, to_tile_fixed, fs);
    else
      p2g_scatter_warp<K, FLIP, POLY, VOL>(active, t, g, inv_dx, to_tile);
    (void)to_tile;
    (void)to_tile_fixed;
  } else if (active) {
    p2g_scatter<K, FLIP, POLY, VOL>(t, g, inv_dx, to_global);
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
        const unsigned long long ox = tile.c[3][k], oy = tile.c[4][k];
        if (ox | oy) {
          atomicAdd(&gi[node].ox, ox);
          atomicAdd(&gi[node].oy, oy);
        }
      }
      if constexpr (VOL) {
        if (const unsigned long long vol = tile.c[Ch::kVol][k]) atomicAdd(&gvoli[node], vol);
      }
    } else {
      const float m = tile.c[0][k], px = tile.c[1][k], py = tile.c[2][k];
      if (m != 0.f || px != 0.f || py != 0.f) {
        atomicAdd(&gm[node], m);
        atomicAdd(&gv[node].x, px);
        atomicAdd(&gv[node].y, py);
      }
      if constexpr (FLIP) {
        const float ox = tile.c[3][k], oy = tile.c[4][k];
        if (ox != 0.f || oy != 0.f) {
          atomicAdd(&gv_old[node].x, ox);
          atomicAdd(&gv_old[node].y, oy);
        }
      }
      if constexpr (VOL) {
        const float vol = tile.c[Ch::kVol][k];
        if (vol != 0.f) atomicAdd(&gvol[node], vol);
      }
    }
  }
}

// ---- grid -----------------------------------------------------------------------

/// gvol (null unless a fluid corrects its volume): the volume channel as the
/// particles deposited it, deterministic: from gvoli (volume_filter_kernel
/// adds the walls).
__global__ void grid_kernel(mpm::GridUpdateParams gp, float* gm, Vec2* gv, Vec2* gv_old,
                            bool keep_old, const FixedNode* gi, float* gvol,
                            const unsigned long long* gvoli, FixedScale fs,
                            const DevControl* ctrl) {
  if (ctrl->halted) return;
  const int sx = gp.grid.nodes_x(), sy = gp.grid.nodes_y();
  const int node = blockIdx.x * blockDim.x + threadIdx.x;
  if (node >= sx * sy) return;
  gp.dt = ctrl->dt;
  if (gvoli) gvol[node] = from_fixed(gvoli[node], fs.volume);
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

// ---- rigid-body parts (mirrors MpmCpuBackend::collide_grid) ---------------

/// The substep's rigid-body parts (uploaded per advance() call) and their
/// impulse accumulator: 3 doubles per part (x, y, angular about the body's
/// centre of mass), summed over the call's substeps. Moving parts
/// (SubstepInput::colliders_move): `placed` holds them as placed at clock time
/// *placed_time, and each substep's collide_kernel writes their pose at the
/// substep's start into `c` for G2P's push-out; held parts: placed is null
/// and `c` is the pose.
struct DevColliders {
  RigidCollider* c;
  int n;
  double* impulse;
  const RigidCollider* placed;
  const double* placed_time;
};

/// One node (mass m, velocity v, edited) against one part: true when the rule
/// changed v; jx, jy, L get the momentum it took from the part.
__device__ __forceinline__ bool collide_part(const RigidCollider& c, Vec2 xi, float m, float skin,
                                             Vec2& v, double& jx, double& jy, double& L) {
  const Vec2 v0 = v;
  if (!(m > 0.f && mpm::collide_node(c, xi, v, skin))) return false;
  const double dpx = static_cast<double>(m) * (static_cast<double>(v.x) - v0.x);
  const double dpy = static_cast<double>(m) * (static_cast<double>(v.y) - v0.y);
  jx = -dpx;
  jy = -dpy;
  L = -((static_cast<double>(xi.x) - c.c.x) * dpy - (static_cast<double>(xi.y) - c.c.y) * dpx);
  return true;
}

/// The grid rule (mpm::collide_node) on every node, the parts in order as on
/// the CPU; the momentum each part gives its nodes is taken from the body:
/// one warp-reduced double atomic per part and warp that touched it. Moving
/// parts: each thread within reach of a part moves the placed part to the
/// substep's start (mpm::collider_moved, as the CPU backend's substep does)
/// and the first thread of the impulse pass stores that pose for G2P;
/// nothing in this kernel reads the stored poses, so the store races with no
/// read.
__global__ void collide_kernel(GridSpec g, const float* gm, Vec2* gv, DevColliders cols,
                               bool impulses, const DevControl* ctrl) {
  if (ctrl->halted) return;
  const int sx = g.nodes_x(), sy = g.nodes_y();
  const int node = blockIdx.x * blockDim.x + threadIdx.x;
  const bool valid = node < sx * sy;
  const float m = valid ? gm[node] : 0.f;
  Vec2 v = valid ? gv[node] : Vec2{};
  const Vec2 xi{g.origin.x + static_cast<float>(node % sx) * g.dx,
                g.origin.y + static_cast<float>(node / sx) * g.dx};
  const float skin = mpm::kColliderSkin * g.dx;
  const bool moving = cols.placed != nullptr;
  // ctrl->time is the substep's start: the clear kernel finished the previous substep.
  const float tau = moving ? static_cast<float>(ctrl->time - *cols.placed_time) : 0.f;
  const bool publish = moving && impulses && node == 0;
  bool changed = false;
  for (int k = 0; k < cols.n; ++k) {
    double jx = 0.0, jy = 0.0, L = 0.0;
    if (moving) {
      // A node out of the moved part's reach skips building the moved part.
      const RigidCollider& pk = cols.placed[k];
      if (publish || mpm::moved_collider_may_reach(pk, tau, xi, skin + 1e-3f * g.dx)) {
        const RigidCollider ck = mpm::collider_moved(pk, tau);
        if (publish) cols.c[k] = ck;
        changed |= collide_part(ck, xi, m, skin, v, jx, jy, L);
      }
    } else {
      changed |= collide_part(cols.c[k], xi, m, skin, v, jx, jy, L);
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

/// The volume channel's first step to what G2P reads, as
/// MpmCpuBackend::finish_volume_channel: mpm::volume_filter_121 along x
/// (src: P2G's gvol, with the walls' mirror images added on the way in,
/// mpm::wall_mirrored_volume, and the rigid parts' after them,
/// mpm::body_mirrored_volume, at the poses collide_kernel left in cols.c;
/// dst gphi) or along y (src gphi, dst gvol).
__global__ void volume_filter_kernel(GridSpec g, int b, Kernel kernel, DevColliders cols,
                                     bool along_y, const float* src, float* dst,
                                     const DevControl* ctrl) {
  if (ctrl->halted) return;
  const int sx = g.nodes_x(), sy = g.nodes_y();
  const int node = blockIdx.x * blockDim.x + threadIdx.x;
  if (node >= sx * sy) return;
  const int x = node % sx, y = node / sx;
  if (along_y) {
    const auto at = [&](int k) { return src[k * sx + x]; };
    dst[node] = mpm::volume_filter_121(at, y, sy);
  } else {
    const auto raw = [&](int i, int j) { return src[j * sx + i]; };
    const auto walls = [&](int i, int j) { return mpm::wall_mirrored_volume(raw, g, b, i, j); };
    const auto at = [&](int k) {
      return cols.n > 0 ? mpm::body_mirrored_volume(walls, g, kernel, cols.c, cols.n, k, y)
                        : walls(k, y);
    };
    dst[node] = mpm::volume_filter_121(at, x, sx);
  }
}

/// The volume channel's last step: the filtered channel (gvol) with a node
/// outside the interior marked mpm::kVolumeNotInterior (gphi, what G2P
/// reads), so a stencil that reaches it leaves the particle's J alone; every
/// node reads its neighbours, so the result goes to its own array.
__global__ void volume_interior_kernel(GridSpec g, Kernel kernel, const float* gvol, float* gphi,
                                       const DevControl* ctrl) {
  if (ctrl->halted) return;
  const int sx = g.nodes_x(), sy = g.nodes_y();
  const int node = blockIdx.x * blockDim.x + threadIdx.x;
  if (node >= sx * sy) return;
  const float inv_cell = 1.f / (g.dx * g.dx);
  const auto vol = [&](int x, int y) { return gvol[y * sx + x] * inv_cell; };
  const int x = node % sx, y = node / sx;
  gphi[node] =
      mpm::volume_node_interior(vol, sx, sy, x, y, kernel) ? gvol[node] : mpm::kVolumeNotInterior;
}

/// The walls' mirror of a correcting fluid's stress (mpm::wall_ghost_stress,
/// as MpmCpuBackend::p2g), after P2G, into the momentum sums (deterministic:
/// their fixed point, whose sums do not depend on the order). Only the
/// particles within reach of a face read more than their position.
__global__ void ghost_stress_kernel(DevParticles p, int n, const MaterialParams* mats, GridSpec g,
                                    Kernel kernel, int b, Vec2* gv, FixedNode* gi, FixedScale fs,
                                    const DevControl* ctrl) {
  if (ctrl->halted) return;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float dt = ctrl->dt;
  const int sx = g.nodes_x();
  const auto stress = [&]() {
    const MaterialParams& m = mats[p.material[i]];
    if (!(mpm::volume_correction_step(m, dt) > 0.f)) return Mat2{};
    const float q = -dt * mpm::dinv_factor(kernel) / (g.dx * g.dx) * p.vol0[i];
    return q * mpm::fluid_stress(m, p.J[i], p.C[i]);
  };
  const auto add = [&](int x, int y, Vec2 dp) {
    const int node = y * sx + x;
    if (gi) {
      atomicAdd(&gi[node].px, to_fixed(dp.x, fs.momentum));
      atomicAdd(&gi[node].py, to_fixed(dp.y, fs.momentum));
    } else {
      atomicAdd(&gv[node].x, dp.x);
      atomicAdd(&gv[node].y, dp.y);
    }
  };
  mpm::wall_ghost_stress(g, b, kernel, p.x[i], stress, add);
}

// ---- G2P ------------------------------------------------------------------------

/// F, J, position and the blow-up / max-speed reductions of particle i once
/// its velocity v and gradient B are known (mirrors MpmCpuBackend::finish_particle).
/// VOL: J first relaxed towards the volume measured on the grid, phi the
/// particle's volume fraction (mpm::volume_corrected_J).
template <bool VOL>
__device__ __forceinline__ void finish_particle(DevParticles& p, int i, const MaterialParams* mats,
                                                const GridSpec& g, const Mat2& B, Vec2 v,
                                                Vec2 v_adv, float dt, float vlim2,
                                                const DevColliders& cols, DevControl* ctrl,
                                                float phi) {
  const MaterialParams& mat = mats[p.material[i]];
  Mat2 F = p.F[i];
  float J = p.J[i];
  if constexpr (VOL) J = mpm::volume_corrected_J(J, phi, mpm::volume_correction_step(mat, dt));
  mpm::update_deformation(mat.type, B, dt, F, J);
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

/// A grid row as mpm::g2p_gather reads it: mpm::GridRow's velocities (and
/// FLIP's old ones) and, with VOL, the volume channel: `.vol(a)`.
template <bool FLIP, bool VOL>
struct VolumeRow : mpm::GridRow<FLIP> {
  const float* vol_;
  __device__ float vol(int a) const { return vol_[a]; }
};
template <bool FLIP>
struct VolumeRow<FLIP, false> : mpm::GridRow<FLIP> {};

/// What GlobalRows and ClusterRows hand mpm::g2p_gather: row y from node x
/// (their vel(y) and old(y) row starts; VOL: vols(y), the volume channel's).
template <class Rows, bool VOL>
struct RowsFromStarts {
  template <bool FLIP>
  __device__ VolumeRow<FLIP, VOL> row(int x, int y) const {
    const Rows& r = static_cast<const Rows&>(*this);
    VolumeRow<FLIP, VOL> out;
    out.v_ = r.vel(y) + x;
    if constexpr (FLIP) out.o_ = r.old(y) + x;
    if constexpr (VOL) out.vol_ = r.vols(y) + x;
    return out;
  }
};

/// Node velocities (and FLIP's old velocities, VOL's volume channel) of the
/// global grid, by row: row y starts at v + y * stride.
template <bool VOL>
struct GlobalRows : RowsFromStarts<GlobalRows<VOL>, VOL> {
  const Vec2* v;
  const Vec2* v_old;
  const float* vol;
  int stride;
  __device__ const Vec2* vel(int y) const { return v + y * stride; }
  __device__ const Vec2* old(int y) const { return v_old + y * stride; }
  __device__ const float* vols(int y) const { return vol + y * stride; }
};

/// G2P of particle i from the node velocities `rows` gives (GlobalRows, or
/// the fused kernel's rows in the cluster's shared memory); the same for
/// g2p_kernel and fused_kernel. The sums are mpm::g2p_gather, as in
/// MpmCpuBackend::gather (POLY, quadratic kernel without FLIP: also PolyPIC's
/// extra modes; VOL: the volume channel, for the volume correction).
template <Kernel K, bool FLIP, bool POLY, bool VOL, class Rows>
__device__ __forceinline__ void g2p_particle(DevParticles& p, int i, const MaterialParams* mats,
                                             const GridSpec& g, float alpha, FlipAdvect advect,
                                             float vlim2, float dt, const Rows& rows,
                                             const DevColliders& cols, DevControl* ctrl) {
  const mpm::Stencil s = mpm::make_stencil(K, g, p.x[i]);
  PolyModes modes;
  const mpm::G2PSums q = mpm::g2p_gather<K, FLIP, POLY, VOL>(s, 1.f / g.dx, rows, &modes);
  const Vec2 v_pic = q.v_pic;
  const Mat2 B = q.B;  // a local (finish_particle takes it by reference; see MpmCpuBackend::gather)
  const Vec2 v = FLIP ? mpm::transfer_velocity(Transfer::FLIP, alpha, p.v[i], v_pic, q.dv) : v_pic;
  p.v[i] = v;
  if (K == Kernel::Linear) return;  // F, J, x and the checks: musl_g2p_kernel
  p.C[i] = B;
  if constexpr (POLY) p.poly[i] = modes;
  const float inv_area = 1.f / (g.dx * g.dx);  // node volume -> volume fraction
  finish_particle<VOL>(p, i, mats, g, B, v,
                       FLIP ? mpm::advect_velocity(Transfer::FLIP, advect, v, v_pic) : v, dt, vlim2,
                       cols, ctrl, q.vol * inv_area);
}

/// VOL: J relaxed towards the volume channel gvol (the linear kernel's J is
/// finished by musl_g2p_kernel, which reads it then).
template <Kernel K, bool FLIP, bool POLY = false, bool VOL = false>
__global__ void __launch_bounds__(kThreads)
    g2p_kernel(DevParticles p, int n, const MaterialParams* mats, GridSpec g, float alpha,
               FlipAdvect advect, float vlim2, const Vec2* gv, const Vec2* gv_old,
               const float* gvol, DevColliders cols, DevControl* ctrl) {
  static_assert(!POLY || (K == Kernel::Quadratic && !FLIP), "PolyPIC: quadratic kernel, no FLIP");
  static_assert(!VOL || K != Kernel::Linear, "the linear kernel reads the volume in its MUSL pass");
  if (ctrl->halted) return;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  g2p_particle<K, FLIP, POLY, VOL>(p, i, mats, g, alpha, advect, vlim2, ctrl->dt,
                                   GlobalRows<VOL>{{}, gv, gv_old, gvol, g.nodes_x()}, cols, ctrl);
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
__global__ void musl_p2g_kernel(DevParticles p, int n, GridSpec g, Vec2* gv, FixedNode* gi,
                                FixedScale fs, const DevControl* ctrl) {
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

__global__ void musl_grid_kernel(mpm::GridUpdateParams gp, const float* gm, Vec2* gv,
                                 const FixedNode* gi, FixedScale fs, const DevControl* ctrl) {
  if (ctrl->halted) return;
  const int sx = gp.grid.nodes_x(), sy = gp.grid.nodes_y();
  const int node = blockIdx.x * blockDim.x + threadIdx.x;
  if (node >= sx * sy) return;
  const Vec2 mv =
      gi ? Vec2{from_fixed(gi[node].px, fs.momentum), from_fixed(gi[node].py, fs.momentum)}
         : gv[node];
  gv[node] = mpm::musl_node_velocity(node % sx, node / sx, gm[node], mv, gp);
}

/// VOL: J relaxed towards the volume channel gvol first, as on the CPU.
template <bool FLIP, bool VOL>
__global__ void musl_g2p_kernel(DevParticles p, int n, const MaterialParams* mats, GridSpec g,
                                FlipAdvect advect, float vlim2, const Vec2* gv, const float* gvol,
                                DevColliders cols, DevControl* ctrl) {
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
  float vol = 0.f;
#pragma unroll
  for (int c = 0; c < N; ++c)
#pragma unroll
    for (int a = 0; a < N; ++a) {
      const int node = (s.base_y + c) * stride + s.base_x + a;
      const Vec2 vi = gv[node];
      v_grid += (s.wx[a] * s.wy[c]) * vi;
      if constexpr (VOL) vol += (s.wx[a] * s.wy[c]) * gvol[node];
      B += outer(vi, mpm::grad_vector(K, s, a, c, inv_dx));
    }
  const Vec2 v = p.v[i];
  p.C[i] = B;
  finish_particle<VOL>(p, i, mats, g, B, v,
                       FLIP ? mpm::advect_velocity(Transfer::FLIP, advect, v, v_grid) : v_grid, dt,
                       vlim2, cols, ctrl, vol / (g.dx * g.dx));
}

// ---- fused substeps (sm_90: one thread-block cluster) -------------------------------
//
// Small grids are launch-bound with the kernels above: a classroom scene's
// substep is a few microseconds of work behind five launches. fused_kernel
// runs whole substeps, up to kFusedSubsteps per launch, in one thread-block
// cluster (sm_90 and later) whose blocks hold the grid in their shared
// memory and reach each other's as distributed shared memory. A cluster of
// B blocks (16 where the device allows that non-portable size, else 8, 4, 2
// or 1: MpmCudaBackend::fit_fused) deals the node rows round-robin: row y
// lives in block y % B as its local row y / B, so matter lying in a few rows
// (a fluid on the floor) still spreads the atomics over every block. Block r
// takes the r-th contiguous range of particle slots (sorted by tile between
// launches, so a warp's particles share stencil rows). One substep:
//
//   control   each block's first thread finishes the last substep and starts
//             this one (control_begin) on its own copy of the control block;
//             the copies see the same reductions, so they agree bit for bit
//   P2G       constitutive update, then atomics into the owners' node sums
//             (float: warp pre-reduced; deterministic: 64-bit fixed point)
//   barrier
//   grid      each block its own nodes: sums -> velocity (grid_update_node,
//             the walls included), and the sums cleared for the next substep
//   barrier
//   G2P       gathers from the owners' velocities; the max |v|^2 and the
//             lowest blown-up host index go to rank 0's reduction slot for
//             this substep (two slots, alternating, so one can be reset while
//             the other is read)
//   barrier
//
// The same per-particle and per-node functions as the unfused kernels
// (p2g_particle, p2g_node, grid_update_node, g2p_particle): in deterministic
// mode the integer sums and everything after them are bit for bit those of
// the unfused path. A particle is read and written only by its own thread,
// so only the grid and the reductions cross blocks, and the cluster barriers
// (release / acquire at cluster scope) order them.
//
// Taken for the quadratic and cubic kernels with every transfer (PolyPIC
// included) and every material, walls and wall friction, gravity and the
// point force, fixed or adaptive dt, float or deterministic sums. Not taken
// (the kernels above run, unchanged): the linear kernel (its MUSL pass), rigid
// bodies, grab, per-substep forces (fext), a fluid that corrects its volume
// (the default for water: its walls' mirror, two filter passes, interior
// test and ghost stress would be more neighbour passes between cluster
// barriers; the fused kernel is instantiated without VOL), sm < 90 or a build
// without sm_90 code, PS_CUDA_FUSED=0, more than kFusedMaxParticles
// particles, and grids whose nodes do not fit the cluster's shared memory
// (fused_layout: 20 bytes a node, FLIP 36, deterministic 32, deterministic
// FLIP 56; on an H100 about 3.6 MB in 16 blocks: a 256^2 grid fits except
// deterministic FLIP).

constexpr int kFusedThreads = 512;  // threads per block
constexpr int kFusedSubsteps =
    64;  // substeps per launch at most; particles are reordered between launches
constexpr int kFusedMaxShift = 4;  // clusters of up to 1 << 4 = 16 blocks
/// Particles beyond which the unfused kernels, spread over every SM, should
/// beat one cluster's 16 (an estimate from the H100 timings of
/// docs/benchmarks.md, where mpm99 at 145 k particles took 36 us a substep
/// unfused; to be measured).
constexpr size_t kFusedMaxParticles = size_t{1} << 17;
/// since_sort_ at which either path reorders before its next substep.
constexpr int kSortDue = kFusedSubsteps > kSortInterval ? kFusedSubsteps : kSortInterval;

/// Byte layout of one block's nodes: the P2G sums, one array per channel
/// (P2GChannels: mass, momentum x, y; FLIP: transferred momentum x, y; float,
/// or 64-bit fixed point when det), then the node velocities and FLIP's old
/// velocities for G2P.
struct FusedLayout {
  int stride;      // elements per array: the block's nodes rounded up to 4 (16-byte aligned arrays)
  size_t vel_off;  // bytes
  size_t old_off;
  size_t bytes;
};

PS_HD FusedLayout fused_layout(bool det, bool flip, int nodes) {
  FusedLayout L;
  L.stride = (nodes + 3) / 4 * 4;
  const size_t elem = det ? sizeof(unsigned long long) : sizeof(float);
  const size_t n = static_cast<size_t>(L.stride);
  L.vel_off = static_cast<size_t>(flip ? 5 : 3) * n * elem;
  L.old_off = L.vel_off + n * sizeof(Vec2);
  L.bytes = L.old_off + (flip ? n * sizeof(Vec2) : 0);
  return L;
}

/// A fused launch's inputs (by value).
struct FusedArgs {
  DevParticles p;
  int n;
  const MaterialParams* mats;
  GridSpec g;
  bool apic;
  float alpha;
  FlipAdvect advect;
  float vlim2;
  mpm::GridUpdateParams gp;  // dt set per substep
  StepRule rule;
  FixedScale fs;
  float* gm;  // the last substep's grid, for read_grid
  Vec2* gv;
  DevControl* ctrl;
  int count;  // substeps
  int rows;   // node rows per block
  int shift;  // log2 of the cluster's blocks
};

/// Whether the stencil whose first node is (bx, by) lies inside the node
/// array. The fused kernel's rows have no room outside it; G2P clamps
/// positions, so only a state uploaded from outside the grid fails this.
template <Kernel K>
__device__ __forceinline__ bool stencil_inside(int bx, int by, int sx, int sy) {
  constexpr int N = mpm::kernel_support(K);
  return bx >= 0 && by >= 0 && bx + N <= sx && by + N <= sy;
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
/// A finished substep's reductions into a control block copy.
__device__ __forceinline__ void take_reductions(DevControl& c, const DevControl& r) {
  c.vmax2_bits = r.vmax2_bits;
  c.bad = r.bad;
}

/// The fused kernel's node velocities by row: row y of the grid is local row
/// y >> shift of block y & mask.
struct ClusterRows : RowsFromStarts<ClusterRows, false> {
  unsigned char* smem;  // this block's dynamic shared memory (fused_layout)
  size_t vel_off, old_off;
  int sx, mask, shift;
  template <class T>
  __device__ const T* at(int y, size_t off) const {
    return reinterpret_cast<const T*>(cg::this_cluster().map_shared_rank(smem, y & mask) + off) +
           (y >> shift) * sx;
  }
  __device__ const Vec2* vel(int y) const { return at<Vec2>(y, vel_off); }
  __device__ const Vec2* old(int y) const { return at<Vec2>(y, old_off); }
};
#endif

/// `count` whole substeps in one cluster (see above). Launched only on
/// sm_90 or later with a cluster of 1 << shift blocks of kFusedThreads
/// threads and fused_layout(...).bytes of dynamic shared memory; compiled
/// empty for older architectures (the host checks the function's PTX
/// version before it launches it).
template <Kernel K, bool DET, bool FLIP, bool POLY>
__global__ void __launch_bounds__(kFusedThreads, 1) fused_kernel(FusedArgs a) {
  static_assert(K != Kernel::Linear, "the linear kernel's MUSL pass runs unfused");
  static_assert(!POLY || (K == Kernel::Quadratic && !FLIP), "PolyPIC: quadratic kernel, no FLIP");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Sum = typename std::conditional<DET, unsigned long long, float>::type;
  constexpr int CH = P2GChannels<FLIP, false>::kCount;
  extern __shared__ __align__(16) unsigned char fused_smem[];
  __shared__ DevControl c;  // this block's copy of the control block
  __shared__ DevControl
      red[2];  // rank 0's: substep s's max |v|^2 and lowest blown-up index in red[s & 1]
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int blocks = 1 << a.shift, mask = blocks - 1;
  const int tid = static_cast<int>(threadIdx.x);
  const int sx = a.g.nodes_x(), sy = a.g.nodes_y();
  const int nodes = a.rows * sx;  // this block's: rows rank, rank + B, rank + 2B, ...
  const FusedLayout L = fused_layout(DET, FLIP, nodes);
  const int S = L.stride;
  Sum* sum = reinterpret_cast<Sum*>(fused_smem);  // channel q of local node k: sum[q * S + k]
  Vec2* vel = reinterpret_cast<Vec2*>(fused_smem + L.vel_off);
  Vec2* vel_old = reinterpret_cast<Vec2*>(fused_smem + L.old_off);
  DevControl* red0 = cluster.map_shared_rank(red, 0);
  const DevColliders no_colliders{nullptr, 0, nullptr};
  const float inv_dx = 1.f / a.g.dx;
  const int per_block = (a.n + blocks - 1) / blocks;
  const int first = min(a.n, rank * per_block), last = min(a.n, first + per_block);

  for (int k = tid; k < CH * S; k += blockDim.x) sum[k] = Sum(0);
  if (tid == 0) {
    c = *a.ctrl;
    if (rank == 0)
      for (DevControl& r : red) {
        r.vmax2_bits = 0u;
        r.bad = ~0ull;
      }
  }
  // Past this barrier every block of the cluster runs (its shared memory
  // exists), the sums are zero and the reduction slots reset.
  cluster.sync();

  // P2G's atomics into the node sums of (x, y), in the block that owns row y.
  auto add = [&](int x, int y, float dm, Vec2 dmv, Vec2 dmv0, float) {
    Sum* q = reinterpret_cast<Sum*>(cluster.map_shared_rank(fused_smem, y & mask)) +
             (y >> a.shift) * sx + x;
    if constexpr (DET) {
      atomicAdd(q, to_fixed(dm, a.fs.mass));
      atomicAdd(q + S, to_fixed(dmv.x, a.fs.momentum));
      atomicAdd(q + 2 * S, to_fixed(dmv.y, a.fs.momentum));
      if constexpr (FLIP) {
        atomicAdd(q + 3 * S, to_fixed(dmv0.x, a.fs.momentum));
        atomicAdd(q + 4 * S, to_fixed(dmv0.y, a.fs.momentum));
      }
    } else {
      atomicAdd(q, dm);
      atomicAdd(q + S, dmv.x);
      atomicAdd(q + 2 * S, dmv.y);
      if constexpr (FLIP) {
        atomicAdd(q + 3 * S, dmv0.x);
        atomicAdd(q + 4 * S, dmv0.y);
      }
    }
  };
  const ClusterRows rows{{}, fused_smem, L.vel_off, L.old_off, sx, mask, a.shift};
  mpm::GridUpdateParams gp = a.gp;
  bool all_ran = true;
  for (int step = 0; step < a.count; ++step) {
    const long long t0 = clock64();
    if (tid == 0) {
      if (step > 0) take_reductions(c, red0[(step - 1) & 1]);
      control_begin(&c, a.rule);
    }
    __syncthreads();
    if (c.halted) {  // the same in every block: every copy saw the same reductions
      all_ran = false;
      break;
    }
    const float dt = c.dt;
    DevControl* red_now = red0 + (step & 1);
    const long long t1 = clock64();

    // P2G. The loop's trip count is uniform over the block, so every lane
    // of a warp takes part in p2g_scatter_warp's shuffles.
    for (int base = first; base < last; base += blockDim.x) {
      const int i = base + tid;
      bool active = i < last;
      P2GParticle t;
      if (active) {
        p2g_particle<K, POLY, false>(a.p, i, a.mats, a.g, a.apic, nullptr, dt, t);
        active = stencil_inside<K>(t.s.base_x, t.s.base_y, sx, sy);  // else G2P reports it
      }
      if constexpr (DET) {
        if (active) p2g_scatter<K, FLIP, POLY, false>(t, a.g, inv_dx, add);
      } else {
        p2g_scatter_warp<K, FLIP, POLY, false>(active, t, a.g, inv_dx, add);
      }
    }
    cluster.sync();
    const long long t2 = clock64();

    // Grid update of this block's nodes; their sums cleared for the next
    // substep (nothing reads them before the next P2G, two barriers on).
    // Rank 0 resets the reduction slot of the next substep: every block read
    // it (as the previous substep's) before the barrier above.
    gp.dt = dt;
    const bool output = step == a.count - 1;
    if (tid == 0 && rank == 0) {
      red[(step + 1) & 1].vmax2_bits = 0u;
      red[(step + 1) & 1].bad = ~0ull;
    }
    for (int k = tid; k < nodes; k += blockDim.x) {
      const int row = k / sx, x = k - row * sx;
      const int y = (row << a.shift) + rank;
      if (y >= sy) break;  // k only grows
      float m;
      Vec2 mv, mv0{};
      if constexpr (DET) {
        m = from_fixed(sum[k], a.fs.mass);
        mv = Vec2{from_fixed(sum[S + k], a.fs.momentum), from_fixed(sum[2 * S + k], a.fs.momentum)};
        if constexpr (FLIP)
          mv0 = Vec2{from_fixed(sum[3 * S + k], a.fs.momentum),
                     from_fixed(sum[4 * S + k], a.fs.momentum)};
      } else {
        m = sum[k];
        mv = Vec2{sum[S + k], sum[2 * S + k]};
        if constexpr (FLIP) mv0 = Vec2{sum[3 * S + k], sum[4 * S + k]};
      }
#pragma unroll
      for (int q = 0; q < CH; ++q) sum[q * S + k] = Sum(0);
      mpm::grid_update_node(x, y, m, mv, gp);
      vel[k] = mv;
      if constexpr (FLIP) vel_old[k] = mpm::flip_old_velocity(m, mv0);
      if (output) {  // read_grid's copy (the unfused grid_kernel's gm, gv)
        a.gm[y * sx + x] = m;
        a.gv[y * sx + x] = mv;
      }
    }
    cluster.sync();
    const long long t3 = clock64();

    // G2P.
    for (int i = first + tid; i < last; i += blockDim.x) {
      const Vec2 xp = a.p.x[i];
      const int bx = mpm::stencil_base(K, (xp.x - a.g.origin.x) * inv_dx);
      const int by = mpm::stencil_base(K, (xp.y - a.g.origin.y) * inv_dx);
      if (!stencil_inside<K>(bx, by, sx, sy)) {
        atomicMin(&red_now->bad,
                  static_cast<unsigned long long>(a.p.perm[i]));  // halts the run, as a blow-up
        continue;
      }
      g2p_particle<K, FLIP, POLY, false>(a.p, i, a.mats, a.g, a.alpha, a.advect, a.vlim2, dt, rows,
                                         no_colliders, red_now);
    }
    // Past this barrier the reductions are complete, and the next substep's
    // P2G may write the sums (G2P read only the velocities).
    cluster.sync();
    if (tid == 0 && rank == 0) {
      c.fused_cycles[0] += static_cast<unsigned long long>(t1 - t0);
      c.fused_cycles[1] += static_cast<unsigned long long>(t2 - t1);
      c.fused_cycles[2] += static_cast<unsigned long long>(t3 - t2);
      c.fused_cycles[3] += static_cast<unsigned long long>(clock64() - t3);
    }
  }
  // The last substep stays pending with its reductions, as the unfused path
  // leaves it: the next launch or control_end_kernel finishes it.
  if (all_ran && tid == 0) take_reductions(c, red0[(a.count - 1) & 1]);
  // No block leaves while another may still read its shared memory.
  cluster.sync();
  if (rank == 0 && tid == 0) *a.ctrl = c;
#endif
}

// ---- reordering -------------------------------------------------------------------

__global__ void sort_key_kernel(const Vec2* x, int n, GridSpec g, Kernel k, int tiles_x,
                                uint32_t* keys, uint32_t* vals) {
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
  each_column(
      kNoHost,
      [&](Col, auto*, auto* out, auto* in) {
        if (in) out[k] = in[j];  // PolyPIC's modes only while allocated
      },
      dst, src);
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
  each_column(
      kNoHost,
      [&](Col use, auto*, auto* o, auto* i) {
        if ((use == Col::Stepped || use == Col::Modes) && i) o[h] = i[k];
      },
      out, in);
}

/// fext in slot order from the host-order upload.
__global__ void permute_fext_kernel(Vec2* fext, const Vec2* host_order, const uint32_t* perm,
                                    int n) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  fext[k] = host_order[perm[k]];
}

// ---- totals (the window's plots) --------------------------------------------------------

constexpr int kTotalsBlocks = 512;  // fixed: the sums' order, hence their bits, never change

/// Per-block sums of mass, momentum, angular momentum about c and kinetic
/// energy (doubles, each thread strided over the slots, then a fixed tree),
/// and the block's max |v|^2.
__global__ void __launch_bounds__(kThreads)
    totals_kernel(const Vec2* x, const Vec2* v, const float* mass, int n, Vec2 c, double* partial,
                  float* vmax2) {
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
__global__ void totals_final_kernel(const double* partial, const float* vmax2, int blocks,
                                    DevTotals* out) {
  DevTotals t{};
  for (int b = 0; b < blocks; ++b) {
    for (int q = 0; q < 5; ++q) t.sum[q] += partial[5 * b + q];
    t.vmax2 = fmaxf(t.vmax2, vmax2[b]);
  }
  *out = t;
}

int blocks_for(size_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

/// Whether a fluid of the scene corrects its volume (mpm::volume_corrected_J),
/// as MpmCpuBackend decides it: the kernels then take the volume channel
/// (VOL) and the walls hold matter at their faces.
bool corrects_volume(const SubstepInput& in) {
  for (int k = 0; k < in.material_count; ++k)
    if (mpm::volume_correction_step(in.materials[k], in.dt) > 0.f) return true;
  return false;
}

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
  float* gvol;                // the volume channel; null: no fluid corrects its volume
  float* gphi;                // gvol mirrored at the walls, filtered and marked (G2P reads it)
  unsigned long long* gvoli;  // its fixed-point sums (deterministic), else null
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
/// each_column's columns in its order, PolyPIC's modes only with `poly`.
struct ColumnLayout {
  size_t off[kColumns + 1] = {};
  ColumnLayout(size_t n, bool poly) {
    ColumnPacker pack;
    int c = 0;
    DevParticles none;
    each_column(
        kNoHost,
        [&](Col use, auto*, auto* col) {
          const size_t elem = use == Col::Modes && !poly ? 0 : sizeof(*col);
          off[c++] = pack.add(elem * n);
        },
        none);
    off[kColumns] = pack.bytes();
  }
  size_t bytes() const { return off[kColumns]; }
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
    check(cudaMallocHost(reinterpret_cast<void**>(&ctrl_host_), sizeof(DevControl)),
          "cudaMallocHost");
    for (auto& e : ev_) check(cudaEventCreate(&e), "cudaEventCreate");
    const char* env = std::getenv("PS_CUDA_GRAPHS");
    use_graphs_ = !(env && std::strcmp(env, "0") == 0);
    // Off unless asked for: on an H200 (2026-11-27) the fused substeps took 3 to 8 times the
    // unfused kernels' time (its P2G's atomics into other blocks' shared memory dominate).
    const char* fused_env = std::getenv("PS_CUDA_FUSED");
    fused_enabled_ = fused_env && std::strcmp(fused_env, "1") == 0;
    check(cudaDeviceGetAttribute(&cc_major_, cudaDevAttrComputeCapabilityMajor, 0),
          "device attribute");
    check(cudaDeviceGetAttribute(&smem_optin_, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0),
          "device attribute");
  }
  ~MpmCudaBackend() override {
    cudaStreamSynchronize(stream_);
    heat_.reset();
    drop_graphs();
    free_particles();
    cudaFree(gm_);
    cudaFree(gv_);
    cudaFree(gv_old_);
    cudaFree(gi_);
    cudaFree(gvol_);
    cudaFree(gphi_);
    cudaFree(gvoli_);
    cudaFree(mats_);
    cudaFree(grab_idx_);
    cudaFree(grab_off_);
    cudaFree(grab_ks_);
    cudaFree(ctrl_);
    cudaFree(cols_);
    cudaFree(col_impulse_);
    cudaFree(cols_placed_);
    cudaFree(col_time_);
    cudaFreeHost(ctrl_host_);
    for (auto& e : ev_) cudaEventDestroy(e);
    cudaFree(tot_partial_);
    cudaFree(tot_vmax_);
    cudaFree(tot_out_);
    cudaFreeHost(tot_host_);
    // owner_ destroys the stream once the last device state copy is gone.
  }

  std::string name() const override { return "cuda (" + device_name_ + ")"; }
  void bind(MpmParticles* host) override { host_ = host; }

  void host_changed() override {
    const size_t n = host_->size();
    check(cudaStreamSynchronize(stream_), "sync");
    reserve_particles(n);
    n_ = n;
    each_column(
        host_,
        [&](Col use, auto* h, auto* d) {
          if (use == Col::Stepped || use == Col::Constant) upload(d, h->data(), n, stream_);
        },
        d_);
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
    // Fixed-point scales from the heaviest particle and the largest rest
    // volume (sim/mpm/mpm_fixed.h).
    float mmax = 0.f, vmax = 0.f;
    for (size_t i = 0; i < n; ++i) {
      mmax = std::max(mmax, host_->mass[i]);
      vmax = std::max(vmax, host_->vol0[i]);
    }
    fs_ = fixed_scale_for(mmax, vmax);
    since_sort_ = kSortDue;  // reorder before the next substep
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
    const bool poly = d_.poly && host_->poly.size() == n_;
    auto read_back = [&](Col use) { return use == Col::Stepped || (use == Col::Modes && poly); };
    size_t bytes = 0;
    each_column(
        host_,
        [&](Col use, auto* h, auto* d) {
          if (read_back(use)) bytes += n_ * sizeof(*d);
        },
        alt_);
    stage_.resize(bytes);
    size_t at = 0;
    each_column(
        host_,
        [&](Col use, auto* h, auto* d) {
          if (!read_back(use)) return;
          download(reinterpret_cast<std::remove_pointer_t<decltype(d)>*>(stage_.data() + at), d, n_,
                   stream_);
          at += n_ * sizeof(*d);
        },
        alt_);
    check(cudaStreamSynchronize(stream_), "sync_to_host");
    at = 0;
    each_column(
        host_,
        [&](Col use, auto* h, auto* d) {
          if (!read_back(use)) return;
          std::memcpy(h->data(), stage_.data() + at, n_ * sizeof(*d));
          at += n_ * sizeof(*d);
        },
        alt_);
    host_current_ = true;
  }

  SubstepResult substep(const SubstepInput& in) override {
    StepRule rule;
    rule.adaptive = false;
    rule.dt_max = in.dt;
    StepClock clock;
    clock.time = in.time;
    return advance(in, 1, rule, clock);
  }

  SubstepResult advance(const SubstepInput& in, int count, const StepRule& rule,
                        StepClock& clock) override {
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
    // Whole substeps per launch where the fused kernel can take them (see
    // fused_kernel); it reorders every kFusedSubsteps substeps, between launches.
    bool fused = plan_fused(in);
    bool timed_sort = false;
    int timed_fused =
        0;  // substeps of the timed fused launch; 0: the first substep was timed unfused
    for (int s = 0; s < count;) {
      if (since_sort_ >= (fused ? kFusedSubsteps : kSortInterval)) {
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
        permute_fext_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(fext_, fext_staging_, d_.perm,
                                                                      n);
        check(cudaGetLastError(), "fext");
        fext_stale = false;
      }
      LaunchKey key = make_key(in, rule);
      if (fused) {
        const int chunk = std::min(count - s, kFusedSubsteps - since_sort_);
        if (launch_fused(key, chunk, s == 0)) {
          if (s == 0) timed_fused = chunk;
          s += chunk;
          since_sort_ += chunk;
          continue;
        }
        fused =
            false;  // refused (launch_fused says why): unfused from here on, reordered at its interval
        continue;
      }
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
    check(cudaMemcpyAsync(ctrl_host_, ctrl_, sizeof(DevControl), cudaMemcpyDeviceToHost, stream_),
          "control");
    if (in.collider_count > 0)
      check(
          cudaMemcpyAsync(col_impulse_host_.data(), col_impulse_,
                          3 * sizeof(double) * in.collider_count, cudaMemcpyDeviceToHost, stream_),
          "collider impulses");
    check(cudaStreamSynchronize(stream_), "advance");
    // The bodies' impulses over this call's substeps (the CPU adds per substep).
    if (in.collider_count > 0 && in.collider_impulse)
      for (int q = 0; q < 3 * in.collider_count; ++q)
        in.collider_impulse[q] += col_impulse_host_[static_cast<size_t>(q)];
    host_current_ = false;
    last_fused_ = fused;
    record_timings(count, timed_sort, timed_fused, fused ? kFusedSubsteps : kSortInterval);
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

  void read_grid(GridSpec& spec, std::vector<float>& mass,
                 std::vector<Vec2>& velocity) const override {
    spec = last_grid_;
    mass.resize(nodes_);
    velocity.resize(nodes_);
    if (nodes_ == 0) return;
    check(
        cudaMemcpyAsync(mass.data(), gm_, nodes_ * sizeof(float), cudaMemcpyDeviceToHost, stream_),
        "grid");
    check(cudaMemcpyAsync(velocity.data(), gv_, nodes_ * sizeof(Vec2), cudaMemcpyDeviceToHost,
                          stream_),
          "grid");
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
    const size_t per_particle =
        2 * (sizeof(Vec2) * 2 + sizeof(Mat2) * 2 + sizeof(float) * 4 + 1 + 4) + sizeof(Vec2) * 2 +
        4 * 5 + (d_.poly ? 2 * sizeof(PolyModes) : 0);
    s.state_bytes = capacity_ * per_particle + nodes_ * (sizeof(float) + 2 * sizeof(Vec2)) +
                    (gi_ ? nodes_ * sizeof(FixedNode) : 0) +
                    (gvol_ ? 2 * nodes_ * sizeof(float) : 0) +
                    (gvoli_ ? nodes_ * sizeof(unsigned long long) : 0) + sort_temp_bytes_;
    static const char* names[kPhases] = {"control + grab + clear", "P2G (tiled, shared memory)",
                                         "grid update", "G2P + advect (+ MUSL, linear)",
                                         "sort + reorder (amortised)"};
    // The fused kernel's phases: its cycle split of the timed launch (record_timings).
    static const char* fused_names[kPhases] = {
        "control (fused)", "P2G (fused, cluster shared memory)", "grid update (fused)",
        "G2P + advect (fused)", "sort + reorder (amortised)"};
    for (int k = 0; k < kPhases; ++k)
      s.phases.push_back(PhaseTiming{timed_fused_path_ ? fused_names[k] : names[k], phase_ms_[k]});
    s.ms_per_substep = ms_per_substep_;
    if (last_fused_) {
      s.notes =
          "fused cluster of " + std::to_string(fit_.blocks) + " blocks, " +
          std::to_string(kFusedSubsteps) +
          " substeps per launch (one kernel: control, P2G, grid update, G2P; the grid in the cluster's shared "
          "memory); reordered every " +
          std::to_string(kFusedSubsteps) + " substeps";
    } else {
      s.notes = std::string("reordered every ") + std::to_string(kSortInterval) + " substeps; " +
                (use_graphs_ ? "one CUDA graph per run of substeps between reorders"
                             : "direct launches (PS_CUDA_GRAPHS=0)") +
                (fused_why_not_.empty() ? "" : "; not fused: " + fused_why_not_);
    }
    s.notes += last_det_ ? "; deterministic fixed-point scatter" : "; float atomics";
    return s;
  }

  HeatLinearSolver* heat_linear_solver() override {
    if (!heat_) heat_ = make_cuda_heat_solver(stream_);
    return heat_.get();
  }

  const DeviceParticleView* device_view() override {
    view_.count = n_;
    view_.x = d_.x;
    view_.v = d_.v;
    view_.C = d_.C;
    view_.F = d_.F;
    view_.J = d_.J;
    view_.Jp = d_.Jp;
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
      check(cudaMallocHost(reinterpret_cast<void**>(&tot_host_), sizeof(DevTotals)),
            "cudaMallocHost");
    }
    const int blocks = std::min(kTotalsBlocks, blocks_for(n_));
    totals_kernel<<<blocks, kThreads, 0, stream_>>>(d_.x, d_.v, d_.mass, static_cast<int>(n_),
                                                    centre, tot_partial_, tot_vmax_);
    totals_final_kernel<<<1, 1, 0, stream_>>>(tot_partial_, tot_vmax_, blocks, tot_out_);
    check(cudaGetLastError(), "totals");
    check(cudaMemcpyAsync(tot_host_, tot_out_, sizeof(DevTotals), cudaMemcpyDeviceToHost, stream_),
          "totals");
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
      invert_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(d_.perm, inv_perm_,
                                                              static_cast<int>(n_));
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
    const bool with_poly = with && host_->poly.size() == n;
    // The saved columns, each_column's order: perm first, then the stepped ones by it.
    const uint32_t* perm = nullptr;
    int c = 0;
    each_column(
        kNoHost,
        [&](Col use, auto*, auto*) {
          if (use == Col::Order) perm = reinterpret_cast<const uint32_t*>(mem + lay.off[c]);
          ++c;
        },
        d_);
    for (size_t k = 0; k < n; ++k)
      if (perm[k] >= n) return false;  // not a permutation: keep the older host copy
    c = 0;
    each_column(
        host_,
        [&](Col use, auto* h, auto* d) {
          using T = std::remove_pointer_t<decltype(d)>;
          const auto* saved = reinterpret_cast<const T*>(mem + lay.off[c++]);
          if (use == Col::Stepped || (use == Col::Modes && with_poly))
            for (size_t k = 0; k < n; ++k) (*h)[perm[k]] = saved[k];
        },
        d_);
    return true;
  }

 private:
  /// How fused launches run for the last kernel and grid size asked about
  /// (fit_fused): the cluster, or why_not.
  struct FusedPlan {
    const void* fn = nullptr;  // the fused_kernel instantiation; null: unfused
    int blocks = 0, shift = 0, rows = 0;
    size_t smem = 0;  // dynamic shared memory per block
    std::string why_not;
  };

  enum {
    kEvBatchStart = 0,
    kEvBatchEnd,
    kEvSortStart,
    kEvSortEnd,
    kEvK0,
    kEvK1,
    kEvK2,
    kEvK3,
    kEvK4,
    kEvCount
  };
  static constexpr int kPhases = 5;

  /// Copies the current slot-ordered columns into a state copy (save) or
  /// back (load), device to device, in stream order.
  void copy_columns(const CudaStateCopy& c, bool save) {
    auto cp = [&](auto* live, int col, size_t elem) {
      if (!live) return;
      void* saved = c.mem_ + c.layout_.off[col];
      check(cudaMemcpyAsync(save ? saved : static_cast<void*>(live),
                            save ? static_cast<const void*>(live) : saved, elem * c.n_,
                            cudaMemcpyDeviceToDevice, stream_),
            "device state copy");
    };
    int col = 0;
    each_column(
        kNoHost,
        [&](Col use, auto*, auto* live) {
          if (use != Col::Modes || c.poly_) cp(live, col, sizeof(*live));
          ++col;
        },
        d_);
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
      each_column(
          kNoHost,
          [&](Col use, auto*, auto*& col) {
            if (use != Col::Modes) dev_alloc(col, capacity_);  // the modes: alloc_poly
          },
          *d);
    }
    if (poly) alloc_poly();
    dev_alloc(fext_, capacity_);
    dev_alloc(fext_staging_, capacity_);
    dev_alloc(inv_perm_, capacity_);
    dev_alloc(keys_a_, capacity_);
    dev_alloc(keys_b_, capacity_);
    dev_alloc(vals_a_, capacity_);
    dev_alloc(vals_b_, capacity_);
    size_t bytes = 0;
    check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_a_, keys_b_, vals_a_, vals_b_,
                                          static_cast<int>(capacity_), 0, 32, stream_),
          "cub sort size");
    sort_temp_bytes_ = bytes;
    dev_alloc(sort_temp_, bytes);
  }

  /// Grid buffers, material table and grab list for this call's input. The
  /// volume channel (float, and its fixed-point sums in deterministic mode)
  /// from the first call whose fluid corrects its volume on.
  void prepare(const SubstepInput& in) {
    const size_t nodes = static_cast<size_t>(in.grid.nodes_x()) * in.grid.nodes_y();
    const bool det = in.solver.deterministic;
    const bool vol = corrects_volume(in);
    if (nodes != nodes_ || (det && !gi_) || (vol && (!gvol_ || !gphi_)) ||
        (vol && det && !gvoli_)) {
      check(cudaStreamSynchronize(stream_), "sync");
      drop_graphs();
      if (nodes != nodes_) {
        dev_alloc(gm_, nodes);
        dev_alloc(gv_, nodes);
        dev_alloc(gv_old_, nodes);
        if (gi_) dev_alloc(gi_, 0);
        if (gvol_) dev_alloc(gvol_, 0);
        if (gphi_) dev_alloc(gphi_, 0);
        if (gvoli_) dev_alloc(gvoli_, 0);
        nodes_ = nodes;
      }
      if (det && !gi_) dev_alloc(gi_, nodes);
      if (vol && (!gvol_ || !gphi_)) {  // both or, after a failed allocation, neither
        if (gvol_) dev_alloc(gvol_, 0);
        dev_alloc(gphi_, nodes);
        dev_alloc(gvol_, nodes);
      }
      if (vol && det && !gvoli_) dev_alloc(gvoli_, nodes);
    }
    last_det_ = det;
    last_grid_ = in.grid;
    // Material table: uploaded only when it changed (a few hundred bytes).
    const size_t mat_bytes = sizeof(MaterialParams) * static_cast<size_t>(in.material_count);
    if (mat_cache_.size() != mat_bytes ||
        std::memcmp(mat_cache_.data(), in.materials, mat_bytes) != 0) {
      check(cudaStreamSynchronize(stream_), "sync");
      if (mat_cache_.size() != mat_bytes) {
        drop_graphs();
        dev_alloc(mats_, static_cast<size_t>(in.material_count));
      }
      mat_cache_.assign(reinterpret_cast<const char*>(in.materials),
                        reinterpret_cast<const char*>(in.materials) + mat_bytes);
      check(cudaMemcpyAsync(mats_, mat_cache_.data(), mat_bytes, cudaMemcpyHostToDevice, stream_),
            "materials");
      mat_count_ = in.material_count;
    }
    if (in.grab.count > 0) {
      const bool same =
          grab_cache_idx_.size() == static_cast<size_t>(in.grab.count) &&
          std::memcmp(grab_cache_idx_.data(), in.grab.index, in.grab.count * sizeof(uint32_t)) ==
              0 &&
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
                              cudaMemcpyHostToDevice, stream_),
              "grab");
        check(cudaMemcpyAsync(grab_off_, grab_cache_off_.data(), in.grab.count * sizeof(Vec2),
                              cudaMemcpyHostToDevice, stream_),
              "grab");
        if (in.grab.stiffness_each) {
          grab_cache_ks_.assign(in.grab.stiffness_each, in.grab.stiffness_each + in.grab.count);
          check(cudaMemcpyAsync(grab_ks_, grab_cache_ks_.data(), in.grab.count * sizeof(float),
                                cudaMemcpyHostToDevice, stream_),
                "grab");
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

  /// The rigid-body parts of this call (a few hundred bytes per part; moving
  /// parts also their placement time) and a zeroed impulse accumulator: the
  /// only per-call exchange of the coupling. Buffers grow with the part count
  /// and are otherwise reused.
  void upload_colliders(const SubstepInput& in) {
    if (in.collider_count <= 0) return;
    const size_t n = static_cast<size_t>(in.collider_count);
    if (n > col_capacity_) {
      check(cudaStreamSynchronize(stream_), "sync");
      drop_graphs();
      dev_alloc(cols_, n);
      dev_alloc(cols_placed_, n);
      dev_alloc(col_impulse_, 3 * n);
      dev_alloc(col_time_, 1);
      col_capacity_ = n;
    }
    col_impulse_host_.resize(3 * n);
    check(cudaMemcpyAsync(cols_, in.colliders, n * sizeof(RigidCollider), cudaMemcpyHostToDevice,
                          stream_),
          "colliders");
    if (in.colliders_move) {
      col_time_host_ = in.collider_time;
      check(cudaMemcpyAsync(cols_placed_, cols_, n * sizeof(RigidCollider),
                            cudaMemcpyDeviceToDevice, stream_),
            "colliders");
      check(cudaMemcpyAsync(col_time_, &col_time_host_, sizeof(double), cudaMemcpyHostToDevice,
                            stream_),
            "colliders");
    }
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
    const bool vol = corrects_volume(in);
    k.gvol = vol ? gvol_ : nullptr;
    k.gphi = vol ? gphi_ : nullptr;
    k.gvoli = vol && in.solver.deterministic ? gvoli_ : nullptr;
    k.fext = in.use_fext ? fext_ : nullptr;
    k.inv_perm = inv_perm_;
    k.fs = fs_;
    k.cols.c = in.collider_count > 0 ? cols_ : nullptr;
    k.cols.n = in.collider_count;
    k.cols.impulse = in.collider_count > 0 ? col_impulse_ : nullptr;
    k.cols.placed = in.collider_count > 0 && in.colliders_move ? cols_placed_ : nullptr;
    k.cols.placed_time = k.cols.placed ? col_time_ : nullptr;
    k.ctrl = ctrl_;
    return k;
  }

  /// P2G's launch for this key's kernel, transfer and sum type; VOL: with
  /// the volume channel.
  template <bool VOL>
  void launch_p2g(const LaunchKey& k, cudaStream_t st) {
    const int n = k.n;
    const bool flip = k.transfer == Transfer::FLIP;
    const bool poly = k.transfer == Transfer::PolyPIC;       // quadratic only (checked in advance)
    const bool apic = k.transfer == Transfer::APIC || poly;  // PolyPIC = APIC + higher modes
    const int pb = blocks_for(static_cast<size_t>(n));
#define PS_P2G(KK, DD, FF, PP)                                                                   \
  p2g_kernel<KK, DD, FF, PP, VOL><<<pb, kThreads, 0, st>>>(k.d, n, k.mats, k.grid, apic, k.fext, \
                                                           k.gm, k.gv, k.gv_old, k.gi, k.gvol,   \
                                                           k.gvoli, k.fs, k.ctrl)
#define PS_P2G_F(KK, DD)            \
  do {                              \
    if (flip)                       \
      PS_P2G(KK, DD, true, false);  \
    else                            \
      PS_P2G(KK, DD, false, false); \
  } while (0)
    const bool det = k.gi != nullptr;
    switch (k.kernel) {
      case Kernel::Linear:
        if (det)
          PS_P2G_F(Kernel::Linear, true);
        else
          PS_P2G_F(Kernel::Linear, false);
        break;
      case Kernel::Cubic:
        if (det)
          PS_P2G_F(Kernel::Cubic, true);
        else
          PS_P2G_F(Kernel::Cubic, false);
        break;
      default:
        if (poly) {
          if (det)
            PS_P2G(Kernel::Quadratic, true, false, true);
          else
            PS_P2G(Kernel::Quadratic, false, false, true);
        } else if (det) {
          PS_P2G_F(Kernel::Quadratic, true);
        } else {
          PS_P2G_F(Kernel::Quadratic, false);
        }
        break;
    }
#undef PS_P2G_F
#undef PS_P2G
  }

  /// G2P's launch (the linear kernel's first pass: its velocities; VOL is
  /// read by musl_g2p_kernel).
  template <bool VOL>
  void launch_g2p(const LaunchKey& k, cudaStream_t st) {
    const int n = k.n;
    const bool flip = k.transfer == Transfer::FLIP;
    const bool poly = k.transfer == Transfer::PolyPIC;
    const int pb = blocks_for(static_cast<size_t>(n));
    const float vlim2 = k.velocity_limit * k.velocity_limit;
#define PS_G2P(KK, FF, PP, VV)                                                              \
  g2p_kernel<KK, FF, PP, VV><<<pb, kThreads, 0, st>>>(k.d, n, k.mats, k.grid, k.flip_blend, \
                                                      k.flip_advect, vlim2, k.gv, k.gv_old, \
                                                      k.gphi, k.cols, k.ctrl)
    switch (k.kernel) {
      case Kernel::Linear:
        if (flip)
          PS_G2P(Kernel::Linear, true, false, false);
        else
          PS_G2P(Kernel::Linear, false, false, false);
        break;
      case Kernel::Cubic:
        if (flip)
          PS_G2P(Kernel::Cubic, true, false, VOL);
        else
          PS_G2P(Kernel::Cubic, false, false, VOL);
        break;
      default:
        if (poly)
          PS_G2P(Kernel::Quadratic, false, true, VOL);
        else if (flip)
          PS_G2P(Kernel::Quadratic, true, false, VOL);
        else
          PS_G2P(Kernel::Quadratic, false, false, VOL);
        break;
    }
#undef PS_G2P
  }

  /// Enqueues one substep on stream_ (also used under graph capture).
  void launch_substep(const LaunchKey& k, bool timed) {
    cudaStream_t st = stream_;
    const int n = k.n;
    const size_t nodes = static_cast<size_t>(k.grid.nodes_x()) * k.grid.nodes_y();
    if (timed) cudaEventRecord(ev_[kEvK0], st);
    const bool flip = k.transfer == Transfer::FLIP;
    const bool vol = k.gvol != nullptr;  // a fluid corrects its volume
    clear_kernel<<<blocks_for(nodes), kThreads, 0, st>>>(k.gm, k.gv, flip ? k.gv_old : nullptr,
                                                         k.gi, k.gvol, k.gvoli,
                                                         static_cast<int>(nodes), k.ctrl, k.rule);
    if (k.grab_count > 0)
      grab_kernel<<<blocks_for(static_cast<size_t>(k.grab_count)), kThreads, 0, st>>>(
          k.d, n, k.inv_perm, k.grab_idx, k.grab_off, k.grab_ks, k.grab_count, k.grab_target,
          k.grab_stiffness, k.ctrl);
    if (timed) cudaEventRecord(ev_[kEvK1], st);
    if (vol)
      launch_p2g<true>(k, st);
    else
      launch_p2g<false>(k, st);
    if (timed) cudaEventRecord(ev_[kEvK2], st);
    mpm::GridUpdateParams gp{k.grid,  k.gravity,      0.f, k.boundary, k.boundary_nodes,
                             k.point, k.wall_friction};
    gp.face_contact = vol;  // as MpmCpuBackend::grid_update: the walls hold matter at their faces
    if (vol)
      ghost_stress_kernel<<<blocks_for(static_cast<size_t>(k.n)), kThreads, 0, st>>>(
          k.d, k.n, k.mats, k.grid, k.kernel, k.boundary_nodes, k.gv, k.gi, k.fs, k.ctrl);
    grid_kernel<<<blocks_for(nodes), kThreads, 0, st>>>(gp, k.gm, k.gv, k.gv_old, flip, k.gi,
                                                        k.gvol, k.gvoli, k.fs, k.ctrl);
    if (k.cols.n > 0)
      collide_kernel<<<blocks_for(nodes), kThreads, 0, st>>>(k.grid, k.gm, k.gv, k.cols, true,
                                                             k.ctrl);
    if (vol) {
      volume_filter_kernel<<<blocks_for(nodes), kThreads, 0, st>>>(
          k.grid, k.boundary_nodes, k.kernel, k.cols, false, k.gvol, k.gphi, k.ctrl);
      volume_filter_kernel<<<blocks_for(nodes), kThreads, 0, st>>>(
          k.grid, k.boundary_nodes, k.kernel, k.cols, true, k.gphi, k.gvol, k.ctrl);
      volume_interior_kernel<<<blocks_for(nodes), kThreads, 0, st>>>(k.grid, k.kernel, k.gvol,
                                                                     k.gphi, k.ctrl);
    }
    if (timed) cudaEventRecord(ev_[kEvK3], st);
    if (vol)
      launch_g2p<true>(k, st);
    else
      launch_g2p<false>(k, st);
    if (k.kernel == Kernel::Linear) {
      const bool det = k.gi != nullptr;
      const int pb = blocks_for(static_cast<size_t>(n));
      const float vlim2 = k.velocity_limit * k.velocity_limit;
      if (det)
        musl_clear_kernel<true>
            <<<blocks_for(nodes), kThreads, 0, st>>>(k.gv, k.gi, static_cast<int>(nodes), k.ctrl);
      else
        musl_clear_kernel<false>
            <<<blocks_for(nodes), kThreads, 0, st>>>(k.gv, k.gi, static_cast<int>(nodes), k.ctrl);
      if (det)
        musl_p2g_kernel<true><<<pb, kThreads, 0, st>>>(k.d, n, k.grid, k.gv, k.gi, k.fs, k.ctrl);
      else
        musl_p2g_kernel<false><<<pb, kThreads, 0, st>>>(k.d, n, k.grid, k.gv, k.gi, k.fs, k.ctrl);
      // gp.dt is 0 here: the MUSL grid step only applies the boundary, which has no dt.
      musl_grid_kernel<<<blocks_for(nodes), kThreads, 0, st>>>(gp, k.gm, k.gv, k.gi, k.fs, k.ctrl);
      // The bodies again on the second grid, without impulses (as on the CPU).
      if (k.cols.n > 0)
        collide_kernel<<<blocks_for(nodes), kThreads, 0, st>>>(k.grid, k.gm, k.gv, k.cols, false,
                                                               k.ctrl);
#define PS_MUSL_G2P(FF, VV)                                                                      \
  musl_g2p_kernel<FF, VV><<<pb, kThreads, 0, st>>>(k.d, n, k.mats, k.grid, k.flip_advect, vlim2, \
                                                   k.gv, k.gphi, k.cols, k.ctrl)
      if (flip) {
        if (vol)
          PS_MUSL_G2P(true, true);
        else
          PS_MUSL_G2P(true, false);
      } else if (vol) {
        PS_MUSL_G2P(false, true);
      } else {
        PS_MUSL_G2P(false, false);
      }
#undef PS_MUSL_G2P
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

  /// The fused kernel for this transfer, kernel and sum type.
  static const void* fused_fn(Kernel kernel, bool det, bool flip, bool poly) {
    constexpr Kernel Q = Kernel::Quadratic, C = Kernel::Cubic;
#define PS_FUSED(KK, DD, FF, PP) reinterpret_cast<const void*>(&fused_kernel<KK, DD, FF, PP>)
    if (kernel == C) {
      if (det) return flip ? PS_FUSED(C, true, true, false) : PS_FUSED(C, true, false, false);
      return flip ? PS_FUSED(C, false, true, false) : PS_FUSED(C, false, false, false);
    }
    if (poly) return det ? PS_FUSED(Q, true, false, true) : PS_FUSED(Q, false, false, true);
    if (det) return flip ? PS_FUSED(Q, true, true, false) : PS_FUSED(Q, true, false, false);
    return flip ? PS_FUSED(Q, false, true, false) : PS_FUSED(Q, false, false, false);
#undef PS_FUSED
  }

  /// A launch of `blocks` fused blocks as one cluster; `attr` holds its attribute.
  cudaLaunchConfig_t fused_config(int blocks, size_t smem, cudaLaunchAttribute* attr) const {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(blocks), 1, 1);
    cfg.blockDim = dim3(kFusedThreads, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream_;
    attr[0] = cudaLaunchAttribute{};
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = static_cast<unsigned>(blocks);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
  }

  /// Whether this call's substeps run fused (fused_kernel's comment says
  /// which take it); fused_why_not_ says why not. The cluster is chosen once
  /// per kernel and grid size (fit_fused).
  bool plan_fused(const SubstepInput& in) {
    const char* why = nullptr;
    if (!fused_enabled_)
      why = "off unless PS_CUDA_FUSED=1 (measured slower than these kernels)";
    else if (cc_major_ < 9)
      why = "thread-block clusters need compute capability 9.0";
    else if (!fused_refusal_.empty())
      why = fused_refusal_.c_str();
    else if (in.solver.kernel == Kernel::Linear)
      why = "linear kernel (its MUSL pass)";
    else if (in.collider_count > 0)
      why = "rigid-body parts";
    else if (in.grab.count > 0)
      why = "grab";
    else if (in.use_fext)
      why = "per-substep forces";
    else if (n_ > kFusedMaxParticles)
      why = "more particles than one cluster takes faster than the whole device";
    else if (corrects_volume(in))
      why = "the volume correction (its wall mirror, filter and ghost-stress passes)";
    if (why) {
      fused_why_not_ =
          why;  // (the string keeps its capacity: no allocation once it held a long reason)
      return false;
    }
    const bool det = in.solver.deterministic, flip = in.solver.transfer == Transfer::FLIP;
    const void* fn = fused_fn(in.solver.kernel, det, flip, in.solver.transfer == Transfer::PolyPIC);
    const int sx = in.grid.nodes_x(), sy = in.grid.nodes_y();
    if (fn != fit_fn_ || sx != fit_sx_ || sy != fit_sy_) {
      fit_ = fit_fused(fn, det, flip, sx, sy);
      fit_fn_ = fn;
      fit_sx_ = sx;
      fit_sy_ = sy;
    }
    fused_why_not_ = fit_.why_not;
    return fit_.fn != nullptr;
  }

  /// The largest cluster (16 blocks, else 8, 4, 2, 1) that this device runs
  /// and whose blocks' shared memory holds an sx x sy node grid, or why not.
  FusedPlan fit_fused(const void* fn, bool det, bool flip, int sx, int sy) {
    FusedPlan p;
    cudaFuncAttributes fa{};
    if (cudaFuncGetAttributes(&fa, fn) != cudaSuccess) {
      cudaGetLastError();
      p.why_not = "no fused kernel for this device";
      return p;
    }
    if (fa.ptxVersion < 90) {  // the kernel is empty below sm_90
      p.why_not = "this build has no sm_90 code";
      return p;
    }
    if (fa.maxThreadsPerBlock < kFusedThreads) {
      p.why_not = "the fused kernel needs more registers than " + std::to_string(kFusedThreads) +
                  " threads have";
      return p;
    }
    const size_t room = static_cast<size_t>(smem_optin_) > fa.sharedSizeBytes
                            ? smem_optin_ - fa.sharedSizeBytes
                            : 0;
    if (cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(room)) != cudaSuccess) {
      cudaGetLastError();
      p.why_not =
          "the fused kernel cannot have " + std::to_string(room / 1024) + " KiB of shared memory";
      return p;
    }
    const bool non_portable =
        cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess;
    if (!non_portable) cudaGetLastError();
    for (int shift = kFusedMaxShift; shift >= 0; --shift) {
      const int blocks = 1 << shift;
      if (blocks > 8 && !non_portable) continue;
      const int rows = (sy + blocks - 1) / blocks;
      const long long nodes = static_cast<long long>(rows) * sx;
      // (Past `room` nodes it cannot fit, at 20 bytes or more a node: the
      // estimate keeps the int layout arithmetic for grids that might.)
      const size_t bytes = nodes <= static_cast<long long>(room)
                               ? fused_layout(det, flip, static_cast<int>(nodes)).bytes
                               : static_cast<size_t>(nodes) * fused_layout(det, flip, 4).bytes / 4;
      if (bytes > room) {  // fewer blocks need more
        p.why_not = "the grid's " + std::to_string(sx) + " x " + std::to_string(sy) +
                    " nodes need " + std::to_string((bytes + 1023) / 1024) +
                    " KiB of shared memory per block in a cluster of " + std::to_string(blocks) +
                    " (" + std::to_string(room / 1024) + " KiB available)";
        return p;
      }
      cudaLaunchAttribute attr[1];
      const cudaLaunchConfig_t cfg = fused_config(blocks, bytes, attr);
      int clusters = 0;
      if (cudaOccupancyMaxActiveClusters(&clusters, fn, &cfg) != cudaSuccess) {
        cudaGetLastError();
        continue;
      }
      if (clusters < 1) continue;
      p.fn = fn;
      p.blocks = blocks;
      p.shift = shift;
      p.rows = rows;
      p.smem = bytes;
      return p;
    }
    p.why_not = "the device runs no cluster of these blocks";
    return p;
  }

  /// Launches `count` fused substeps (plan_fused said yes), timed between
  /// kEvK0 and kEvK1 when `timed`. False when the launch is refused (nothing
  /// ran): then no later call tries again, and the notes say why.
  bool launch_fused(const LaunchKey& k, int count, bool timed) {
    FusedArgs fa;
    std::memset(&fa, 0, sizeof fa);
    fa.p = k.d;
    fa.n = k.n;
    fa.mats = k.mats;
    fa.g = k.grid;
    fa.apic = k.transfer == Transfer::APIC || k.transfer == Transfer::PolyPIC;
    fa.alpha = k.flip_blend;
    fa.advect = k.flip_advect;
    fa.vlim2 = k.velocity_limit * k.velocity_limit;
    fa.gp = mpm::GridUpdateParams{k.grid,  k.gravity,      0.f, k.boundary, k.boundary_nodes,
                                  k.point, k.wall_friction};
    fa.rule = k.rule;
    fa.fs = k.fs;
    fa.gm = k.gm;
    fa.gv = k.gv;
    fa.ctrl = k.ctrl;
    fa.count = count;
    fa.rows = fit_.rows;
    fa.shift = fit_.shift;
    cudaLaunchAttribute attr[1];
    const cudaLaunchConfig_t cfg = fused_config(fit_.blocks, fit_.smem, attr);
    void* args[] = {&fa};
    if (timed) check(cudaEventRecord(ev_[kEvK0], stream_), "event");
    const cudaError_t e = cudaLaunchKernelExC(&cfg, fit_.fn, args);
    if (e != cudaSuccess) {
      cudaGetLastError();
      fused_refusal_ = std::string("the fused launch was refused (") + cudaGetErrorString(e) + ")";
      fused_why_not_ = fused_refusal_;
      return false;
    }
    if (timed) check(cudaEventRecord(ev_[kEvK1], stream_), "event");
    return true;
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
    sort_key_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(d_.x, n, in.grid, in.solver.kernel,
                                                              tiles_x, keys_a_, vals_a_);
    size_t need = 0;
    check(cub::DeviceRadixSort::SortPairs(nullptr, need, keys_a_, keys_b_, vals_a_, vals_b_, n, 0,
                                          bits, stream_),
          "cub sort size");
    if (need > sort_temp_bytes_) {
      check(cudaStreamSynchronize(stream_), "sync");
      dev_alloc(sort_temp_, need);
      sort_temp_bytes_ = need;
    }
    size_t bytes = sort_temp_bytes_;
    check(cub::DeviceRadixSort::SortPairs(sort_temp_, bytes, keys_a_, keys_b_, vals_a_, vals_b_, n,
                                          0, bits, stream_),
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

  /// `fused_substeps` > 0: the call's first launch was fused with that many
  /// substeps, timed between kEvK0 and kEvK1 and split by the kernel's clock
  /// cycles per phase; else its first substep was timed kernel by kernel.
  void record_timings(int count, bool sorted, int fused_substeps, int sort_interval) {
    const bool fused = fused_substeps > 0;
    if (fused != timed_fused_path_) {  // another path: its own averages
      timed_fused_path_ = fused;
      timed_calls_ = 0;
    }
    float ms[4] = {0.f, 0.f, 0.f, 0.f};
    if (fused) {
      float launch_ms = 0.f;
      cudaEventElapsedTime(&launch_ms, ev_[kEvK0], ev_[kEvK1]);
      const unsigned long long* cyc = ctrl_host_->fused_cycles;
      const double total = static_cast<double>(cyc[0]) + cyc[1] + cyc[2] + cyc[3];
      const double per_substep = static_cast<double>(launch_ms) / fused_substeps;
      for (int k = 0; k < 4; ++k)
        ms[k] = total > 0.0 ? static_cast<float>(per_substep * (cyc[k] / total)) : 0.f;
    } else {
      for (int k = 0; k < 4; ++k) cudaEventElapsedTime(&ms[k], ev_[kEvK0 + k], ev_[kEvK0 + k + 1]);
    }
    float batch = 0.f;
    cudaEventElapsedTime(&batch, ev_[kEvBatchStart], ev_[kEvBatchEnd]);
    float sort_ms = 0.f;
    if (sorted) cudaEventElapsedTime(&sort_ms, ev_[kEvSortStart], ev_[kEvSortEnd]);
    cudaGetLastError();
    const double a = timed_calls_ == 0 ? 1.0 : 0.1;
    for (int k = 0; k < 4; ++k) phase_ms_[k] += a * (ms[k] - phase_ms_[k]);
    if (sorted)
      phase_ms_[4] += (sorted_calls_ == 0 ? 1.0 : 0.1) * (sort_ms / sort_interval - phase_ms_[4]);
    ms_per_substep_ += a * (batch / std::max(1, count) - ms_per_substep_);
    ++timed_calls_;
    if (sorted) ++sorted_calls_;
  }

  void free_particles() {
    for (DevParticles* d : {&d_, &alt_}) {
      each_column(
          kNoHost, [](Col, auto*, auto* col) { cudaFree(col); }, *d);
      *d = DevParticles{};
    }
    cudaFree(fext_);
    cudaFree(fext_staging_);
    cudaFree(inv_perm_);
    cudaFree(keys_a_);
    cudaFree(keys_b_);
    cudaFree(vals_a_);
    cudaFree(vals_b_);
    cudaFree(sort_temp_);
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
  RigidCollider* cols_ = nullptr;  // rigid-body parts of the current call
  double* col_impulse_ = nullptr;  // 3 per part, summed over the call
  RigidCollider* cols_placed_ =
      nullptr;                  // moving parts as placed (collide_kernel moves them into cols_)
  double* col_time_ = nullptr;  // their placement's clock time
  double col_time_host_ = 0.0;  // the upload's source
  size_t col_capacity_ = 0;
  std::vector<double> col_impulse_host_;
  size_t n_ = 0, capacity_ = 0, nodes_ = 0;
  int since_sort_ = kSortDue;
  bool host_current_ = true;
  float* gm_ = nullptr;
  Vec2* gv_ = nullptr;
  Vec2* gv_old_ = nullptr;
  FixedNode* gi_ = nullptr;
  float* gvol_ = nullptr;  // the volume channel (allocated once a fluid corrects its volume)
  float* gphi_ = nullptr;  // the channel G2P reads: gvol_ mirrored, filtered, marked
  unsigned long long* gvoli_ = nullptr;  // its fixed-point sums (deterministic mode)
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
  // Fused substeps (fused_kernel): whether they may run, why the last call's
  // did not, and the cluster for the last kernel and grid size (fit_fused).
  bool fused_enabled_ = false;     // PS_CUDA_FUSED=1
  std::string fused_refusal_;      // why a fused launch was refused: unfused from then on
  bool last_fused_ = false;        // the last call's substeps ran fused (to its end)
  bool timed_fused_path_ = false;  // phase_ms_ holds the fused kernel's split
  std::string fused_why_not_;
  int cc_major_ = 0;
  int smem_optin_ = 0;  // shared memory a block may opt in to, bytes
  FusedPlan fit_;
  const void* fit_fn_ = nullptr;
  int fit_sx_ = -1, fit_sy_ = -1;
  double phase_ms_[kPhases] = {0.0, 0.0, 0.0, 0.0, 0.0};
  double ms_per_substep_ = 0.0;
  int64_t timed_calls_ = 0, sorted_calls_ = 0;
  GridSpec last_grid_;
  DeviceParticleView view_;
  // sync_to_host's host staging copy (the host arrays change only when all of it arrived).
  std::vector<char> stage_;
  std::unique_ptr<HeatLinearSolver>
      heat_;  ///< the heat pass's solve on this device (made on first use)
};

std::unique_ptr<MpmBackend> make_cuda_backend() { return std::make_unique<MpmCudaBackend>(); }

// Part of the self-check verdicts' build identity (cuda_build_stamp): changes
// whenever this file, or a header it includes, is compiled again.
const char* mpm_cuda_build_stamp() { return __DATE__ " " __TIME__; }

}  // namespace ps
