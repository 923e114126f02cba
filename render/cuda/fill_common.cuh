// Device helpers shared by the interop's fill kernels (particle_interop.cu
// for MPM, dem_fill.cu for DEM). nvcc only.
#pragma once
#include <cuda_runtime.h>

namespace ps {
namespace fill {

/// A colour channel as a byte, as the host path packs it:
/// lround(clamp(c, 0, 1) * 255).
__device__ __forceinline__ unsigned char to_u8(float c) {
  return static_cast<unsigned char>(roundf(fminf(fmaxf(c, 0.f), 1.f) * 255.f));
}

/// Packed little-endian RGBA8, as pack_rgba (render/gl_draw.h).
__device__ __forceinline__ unsigned int rgba_u32(float r, float g, float b, float a) {
  return static_cast<unsigned int>(to_u8(r)) | (static_cast<unsigned int>(to_u8(g)) << 8) |
         (static_cast<unsigned int>(to_u8(b)) << 16) | (static_cast<unsigned int>(to_u8(a)) << 24);
}

/// The largest of the warp's radii into *bits (a non-negative float's bits
/// order as the floats): a warp maximum, then one atomic per warp. Every lane
/// of the warp must call it (lanes past the end with 0).
__device__ __forceinline__ void warp_max_radius(float r, unsigned int* bits) {
  float m = r;
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if ((threadIdx.x & 31) == 0 && m > 0.f) atomicMax(bits, __float_as_uint(m));
}

/// Strided sampling: slot k holds sample k / stride when k is a multiple of
/// the stride; how many samples of at most `cap` cover n slots.
struct Stride {
  int stride = 1, count = 0;
};
inline Stride sample_stride(size_t n, size_t want, size_t cap) {
  Stride s;
  if (want == 0 || n == 0) return s;
  const size_t c = want < cap ? want : cap;
  const size_t st = (n + c - 1) / c;
  s.stride = static_cast<int>(st);
  s.count = static_cast<int>((n + st - 1) / st);
  return s;
}

}  // namespace fill
}  // namespace ps
