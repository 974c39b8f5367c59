// NgramCache: the n-gram source of speculative drafts (SGLang's NGRAM algorithm).
//
// One trie over the token windows of every request the scheduler has seen, prompts and outputs
// alike: each path from the root is a token sequence of at most max_trie_depth tokens that
// occurred somewhere, and each node counts how often its sequence occurred (each occurrence
// once, however often a request's tokens are re-added as they grow). The trie is bounded by
// `capacity` nodes; past it, the least recently used leaves go first (a node is used when a
// window passes through it or a draft reads it; parents are always at least as recent as their
// children, so the least recent node is a leaf).
//
// Drafting for a request ending with tokens [..., t_n] (t_n is the root of the draft): the
// longest suffix that is a path in the trie with continuations is found — at most
// max_trie_depth - (num_draft_tokens - 1) tokens long, so the path leaves room for a draft as
// deep as the budget — and
// the continuations below that path are laid out as a DraftTree of at most num_draft_tokens
// nodes (root included):
//   BFS:  level by level, each node's children in decreasing count; the first level takes up to
//         `breadth` children, deeper levels min_bfs_breadth per node, where breadth falls from
//         max_bfs_breadth for a 1-token match to min_bfs_breadth for the longest matches (a long
//         match predicts one continuation; a short one is worth hedging).
//   PROB: best first by the estimated probability of the whole path (the product of
//         count(child) / count(parent) along it), so budget goes where acceptance is likeliest.
// Not thread-safe: NgramFiller (spec/ngram_filler.h) owns the scheduler's and serializes its
// background insertions with drafting under one mutex.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "spec/draft_tree.h"
#include "util/status.h"

namespace radixlm::spec {

enum class NgramMatchType { kBfs, kProb };

// Flag names are SGLang's: --speculative-num-draft-tokens, --speculative-ngram-*.
struct NgramConfig {
  int num_draft_tokens = 12;  // draft tree size, root included; 2..DraftTree::kMaxNodes
  int min_bfs_breadth = 1;
  int max_bfs_breadth = 10;
  int max_trie_depth = 18;
  int64_t capacity = 1'000'000;  // trie nodes
  NgramMatchType match_type = NgramMatchType::kBfs;

  Status Validate() const;
};

StatusOr<NgramMatchType> ParseNgramMatchType(const std::string& name);  // "BFS" | "PROB"

class NgramCache {
 public:
  explicit NgramCache(const NgramConfig& config);

  // Counts the windows of `tokens` that end in tokens[old_len, size): call it with the whole
  // sequence each time it grows (old_len: its length at the previous call, 0 the first time).
  void Add(std::span<const int32_t> tokens, size_t old_len);

  // The draft for a sequence ending with `tokens` (non-empty); at most max_nodes nodes
  // (including the root, tokens.back()). Only the root when nothing matches.
  void Draft(std::span<const int32_t> tokens, int max_nodes, DraftTree* out);

  int64_t nodes() const { return live_nodes_; }
  const NgramConfig& config() const { return config_; }

 private:
  struct Node {
    int32_t token = -1;
    int32_t parent = -1;
    int64_t count = 0;
    std::vector<int32_t> children;
    int32_t lru_prev = -1, lru_next = -1;  // toward more / less recent
  };
  static constexpr int32_t kRoot = 0;

  int32_t FindChild(int32_t node, int32_t token) const;
  int32_t GetOrAddChild(int32_t node, int32_t token);
  void Touch(int32_t node);  // most recent
  void Unlink(int32_t node);
  void EvictToCapacity();
  // The trie node of the longest suffix of `context` (at most `longest` tokens) that has
  // continuations, and the suffix's length (0 and -1: none).
  int32_t MatchSuffix(std::span<const int32_t> context, int longest, int* length);
  void DraftBfs(int32_t from, int match_len, int max_nodes, DraftTree* out);
  void DraftProb(int32_t from, int max_nodes, DraftTree* out);

  static uint64_t Key(int32_t node, int32_t token) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(node)) << 32) |
           static_cast<uint32_t>(token);
  }

  NgramConfig config_;
  std::vector<Node> nodes_;  // index 0: the root
  std::vector<int32_t> free_;
  std::unordered_map<uint64_t, int32_t> child_;  // (parent, token) -> node
  int32_t lru_head_ = -1, lru_tail_ = -1;        // most / least recent (the root is not listed)
  int64_t live_nodes_ = 0;                       // excluding the root
  std::vector<int32_t> path_;                    // scratch
};

}  // namespace radixlm::spec
