// Host/device annotation shared by every per-particle and per-node kernel.
// The same header compiles under g++ (CPU reference backend) and nvcc (CUDA
// backend), after NVIDIA Warp's CUDA_CALLABLE habit.
#pragma once

#if defined(__CUDACC__)
#define PS_HD __host__ __device__ inline
#define PS_HD_CONST __host__ __device__ constexpr
#else
#define PS_HD inline
#define PS_HD_CONST constexpr
#endif
