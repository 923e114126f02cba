// ThreadPool (sim/core/thread_pool.h): both partitions cover [0, n) exactly
// once, in chunks no longer than asked for the dynamic one, with worker
// indices inside the pool; a dynamic loop of uneven cost still finishes every
// item, and repeated jobs do not mix (each job's counts are exact).
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <vector>
#include "sim/core/thread_pool.h"

using namespace ps;

TEST_CASE("ThreadPool: static and dynamic loops cover every index exactly once", "[thread_pool]") {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n :
         {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{256}, int64_t{1000}, int64_t{9075}}) {
      for (int dynamic = 0; dynamic < 2; ++dynamic) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        for (auto& h : hits) h.store(0);
        std::atomic<int> bad_worker{0}, long_chunk{0};
        auto body = [&](int64_t b, int64_t e, int worker) {
          if (worker < 0 || worker >= pool.size()) bad_worker.fetch_add(1);
          if (dynamic && pool.size() > 1 && e - b > 64)
            long_chunk.fetch_add(1);  // one thread: one call
          for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
        };
        if (dynamic)
          pool.parallel_for_dynamic(n, 64, body);
        else
          pool.parallel_for(n, 64, body);
        int wrong = 0;
        for (auto& h : hits) wrong += h.load() != 1;
        INFO("threads " << threads << ", n " << n << ", dynamic " << dynamic);
        CHECK(wrong == 0);
        CHECK(bad_worker.load() == 0);
        CHECK(long_chunk.load() == 0);
      }
    }
  }
}

TEST_CASE("ThreadPool: a dynamic loop of uneven cost shares the work and reduces order-free",
          "[thread_pool]") {
  ThreadPool pool(2);
  const int64_t n = 4096;
  std::vector<double> out(static_cast<size_t>(n), 0.0);
  std::vector<double> max_of(static_cast<size_t>(pool.size()), 0.0);
  for (int rep = 0; rep < 20; ++rep) {
    pool.parallel_for_dynamic(n, 32, [&](int64_t b, int64_t e, int worker) {
      for (int64_t i = b; i < e; ++i) {
        double x = 1.0 + static_cast<double>(i);
        const int work = i < n / 2 ? 200 : 2;  // the first half costs 100 times the second
        for (int k = 0; k < work; ++k) x = x * 0.999 + 1.0;
        out[static_cast<size_t>(i)] = x;
        max_of[static_cast<size_t>(worker)] = std::max(max_of[static_cast<size_t>(worker)], x);
      }
    });
  }
  double serial_max = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double x = 1.0 + static_cast<double>(i);
    const int work = i < n / 2 ? 200 : 2;
    for (int k = 0; k < work; ++k) x = x * 0.999 + 1.0;
    REQUIRE(out[static_cast<size_t>(i)] ==
            x);  // each item computed once, by one thread, the same way
    serial_max = std::max(serial_max, x);
  }
  CHECK(*std::max_element(max_of.begin(), max_of.end()) == serial_max);
}
