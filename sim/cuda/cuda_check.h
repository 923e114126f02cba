/// CUDA error checks shared by the device backends (.cu files only).
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "sim/core/backend_error.h"

namespace ps {

/// Throws BackendError (device state unknown) when `e` is an error.
inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    // Take a non-sticky error (out of memory) off the runtime's "last error":
    // left there, the next cudaGetLastError() check (the read-back the world
    // then asks for) would report it again and lose a state that is intact.
    cudaGetLastError();
    throw BackendError(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e), false);
  }
}

}  // namespace ps
