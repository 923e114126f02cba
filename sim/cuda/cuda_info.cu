#include <cuda_runtime.h>
#include <cstdio>
#include "sim/cuda/cuda_info.h"

namespace ps {

// Compile stamps of the CUDA steppers (mpm_cuda.cu, dem_cuda.cu).
const char* mpm_cuda_build_stamp();
namespace dem {
const char* dem_cuda_build_stamp();
}

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
    char buf[64];
    const unsigned char* u = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
    std::snprintf(buf, sizeof buf,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                  u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                  u[14], u[15]);
    d.uuid = buf;
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID,
                  prop.pciDeviceID);
    d.pci_bus_id = buf;
    out.push_back(d);
  }
  return out;
}

bool cuda_device_available() {
  static const bool available = !cuda_devices().empty();
  return available;
}

int cuda_driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) return 0;
  return v;
}

int cuda_runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return 0;
  return v;
}

std::string cuda_build_stamp() {
  return std::string("mpm ") + mpm_cuda_build_stamp() + ", dem " + dem::dem_cuda_build_stamp();
}

}  // namespace ps
