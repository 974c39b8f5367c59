// The radix tree as an observer sees it (Engine::GetRadixTree; the web page's tree view and
// GET /radix_tree): a size-limited copy of the tree's shape and counters, taken on the
// scheduler thread and handed over by value. Plain data; nothing of the cache shows here.
//
// Size limit. A tree larger than max_nodes is shown best-first: nodes whose subtrees hold the
// most tokens are expanded first; a node left unexpanded stands for its whole subtree
// (collapsed, with the subtree's totals), and the smaller children of a node with too many
// to show are merged into one "others" entry under it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace radixlm {

struct RadixTreeQuery {
  int32_t max_nodes = 500;      // entries in the answer, root included (≥ 1)
  int32_t snippet_tokens = 16;  // leading ids of each node's run copied for its text snippet
  // Non-zero: when the tree's version is still this, answer `unchanged` with the counters
  // only (no entries, no evictions): an O(1) answer for pollers.
  uint64_t if_version_not = 0;
  // Only the O(1) counters, whatever the version (pollers between their full snapshots).
  bool counters_only = false;
};

struct RadixTreeEntry {
  enum class Kind { kNode, kOthers };
  Kind kind = Kind::kNode;
  uint64_t id = 0;            // the node's id (kOthers: 0)
  int32_t parent = -1;        // index of its parent entry (parents come first); -1: the root
  int64_t tokens = 0;         // of its own run (kOthers: 0)
  int64_t prefix_tokens = 0;  // of the path root→node, this run included
  int32_t lock_ref = 0;       // requests (and pins) holding it
  uint64_t hit_count = 0;     // matches that walked through it
  uint64_t last_access = 0;   // the cache's access stamp (logical clock)
  int32_t priority = 0;
  int64_t children = 0;    // its children in the tree (shown or not)
  bool collapsed = false;  // stands for its whole subtree (children not shown)
  // The subtree (this node and everything below; kOthers: the merged siblings' subtrees).
  int64_t subtree_nodes = 0;
  int64_t subtree_tokens = 0;
  uint64_t subtree_hits = 0;
  int32_t subtree_max_lock = 0;
  int64_t merged_subtrees = 0;       // kOthers: how many sibling subtrees it merges
  std::vector<int32_t> snippet_ids;  // the run's first snippet_tokens ids
  int32_t lora_namespace = 0;        // the LoRA namespace its run is keyed in (0: base)
  // The LoRA adapter of that namespace by name ("" for the base model, namespace 0); an
  // adapter unloaded since, whose KV stays until evicted, is "NAME (unloaded)".
  std::string lora_adapter;
};

struct RadixTreeEvictionEntry {
  uint64_t seq = 0;  // 1, 2, ... since the engine started
  uint64_t node_id = 0;
  uint64_t parent_id = 0;
  int64_t tokens = 0;
  uint64_t hit_count = 0;
  std::vector<int32_t> snippet_ids;
};

struct RadixTreeSnapshot {
  bool unchanged = false;      // the query's if_version_not matched: entries, evictions empty
  bool counters_only = false;  // as asked: entries, evictions empty
  double build_seconds = 0;    // scheduler-thread time this snapshot took
  uint64_t version = 0;        // changes whenever the tree or its counters change
  uint64_t clock = 0;          // the cache's logical clock now (compare last_access)
  bool disabled = false;       // --disable-radix-cache
  int32_t page_size = 1;
  int64_t num_nodes = 0;  // in the tree, root excluded
  int64_t total_tokens = 0;
  int64_t evictable_tokens = 0;
  int64_t protected_tokens = 0;
  int64_t pool_size = 0;  // usable KV token slots
  int64_t pool_free = 0;
  int64_t cache_hit_tokens = 0;  // cumulative, as EngineStats
  int64_t prefill_tokens = 0;    // cumulative
  uint64_t evictions_total = 0;  // nodes evicted since start
  int64_t evicted_tokens_total = 0;
  bool truncated = false;                         // some nodes are collapsed or merged
  std::vector<RadixTreeEntry> entries;            // [0] is the root; parents before children
  std::vector<RadixTreeEvictionEntry> evictions;  // the most recent, oldest first
};

}  // namespace radixlm
