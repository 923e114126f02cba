// Without nvcc: no CUDA devices.
#include "sim/cuda/cuda_info.h"
#if !defined(PS_HAVE_CUDA)
namespace ps {
bool cuda_compiled() { return false; }
std::vector<CudaDeviceInfo> cuda_devices(std::string* why) {
  if (why) *why = "this build has no CUDA support (nvcc was not found at configure time)";
  return {};
}
bool cuda_device_available() { return false; }
int cuda_driver_version() { return 0; }
int cuda_runtime_version() { return 0; }
std::string cuda_build_stamp() { return ""; }
}  // namespace ps
#endif
