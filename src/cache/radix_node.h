// RadixNode: one node of the RadixCache tree, and the hash map that keys a node's children by
// the first page of their key run.
//
// A node owns a run of token ids (key) and the KV slot of each of them (value); the tokens of
// the path root→node, concatenated, form the prefix the node stands for. The root has an empty
// run. Nodes are owned by their parent's children map (the root by the cache), so a Node*
// stays valid until that node is evicted or the cache is reset: splits keep the deeper node
// (the one a request may hold) and insert a new node above it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

namespace radixlm {

// Hash of a page of token ids. Transparent: lookups take a span and allocate nothing.
struct PageHash {
  using is_transparent = void;
  size_t operator()(std::span<const int32_t> page) const;
};

struct PageEqual {
  using is_transparent = void;
  bool operator()(std::span<const int32_t> a, std::span<const int32_t> b) const;
};

struct RadixNode;
// First page of the child's key (page_size ids; one id when page_size == 1) → child.
using RadixChildMap =
    std::unordered_map<std::vector<int32_t>, std::unique_ptr<RadixNode>, PageHash, PageEqual>;

struct RadixNode {
  std::vector<int32_t> key;    // token ids of this run; a multiple of page_size, non-empty
  std::vector<int32_t> value;  // KV slot of each token in key (same length)
  RadixNode* parent = nullptr;
  RadixChildMap children;

  // Requests holding a lock on a path through this node. > 0: protected, never evicted.
  // A node's lock_ref is ≥ each child's (the root excepted: it is never locked nor evicted).
  int32_t lock_ref = 0;
  uint64_t last_access_time = 0;  // logical clock at the last match / insert through it
  uint64_t creation_time = 0;     // logical clock when its tokens entered the tree
  uint64_t hit_count = 0;         // MatchPrefix calls that walked through it (LFU)
  int32_t priority = 0;           // max priority of requests that inserted it (higher = keep)
  uint64_t id = 0;                // unique, increasing in creation order; the final tie-break

  // Sliding-window layers (an SWA-aware cache only). swa_tombstone: this run's windowed-layer
  // KV was released (its full-layer KV is still held). swa_lock_ref counts the locks whose
  // window covers this node (a subset of lock_ref). swa_lock_id marks the topmost node of such
  // windows, so an unlock stops where its lock stopped even after splits (SGLang's swa_uuid).
  bool swa_tombstone = false;
  int32_t swa_lock_ref = 0;
  uint64_t swa_lock_id = 0;

  int64_t leaf_index = -1;  // position in the cache's leaf list; -1 when not a leaf / root

  // Recurrent-state snapshot (a hybrid model's; RadixCache "State snapshots"): the id of the
  // linear layers' state after this node's last token, -1: none. Owned by the tree.
  int32_t snapshot = -1;
  int64_t snapshot_index = -1;  // position in the cache's snapshot list; -1 when none
  // Locks whose path ends at this node (IncLockRef(this)); ≤ lock_ref. While > 0 its snapshot
  // is kept (a running request's prefix end, a pin); snapshots above it may go.
  int32_t end_lock_ref = 0;

  bool is_leaf() const { return children.empty(); }
  int64_t size() const { return static_cast<int64_t>(key.size()); }
};

}  // namespace radixlm
