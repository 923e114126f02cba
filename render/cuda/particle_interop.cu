// CUDA-OpenGL interop for the particle sprites and the DEM bond lines (see
// particle_interop.h). This file owns the GL side (registration, mapping) and
// the MPM fill kernel; the DEM kernels are GL-free, in dem_fill.cu.
//
// Per frame, on the CUDA backend's stream:
//   map (pos, radius, and the mode's column) -> one fill kernel over the slots
//   -> copy back the selected particle and the scalar sample (a few KiB)
//   -> unmap -> wait for the stream.
// Mapping orders the CUDA work after the GL commands that used the buffers;
// unmapping orders later GL commands (the draw) after the kernel. The wait at
// the end is short (the stepper already waited for its substeps) and makes
// every CUDA error of this file surface here, where it disables the interop,
// rather than in the next substep.
//
// The kernel reads the backend's slot-ordered arrays (DeviceParticleView),
// radii included (0.5 sqrt(vol0), mpm_snapshot's formula, from the device's
// vol0), and one small table of its own: the material table mirrored from the
// host world (the backend refreshes its copy only when it steps, so colour
// edits would not show while paused). Nothing per particle crosses to or from
// the host.
#include "render/cuda/particle_interop.h"  // glad's gl.h first: cuda_gl_interop.h includes GL/gl.h

#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "render/cpu/particle_scalars.h"
#include "render/cuda/fill_common.cuh"
#include "sim/dem/dem_backend.h"
#include "sim/mpm/mpm_backend.h"

namespace ps {

namespace {

constexpr int kThreads = 256;
enum Res : int { kPos = 0, kVel, kScalar, kColor, kRadius, kResCount };

/// Copied back after the fill: the selected particle, then the sample.
struct Readback {
  int slot;                      // -1: not found
  unsigned int radius_max_bits;  // the largest radius written (bits of a non-negative float)
  InteropParticle p;
  float sample[kMaxInteropSamples];
};

struct FillArgs {
  const Vec2* x;
  const Vec2* v;
  const Mat2* C;
  const Mat2* F;
  const float* J;
  const float* Jp;
  const uint8_t* material;
  const uint32_t* perm;
  const MaterialParams* mats;
  int mat_count;
  const float* vol0;
  int n;
  InteropFill fill;
  InteropScalar scalar;
  float2* pos;
  float2* vel;
  float* sc;
  uchar4* color;
  float* radius;
  int stride;          // sample every stride-th slot
  int nsample;         // 0: no sample
  long long selected;  // host index, or -1
  Readback* rb;
};

__global__ void fill_kernel(const FillArgs a) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  // The largest radius (every thread of the block takes part, the ones past the end with 0).
  const float r = k < a.n ? 0.5f * sqrtf(a.vol0[k]) : 0.f;
  fill::warp_max_radius(r, &a.rb->radius_max_bits);
  if (k >= a.n) return;
  const Vec2 x = a.x[k];
  a.pos[k] = make_float2(x.x, x.y);
  const uint32_t h = a.perm[k];
  a.radius[k] = r;
  int mi = a.material[k];
  if (mi >= a.mat_count) mi = a.mat_count - 1;
  const MaterialParams& m = a.mats[mi];
  if (a.fill == InteropFill::Velocity) {
    const Vec2 v = a.v[k];
    a.vel[k] = make_float2(v.x, v.y);
  } else if (a.fill == InteropFill::Scalar) {
    float s = 0.f;
    switch (a.scalar) {
      case InteropScalar::Speed: {
        const Vec2 v = a.v[k];
        s = sqrtf(v.x * v.x + v.y * v.y);
        break;
      }
      case InteropScalar::VolumeRatio: s = display_volume_ratio(m, a.F[k], a.J[k]); break;
      case InteropScalar::Jp: s = a.Jp[k]; break;
      case InteropScalar::PlasticStrain: s = display_plastic_strain(m, a.Jp[k]); break;
      case InteropScalar::Pressure:
      case InteropScalar::VonMises: {
        float p = 0.f, vm = 0.f;
        display_pressure_mises(display_cauchy_stress(m, a.F[k], a.J[k], a.Jp[k], a.C[k]), p, vm);
        s = a.scalar == InteropScalar::Pressure ? p : vm;
        break;
      }
    }
    a.sc[k] = s;
    if (a.nsample > 0 && k % a.stride == 0) {
      const int i = k / a.stride;
      if (i < a.nsample) a.rb->sample[i] = s;
    }
  } else {
    a.color[k] =
        make_uchar4(fill::to_u8(m.color[0]), fill::to_u8(m.color[1]), fill::to_u8(m.color[2]), 255);
  }
  if (a.selected >= 0 && static_cast<long long>(h) == a.selected) {
    Readback& r = *a.rb;
    r.slot = k;
    r.p.x = x;
    r.p.v = a.v[k];
    r.p.C = a.C[k];
    r.p.F = a.F[k];
    r.p.J = a.J[k];
    r.p.Jp = a.Jp[k];
  }
}

}  // namespace

struct ParticleInterop::Impl {
  cudaGraphicsResource_t res[kResCount] = {};
  InteropTargets registered;
  bool have = false;      // res[] hold registrations of `registered`
  bool disabled = false;  // a CUDA call failed: off for the session
  int device = -1;        // set once the GL device check passed
  std::string note = "CUDA-GL interop: off: not started";

  // The DEM bond line buffer's registration.
  cudaGraphicsResource_t bond_res = nullptr;
  GLuint bond_buf = 0;
  size_t bond_cap = 0;

  cudaGraphicsResource_t mapped[3] = {};
  int nmapped = 0;
  cudaStream_t map_stream = nullptr;

  MaterialParams* d_mats = nullptr;
  int mats_cap = 0;
  std::vector<char> mats_cache;  // what d_mats holds
  Readback* d_rb = nullptr;
  Readback* h_rb = nullptr;  // pinned

  DemFill dem;

  void unmap() {
    if (nmapped > 0) cudaGraphicsUnmapResources(nmapped, mapped, map_stream);
    nmapped = 0;
  }

  void unregister() {
    for (auto& r : res) {
      if (r) cudaGraphicsUnregisterResource(r);
      r = nullptr;
    }
    have = false;
    registered = InteropTargets{};
  }

  void unregister_bonds() {
    if (bond_res) cudaGraphicsUnregisterResource(bond_res);
    bond_res = nullptr;
    bond_buf = 0;
    bond_cap = 0;
  }

  /// Turns the interop off for the session; reported once.
  bool fail(const std::string& what, cudaError_t e) {
    unmap();
    unregister();
    unregister_bonds();
    cudaGetLastError();  // clear a non-sticky error so the stepper's next check does not see it
    disabled = true;
    note = "CUDA-GL interop: off: " + what;
    if (e != cudaSuccess)
      note += std::string(" (") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")";
    std::fprintf(stderr, "sandbox: %s; particles are drawn from the host copy\n", note.c_str());
    return false;
  }

  void free_memory() {
    if (d_mats) cudaFree(d_mats);
    if (d_rb) cudaFree(d_rb);
    if (h_rb) cudaFreeHost(h_rb);
    d_mats = nullptr;
    d_rb = nullptr;
    h_rb = nullptr;
    mats_cap = 0;
    mats_cache.clear();
  }

  /// First use: the GL context must render on the backend's device.
  bool start(int dev) {
    cudaError_t e = cudaSuccess;
    if (device >= 0) {
      if (dev != device)
        return fail("the CUDA backend moved to device " + std::to_string(dev), cudaSuccess);
      return true;
    }
    if ((e = cudaSetDevice(dev)) != cudaSuccess) return fail("cudaSetDevice", e);
    unsigned int count = 0;
    int devs[8] = {};
    e = cudaGLGetDevices(&count, devs, 8, cudaGLDeviceListAll);
    if (e != cudaSuccess || count == 0)
      return fail("the OpenGL context is not on a CUDA device", e);
    bool found = false;
    for (unsigned int i = 0; i < count && i < 8; ++i) found = found || devs[i] == dev;
    if (!found)
      return fail("OpenGL renders on another GPU than CUDA device " + std::to_string(dev),
                  cudaSuccess);
    device = dev;
    return true;
  }

  /// Registers the particle buffers (again after the renderer reallocated them).
  bool register_particles(const InteropTargets& t) {
    const bool same = have && t.pos == registered.pos && t.vel == registered.vel &&
                      t.scalar == registered.scalar && t.color == registered.color &&
                      t.radius == registered.radius && t.capacity == registered.capacity;
    if (same) return true;
    unregister();
    const GLuint names[kResCount] = {t.pos, t.vel, t.scalar, t.color, t.radius};
    for (int r = 0; r < kResCount; ++r) {
      const cudaError_t e =
          cudaGraphicsGLRegisterBuffer(&res[r], names[r], cudaGraphicsRegisterFlagsWriteDiscard);
      if (e != cudaSuccess) {
        res[r] = nullptr;
        return fail("cudaGraphicsGLRegisterBuffer", e);
      }
    }
    registered = t;
    have = true;
    return true;
  }

  /// Maps positions, radii and `column` on `st` for n rows; ptr[] gets their
  /// device pointers. Unmapped by unmap() (or fail()).
  bool map_particles(int column, cudaStream_t st, size_t n, void* ptr[kResCount]) {
    const int which[3] = {kPos, kRadius, column};
    for (int i = 0; i < 3; ++i) mapped[i] = res[which[i]];
    cudaError_t e = cudaGraphicsMapResources(3, mapped, st);
    if (e != cudaSuccess) return fail("cudaGraphicsMapResources", e);
    nmapped = 3;
    map_stream = st;
    static const size_t elem[kResCount] = {2 * sizeof(float), 2 * sizeof(float), sizeof(float), 4,
                                           sizeof(float)};
    for (int i = 0; i < 3; ++i) {
      const int r = which[i];
      size_t bytes = 0;
      if ((e = cudaGraphicsResourceGetMappedPointer(&ptr[r], &bytes, res[r])) != cudaSuccess)
        return fail("cudaGraphicsResourceGetMappedPointer", e);
      if (bytes < n * elem[r])
        return fail("a mapped buffer is smaller than the particle count", cudaSuccess);
    }
    return true;
  }

  /// Unmaps on the map stream; false (and disabled) on an error.
  bool unmap_checked() {
    const cudaError_t e = cudaGraphicsUnmapResources(nmapped, mapped, map_stream);
    nmapped = 0;
    return e == cudaSuccess || fail("cudaGraphicsUnmapResources", e);
  }
};

ParticleInterop::ParticleInterop() : impl_(std::make_unique<Impl>()) {}

ParticleInterop::~ParticleInterop() {
  // Normally release() ran while the GL context was current; best effort otherwise.
  impl_->unmap();
  impl_->unregister();
  impl_->unregister_bonds();
  impl_->free_memory();
  if (impl_->device >= 0) cudaGetLastError();
}

bool ParticleInterop::usable() const { return !impl_->disabled; }
const std::string& ParticleInterop::note() const { return impl_->note; }

void ParticleInterop::release() {
  impl_->unmap();
  impl_->unregister();  // no CUDA call when nothing is registered
}

void ParticleInterop::release_bonds() { impl_->unregister_bonds(); }

bool ParticleInterop::fill(const DeviceParticleView& view, const InteropTargets& t,
                           const InteropFrame& f, InteropResult& out) {
  Impl& s = *impl_;
  out.sample.clear();
  out.selected_slot = -1;
  if (s.disabled) return false;
  const size_t n = view.count;
  // Not failures: the host path draws this frame.
  if (n == 0 || n != f.count || n > t.capacity || n > static_cast<size_t>(INT_MAX)) return false;
  if (!view.x || !view.v || !view.C || !view.F || !view.J || !view.Jp || !view.vol0 ||
      !view.material || !view.perm)
    return false;
  if (!f.materials || f.material_count <= 0) return false;
  if (!t.pos || !t.vel || !t.scalar || !t.color || !t.radius) return false;
  cudaStream_t st = static_cast<cudaStream_t>(view.stream);
  cudaError_t e = cudaSuccess;

  if (!s.start(view.device)) return false;
  if (!s.d_rb) {
    if ((e = cudaMalloc(reinterpret_cast<void**>(&s.d_rb), sizeof(Readback))) != cudaSuccess)
      return s.fail("cudaMalloc", e);
    if ((e = cudaMallocHost(reinterpret_cast<void**>(&s.h_rb), sizeof(Readback))) != cudaSuccess)
      return s.fail("cudaMallocHost", e);
  }

  // [SECTION] The material table (when edited).
  const size_t mat_bytes = sizeof(MaterialParams) * static_cast<size_t>(f.material_count);
  if (s.mats_cache.size() != mat_bytes ||
      std::memcmp(s.mats_cache.data(), f.materials, mat_bytes) != 0) {
    if (f.material_count > s.mats_cap) {
      if (s.d_mats) cudaFree(s.d_mats);
      s.d_mats = nullptr;
      s.mats_cap = 0;
      if ((e = cudaMalloc(reinterpret_cast<void**>(&s.d_mats), mat_bytes)) != cudaSuccess)
        return s.fail("cudaMalloc (materials)", e);
      s.mats_cap = f.material_count;
    }
    s.mats_cache.assign(reinterpret_cast<const char*>(f.materials),
                        reinterpret_cast<const char*>(f.materials) + mat_bytes);
    // Pageable source: the call returns once the bytes are staged.
    if ((e = cudaMemcpyAsync(s.d_mats, s.mats_cache.data(), mat_bytes, cudaMemcpyHostToDevice,
                             st)) != cudaSuccess)
      return s.fail("cudaMemcpyAsync (materials)", e);
  }

  // [SECTION] Register, map, fill, read back, unmap.
  if (!s.register_particles(t)) return false;
  const int column = f.fill == InteropFill::Velocity ? kVel
                     : f.fill == InteropFill::Scalar ? kScalar
                                                     : kColor;
  void* ptr[kResCount] = {};
  if (!s.map_particles(column, st, n, ptr)) return false;

  const bool sel = f.selected >= 0 && static_cast<size_t>(f.selected) < n;
  const fill::Stride smp = f.fill == InteropFill::Scalar
                               ? fill::sample_stride(n, f.max_samples, kMaxInteropSamples)
                               : fill::Stride{};
  // slot = -1, radius_max = 0.
  if ((e = cudaMemsetAsync(&s.d_rb->slot, 0xff, sizeof(int), st)) != cudaSuccess ||
      (e = cudaMemsetAsync(&s.d_rb->radius_max_bits, 0, sizeof(unsigned int), st)) != cudaSuccess)
    return s.fail("cudaMemsetAsync", e);

  FillArgs a{};
  a.x = view.x;
  a.v = view.v;
  a.C = view.C;
  a.F = view.F;
  a.J = view.J;
  a.Jp = view.Jp;
  a.material = view.material;
  a.perm = view.perm;
  a.mats = s.d_mats;
  a.mat_count = f.material_count;
  a.vol0 = view.vol0;
  a.n = static_cast<int>(n);
  a.fill = f.fill;
  a.scalar = f.scalar;
  a.pos = static_cast<float2*>(ptr[kPos]);
  a.vel = static_cast<float2*>(ptr[kVel]);
  a.sc = static_cast<float*>(ptr[kScalar]);
  a.color = static_cast<uchar4*>(ptr[kColor]);
  a.radius = static_cast<float*>(ptr[kRadius]);
  a.stride = smp.stride;
  a.nsample = smp.count;
  a.selected = sel ? static_cast<long long>(f.selected) : -1;
  a.rb = s.d_rb;
  const unsigned int blocks = static_cast<unsigned int>((n + kThreads - 1) / kThreads);
  fill_kernel<<<blocks, kThreads, 0, st>>>(a);
  if ((e = cudaGetLastError()) != cudaSuccess) return s.fail("fill kernel launch", e);
  const size_t back = offsetof(Readback, sample) + static_cast<size_t>(smp.count) * sizeof(float);
  if ((e = cudaMemcpyAsync(s.h_rb, s.d_rb, back, cudaMemcpyDeviceToHost, st)) != cudaSuccess)
    return s.fail("cudaMemcpyAsync (read back)", e);
  if (!s.unmap_checked()) return false;
  if ((e = cudaStreamSynchronize(st)) != cudaSuccess) return s.fail("fill kernel", e);

  if (smp.count > 0) out.sample.assign(s.h_rb->sample, s.h_rb->sample + smp.count);
  float rmax = 0.f;
  std::memcpy(&rmax, &s.h_rb->radius_max_bits, sizeof rmax);
  out.radius_max = rmax;
  if (sel && s.h_rb->slot >= 0) {
    out.selected_slot = s.h_rb->slot;
    out.selected = s.h_rb->p;
  }
  s.note = "CUDA-GL interop: on";
  return true;
}

bool ParticleInterop::fill_dem(const dem::DemDeviceView& view, const InteropTargets& t,
                               const DemFillFrame& f, DemFillResult& out) {
  Impl& s = *impl_;
  out.sample.clear();
  out.selected = DemSelected{};
  if (s.disabled) return false;
  const size_t n = view.count;
  // Not failures: the host path draws this frame.
  if (n == 0 || n != f.count || n > t.capacity || n > static_cast<size_t>(INT_MAX)) return false;
  if (!view.x || !view.v || !view.theta || !view.omega || !view.radius || !view.mass ||
      !view.inertia || !view.material || !view.group || !view.bond_start || !view.bond_j_start)
    return false;
  if (view.bond_count > 0 &&
      (!view.bond_i || !view.bond_j || !view.length0 || !view.shear_disp || !view.bend_angle ||
       !view.broken || !view.mode || !view.break_step || !view.bond_j_list))
    return false;
  if (!f.material_rgb || f.material_count <= 0) return false;
  if (!t.pos || !t.vel || !t.scalar || !t.color || !t.radius) return false;
  cudaStream_t st = static_cast<cudaStream_t>(view.stream);
  if (!s.start(view.device) || !s.register_particles(t)) return false;
  const int column = f.column == DemFillColumn::Velocity ? kVel
                     : f.column == DemFillColumn::Scalar ? kScalar
                                                         : kColor;
  void* ptr[kResCount] = {};
  if (!s.map_particles(column, st, n, ptr)) return false;
  DemFillTargets dt;
  dt.pos = static_cast<float*>(ptr[kPos]);
  dt.radius = static_cast<float*>(ptr[kRadius]);
  dt.vel = static_cast<float*>(ptr[kVel]);
  dt.scalar = static_cast<float*>(ptr[kScalar]);
  dt.color = static_cast<uint8_t*>(ptr[kColor]);
  std::string err;
  if (!s.dem.particles(view, f, dt, out, err))
    return s.fail(err, cudaSuccess);  // synchronised: unmap after
  if (!s.unmap_checked()) return false;
  s.note = "CUDA-GL interop: on";
  return true;
}

bool ParticleInterop::count_dem_bonds(const dem::DemDeviceView& view, const DemBondFrame& f,
                                      DemBondCount& out) {
  Impl& s = *impl_;
  out = DemBondCount{};
  if (s.disabled || !s.start(view.device)) return false;
  std::string err;
  if (!s.dem.count_bonds(view, f, out, err)) return s.fail(err, cudaSuccess);
  return true;
}

bool ParticleInterop::fill_dem_bonds(const dem::DemDeviceView& view, GLuint buffer, size_t capacity,
                                     size_t count, const DemBondFrame& f) {
  Impl& s = *impl_;
  if (s.disabled || buffer == 0 || capacity == 0 || count > capacity || !s.start(view.device))
    return false;
  cudaError_t e = cudaSuccess;
  if (!s.bond_res || s.bond_buf != buffer || s.bond_cap != capacity) {
    s.unregister_bonds();
    if ((e = cudaGraphicsGLRegisterBuffer(&s.bond_res, buffer,
                                          cudaGraphicsRegisterFlagsWriteDiscard)) != cudaSuccess) {
      s.bond_res = nullptr;
      return s.fail("cudaGraphicsGLRegisterBuffer (bonds)", e);
    }
    s.bond_buf = buffer;
    s.bond_cap = capacity;
  }
  cudaStream_t st = static_cast<cudaStream_t>(view.stream);
  s.mapped[0] = s.bond_res;
  if ((e = cudaGraphicsMapResources(1, s.mapped, st)) != cudaSuccess)
    return s.fail("cudaGraphicsMapResources (bonds)", e);
  s.nmapped = 1;
  s.map_stream = st;
  void* ptr = nullptr;
  size_t bytes = 0;
  if ((e = cudaGraphicsResourceGetMappedPointer(&ptr, &bytes, s.bond_res)) != cudaSuccess)
    return s.fail("cudaGraphicsResourceGetMappedPointer (bonds)", e);
  if (bytes < capacity * sizeof(LineVertex))
    return s.fail("the bond buffer is smaller than said", cudaSuccess);
  std::string err;
  if (!s.dem.write_bonds(view, f, static_cast<LineVertex*>(ptr), count, err))
    return s.fail(err, cudaSuccess);
  return s.unmap_checked();
}

}  // namespace ps
