// ThreadPool: a fixed set of persistent worker threads for data-parallel kernels.
//
// ParallelFor(n, fn) splits [0, n) into contiguous chunks (boundaries on multiples of grain)
// and runs them on the calling thread plus the size()-1 workers. Threads claim chunks from the
// front of the range through one atomic position, each claim a share of what is left
// (guided scheduling: 1 / (2 size()) of the remaining grains, at least one), so the chunks
// shrink toward the end and the threads finish within a small chunk of each other: a worker
// that starts late, runs slower or is descheduled (an oversubscribed machine) does not hold
// up the others, who take its share. The partition is a function of (n, grain, size()) only,
// whichever thread claims each chunk. fn's thread_id is the id of the thread running the chunk (0 =
// caller), stable for that thread, so it can index per-thread scratch; one thread may run several
// chunks, one after the other. Workers spin briefly on an atomic generation counter before
// blocking (futex via std::atomic::wait), so back-to-back calls (a decode step issues a few
// hundred) cost a few microseconds each, while an idle pool burns no CPU.
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
#include <thread>
#include <vector>

#include "util/mutex.h"

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

  // Runs fn over [0, n) split into contiguous chunks whose boundaries are multiples of grain
  // (except the end, n), sized as above (ChunkGrains); each chunk runs exactly once. With one
  // grain (or size() == 1) fn(0, n, 0) runs inline. grain >= 1. n <= 0: no-op.
  void ParallelFor(int64_t n, int64_t grain, const RangeFn& fn) EXCLUDES(submit_mutex_);
  void ParallelFor(int64_t n, const RangeFn& fn) { ParallelFor(n, 1, fn); }

  // Totals since construction, for overhead reports: parallel regions run (calls that ran
  // inline as one chunk are not counted) and the time their submitting thread spent waiting
  // for the other threads after finishing its own chunks (the barrier).
  struct Stats {
    uint64_t regions = 0;
    uint64_t barrier_ns = 0;
  };
  Stats stats() EXCLUDES(submit_mutex_);

  // Grains in the chunk claimed when `remaining` grains of the range are left (the partition
  // used above): ceil(remaining / (2 n_threads)).
  static int64_t ChunkGrains(int64_t remaining, int n_threads) {
    const int64_t share = 2 * static_cast<int64_t>(n_threads);
    return (remaining + share - 1) / share;
  }

 private:
  // One job. Jobs alternate between two slots, so a worker that wakes late for a finished job
  // never sees a half-written newer one: the submitter retires a slot (id = 0) and waits for
  // its stragglers (active) before rewriting it, and a worker only works on a slot whose id
  // still equals the generation it woke for.
  struct alignas(64) Job {
    std::atomic<uint32_t> id{0};  // generation this slot holds; 0 while being rewritten
    std::atomic<int> active{0};   // workers currently inside this slot
    alignas(64) std::atomic<int64_t> next_grain{0};  // start of the next unclaimed chunk
    alignas(64) std::atomic<int64_t> done_grains{0};
    const RangeFn* fn = nullptr;
    int64_t n = 0;
    int64_t grain = 1;
    int64_t grains = 0;  // ceil(n / grain)
    int n_threads = 1;
  };

  void WorkerLoop(int thread_id);
  static void RunChunks(Job& job, int thread_id);

  int n_threads_ = 1;
  std::vector<std::thread> workers_;
  // Serializes concurrent ParallelFor callers (not the hot path). jobs_ is written under it
  // but read by the workers through the atomic protocol above, so it is not GUARDED_BY.
  Mutex submit_mutex_;
  Stats stats_ GUARDED_BY(submit_mutex_);
  Job jobs_[2];

  alignas(64) std::atomic<uint32_t> generation_{0};  // id of the latest job; workers wait on it
  alignas(64) std::atomic<int> sleepers_{0};         // workers blocked in generation_.wait
  std::atomic<bool> stop_{false};
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
