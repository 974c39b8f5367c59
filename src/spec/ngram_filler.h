// NgramFiller: the n-gram trie (NgramCache) filled on a background thread, as SGLang's NGRAM
// worker does, so inserting token windows stays off the scheduler's critical path.
//
// The scheduler thread collects the new tokens of each request after a verify into an
// NgramWindows batch (a cheap copy: a request's new tokens plus the max_trie_depth - 1 tokens
// before them, which the new windows also span) and Submits it; the filler's thread inserts
// the batches in order. Drafting (Draft) and inserting take the same mutex, and an insertion
// holds it for at most kInsertStep new tokens of one sequence, so a draft waits briefly and
// always reads a trie in which each window is wholly counted or not at all. The mutex rather
// than a snapshot: a draft also updates the trie's LRU order, and a second copy of a trie of
// up to `capacity` nodes would double its memory.
//
// Drafts may therefore depend on timing (a window submitted just before a draft may or may not
// be in the trie yet); outputs never do, since every drafted token is verified.
//
// The queue of batches waiting is bounded by max_queued_tokens: when a new batch would exceed
// it, the oldest waiting batches are dropped (their windows never reach the trie, counted in
// Stats::dropped_tokens), so Submit never waits for the filler. Flush() waits until every batch
// submitted so far is inserted or dropped (a sync point: tests, deterministic drafting).
// The destructor stops the thread, discarding batches not yet started, and joins it.
//
// Thread-safe: every method may be called from any thread (the scheduler calls all of them
// from its own).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <span>
#include <thread>
#include <vector>

#include "spec/draft_tree.h"
#include "spec/ngram_cache.h"
#include "util/mutex.h"

namespace radixlm::spec {

// The new windows of several sequences: for each, a suffix of its tokens of which the first
// `old` were in the trie before (NgramCache::Add(tokens, old) on the suffix counts exactly the
// windows ending in its new tokens, as on the whole sequence when the suffix starts at most
// max_trie_depth - 1 tokens before the new ones).
struct NgramWindows {
  struct Sequence {
    size_t begin = 0, end = 0;  // in `tokens`
    size_t old = 0;             // tokens of [begin, end) already in the trie
  };
  std::vector<int32_t> tokens;
  std::vector<Sequence> sequences;

  // Appends the part of `all` whose windows end in all[old_len, size) (nothing if none).
  void Append(std::span<const int32_t> all, size_t old_len, int max_trie_depth);
  bool empty() const { return sequences.empty(); }
  size_t new_tokens() const;
};

class NgramFiller {
 public:
  // New tokens of one sequence inserted per hold of the trie mutex.
  static constexpr size_t kInsertStep = 64;

  struct Stats {
    int64_t submitted_tokens = 0;  // new tokens handed over
    int64_t inserted_tokens = 0;   // of those, in the trie
    int64_t dropped_tokens = 0;    // of those, dropped from a full queue
  };

  // max_queued_tokens >= 1: most new tokens waiting to be inserted.
  NgramFiller(const NgramConfig& config, size_t max_queued_tokens);
  ~NgramFiller();
  NgramFiller(const NgramFiller&) = delete;
  NgramFiller& operator=(const NgramFiller&) = delete;

  // Queues the batch for insertion (empty batches are ignored); never blocks on insertion.
  void Submit(NgramWindows&& windows);
  // NgramCache::Draft on the trie as it stands now.
  void Draft(std::span<const int32_t> tokens, int max_nodes, DraftTree* out);
  // Returns once nothing is queued or being inserted: every batch submitted before the call
  // (and any submitted meanwhile) is in the trie or was dropped.
  void Flush();
  // Holds the thread before its next insertion until Resume() (tests: to fill the queue).
  // Flush() while paused with work queued would never return.
  void Pause();
  void Resume();

  Stats stats() const;
  int64_t trie_nodes() const;
  const NgramConfig& config() const { return config_; }

 private:
  void Run();
  // Inserts one batch, taking the trie mutex per kInsertStep new tokens.
  void Insert(const NgramWindows& windows);

  const NgramConfig config_;
  const size_t max_queued_tokens_;

  mutable Mutex queue_mu_;
  std::condition_variable work_cv_;  // queue_ non-empty, stop_ or un-paused
  std::condition_variable idle_cv_;  // the queue emptied and the thread went idle
  std::deque<NgramWindows> queue_ GUARDED_BY(queue_mu_);
  size_t queued_tokens_ GUARDED_BY(queue_mu_) = 0;
  bool busy_ GUARDED_BY(queue_mu_) = false;  // the thread is inserting a batch
  bool paused_ GUARDED_BY(queue_mu_) = false;
  bool stop_ GUARDED_BY(queue_mu_) = false;
  Stats stats_ GUARDED_BY(queue_mu_);

  mutable Mutex trie_mu_;
  NgramCache trie_ GUARDED_BY(trie_mu_);

  std::thread thread_;  // last: started once everything above is constructed
};

}  // namespace radixlm::spec
