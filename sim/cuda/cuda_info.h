/// CUDA device discovery. Compiled with nvcc when available; without CUDA the
/// functions report no devices.
#pragma once
#include <string>
#include <vector>

namespace ps {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  size_t memory_bytes = 0;
  int multiprocessors = 0;
};

/// True when this build was compiled with CUDA.
bool cuda_compiled();
/// Devices the CUDA runtime sees; empty without a driver or device. When the
/// runtime reports an error, *why (if given) receives its text.
std::vector<CudaDeviceInfo> cuda_devices(std::string* why = nullptr);
bool cuda_device_available();

}  // namespace ps
