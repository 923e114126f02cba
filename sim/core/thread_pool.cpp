#include "sim/core/thread_pool.h"

#include <algorithm>
#include <chrono>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PS_PAUSE() _mm_pause()
#else
#define PS_PAUSE() std::this_thread::yield()
#endif

namespace ps {

namespace {
constexpr auto kSpin = std::chrono::microseconds(50);
}

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
    generation_.fetch_add(1, std::memory_order_release);
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

static void chunk_range(int64_t n, int chunks, int c, int64_t& b, int64_t& e) {
  b = n * c / chunks;
  e = n * (c + 1) / chunks;
}

void ThreadPool::parallel_for(int64_t n, int64_t grain,
                              const std::function<void(int64_t, int64_t, int)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  int chunks = static_cast<int>(std::min<int64_t>(size(), (n + grain - 1) / grain));
  if (chunks <= 1) {
    fn(0, n, 0);
    return;
  }
  run_job(fn, n, chunks, 0);
}

void ThreadPool::parallel_for_dynamic(int64_t n, int64_t grain,
                                      const std::function<void(int64_t, int64_t, int)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (size() <= 1 || n <= grain) {
    fn(0, n, 0);
    return;
  }
  run_job(fn, n, size(), grain);
}

void ThreadPool::run_job(const std::function<void(int64_t, int64_t, int)>& fn, int64_t n,
                         int chunks, int64_t grain) {
  job_ = &fn;
  job_n_ = n;
  job_chunks_ = chunks;
  job_grain_ = grain;
  next_.store(0, std::memory_order_relaxed);
  // Every worker acknowledges every job (even without a chunk), so none can
  // still be reading this job's fields when the next one is written.
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
    wake = sleepers_ > 0;
  }
  if (wake) start_cv_.notify_all();
  if (grain > 0) {
    run_chunks(0);
  } else {
    int64_t b, e;
    chunk_range(n, chunks, 0, b, e);
    fn(b, e, 0);
  }
  auto t0 = std::chrono::steady_clock::now();
  for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
    if ((spins & 63) == 63 && std::chrono::steady_clock::now() - t0 > kSpin)
      std::this_thread::yield();
    else
      PS_PAUSE();
  }
  job_ = nullptr;
}

void ThreadPool::run_chunks(int index) {
  for (;;) {
    const int64_t b = next_.fetch_add(job_grain_, std::memory_order_relaxed);
    if (b >= job_n_) return;
    (*job_)(b, std::min(job_n_, b + job_grain_), index);
  }
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t g = generation_.load(std::memory_order_acquire);
    auto t0 = std::chrono::steady_clock::now();
    for (int spins = 0; g == seen; ++spins) {
      if ((spins & 63) == 63 && std::chrono::steady_clock::now() - t0 > kSpin) {
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleepers_;
        start_cv_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
        --sleepers_;
      } else {
        PS_PAUSE();
      }
      g = generation_.load(std::memory_order_acquire);
    }
    if (stop_.load()) return;
    seen = g;
    if (job_grain_ > 0) {
      run_chunks(index);
    } else if (index < job_chunks_) {
      int64_t b, e;
      chunk_range(job_n_, job_chunks_, index, b, e);
      (*job_)(b, e, index);
    }
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace ps
