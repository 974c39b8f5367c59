#include "util/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace radixlm {
namespace {

// The chunks ParallelFor(n, grain) runs on `threads` threads, in range order: each claim takes
// ChunkGrains of what is left from the front.
std::set<std::pair<int64_t, int64_t>> GuidedChunks(int64_t n, int64_t grain, int threads) {
  std::set<std::pair<int64_t, int64_t>> chunks;
  const int64_t grains = (n + grain - 1) / grain;
  if (threads == 1 || grains == 1) return {{0, n}};
  for (int64_t g = 0; g < grains;) {
    const int64_t next = g + ThreadPool::ChunkGrains(grains - g, threads);
    chunks.insert({g * grain, std::min(n, next * grain)});
    g = next;
  }
  return chunks;
}

TEST(ThreadPool, CoversRangeExactlyOnceWithGrainAlignedChunks) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {0, 1, 2, 7, 64, 1000, 1001}) {
      for (int64_t grain : {1, 4, 16}) {
        std::vector<std::atomic<int>> hits(n);
        std::mutex mu;
        std::set<std::pair<int64_t, int64_t>> chunks;
        pool.ParallelFor(n, grain, [&](int64_t b, int64_t e, int tid) {
          EXPECT_GE(tid, 0);
          EXPECT_LT(tid, threads);
          EXPECT_EQ(b % grain, 0);
          EXPECT_TRUE(e == n || e % grain == 0);
          for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
          std::lock_guard<std::mutex> lock(mu);
          chunks.insert({b, e});
        });
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << grain;
        // The partition depends on (n, grain, threads) only, not on which thread ran what.
        if (n > 0) {
          EXPECT_EQ(chunks, GuidedChunks(n, grain, threads)) << n << " " << grain;
        }
      }
    }
  }
}

TEST(ThreadPool, ConcurrentChunksHaveDistinctIdsAndWorkersTakeOver) {
  ThreadPool pool(3);
  std::atomic<bool> in_use[3] = {false, false, false};
  std::mutex mu;
  std::set<std::thread::id> os_ids;
  std::atomic<int> chunks_by_workers{0};
  std::atomic<bool> caller_started{false};
  pool.ParallelFor(12, [&](int64_t, int64_t, int tid) {
    ASSERT_GE(tid, 0);
    ASSERT_LT(tid, 3);
    EXPECT_FALSE(in_use[tid].exchange(true)) << "two chunks ran at once with id " << tid;
    {
      std::lock_guard<std::mutex> lock(mu);
      os_ids.insert(std::this_thread::get_id());
    }
    if (tid == 0) {
      // The caller stalls in its first chunk: the workers must drain the rest meanwhile.
      if (!caller_started.exchange(true)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
      }
    } else {
      // A worker's chunk waits for the caller to take one (each worker then holds at most one
      // chunk, so the caller always gets one however fast the workers are), bounded so a
      // broken pool fails instead of hanging.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!caller_started.load() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
      chunks_by_workers.fetch_add(1);
    }
    in_use[tid].store(false);
  });
  EXPECT_TRUE(caller_started.load());
  EXPECT_GT(chunks_by_workers.load(), 0);
  EXPECT_GE(os_ids.size(), 2u);
}

TEST(ThreadPool, ManyBackToBackJobsAndNesting) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  for (int iter = 0; iter < 2000; ++iter) {
    pool.ParallelFor(10, [&](int64_t b, int64_t e, int) {
      // Nested calls run inline on the calling thread.
      pool.ParallelFor(e - b, [&](int64_t b2, int64_t e2, int tid) {
        EXPECT_EQ(tid, 0);
        total.fetch_add(e2 - b2);
      });
    });
  }
  EXPECT_EQ(total.load(), 20000);
}

TEST(ThreadPool, ConcurrentCallersAreSerialized) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        pool.ParallelFor(100, [&](int64_t b, int64_t e, int) { total.fetch_add(e - b); });
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 3 * 200 * 100);
}

TEST(ThreadPool, NullPoolHelperRunsInline) {
  int64_t seen = -1;
  ParallelFor(nullptr, 42, 1, [&](int64_t b, int64_t e, int tid) {
    EXPECT_EQ(b, 0);
    EXPECT_EQ(tid, 0);
    seen = e;
  });
  EXPECT_EQ(seen, 42);
}

}  // namespace
}  // namespace radixlm
