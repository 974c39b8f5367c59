// GenerateStream: the thread-safe channel through which one submitted request's outputs reach
// its caller (the handle Engine::Submit returns).
//
// The scheduler thread pushes chunks (GenerateOutput, one sample's deltas) as they are
// produced; any thread may consume them with Next / NextFor / TryNext, or wait for everything
// with Collect. The stream ends once every one of the n samples has sent its final chunk.
// An optional notifier is called (on the scheduler thread, without the stream's lock held)
// after each push, for event-driven consumers such as an HTTP server; it must be quick and must
// not block.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/api.h"
#include "util/mutex.h"

namespace radixlm {

class GenerateStream {
 public:
  GenerateStream(std::string rid, int32_t n, bool return_logprob);

  const std::string& rid() const { return rid_; }
  int32_t n() const { return n_; }
  bool return_logprob() const { return return_logprob_; }

  // The next chunk, blocking; nullopt once the stream has ended and everything was taken.
  std::optional<GenerateOutput> Next();
  // As Next, giving up after `timeout` (nullopt then, with *timed_out = true).
  std::optional<GenerateOutput> NextFor(std::chrono::milliseconds timeout, bool* timed_out);
  // A chunk if one is ready.
  std::optional<GenerateOutput> TryNext();
  // Takes every remaining chunk (blocking until the end) and returns one result per sample.
  std::vector<GenerateResult> Collect();

  bool ended() const;  // every sample has sent its final chunk
  void SetNotifier(std::function<void()> notifier);

  // --- producer side (the engine's scheduler thread) ---
  void Push(GenerateOutput output);

 private:
  const std::string rid_;
  const int32_t n_;
  const bool return_logprob_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::deque<GenerateOutput> queue_ GUARDED_BY(mu_);
  int32_t finished_samples_ GUARDED_BY(mu_) = 0;
  std::function<void()> notifier_ GUARDED_BY(mu_);
};

}  // namespace radixlm
