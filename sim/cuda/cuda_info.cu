#include <cuda_runtime.h>
#include "sim/cuda/cuda_info.h"

namespace ps {

bool cuda_compiled() { return true; }

std::vector<CudaDeviceInfo> cuda_devices(std::string* why) {
  std::vector<CudaDeviceInfo> out;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why) *why = cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return out;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    CudaDeviceInfo d;
    d.index = i;
    d.name = prop.name;
    d.cc_major = prop.major;
    d.cc_minor = prop.minor;
    d.memory_bytes = prop.totalGlobalMem;
    d.multiprocessors = prop.multiProcessorCount;
    out.push_back(d);
  }
  return out;
}

bool cuda_device_available() {
  static const bool available = !cuda_devices().empty();
  return available;
}

}  // namespace ps
