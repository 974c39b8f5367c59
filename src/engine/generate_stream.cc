#include "engine/generate_stream.h"

#include <cassert>

namespace radixlm {

GenerateStream::GenerateStream(std::string rid, int32_t n, bool return_logprob)
    : rid_(std::move(rid)), n_(n), return_logprob_(return_logprob) {}

void GenerateStream::Push(GenerateOutput output) {
  std::function<void()> notify;
  {
    MutexLock lock(&mu_);
    assert(finished_samples_ < n_);
    if (output.finish_reason.has_value()) ++finished_samples_;
    queue_.push_back(std::move(output));
    notify = notifier_;
  }
  cv_.notify_all();
  if (notify) notify();
}

std::optional<GenerateOutput> GenerateStream::Next() {
  MutexLock lock(&mu_);
  while (queue_.empty() && finished_samples_ != n_) lock.Wait(cv_);
  if (queue_.empty()) return std::nullopt;
  GenerateOutput out = std::move(queue_.front());
  queue_.pop_front();
  return out;
}

std::optional<GenerateOutput> GenerateStream::NextFor(std::chrono::milliseconds timeout,
                                                      bool* timed_out) {
  MutexLock lock(&mu_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (queue_.empty() && finished_samples_ != n_ && lock.WaitUntil(cv_, deadline)) {
  }
  *timed_out = queue_.empty() && finished_samples_ != n_;
  if (queue_.empty()) return std::nullopt;
  GenerateOutput out = std::move(queue_.front());
  queue_.pop_front();
  return out;
}

std::optional<GenerateOutput> GenerateStream::TryNext() {
  MutexLock lock(&mu_);
  if (queue_.empty()) return std::nullopt;
  GenerateOutput out = std::move(queue_.front());
  queue_.pop_front();
  return out;
}

std::vector<GenerateResult> GenerateStream::Collect() {
  std::vector<GenerateResult> results(static_cast<size_t>(n_));
  for (int32_t i = 0; i < n_; ++i) results[i].index = i;
  while (std::optional<GenerateOutput> chunk = Next()) {
    const int32_t index = chunk->index;
    results[index].Append(std::move(*chunk));
  }
  return results;
}

bool GenerateStream::ended() const {
  MutexLock lock(&mu_);
  return finished_samples_ == n_;
}

void GenerateStream::SetNotifier(std::function<void()> notifier) {
  MutexLock lock(&mu_);
  notifier_ = std::move(notifier);
}

}  // namespace radixlm
