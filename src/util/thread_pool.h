// ThreadPool: a fixed set of persistent worker threads for data-parallel kernels.
//
// ParallelFor(n, fn) splits [0, n) into at most size() contiguous chunks (a static partition:
// chunk t always goes to thread t, so per-thread scratch and cache affinity are stable across
// calls) and runs them concurrently. The calling thread takes chunk 0 itself; workers
// 1..size()-1 are woken for the rest. Workers spin briefly on an atomic generation counter
// before blocking (futex via std::atomic::wait), so back-to-back calls (a decode step issues a
// few hundred) cost a few microseconds each, while an idle pool burns no CPU.
//
// Thread-safety: ParallelFor may be called from any thread; concurrent calls from different
// threads are serialized (one job runs at a time). A ParallelFor issued from inside a running
// job (nested) runs inline on the calling thread as one chunk, so nesting never deadlocks.
// fn must not throw. ParallelFor returns only after every chunk has finished, and all writes
// made by fn happen-before the return.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace radixlm {

class ThreadPool {
 public:
  // fn(begin, end, thread_id): process [begin, end); thread_id in [0, size()).
  using RangeFn = std::function<void(int64_t begin, int64_t end, int thread_id)>;

  // n_threads <= 0: one thread per hardware core (std::thread::hardware_concurrency()).
  // The pool owns n_threads - 1 worker threads; the caller is the n-th.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs fn over [0, n) split into min(size(), ceil(n / grain)) contiguous chunks whose
  // boundaries are multiples of grain (except the end, n). grain >= 1. n <= 0 is a no-op.
  void ParallelFor(int64_t n, int64_t grain, const RangeFn& fn);
  void ParallelFor(int64_t n, const RangeFn& fn) { ParallelFor(n, 1, fn); }

  // The range of chunk t of [0, n) under the partition above (for callers that size per-thread
  // scratch or want to predict which thread gets which rows).
  static void ChunkRange(int64_t n, int64_t grain, int n_chunks, int t, int64_t* begin,
                         int64_t* end);

 private:
  void WorkerLoop(int thread_id);
  void RunChunk(int thread_id);

  int n_threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex submit_mutex_;  // serializes concurrent ParallelFor callers (not the hot path)

  // The current job (written by the submitter before bumping generation_).
  const RangeFn* job_fn_ = nullptr;
  int64_t job_n_ = 0;
  int64_t job_grain_ = 1;
  int job_chunks_ = 0;

  alignas(64) std::atomic<uint32_t> generation_{0};  // bumped once per job; workers wait on it
  alignas(64) std::atomic<int> pending_{0};          // workers still running the current job
  alignas(64) std::atomic<bool> stop_{false};
};

// pool may be null: runs fn(0, n, 0) inline. Convenience for kernels taking ThreadPool*.
inline void ParallelFor(ThreadPool* pool, int64_t n, int64_t grain, const ThreadPool::RangeFn& fn) {
  if (n <= 0) return;
  if (pool == nullptr || pool->size() == 1) {
    fn(0, n, 0);
  } else {
    pool->ParallelFor(n, grain, fn);
  }
}

}  // namespace radixlm
