// Mutex and MutexLock: std::mutex and a scoped lock, annotated for clang's thread-safety
// analysis (util/thread_annotations.h), so fields can be declared GUARDED_BY(mu_).
//
//   Mutex mu_;
//   std::condition_variable cv_;
//   std::deque<Task> queue_ GUARDED_BY(mu_);
//
//   void Push(Task t) {
//     { MutexLock lock(&mu_); queue_.push_back(std::move(t)); }
//     cv_.notify_one();
//   }
//   Task Pop() {
//     MutexLock lock(&mu_);
//     while (queue_.empty()) lock.Wait(cv_);  // the condition is read holding mu_
//     ...
//   }
//
// Waits are written as explicit loops over the condition rather than with a predicate lambda:
// the analysis then sees the guarded reads happen with the lock held.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "util/thread_annotations.h"

namespace radixlm {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex from construction to destruction.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : lock_(mu->mu_) {}
  ~MutexLock() RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // Releases the mutex while blocked on cv and holds it again on return. Wake-ups may be
  // spurious: call it in a loop over the condition waited for.
  void Wait(std::condition_variable& cv) { cv.wait(lock_); }

  // As Wait, but returns false once `deadline` has passed (the mutex is held again either way).
  template <typename Clock, typename Duration>
  bool WaitUntil(std::condition_variable& cv,
                 const std::chrono::time_point<Clock, Duration>& deadline) {
    return cv.wait_until(lock_, deadline) == std::cv_status::no_timeout;
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace radixlm
