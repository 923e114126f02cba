/// A device -> host copy that runs in the background, for the CUDA backends'
/// periodic checkpoints (MpmCudaBackend, DemCudaBackend; the worlds' side is
/// sim/core/checkpoint.h). The backend fills a device staging buffer in its
/// stream's order (a device-side copy: microseconds), then the transfer into
/// pinned host memory runs on a copy stream of its own, on a copy engine,
/// while the stepping goes on. Two host buffers alternate, so the copy before
/// the one in flight is still whole when a device dies mid-transfer. Nothing
/// is allocated per checkpoint once the size is stable. nvcc only (.cu files).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "sim/cuda/cuda_check.h"

namespace ps {

class BackgroundCopy {
 public:
  BackgroundCopy() = default;
  BackgroundCopy(const BackgroundCopy&) = delete;
  BackgroundCopy& operator=(const BackgroundCopy&) = delete;
  /// Waits for a transfer in flight, then frees (errors ignored: this also
  /// runs after a device failure).
  ~BackgroundCopy() {
    if (copy_) cudaStreamSynchronize(copy_);
    cudaFree(dev_);
    cudaFreeHost(host_[0]);
    cudaFreeHost(host_[1]);
    if (ready_) cudaEventDestroy(ready_);
    if (done_) cudaEventDestroy(done_);
    if (copy_) cudaStreamDestroy(copy_);
  }

  /// The device staging buffer, at least `bytes` long, for the next copy.
  /// The staging buffer is reused, so the previous transfer is waited for
  /// first (it takes milliseconds; checkpoints come hundreds of steps apart);
  /// that copy, complete now, stays in host memory as previous() while the
  /// next one travels into the other host buffer. When the buffers must grow
  /// (by a quarter beyond `bytes`), `work` is drained first and there is no
  /// previous copy (it was of another size).
  char* stage(size_t bytes, cudaStream_t work) {
    if (!copy_) {
      cuda_check(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking),
                 "cudaStreamCreate (checkpoint)");
      cuda_check(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming),
                 "cudaEventCreate (checkpoint)");
      cuda_check(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming),
                 "cudaEventCreate (checkpoint)");
    }
    if (pending_) {
      cuda_check(cudaEventSynchronize(done_), "checkpoint");
      pending_ = false;
      arrived_ = true;
    }
    has_prev_ = arrived_;
    arrived_ = false;
    if (bytes > cap_) {
      has_prev_ = false;
      cuda_check(cudaStreamSynchronize(work), "sync");
      cudaFree(dev_);
      cudaFreeHost(host_[0]);
      cudaFreeHost(host_[1]);
      dev_ = host_[0] = host_[1] = nullptr;
      cap_ = 0;
      const size_t grown = bytes + bytes / 4;
      cuda_check(cudaMalloc(reinterpret_cast<void**>(&dev_), grown), "cudaMalloc (checkpoint)");
      cuda_check(cudaMallocHost(reinterpret_cast<void**>(&host_[0]), grown),
                 "cudaMallocHost (checkpoint)");
      cuda_check(cudaMallocHost(reinterpret_cast<void**>(&host_[1]), grown),
                 "cudaMallocHost (checkpoint)");
      cap_ = grown;
    }
    if (has_prev_) cur_ ^= 1;
    return dev_;
  }

  /// Transfers the staging buffer's first `bytes` to the host once `work`
  /// has reached this point (after the launches that filled it).
  void start(size_t bytes, cudaStream_t work) {
    cuda_check(cudaEventRecord(ready_, work), "checkpoint");
    cuda_check(cudaStreamWaitEvent(copy_, ready_, 0), "checkpoint");
    cuda_check(cudaMemcpyAsync(host_[cur_], dev_, bytes, cudaMemcpyDeviceToHost, copy_),
               "checkpoint");
    cuda_check(cudaEventRecord(done_, copy_), "checkpoint");
    pending_ = true;
  }

  /// The last started transfer is in host memory (asks the device, no wait).
  bool arrived() {
    if (pending_) {
      const cudaError_t e = cudaEventQuery(done_);
      if (e == cudaErrorNotReady) return false;
      cuda_check(e, "checkpoint");
      pending_ = false;
      arrived_ = true;
    }
    return arrived_;
  }
  /// What arrived() last found, without asking the device (for a restore
  /// after a device failure: host memory only).
  bool has_arrived() const { return arrived_; }
  /// The last started copy's host memory; complete once arrived().
  const char* host() const { return host_[cur_]; }
  /// The copy started before it, complete (null when there is none).
  const char* previous() const { return has_prev_ ? host_[cur_ ^ 1] : nullptr; }

 private:
  cudaStream_t copy_ = nullptr;
  cudaEvent_t ready_ = nullptr, done_ = nullptr;
  char* dev_ = nullptr;
  char* host_[2] = {nullptr, nullptr};
  int cur_ = 0;  // host_[cur_]: the last started copy
  size_t cap_ = 0;
  bool pending_ = false, arrived_ = false, has_prev_ = false;
};

/// Byte offsets of columns packed one after another, each starting on a
/// 256-byte boundary (a staging buffer or a device state copy).
class ColumnPacker {
 public:
  /// Reserves `bytes` for the next column; returns its offset.
  size_t add(size_t bytes) {
    const size_t at = end_;
    end_ += (bytes + 255) / 256 * 256;
    return at;
  }
  size_t bytes() const { return end_; }

 private:
  size_t end_ = 0;
};

}  // namespace ps
