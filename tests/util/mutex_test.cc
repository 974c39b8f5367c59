// Mutex / MutexLock: mutual exclusion, waits that release the lock, deadlines.
#include "util/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <thread>
#include <vector>

namespace radixlm {
namespace {

class Counter {
 public:
  void Add() {
    MutexLock lock(&mu_);
    ++count_;
    cv_.notify_all();
  }
  // Blocks until the count reaches n.
  void AwaitAtLeast(int n) {
    MutexLock lock(&mu_);
    while (count_ < n) lock.Wait(cv_);
  }
  // False when the deadline passes first.
  bool AwaitAtLeastFor(int n, std::chrono::milliseconds timeout) {
    MutexLock lock(&mu_);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (count_ < n) {
      if (!lock.WaitUntil(cv_, deadline)) return count_ >= n;
    }
    return true;
  }
  int count() {
    MutexLock lock(&mu_);
    return count_;
  }

 private:
  Mutex mu_;
  std::condition_variable cv_;
  int count_ GUARDED_BY(mu_) = 0;
};

TEST(Mutex, ConcurrentAddsAreNotLost) {
  Counter counter;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) counter.Add();
    });
  }
  counter.AwaitAtLeast(40000);  // returns only once every add is in: Wait releases the lock
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counter.count(), 40000);
}

TEST(Mutex, WaitUntilReturnsFalseAtTheDeadline) {
  Counter counter;
  EXPECT_FALSE(counter.AwaitAtLeastFor(1, std::chrono::milliseconds(5)));
  counter.Add();
  EXPECT_TRUE(counter.AwaitAtLeastFor(1, std::chrono::milliseconds(5)));
}

}  // namespace
}  // namespace radixlm
