#include "util/thread_pool.h"

#include <algorithm>
#include <cassert>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RADIXLM_CPU_RELAX() _mm_pause()
#else
#define RADIXLM_CPU_RELAX() ((void)0)
#endif

namespace radixlm {
namespace {

// Iterations a worker polls for the next job before blocking (~50-100 us with PAUSE): long
// enough to catch the next kernel of a decode step, short enough not to starve co-tenants on
// an oversubscribed machine.
constexpr int kSpinIterations = 4000;

thread_local bool t_inside_job = false;

// Spins, then yields, until pred() holds.
template <typename Pred>
void SpinUntil(Pred pred) {
  for (int i = 0; !pred(); ++i) {
    if (i < kSpinIterations) {
      RADIXLM_CPU_RELAX();
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) {
  if (n_threads <= 0) n_threads = static_cast<int>(std::thread::hardware_concurrency());
  n_threads_ = std::max(1, n_threads);
  workers_.reserve(n_threads_ - 1);
  for (int t = 1; t < n_threads_; ++t) workers_.emplace_back([this, t] { WorkerLoop(t); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::RunChunks(Job& job, int thread_id) {
  int64_t first = job.next_grain.load(std::memory_order_relaxed);
  for (;;) {
    if (first >= job.grains) return;
    const int64_t last = first + ChunkGrains(job.grains - first, job.n_threads);
    if (!job.next_grain.compare_exchange_weak(first, last, std::memory_order_relaxed)) continue;
    (*job.fn)(first * job.grain, std::min(job.n, last * job.grain), thread_id);
    job.done_grains.fetch_add(last - first, std::memory_order_release);
    first = job.next_grain.load(std::memory_order_relaxed);
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain, const RangeFn& fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  const int64_t blocks = (n + grain - 1) / grain;
  if (n_threads_ == 1 || blocks == 1 || t_inside_job) {
    fn(0, n, 0);
    return;
  }
  MutexLock lock(&submit_mutex_);
  uint32_t id = generation_.load(std::memory_order_relaxed) + 1;
  if (id == 0) id = 1;  // 0 marks a retired slot; skip it when the counter wraps
  Job& job = jobs_[id & 1];
  // Retire the slot, then wait for stragglers of the job it held two generations ago (seq_cst
  // pairs with the worker's active increment + id check).
  job.id.store(0);
  SpinUntil([&] { return job.active.load() == 0; });
  job.fn = &fn;
  job.n = n;
  job.grain = grain;
  job.grains = blocks;
  job.n_threads = n_threads_;
  job.next_grain.store(0, std::memory_order_relaxed);
  job.done_grains.store(0, std::memory_order_relaxed);
  job.id.store(id);
  generation_.store(id);  // publishes the job (seq_cst, pairs with the sleepers_ check below)
  if (sleepers_.load() > 0) generation_.notify_all();

  t_inside_job = true;
  RunChunks(job, 0);
  t_inside_job = false;
  const auto wait_start = std::chrono::steady_clock::now();
  SpinUntil([&] { return job.done_grains.load(std::memory_order_acquire) == job.grains; });
  ++stats_.regions;
  stats_.barrier_ns += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                 std::chrono::steady_clock::now() - wait_start)
                                                 .count());
}

ThreadPool::Stats ThreadPool::stats() {
  MutexLock lock(&submit_mutex_);
  return stats_;
}

void ThreadPool::WorkerLoop(int thread_id) {
  t_inside_job = true;  // any ParallelFor issued from a job on this thread runs inline
  uint32_t seen = 0;    // generation at construction: jobs submitted before this thread ran count
  for (;;) {
    uint32_t gen = generation_.load(std::memory_order_acquire);
    for (int i = 0; gen == seen && i < kSpinIterations; ++i) {
      RADIXLM_CPU_RELAX();
      gen = generation_.load(std::memory_order_acquire);
    }
    while (gen == seen) {
      sleepers_.fetch_add(1);
      if (generation_.load() == seen) generation_.wait(seen);
      sleepers_.fetch_sub(1);
      gen = generation_.load(std::memory_order_acquire);
    }
    seen = gen;
    if (stop_.load()) return;
    Job& job = jobs_[gen & 1];
    job.active.fetch_add(1);
    if (job.id.load() == gen) RunChunks(job, thread_id);  // else: stale, slot being reused
    job.active.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace radixlm
