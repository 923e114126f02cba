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
  std::string uuid;        ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (nvidia-smi's form)
  std::string pci_bus_id;  ///< "0000:01:00.0"
};

/// True when this build was compiled with CUDA.
bool cuda_compiled();
/// Devices the CUDA runtime sees; empty without a driver or device. When the
/// runtime reports an error, *why (if given) receives its text.
std::vector<CudaDeviceInfo> cuda_devices(std::string* why = nullptr);
bool cuda_device_available();
/// Driver and runtime versions (e.g. 13000); 0 when unknown or without CUDA.
int cuda_driver_version();
int cuda_runtime_version();
/// Identity of this build's CUDA code: the compile stamps (date and time) of
/// the CUDA steppers' sources, which change whenever they or a header they
/// include (the shared kernels) are recompiled. "" without CUDA.
std::string cuda_build_stamp();

}  // namespace ps
