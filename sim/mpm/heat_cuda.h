/// The heat pass's linear solve on a CUDA device (heat_cuda.cu; built only
/// with the CUDA backend, which owns the solver and lends it to the pass).
#pragma once
#include <memory>
#include "sim/mpm/heat.h"

namespace ps {

/// A Jacobi PCG on the device of the calling thread, on `stream` (a
/// cudaStream_t). Its device buffers grow with the largest system solved.
std::unique_ptr<HeatLinearSolver> make_cuda_heat_solver(void* stream);

}  // namespace ps
