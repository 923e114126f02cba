/// Jacobi-preconditioned conjugate gradient for the heat pass's 5-point
/// system (sim/mpm/heat.h, HeatSystem) on a CUDA device.
///
/// The iteration is solve_pcg's with z = r / diag, step for step: the
/// matrix-vector product is HeatSystem::apply's expression in the same
/// operation order (the build disables FMA contraction, so each row is the
/// host's to the bit); only the dot products sum in another order. Those sums
/// are in a fixed order (a grid-stride loop per thread, a shared-memory tree
/// per block, then one block over the block partials in index order), so a
/// solve gives the same x on every run on one device. The scalars (alpha,
/// beta, r.z) stay on the device; the host reads r.r (16 bytes) once per
/// iteration to stop at ||r|| <= tol ||b||, like the host.
///
/// Per iteration: q = A p with p.q; alpha; x += alpha p, r -= alpha q,
/// z = r / diag with r.r and r.z; beta; p = z + beta p. Bytes moved per
/// unknown and iteration: about 150 (the system's 3 doubles and 4 indices,
/// five vectors read, four written).
#include "sim/mpm/heat_cuda.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>
#include "sim/cuda/cuda_check.h"
#include "sim/cuda/device_buffer.cuh"

namespace ps {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 512;  ///< partial sums per reduction (fixed for a given n)

struct DevSystem {
  const double* diag;
  const double* east;
  const double* north;
  const int* east_of;
  const int* north_of;
  const int* west_of;
  const int* south_of;
  int n;
};

/// The scalars of the iteration, kept on the device. `rr` and `breakdown`
/// (the first 16 bytes) come back to the host each iteration.
struct DevScalars {
  double rr;      ///< r.r
  int breakdown;  ///< p.q <= 0: stop (the host's `break` before the update)
  int pad;
  double rz;  ///< r.z
  double bb;  ///< b.b
  double alpha, beta;
};

/// Row i of A x, in HeatSystem::apply's order.
__device__ inline double row_apply(const DevSystem& A, const double* x, int i) {
  double s = A.diag[i] * x[i];
  int k = A.east_of[i];
  if (k >= 0) s -= A.east[i] * x[k];
  k = A.north_of[i];
  if (k >= 0) s -= A.north[i] * x[k];
  k = A.west_of[i];
  if (k >= 0) s -= A.east[k] * x[k];
  k = A.south_of[i];
  if (k >= 0) s -= A.north[k] * x[k];
  return s;
}

/// Sums v over the block (a fixed tree); thread 0 gets the totals in v.
template <int K>
__device__ void block_sum(double (&v)[K]) {
  __shared__ double sh[K][kThreads];
  for (int k = 0; k < K; ++k) sh[k][threadIdx.x] = v[k];
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s)
      for (int k = 0; k < K; ++k) sh[k][threadIdx.x] += sh[k][threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    for (int k = 0; k < K; ++k) v[k] = sh[k][0];
}

template <int K>
__device__ void write_partials(double (&v)[K], double* part) {
  block_sum<K>(v);
  if (threadIdx.x == 0)
    for (int k = 0; k < K; ++k) part[blockIdx.x * K + k] = v[k];
}

/// r = b - A x, z = r / diag, p = z; partials of r.z, r.r, b.b.
__global__ void start_kernel(DevSystem A, const double* b, const double* x, double* r, double* z,
                             double* p, double* part) {
  double v[3] = {0.0, 0.0, 0.0};
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < A.n; i += gridDim.x * kThreads) {
    const double ri = b[i] - row_apply(A, x, i);
    const double zi = ri / A.diag[i];
    r[i] = ri;
    z[i] = zi;
    p[i] = zi;
    v[0] += ri * zi;
    v[1] += ri * ri;
    v[2] += b[i] * b[i];
  }
  write_partials<3>(v, part);
}

/// q = A p; partials of p.q.
__global__ void apply_kernel(DevSystem A, const double* p, double* q, double* part) {
  double v[1] = {0.0};
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < A.n; i += gridDim.x * kThreads) {
    const double qi = row_apply(A, p, i);
    q[i] = qi;
    v[0] += p[i] * qi;
  }
  write_partials<1>(v, part);
}

/// x += alpha p, r -= alpha q, z = r / diag; partials of r.r, r.z.
__global__ void update_kernel(DevSystem A, const DevScalars* s, const double* p, const double* q,
                              double* x, double* r, double* z, double* part) {
  const double alpha = s->alpha;
  double v[2] = {0.0, 0.0};
  // After a breakdown the host stops before the update: x and r stay as they
  // are (0 * p would be NaN where p is not finite). Every thread still reaches
  // the barrier in write_partials.
  const int n = s->breakdown ? 0 : A.n;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads) {
    x[i] += alpha * p[i];
    const double ri = r[i] - alpha * q[i];
    const double zi = ri / A.diag[i];
    r[i] = ri;
    z[i] = zi;
    v[0] += ri * ri;
    v[1] += ri * zi;
  }
  write_partials<2>(v, part);
}

/// p = z + beta p.
__global__ void direction_kernel(int n, const DevScalars* s, const double* z, double* p) {
  const double beta = s->beta;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads)
    p[i] = z[i] + beta * p[i];
}

enum ReduceStep { kStart = 0, kAlpha = 1, kBeta = 2 };

/// One block: the partials in index order, then the scalars of the step.
template <int K>
__global__ void reduce_kernel(const double* part, int blocks, DevScalars* s, int step) {
  double v[K];
  for (int k = 0; k < K; ++k) v[k] = 0.0;
  for (int b = threadIdx.x; b < blocks; b += kThreads)
    for (int k = 0; k < K; ++k) v[k] += part[b * K + k];
  block_sum<K>(v);
  if (threadIdx.x != 0) return;
  if (step == kStart) {
    s->rz = v[0];
    s->rr = v[1];
    s->bb = v[2];
    s->breakdown = 0;
    s->alpha = s->beta = 0.0;
  } else if (step == kAlpha) {
    const double pq = v[0];
    if (pq > 0.0) {
      s->alpha = s->rz / pq;
    } else {
      s->alpha = 0.0;  // x and r stay; the host stops
      s->breakdown = 1;
    }
  } else {
    s->rr = v[0];
    s->beta = v[1] / s->rz;
    s->rz = v[1];
  }
}

class CudaHeatSolver final : public HeatLinearSolver {
 public:
  explicit CudaHeatSolver(cudaStream_t stream) : stream_(stream) {
    try {
      cuda_check(cudaMallocHost(reinterpret_cast<void**>(&host_s_), sizeof(DevScalars)),
                 "cudaMallocHost (heat solve)");
      cuda_check(cudaMalloc(reinterpret_cast<void**>(&s_), sizeof(DevScalars)),
                 "cudaMalloc (heat solve)");
      cuda_check(cudaMalloc(reinterpret_cast<void**>(&part_), kMaxBlocks * 3 * sizeof(double)),
                 "cudaMalloc (heat solve)");
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaHeatSolver() override { release(); }
  CudaHeatSolver(const CudaHeatSolver&) = delete;
  CudaHeatSolver& operator=(const CudaHeatSolver&) = delete;
  PcgResult solve(const HeatSystem& A, const std::vector<double>& b, std::vector<double>& x,
                  double tol, int max_iterations, PcgWork& work) override {
    PcgResult res;
    const int n = A.n;
    if (n == 0) {
      res.converged = true;
      return res;
    }
    x.resize(static_cast<size_t>(n));
    reserve(static_cast<size_t>(n));
    const size_t un = static_cast<size_t>(n);
    upload(diag_, A.diag.data(), un, stream_);
    upload(east_, A.east.data(), un, stream_);
    upload(north_, A.north.data(), un, stream_);
    upload(east_of_, A.east_of.data(), un, stream_);
    upload(north_of_, A.north_of.data(), un, stream_);
    upload(west_of_, A.west_of.data(), un, stream_);
    upload(south_of_, A.south_of.data(), un, stream_);
    upload(b_, b.data(), un, stream_);
    upload(x_, x.data(), un, stream_);
    const DevSystem D{diag_, east_, north_, east_of_, north_of_, west_of_, south_of_, n};
    const int blocks = std::min(kMaxBlocks, (n + kThreads - 1) / kThreads);

    start_kernel<<<blocks, kThreads, 0, stream_>>>(D, b_, x_, r_, z_, p_, part_);
    reduce_kernel<3><<<1, kThreads, 0, stream_>>>(part_, blocks, s_, kStart);
    read_scalars(sizeof(DevScalars));
    const double bnorm = std::sqrt(host_s_->bb);
    if (!(bnorm > 0.0)) {
      std::fill(x.begin(), x.end(), 0.0);
      work.q.assign(x.size(), 0.0);  // A x
      res.converged = true;
      return res;
    }
    double rnorm = std::sqrt(host_s_->rr);
    int it = 0;
    if (rnorm > tol * bnorm) {
      for (it = 1; it <= max_iterations; ++it) {
        apply_kernel<<<blocks, kThreads, 0, stream_>>>(D, p_, q_, part_);
        reduce_kernel<1><<<1, kThreads, 0, stream_>>>(part_, blocks, s_, kAlpha);
        update_kernel<<<blocks, kThreads, 0, stream_>>>(D, s_, p_, q_, x_, r_, z_, part_);
        reduce_kernel<2><<<1, kThreads, 0, stream_>>>(part_, blocks, s_, kBeta);
        // The next direction goes ahead of the check (unused if this was the last).
        direction_kernel<<<blocks, kThreads, 0, stream_>>>(n, s_, z_, p_);
        read_scalars(kIterationBytes);
        if (host_s_->breakdown) break;
        rnorm = std::sqrt(host_s_->rr);
        if (rnorm <= tol * bnorm) break;
      }
      if (it > max_iterations) it = max_iterations;
    }
    download(x.data(), x_, un, stream_);
    cuda_check(cudaStreamSynchronize(stream_), "heat solve");
    return pcg_finish(A, b, x, it, bnorm, rnorm, tol,
                      work.q);  // the true residual, as solve_pcg reports it
  }

 private:
  /// rr and breakdown: what the host needs after each iteration.
  static constexpr size_t kIterationBytes = offsetof(DevScalars, rz);

  void read_scalars(size_t bytes) {
    cuda_check(cudaGetLastError(), "heat solve kernels");
    cuda_check(cudaMemcpyAsync(host_s_, s_, bytes, cudaMemcpyDeviceToHost, stream_),
               "heat solve scalars");
    cuda_check(cudaStreamSynchronize(stream_), "heat solve");
  }
  /// Vectors for n unknowns, grown by a quarter beyond the need (melting adds
  /// unknowns pass by pass; cudaMalloc and cudaFree stall the device). The
  /// capacity counts only once every buffer has it: a failed allocation
  /// leaves cap_ at 0 and the next solve allocates again.
  void reserve(size_t n) {
    if (n <= cap_) return;
    const size_t want = n + n / 4;
    const size_t had = cap_;
    cap_ = 0;
    size_t c = 0;
    for (double** p : {&diag_, &east_, &north_, &b_, &x_, &r_, &z_, &p_, &q_}) {
      c = had;
      dev_reserve(*p, c, want);
    }
    for (int** p : {&east_of_, &north_of_, &west_of_, &south_of_}) {
      c = had;
      dev_reserve(*p, c, want);
    }
    cap_ = want;
  }
  void release() {
    for (double* p : {diag_, east_, north_, b_, x_, r_, z_, p_, q_, part_}) cudaFree(p);
    for (int* p : {east_of_, north_of_, west_of_, south_of_}) cudaFree(p);
    cudaFree(s_);
    cudaFreeHost(host_s_);
  }

  cudaStream_t stream_;
  size_t cap_ = 0;
  double *diag_ = nullptr, *east_ = nullptr, *north_ = nullptr, *b_ = nullptr, *x_ = nullptr,
         *r_ = nullptr, *z_ = nullptr, *p_ = nullptr, *q_ = nullptr, *part_ = nullptr;
  int *east_of_ = nullptr, *north_of_ = nullptr, *west_of_ = nullptr, *south_of_ = nullptr;
  DevScalars* s_ = nullptr;
  DevScalars* host_s_ = nullptr;
};

}  // namespace

std::unique_ptr<HeatLinearSolver> make_cuda_heat_solver(void* stream) {
  return std::make_unique<CudaHeatSolver>(static_cast<cudaStream_t>(stream));
}

}  // namespace ps
