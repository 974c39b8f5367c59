// RadixCache, sliding-window part: releasing windowed-layer KV (tombstones) and reviving it
// (SGLang's SWARadixCache). See "Sliding-window awareness" in radix_cache.h.
#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "cache/radix_cache.h"
#include "util/check.h"

namespace radixlm {

RadixCache::Node* RadixCache::ReviveSwa(Node* node, std::span<const int32_t> mine, KvPool& pool) {
  // The caller's pages with windowed KV must be a suffix of the run (a request releases its
  // window KV from the front); take that suffix, splitting the node if it starts inside.
  int64_t first = node->size();
  for (int64_t p = 0; p < node->size(); p += page_size_) {
    if (pool.HasSwa(mine[p])) {
      first = p;
      break;
    }
  }
  for (int64_t p = first; p < node->size(); p += page_size_) {
    if (!pool.HasSwa(mine[p])) return node;  // not a suffix: leave the tombstone as it is
  }
  if (first == node->size()) return node;
  if (first > 0) {
    auto it = node->parent->children.find(FirstPage(node->key));
    RADIXLM_CHECK(it != node->parent->children.end() && it->second.get() == node);
    Node* upper = SplitNode(it, first);
    node = upper->children.begin()->second.get();
    mine = mine.subspan(first);
  }
  RADIXLM_CHECK_EQ(node->swa_lock_ref, 0) << "a tombstone inside a lock's window";
  for (int64_t p = 0; p < node->size(); p += page_size_) pool.MoveSwa(mine[p], node->value[p]);
  node->swa_tombstone = false;
  swa_evictable_size_ += node->size();
  return node;
}

void RadixCache::Tombstone(Node* node, KvPool& pool) {
  RADIXLM_CHECK(!node->swa_tombstone && node->swa_lock_ref == 0)
      << "releasing windowed KV of a tombstone or of a node inside a lock's window";
  if (release_observer_) release_observer_(*node);
  pool.FreeSwa(node->value);
  node->swa_tombstone = true;
  swa_evictable_size_ -= node->size();
  DeleteTombstoneLeaves(node, pool);
}

void RadixCache::DeleteTombstoneLeaves(Node* node, KvPool& pool) {
  // A tombstone leaf can never end a match (no intact window after it): drop it.
  while (node != root_.get() && node->is_leaf() && node->swa_tombstone && node->lock_ref == 0) {
    Node* parent = node->parent;
    pool.Free(node->value);
    DeleteLeaf(node);
    node = parent;
  }
}

std::vector<RadixCache::SwaCandidate> RadixCache::SwaEvictionOrder() {
  struct Entry {
    EvictionKey key;
    int64_t depth;  // ancestors first among equals
    SwaCandidate candidate;
  };
  // Post-order: a node's distance to the nearest end point below it (the end of a leaf or of a
  // node where paths branch), where matches end; the node must keep its last window minus that.
  std::vector<Entry> entries;
  std::vector<std::pair<Node*, int64_t>> stack = {{root_.get(), 0}};
  std::vector<std::pair<Node*, int64_t>> post;  // (node, depth), parents before children
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    post.push_back({node, depth});
    for (auto& [page, child] : node->children) stack.push_back({child.get(), depth + 1});
  }
  std::unordered_map<const Node*, int64_t> to_end;
  to_end.reserve(post.size());
  for (auto it = post.rbegin(); it != post.rend(); ++it) {
    Node* node = it->first;
    int64_t dist = 0;
    if (node->children.size() == 1) {
      const Node* child = node->children.begin()->second.get();
      dist = child->size() + to_end[child];
    }
    to_end[node] = dist;
    if (node == root_.get() || node->swa_tombstone || node->swa_lock_ref > 0) continue;
    const int64_t need = std::max<int64_t>(0, sliding_window_ - dist);
    const int64_t keep = std::min(node->size(), (need + page_size_ - 1) / page_size_ * page_size_);
    entries.push_back({MakeEvictionKey(policy_, *node), it->second, {node, keep}});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.key, a.depth) < std::tie(b.key, b.depth);
  });
  std::vector<SwaCandidate> order;
  order.reserve(entries.size());
  for (const Entry& e : entries) order.push_back(e.candidate);
  return order;
}

int64_t RadixCache::EvictSwa(int64_t n_tokens, KvPool& pool) {
  if (disable_ || !swa_aware() || n_tokens <= 0) return 0;
  int64_t released = 0;
  // Pass 1: release what no match end needs: keep only the last window before each end point
  // (a leaf's end, a branch point). A split keeps the candidate as the lower (kept) part and
  // puts a new tombstone above it; only the candidate changes, so later ones stay valid.
  for (const SwaCandidate& c : SwaEvictionOrder()) {
    if (released >= n_tokens) return released;
    Node* node = c.node;
    if (node->size() <= c.keep) continue;
    if (c.keep > 0) {
      auto it = node->parent->children.find(FirstPage(node->key));
      RADIXLM_CHECK(it != node->parent->children.end() && it->second.get() == node);
      node = SplitNode(it, node->size() - c.keep);
    }
    released += node->size();
    Tombstone(node, pool);
  }
  // Pass 2: whole nodes; an unlocked leaf goes with its full KV (and the tombstone leaves
  // above it), anything else becomes a tombstone. Only the current candidate and tombstones
  // are deleted, so the pointers still to come stay valid.
  for (const SwaCandidate& c : SwaEvictionOrder()) {
    if (released >= n_tokens) return released;
    Node* node = c.node;
    released += node->size();
    if (node->is_leaf() && node->lock_ref == 0) {
      Node* parent = node->parent;
      if (release_observer_) release_observer_(*node);
      pool.Free(node->value);
      DeleteLeaf(node);
      DeleteTombstoneLeaves(parent, pool);
    } else {
      Tombstone(node, pool);
    }
  }
  return released;
}

}  // namespace radixlm
