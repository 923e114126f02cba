/// A small persistent thread pool with static (and, on request, dynamic) partitioning.
/// Results of the simulation never depend on the partition: every parallel
/// loop in sim/ either writes disjoint data or reduces in a fixed order.
///
/// A substep issues a handful of short parallel loops, so wake-up latency
/// matters: workers spin for a few tens of microseconds after a job before
/// they sleep on a condition variable.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ps {

class ThreadPool {
 public:
  /// threads <= 0 picks std::thread::hardware_concurrency().
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Calls fn(begin, end, worker) on contiguous chunks covering [0, n).
  /// Chunks are at least `grain` long; the calling thread takes part.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t, int)>& fn);
  /// As parallel_for, but the chunks are `grain` long and handed out one at a
  /// time to whichever thread is free (for loops whose cost per item varies:
  /// materials cluster in space, so a static half can hold all the expensive
  /// ones; a pool of one thread, or n <= grain, makes one call). fn must not depend on which thread runs a chunk beyond `worker`
  /// scratch whose reduction is order-free (min, max).
  void parallel_for_dynamic(int64_t n, int64_t grain,
                            const std::function<void(int64_t, int64_t, int)>& fn);

 private:
  /// Publishes a job, runs the caller's share, waits for every worker's acknowledgement.
  void run_job(const std::function<void(int64_t, int64_t, int)>& fn, int64_t n, int chunks,
               int64_t grain);
  void run_chunks(int index);
  void worker_loop(int index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_;
  // The job; written before generation_ is bumped (release), read after (acquire).
  const std::function<void(int64_t, int64_t, int)>* job_ = nullptr;
  int64_t job_n_ = 0;
  int job_chunks_ = 0;
  int64_t job_grain_ = 0;  // > 0: dynamic chunks of this size from next_
  std::atomic<int64_t> next_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};  // workers that have not finished the job
  int sleepers_ = 0;             // guarded by mutex_
  std::atomic<bool> stop_{false};
};

}  // namespace ps
