/// Device arrays of the CUDA backends (.cu files only): allocation and the
/// copies to and from the host, every error a BackendError (cuda_check).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "sim/cuda/cuda_check.h"

namespace ps {

/// Frees `ptr` and allocates exactly `count` elements (null for 0). The
/// contents are lost.
template <class T>
void dev_alloc(T*& ptr, size_t count) {
  if (ptr) cudaFree(ptr);
  ptr = nullptr;
  if (count)
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&ptr), count * sizeof(T)), "cudaMalloc");
}

/// Makes `ptr` hold at least `count` elements; when it grows, it takes
/// `count + slack` (`cap` is what it holds; at least one element, so a grown
/// array is never null). The contents are lost when it grows.
template <class T>
void dev_reserve(T*& ptr, size_t& cap, size_t count, size_t slack = 0) {
  if (ptr && count <= cap) return;
  if (ptr) cudaFree(ptr);
  ptr = nullptr;
  cap = 0;
  const size_t want = std::max<size_t>(count + slack, 1);
  cuda_check(cudaMalloc(reinterpret_cast<void**>(&ptr), want * sizeof(T)), "cudaMalloc");
  cap = want;
}

/// n elements host -> device: synchronous, or in `s`'s order.
template <class T>
void upload(T* dst, const T* src, size_t n) {
  if (n) cuda_check(cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyHostToDevice), "upload");
}
template <class T>
void upload(T* dst, const T* src, size_t n, cudaStream_t s) {
  if (n) cuda_check(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyHostToDevice, s), "upload");
}
template <class T>
void upload(T* dst, const std::vector<T>& src, size_t n, cudaStream_t s) {
  upload(dst, src.data(), n, s);
}

/// n elements device -> host: synchronous, or in `s`'s order.
template <class T>
void download(T* dst, const T* src, size_t n) {
  if (n) cuda_check(cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost), "download");
}
template <class T>
void download(T* dst, const T* src, size_t n, cudaStream_t s) {
  if (n)
    cuda_check(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost, s), "download");
}
template <class T>
void download(std::vector<T>& dst, const T* src, size_t n, cudaStream_t s) {
  download(dst.data(), src, n, s);
}

}  // namespace ps
