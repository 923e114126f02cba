// The DEM fill kernels of the CUDA-GL interop (see dem_fill.h).
//
// Particles: one thread per particle writes position, radius and the colour
// mode's column; the selected particle's thread also gathers its bonds
// (through the backend's CSR of bonds as i and as j) with their stresses now.
// Bonds, per frame:
//   count kernel (one thread per bond: how many lines it draws, 0, 1 or its
//   dashes; a strided sample of the stress ratios) -> CUB exclusive scan of
//   the counts (the lines' offsets: intact bonds in bond order, then broken
//   ones, the host path's order, so the picture does not depend on
//   scheduling) -> read back the total -> the caller sizes and maps its
//   vertex buffer -> write kernel (one thread per drawn bond).
// Only bonds on screen whose rest length is at least kBondMinPx pixels are
// counted, so the vertices follow what the window shows, not the bond count.
// Every entry point synchronises its stream before returning.
#include "render/cuda/dem_fill.h"

#include <cuda_runtime.h>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstring>

#include "render/cuda/fill_common.cuh"
#include "sim/dem/dem_backend.h"

namespace ps {

namespace {

constexpr int kThreads = 256;
/// A broken bond's dashes are capped here on the device, so that the line
/// count of every bond together fits the scan's 32 bits (the host path has no
/// cap; only a broken bond over 2300 pixels long reaches it).
constexpr unsigned kMaxDashes = 256;

using dem::DemDeviceView;
using dem::Vec2d;

// [SECTION] Particles --------------------------------------------------------------------------

struct ParticleReadback {
  int found;                     // the selected particle's thread ran
  unsigned int radius_max_bits;  // the largest radius written (bits of a non-negative float)
  Vec2d x, v;
  double theta, omega;
  int bond_total;
  DemSelectedBond bonds[kDemMaxSelectedBonds];
  float sample[kDemMaxSamples];
};

struct ParticleArgs {
  DemDeviceView s;
  int n;
  DemFillColumn column;
  DemScalar scalar;
  bool group_colors;
  const float* mats;  // 3 per material
  int mat_count;
  float pal[kDemGroupColors][3];
  DemFillTargets t;
  int stride, nsample;
  long long selected;
  dem::DemBondParams bond;
  ParticleReadback* rb;
};

/// Bond kb of the selected particle, as the inspector shows it.
__device__ DemSelectedBond selected_bond(const DemDeviceView& s, const dem::DemBondParams& bp,
                                         uint32_t kb, uint32_t other) {
  DemSelectedBond o;
  o.bond = kb;
  o.other = other;
  o.other_x = s.x[other];
  o.broken = s.broken[kb] != 0;
  o.mode = static_cast<dem::BondBreak>(s.mode[kb]);
  o.break_step = s.break_step[kb];
  if (!o.broken) {
    const uint32_t i = s.bond_i[kb], j = s.bond_j[kb];
    o.stress = bond_stress_now(bp, s.x[i], s.x[j], s.v[i], s.v[j], s.omega[i], s.omega[j],
                               s.radius[i], s.radius[j], s.mass[i], s.mass[j], s.inertia[i],
                               s.inertia[j], s.length0[kb], s.shear_disp[kb], s.bend_angle[kb]);
  }
  return o;
}

__global__ void particle_kernel(const ParticleArgs a) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const float r = k < a.n ? static_cast<float>(a.s.radius[k]) : 0.f;
  fill::warp_max_radius(r, &a.rb->radius_max_bits);
  if (k >= a.n) return;
  const Vec2d x = a.s.x[k];
  a.t.pos[2 * k] = static_cast<float>(x.x);
  a.t.pos[2 * k + 1] = static_cast<float>(x.y);
  a.t.radius[k] = r;
  if (a.column == DemFillColumn::Velocity) {
    const Vec2d v = a.s.v[k];
    a.t.vel[2 * k] = static_cast<float>(v.x);
    a.t.vel[2 * k + 1] = static_cast<float>(v.y);
  } else if (a.column == DemFillColumn::Scalar) {
    float sc = 0.f;
    switch (a.scalar) {
      case DemScalar::Speed: sc = dem_display_speed(a.s.v[k]); break;
      case DemScalar::Omega: sc = static_cast<float>(a.s.omega[k]); break;
      case DemScalar::Theta: sc = static_cast<float>(a.s.theta[k]); break;
    }
    a.t.scalar[k] = sc;
    if (a.nsample > 0 && k % a.stride == 0) {
      const int q = k / a.stride;
      if (q < a.nsample) a.rb->sample[q] = sc;
    }
  } else {
    const float* c;
    if (a.group_colors) {
      c = a.pal[a.s.group[k] % kDemGroupColors];
    } else {
      int m = a.s.material[k];
      if (m >= a.mat_count) m = a.mat_count - 1;
      c = a.mats + 3 * m;
    }
    uint8_t* out = a.t.color + 4 * static_cast<size_t>(k);
    out[0] = fill::to_u8(c[0]);
    out[1] = fill::to_u8(c[1]);
    out[2] = fill::to_u8(c[2]);
    out[3] = 255;
  }
  if (k == a.selected) {
    // One thread: the particle and its bonds in bond index order. Bonds as j
    // have i < k, so they all come before the bonds as i (sorted by (i, j)).
    ParticleReadback& rb = *a.rb;
    rb.found = 1;
    rb.x = x;
    rb.v = a.s.v[k];
    rb.theta = a.s.theta[k];
    rb.omega = a.s.omega[k];
    int m = 0;
    for (uint32_t q = a.s.bond_j_start[k]; q < a.s.bond_j_start[k + 1]; ++q, ++m) {
      const uint32_t kb = a.s.bond_j_list[q];
      if (m < kDemMaxSelectedBonds) rb.bonds[m] = selected_bond(a.s, a.bond, kb, a.s.bond_i[kb]);
    }
    for (uint32_t kb = a.s.bond_start[k]; kb < a.s.bond_start[k + 1]; ++kb, ++m)
      if (m < kDemMaxSelectedBonds) rb.bonds[m] = selected_bond(a.s, a.bond, kb, a.s.bond_j[kb]);
    rb.bond_total = m;
  }
}

// [SECTION] Bonds ------------------------------------------------------------------------------

struct BondReadback {
  unsigned int intact, broken;  // bonds drawn
  unsigned int lines;           // the scan's total
  float sample[kDemMaxSamples];
};

struct BondArgs {
  DemDeviceView s;
  int nb;
  bool intact, broken;
  BondView view;
  dem::DemBondParams bond;
  float hi;
  uint32_t broken_rgba;
  const uint32_t* lut;
  int stride, nsample;
  // 2 nb + 1 entries: lines per bond, intact bonds' at k, broken bonds' at
  // nb + k, the last one 0; and their exclusive sum.
  uint32_t* counts;
  const uint32_t* offsets;
  LineVertex* verts;
  size_t capacity;  // vertices
  BondReadback* rb;
};

__device__ __forceinline__ Vec2 to_vec2(Vec2d v) {
  return Vec2{static_cast<float>(v.x), static_cast<float>(v.y)};
}

__device__ float bond_ratio(const BondArgs& a, int k) {
  if (a.s.broken[k]) return -1.f;
  const DemDeviceView& s = a.s;
  const uint32_t i = s.bond_i[k], j = s.bond_j[k];
  const BondStress st =
      bond_stress_now(a.bond, s.x[i], s.x[j], s.v[i], s.v[j], s.omega[i], s.omega[j], s.radius[i],
                      s.radius[j], s.mass[i], s.mass[j], s.inertia[i], s.inertia[j], s.length0[k],
                      s.shear_disp[k], s.bend_angle[k]);
  return bond_ratio_float(st.ratio);
}

/// Lines bond k draws: 1 for an intact bond, its dashes for a broken one, 0
/// when it is not drawn (the rules of dem_draw_rules.h, as dem_draw.cpp).
__device__ unsigned bond_lines(const BondArgs& a, int k) {
  const DemDeviceView& s = a.s;
  const double L0 = s.length0[k];
  if (!bond_long_enough(L0, a.view.scale)) return 0;
  const uint32_t i = s.bond_i[k], j = s.bond_j[k];
  const Vec2 p = to_vec2(s.x[i]), e = to_vec2(s.x[j]);
  if (s.broken[k]) {
    if (!a.broken) return 0;
    const int d = broken_bond_dashes(length(e - p), L0, a.view.scale);
    if (d == 0) return 0;
    const float w = broken_bond_width_px(s.radius[i], s.radius[j], a.view.scale);
    if (!segment_in_view(p, e, (0.5f * w + 1.f) * a.view.px, a.view)) return 0;
    return static_cast<unsigned>(d) < kMaxDashes ? static_cast<unsigned>(d) : kMaxDashes;
  }
  if (!a.intact) return 0;
  const float w = bond_width_px(s.radius[i], s.radius[j], a.view.scale);
  return segment_in_view(p, e, (0.5f * w + 1.f) * a.view.px, a.view) ? 1u : 0u;
}

__global__ void bond_count_kernel(const BondArgs a) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  unsigned intact = 0, broken = 0;
  if (k < a.nb) {
    const unsigned q = bond_lines(a, k);
    const bool is_broken = a.s.broken[k] != 0;
    a.counts[k] = is_broken ? 0u : q;
    a.counts[a.nb + k] = is_broken ? q : 0u;
    if (q) (is_broken ? broken : intact) = 1;
    if (a.nsample > 0 && k % a.stride == 0) {
      const int q2 = k / a.stride;
      if (q2 < a.nsample) a.rb->sample[q2] = bond_ratio(a, k);
    }
  } else if (k == a.nb) {
    a.counts[2 * a.nb] = 0;  // the scan's last element: its offset is the total
  }
  for (int o = 16; o > 0; o /= 2) {
    intact += __shfl_down_sync(0xffffffffu, intact, o);
    broken += __shfl_down_sync(0xffffffffu, broken, o);
  }
  if ((threadIdx.x & 31) == 0) {
    if (intact) atomicAdd(&a.rb->intact, intact);
    if (broken) atomicAdd(&a.rb->broken, broken);
  }
}

__device__ void put_line(LineVertex* out, Vec2 p, Vec2 e, float width_px, float px, uint32_t rgba) {
  Vec2 tri[6];
  if (!line_triangles(p, e, width_px, px, tri))
    for (int q = 0; q < 6; ++q)
      tri[q] = p;  // zero length: an empty triangle pair (the host skips the line)
  for (int q = 0; q < 6; ++q) out[q] = LineVertex{tri[q].x, tri[q].y, rgba};
}

__global__ void bond_write_kernel(const BondArgs a) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= a.nb) return;
  const int at = a.s.broken[k] ? a.nb + k : k;
  const unsigned q = a.counts[at];
  if (q == 0) return;
  const size_t first = static_cast<size_t>(a.offsets[at]) * 6;
  if (first + 6 * static_cast<size_t>(q) > a.capacity) {
    // Past the buffer (only beyond the caller's cap): the bond is left out,
    // and the vertices of it that fall inside are made empty triangles.
    for (size_t v = first; v < a.capacity; ++v) a.verts[v] = LineVertex{0.f, 0.f, 0u};
    return;
  }
  LineVertex* out = a.verts + first;
  const DemDeviceView& s = a.s;
  const uint32_t i = s.bond_i[k], j = s.bond_j[k];
  const Vec2 p = to_vec2(s.x[i]), e = to_vec2(s.x[j]);
  const float scale = a.view.scale, px = a.view.px;
  if (s.broken[k]) {
    const float w = broken_bond_width_px(s.radius[i], s.radius[j], scale);
    for (unsigned d = 0; d < q; ++d) {
      Vec2 s0, s1;
      broken_bond_dash(p, e, static_cast<int>(q), static_cast<int>(d), s0, s1);
      put_line(out + 6 * d, s0, s1, w, px, a.broken_rgba);
    }
    return;
  }
  const float t = bond_stress_t(bond_ratio(a, k), a.hi);
  const uint32_t rgba = a.lut[static_cast<int>(t * static_cast<float>(kDemBondLut - 1) + 0.5f)];
  put_line(out, p, e, bond_width_px(s.radius[i], s.radius[j], scale), px, rgba);
}

BondArgs bond_args(const DemDeviceView& view, const DemBondFrame& f) {
  BondArgs a{};
  a.s = view;
  a.nb = static_cast<int>(view.bond_count);
  a.intact = f.intact;
  a.broken = f.broken;
  a.view = f.view;
  a.bond = f.bond;
  a.hi = f.hi;
  a.broken_rgba = f.broken_rgba;
  return a;
}

/// "what (cudaErrorX: text)", and the error taken off the runtime's last error.
std::string cuda_error(const char* what, cudaError_t e) {
  cudaGetLastError();
  return std::string(what) + " (" + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")";
}

}  // namespace

// [SECTION] DemFill ----------------------------------------------------------------------------

struct DemFill::Impl {
  ParticleReadback *d_prb = nullptr, *h_prb = nullptr;  // h_: pinned
  BondReadback *d_brb = nullptr, *h_brb = nullptr;
  float* d_mats = nullptr;
  int mats_cap = 0;
  std::vector<float> mats_cache;  // what d_mats holds
  uint32_t* d_lut = nullptr;
  std::vector<uint32_t> lut_cache;
  uint32_t *d_counts = nullptr, *d_offsets = nullptr;
  size_t bonds_cap = 0;
  void* d_scan = nullptr;
  size_t scan_bytes = 0;

  ~Impl() {
    cudaFree(d_prb);
    cudaFreeHost(h_prb);
    cudaFree(d_brb);
    cudaFreeHost(h_brb);
    cudaFree(d_mats);
    cudaFree(d_lut);
    cudaFree(d_counts);
    cudaFree(d_offsets);
    cudaFree(d_scan);
  }

  /// Allocates a readback pair on first use.
  template <class T>
  cudaError_t readback(T*& dev, T*& host) {
    if (dev) return cudaSuccess;
    cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&dev), sizeof(T));
    if (e == cudaSuccess) e = cudaMallocHost(reinterpret_cast<void**>(&host), sizeof(T));
    if (e != cudaSuccess) {
      cudaFree(dev);
      dev = nullptr;
      host = nullptr;
    }
    return e;
  }
};

DemFill::DemFill() : impl_(std::make_unique<Impl>()) {}
DemFill::~DemFill() = default;

bool DemFill::particles(const DemDeviceView& view, const DemFillFrame& f, const DemFillTargets& t,
                        DemFillResult& out, std::string& error) {
  Impl& s = *impl_;
  out.sample.clear();
  out.selected = DemSelected{};
  out.radius_max = 0.f;
  const size_t n = view.count;
  if (n == 0 || n != f.count || n > static_cast<size_t>(INT32_MAX) || !f.material_rgb ||
      f.material_count <= 0) {
    error = "the DEM device arrays do not match the host";
    return false;
  }
  cudaStream_t st = static_cast<cudaStream_t>(view.stream);
  cudaError_t e = s.readback(s.d_prb, s.h_prb);
  if (e != cudaSuccess) return (error = cuda_error("cudaMalloc (DEM read back)", e)), false;

  // The material colours (when edited: they show while paused).
  const size_t mats = 3 * static_cast<size_t>(f.material_count);
  if (s.mats_cache.size() != mats ||
      std::memcmp(s.mats_cache.data(), f.material_rgb, mats * sizeof(float)) != 0) {
    if (f.material_count > s.mats_cap) {
      cudaFree(s.d_mats);
      s.d_mats = nullptr;
      s.mats_cap = 0;
      if ((e = cudaMalloc(reinterpret_cast<void**>(&s.d_mats), mats * sizeof(float))) !=
          cudaSuccess)
        return (error = cuda_error("cudaMalloc (DEM materials)", e)), false;
      s.mats_cap = f.material_count;
    }
    s.mats_cache.assign(f.material_rgb, f.material_rgb + mats);
    // Pageable source: the call returns once the bytes are staged.
    if ((e = cudaMemcpyAsync(s.d_mats, s.mats_cache.data(), mats * sizeof(float),
                             cudaMemcpyHostToDevice, st)) != cudaSuccess)
      return (error = cuda_error("cudaMemcpyAsync (DEM materials)", e)), false;
  }

  const fill::Stride smp = f.column == DemFillColumn::Scalar
                               ? fill::sample_stride(n, f.max_samples, kDemMaxSamples)
                               : fill::Stride{};
  // found = 0, radius_max = 0.
  if ((e = cudaMemsetAsync(s.d_prb, 0, offsetof(ParticleReadback, x), st)) != cudaSuccess)
    return (error = cuda_error("cudaMemsetAsync (DEM read back)", e)), false;
  ParticleArgs a{};
  a.s = view;
  a.n = static_cast<int>(n);
  a.column = f.column;
  a.scalar = f.scalar;
  a.group_colors = f.group_colors;
  a.mats = s.d_mats;
  a.mat_count = f.material_count;
  std::memcpy(a.pal, f.group_rgb, sizeof a.pal);
  a.t = t;
  a.stride = smp.stride;
  a.nsample = smp.count;
  a.selected = f.selected >= 0 && static_cast<size_t>(f.selected) < n ? f.selected : -1;
  a.bond = f.bond;
  a.rb = s.d_prb;
  particle_kernel<<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, 0, st>>>(a);
  if ((e = cudaGetLastError()) != cudaSuccess)
    return (error = cuda_error("DEM fill kernel launch", e)), false;
  const size_t back =
      offsetof(ParticleReadback, sample) + static_cast<size_t>(smp.count) * sizeof(float);
  if ((e = cudaMemcpyAsync(s.h_prb, s.d_prb, back, cudaMemcpyDeviceToHost, st)) != cudaSuccess)
    return (error = cuda_error("cudaMemcpyAsync (DEM read back)", e)), false;
  if ((e = cudaStreamSynchronize(st)) != cudaSuccess)
    return (error = cuda_error("DEM fill kernel", e)), false;

  const ParticleReadback& r = *s.h_prb;
  if (smp.count > 0) out.sample.assign(r.sample, r.sample + smp.count);
  std::memcpy(&out.radius_max, &r.radius_max_bits, sizeof out.radius_max);
  if (a.selected >= 0 && r.found) {
    DemSelected& sel = out.selected;
    sel.valid = true;
    sel.index = static_cast<uint32_t>(a.selected);
    sel.x = r.x;
    sel.v = r.v;
    sel.theta = r.theta;
    sel.omega = r.omega;
    sel.bond_total = r.bond_total;
    sel.bonds.assign(r.bonds, r.bonds + std::min(r.bond_total, kDemMaxSelectedBonds));
  }
  return true;
}

bool DemFill::count_bonds(const DemDeviceView& view, const DemBondFrame& f, DemBondCount& out,
                          std::string& error) {
  Impl& s = *impl_;
  out = DemBondCount{};
  const size_t nb = view.bond_count;
  if (nb == 0 || (!f.intact && !f.broken && f.max_samples == 0)) return true;
  if (nb >= static_cast<size_t>(INT32_MAX / 2) || !f.lut) {
    error = "the DEM bond arrays are too large or no colour map was given";
    return false;
  }
  cudaStream_t st = static_cast<cudaStream_t>(view.stream);
  cudaError_t e = s.readback(s.d_brb, s.h_brb);
  if (e != cudaSuccess) return (error = cuda_error("cudaMalloc (bond read back)", e)), false;
  // Per-bond scratch and the scan's storage: grown with the bond count, never per frame.
  const size_t items = 2 * nb + 1;
  if (items > s.bonds_cap) {
    cudaFree(s.d_counts);
    cudaFree(s.d_offsets);
    s.d_counts = s.d_offsets = nullptr;
    s.bonds_cap = 0;
    const size_t cap = items + items / 4;
    if ((e = cudaMalloc(reinterpret_cast<void**>(&s.d_counts), cap * sizeof(uint32_t))) !=
            cudaSuccess ||
        (e = cudaMalloc(reinterpret_cast<void**>(&s.d_offsets), cap * sizeof(uint32_t))) !=
            cudaSuccess)
      return (error = cuda_error("cudaMalloc (bond counts)", e)), false;
    s.bonds_cap = cap;
  }
  size_t need = 0;  // a size query: no device work
  if ((e = cub::DeviceScan::ExclusiveSum(nullptr, need, s.d_counts, s.d_offsets,
                                         static_cast<int>(items), st)) != cudaSuccess)
    return (error = cuda_error("cub scan size", e)), false;
  if (need > s.scan_bytes) {
    cudaFree(s.d_scan);
    s.d_scan = nullptr;
    s.scan_bytes = 0;
    if ((e = cudaMalloc(&s.d_scan, need + need / 4)) != cudaSuccess)
      return (error = cuda_error("cudaMalloc (bond scan)", e)), false;
    s.scan_bytes = need + need / 4;
  }
  // The colour map (when it changes).
  if (s.lut_cache.size() != static_cast<size_t>(kDemBondLut) ||
      std::memcmp(s.lut_cache.data(), f.lut, kDemBondLut * sizeof(uint32_t)) != 0) {
    if (!s.d_lut && (e = cudaMalloc(reinterpret_cast<void**>(&s.d_lut),
                                    kDemBondLut * sizeof(uint32_t))) != cudaSuccess)
      return (error = cuda_error("cudaMalloc (bond colours)", e)), false;
    s.lut_cache.assign(f.lut, f.lut + kDemBondLut);
    if ((e = cudaMemcpyAsync(s.d_lut, s.lut_cache.data(), kDemBondLut * sizeof(uint32_t),
                             cudaMemcpyHostToDevice, st)) != cudaSuccess)
      return (error = cuda_error("cudaMemcpyAsync (bond colours)", e)), false;
  }
  const fill::Stride smp = fill::sample_stride(nb, f.max_samples, kDemMaxSamples);
  if ((e = cudaMemsetAsync(s.d_brb, 0, offsetof(BondReadback, sample), st)) != cudaSuccess)
    return (error = cuda_error("cudaMemsetAsync (bond read back)", e)), false;
  BondArgs a = bond_args(view, f);
  a.stride = smp.stride;
  a.nsample = smp.count;
  a.counts = s.d_counts;
  a.rb = s.d_brb;
  bond_count_kernel<<<static_cast<unsigned>((nb + 1 + kThreads - 1) / kThreads), kThreads, 0, st>>>(
      a);
  if ((e = cudaGetLastError()) != cudaSuccess)
    return (error = cuda_error("bond count kernel launch", e)), false;
  size_t bytes = s.scan_bytes;
  if ((e = cub::DeviceScan::ExclusiveSum(s.d_scan, bytes, s.d_counts, s.d_offsets,
                                         static_cast<int>(items), st)) != cudaSuccess)
    return (error = cuda_error("cub scan", e)), false;
  if ((e = cudaMemcpyAsync(&s.d_brb->lines, s.d_offsets + 2 * nb, sizeof(uint32_t),
                           cudaMemcpyDeviceToDevice, st)) != cudaSuccess)
    return (error = cuda_error("cudaMemcpyAsync (bond total)", e)), false;
  const size_t back =
      offsetof(BondReadback, sample) + static_cast<size_t>(smp.count) * sizeof(float);
  if ((e = cudaMemcpyAsync(s.h_brb, s.d_brb, back, cudaMemcpyDeviceToHost, st)) != cudaSuccess)
    return (error = cuda_error("cudaMemcpyAsync (bond read back)", e)), false;
  if ((e = cudaStreamSynchronize(st)) != cudaSuccess)
    return (error = cuda_error("bond count kernel", e)), false;
  const BondReadback& r = *s.h_brb;
  out.vertices = 6 * static_cast<size_t>(r.lines);
  out.intact = r.intact;
  out.broken = r.broken;
  if (smp.count > 0) out.sample.assign(r.sample, r.sample + smp.count);
  return true;
}

bool DemFill::write_bonds(const DemDeviceView& view, const DemBondFrame& f, LineVertex* verts,
                          size_t capacity, std::string& error) {
  Impl& s = *impl_;
  const size_t nb = view.bond_count;
  if (nb == 0 || !verts || capacity == 0) return true;
  if (2 * nb + 1 > s.bonds_cap || !s.d_lut) {
    error = "write_bonds without count_bonds";
    return false;
  }
  cudaStream_t st = static_cast<cudaStream_t>(view.stream);
  BondArgs a = bond_args(view, f);
  a.lut = s.d_lut;
  a.counts = s.d_counts;
  a.offsets = s.d_offsets;
  a.verts = verts;
  a.capacity = capacity;
  bond_write_kernel<<<static_cast<unsigned>((nb + kThreads - 1) / kThreads), kThreads, 0, st>>>(a);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return (error = cuda_error("bond write kernel launch", e)), false;
  if ((e = cudaStreamSynchronize(st)) != cudaSuccess)
    return (error = cuda_error("bond write kernel", e)), false;
  return true;
}

}  // namespace ps
