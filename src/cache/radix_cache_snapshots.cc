// RadixCache state snapshots: the ids of saved linear-layer states held at node ends (a hybrid
// model's; see "State snapshots" in radix_cache.h), their allocation and eviction.
#include <queue>
#include <vector>

#include "cache/radix_cache.h"
#include "util/check.h"

namespace radixlm {

bool RadixCache::WantsSnapshot(const Node* node) const {
  return snapshots_enabled() && !disable_ && node != nullptr && node != root_.get() &&
         node->snapshot < 0;
}

void RadixCache::AttachSnapshot(Node* node, int32_t id) {
  RADIXLM_CHECK(WantsSnapshot(node)) << "a snapshot for the root or a node that has one";
  RADIXLM_CHECK(id >= first_snapshot_id_ && id < first_snapshot_id_ + snapshot_slots_)
      << "snapshot id " << id << " out of range";
  ++version_;
  node->snapshot = id;
  node->snapshot_index = static_cast<int64_t>(snapshot_nodes_.size());
  snapshot_nodes_.push_back(node);
}

void RadixCache::FreeSnapshot(int32_t id) {
  RADIXLM_CHECK(id >= first_snapshot_id_ && id < first_snapshot_id_ + snapshot_slots_)
      << "snapshot id " << id << " out of range";
  free_snapshots_.push_back(id);
  RADIXLM_DCHECK_LE(static_cast<int64_t>(free_snapshots_.size()), snapshot_slots_);
}

void RadixCache::DetachSnapshot(Node* node) {
  RADIXLM_CHECK(node->snapshot_index >= 0 &&
                snapshot_nodes_[node->snapshot_index] == node)
      << "a snapshot missing from the snapshot list";
  Node* last = snapshot_nodes_.back();
  snapshot_nodes_[node->snapshot_index] = last;
  last->snapshot_index = node->snapshot_index;
  snapshot_nodes_.pop_back();
  free_snapshots_.push_back(node->snapshot);
  node->snapshot = -1;
  node->snapshot_index = -1;
  ++version_;
}

std::optional<int32_t> RadixCache::AllocateSnapshot(KvPool& pool) {
  if (!snapshots_enabled() || disable_) return std::nullopt;
  if (free_snapshots_.empty()) EvictSnapshots(1, pool);
  if (free_snapshots_.empty()) return std::nullopt;
  const int32_t id = free_snapshots_.back();
  free_snapshots_.pop_back();
  return id;
}

int64_t RadixCache::protected_snapshots() const {
  int64_t n = 0;
  for (const Node* node : snapshot_nodes_) n += node->end_lock_ref > 0 ? 1 : 0;
  return n;
}

int64_t RadixCache::EvictSnapshots(int64_t n, KvPool& pool) {
  if (!snapshots_enabled() || n <= 0) return 0;
  struct Candidate {
    EvictionKey key;
    Node* node;
    bool operator>(const Candidate& other) const { return key > other.key; }
  };
  std::vector<Candidate> storage;
  for (Node* node : snapshot_nodes_) {
    if (node->end_lock_ref == 0) storage.push_back({MakeEvictionKey(policy_, *node), node});
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap(std::greater<>(),
                                                                              std::move(storage));
  int64_t freed = 0;
  while (freed < n && !heap.empty()) {
    Node* node = heap.top().node;
    heap.pop();
    // Only snapshot-less leaves are deleted below, never a candidate still in the heap.
    RADIXLM_CHECK(node->snapshot >= 0 && node->end_lock_ref == 0) << "evicting a held snapshot";
    if (snapshot_observer_) snapshot_observer_(*node);
    DetachSnapshot(node);
    ++freed;
    // A leaf without a snapshot can no longer be resumed from: delete it and every unlocked,
    // snapshot-less leaf that leaves above it.
    while (node != root_.get() && node->is_leaf() && node->lock_ref == 0 && node->snapshot < 0) {
      Node* parent = node->parent;
      if (release_observer_) release_observer_(*node);
      pool.Free(node->value);
      RecordEviction(*node);
      DeleteLeaf(node);
      node = parent;
    }
  }
  return freed;
}

}  // namespace radixlm
