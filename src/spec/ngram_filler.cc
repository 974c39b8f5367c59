#include "spec/ngram_filler.h"

#include <algorithm>
#include <utility>

namespace radixlm::spec {

void NgramWindows::Append(std::span<const int32_t> all, size_t old_len, int max_trie_depth) {
  if (old_len >= all.size()) return;
  // The new windows start at old_len + 1 - max_trie_depth at the earliest.
  const size_t context = static_cast<size_t>(std::max(max_trie_depth, 1)) - 1;
  const size_t start = old_len > context ? old_len - context : 0;
  const size_t begin = tokens.size();
  tokens.insert(tokens.end(), all.begin() + static_cast<std::ptrdiff_t>(start), all.end());
  sequences.push_back({begin, tokens.size(), old_len - start});
}

size_t NgramWindows::new_tokens() const {
  size_t n = 0;
  for (const Sequence& s : sequences) n += s.end - s.begin - s.old;
  return n;
}

NgramFiller::NgramFiller(const NgramConfig& config, size_t max_queued_tokens)
    : config_(config),
      max_queued_tokens_(std::max<size_t>(max_queued_tokens, 1)),
      trie_(config),
      thread_([this] { Run(); }) {}

NgramFiller::~NgramFiller() {
  {
    MutexLock lock(&queue_mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  thread_.join();
}

void NgramFiller::Submit(NgramWindows&& windows) {
  if (windows.empty()) return;
  const size_t n = windows.new_tokens();
  {
    MutexLock lock(&queue_mu_);
    if (stop_) return;
    stats_.submitted_tokens += static_cast<int64_t>(n);
    // Oldest first, until the new batch fits (a batch larger than the bound is queued alone).
    while (!queue_.empty() && queued_tokens_ + n > max_queued_tokens_) {
      const size_t dropped = queue_.front().new_tokens();
      queued_tokens_ -= dropped;
      stats_.dropped_tokens += static_cast<int64_t>(dropped);
      queue_.pop_front();
    }
    queue_.push_back(std::move(windows));
    queued_tokens_ += n;
  }
  work_cv_.notify_one();
}

void NgramFiller::Draft(std::span<const int32_t> tokens, int max_nodes, DraftTree* out) {
  MutexLock lock(&trie_mu_);
  trie_.Draft(tokens, max_nodes, out);
}

void NgramFiller::Flush() {
  MutexLock lock(&queue_mu_);
  while (!queue_.empty() || busy_) lock.Wait(idle_cv_);
}

void NgramFiller::Pause() {
  MutexLock lock(&queue_mu_);
  paused_ = true;
}

void NgramFiller::Resume() {
  {
    MutexLock lock(&queue_mu_);
    paused_ = false;
  }
  work_cv_.notify_all();
}

NgramFiller::Stats NgramFiller::stats() const {
  MutexLock lock(&queue_mu_);
  return stats_;
}

int64_t NgramFiller::trie_nodes() const {
  MutexLock lock(&trie_mu_);
  return trie_.nodes();
}

void NgramFiller::Run() {
  while (true) {
    NgramWindows batch;
    {
      MutexLock lock(&queue_mu_);
      while (!stop_ && (queue_.empty() || paused_)) lock.Wait(work_cv_);
      if (stop_) return;
      batch = std::move(queue_.front());
      queue_.pop_front();
      queued_tokens_ -= batch.new_tokens();
      busy_ = true;
    }
    Insert(batch);
    bool idle;
    {
      MutexLock lock(&queue_mu_);
      busy_ = false;
      stats_.inserted_tokens += static_cast<int64_t>(batch.new_tokens());
      idle = queue_.empty();
    }
    if (idle) idle_cv_.notify_all();
  }
}

void NgramFiller::Insert(const NgramWindows& windows) {
  const std::span<const int32_t> all(windows.tokens);
  for (const NgramWindows::Sequence& s : windows.sequences) {
    const std::span<const int32_t> seq = all.subspan(s.begin, s.end - s.begin);
    // Adding a sequence in steps counts the same windows as adding it at once.
    for (size_t old = s.old; old < seq.size();) {
      const size_t next = std::min(seq.size(), old + kInsertStep);
      {
        MutexLock lock(&trie_mu_);
        trie_.Add(seq.first(next), old);
      }
      old = next;
    }
  }
}

}  // namespace radixlm::spec
