#include "util/thread_pool.h"

#include <algorithm>
#include <cassert>

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

}  // namespace

ThreadPool::ThreadPool(int n_threads) {
  if (n_threads <= 0) n_threads = static_cast<int>(std::thread::hardware_concurrency());
  n_threads_ = std::max(1, n_threads);
  workers_.reserve(n_threads_ - 1);
  for (int t = 1; t < n_threads_; ++t) workers_.emplace_back([this, t] { WorkerLoop(t); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::ChunkRange(int64_t n, int64_t grain, int n_chunks, int t, int64_t* begin,
                            int64_t* end) {
  // Distribute whole grains as evenly as possible; the first (blocks % n_chunks) chunks get one
  // extra grain.
  const int64_t blocks = (n + grain - 1) / grain;
  const int64_t base = blocks / n_chunks;
  const int64_t extra = blocks % n_chunks;
  const int64_t b = t * base + std::min<int64_t>(t, extra);
  const int64_t e = b + base + (t < extra ? 1 : 0);
  *begin = std::min(n, b * grain);
  *end = std::min(n, e * grain);
}

void ThreadPool::RunChunk(int thread_id) {
  if (thread_id >= job_chunks_) return;
  int64_t begin, end;
  ChunkRange(job_n_, job_grain_, job_chunks_, thread_id, &begin, &end);
  if (begin < end) (*job_fn_)(begin, end, thread_id);
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain, const RangeFn& fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  const int64_t blocks = (n + grain - 1) / grain;
  if (n_threads_ == 1 || blocks == 1 || t_inside_job) {
    fn(0, n, 0);
    return;
  }
  std::lock_guard<std::mutex> lock(submit_mutex_);
  job_fn_ = &fn;
  job_n_ = n;
  job_grain_ = grain;
  job_chunks_ = static_cast<int>(std::min<int64_t>(n_threads_, blocks));
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  // Release: publishes the job fields to workers that acquire the new generation.
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();

  t_inside_job = true;
  RunChunk(0);
  t_inside_job = false;

  // Wait for the workers (they are running their chunks right now; spin, then yield).
  int spins = 0;
  while (pending_.load(std::memory_order_acquire) != 0) {
    if (++spins < kSpinIterations) {
      RADIXLM_CPU_RELAX();
    } else {
      std::this_thread::yield();
    }
  }
  job_fn_ = nullptr;
}

void ThreadPool::WorkerLoop(int thread_id) {
  t_inside_job = true;  // any ParallelFor issued from a job on this thread runs inline
  // Jobs are counted from construction (generation 0), not from when this thread got going:
  // a job submitted before the thread first runs must still be picked up.
  uint32_t seen = 0;
  for (;;) {
    uint32_t gen = generation_.load(std::memory_order_acquire);
    for (int i = 0; gen == seen && i < kSpinIterations; ++i) {
      RADIXLM_CPU_RELAX();
      gen = generation_.load(std::memory_order_acquire);
    }
    while (gen == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      gen = generation_.load(std::memory_order_acquire);
    }
    seen = gen;
    if (stop_.load(std::memory_order_relaxed)) return;
    RunChunk(thread_id);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace radixlm
