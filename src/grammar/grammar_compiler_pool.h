// GrammarCompilerPool: a few threads that run grammar compilations (GrammarCache::GetFuture's
// tasks) off the submitting and scheduler threads.
//
// Post() queues a task; a worker runs it, then calls the pool's `on_done` hook (the engine uses
// it to wake its scheduler thread). The destructor stops the workers: tasks already running
// finish, tasks not yet started are dropped (their promises break, so anyone still waiting on
// one sees std::future_error rather than blocking forever). Destroy the pool before whatever
// its tasks use (e.g. the GrammarCache).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "util/mutex.h"

namespace radixlm::grammar {

class GrammarCompilerPool {
 public:
  explicit GrammarCompilerPool(int n_threads, std::function<void()> on_done = nullptr);
  ~GrammarCompilerPool();
  GrammarCompilerPool(const GrammarCompilerPool&) = delete;
  GrammarCompilerPool& operator=(const GrammarCompilerPool&) = delete;

  void Post(std::function<void()> task);
  size_t queued() const;

 private:
  void Work();

  const std::function<void()> on_done_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace radixlm::grammar
