#include "grammar/grammar_compiler_pool.h"

#include <algorithm>

namespace radixlm::grammar {

GrammarCompilerPool::GrammarCompilerPool(int n_threads, std::function<void()> on_done)
    : on_done_(std::move(on_done)) {
  n_threads = std::max(n_threads, 1);
  threads_.reserve(static_cast<size_t>(n_threads));
  for (int i = 0; i < n_threads; ++i) threads_.emplace_back([this] { Work(); });
}

GrammarCompilerPool::~GrammarCompilerPool() {
  std::deque<std::function<void()>> dropped;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    dropped.swap(tasks_);
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  // `dropped` is destroyed here, outside the lock: breaking the tasks' promises.
}

void GrammarCompilerPool::Post(std::function<void()> task) {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;  // dropped: its promise breaks
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

size_t GrammarCompilerPool::queued() const {
  MutexLock lock(&mu_);
  return tasks_.size();
}

void GrammarCompilerPool::Work() {
  for (;;) {
    std::function<void()> task;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && tasks_.empty()) lock.Wait(cv_);
      if (stopping_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
    task = nullptr;
    if (on_done_) on_done_();
  }
}

}  // namespace radixlm::grammar
