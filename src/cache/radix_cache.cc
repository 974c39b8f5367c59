// RadixCache core: match, insert, split, locks, eviction. Request helpers are in
// radix_cache_requests.cc, printing and invariant checks in radix_cache_debug.cc.
#include "cache/radix_cache.h"

#include <algorithm>
#include <cstring>
#include <queue>
#include <utility>

#include "util/check.h"

namespace radixlm {

namespace {

// Common prefix length of a[0, n) and b[0, n): memcmp over 64-id chunks (vectorized by libc),
// then a scalar scan of the chunk that differs.
int64_t CommonPrefixLength(const int32_t* a, const int32_t* b, int64_t n) {
  constexpr int64_t kChunk = 64;
  int64_t i = 0;
  while (i + kChunk <= n && std::memcmp(a + i, b + i, kChunk * sizeof(int32_t)) == 0) {
    i += kChunk;
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

RadixCache::RadixCache(RadixCacheConfig config)
    : page_size_(config.page_size),
      disable_(config.disable),
      policy_(config.eviction_policy),
      clock_(std::move(config.clock)),
      sliding_window_(config.sliding_window),
      snapshot_slots_(config.snapshot_slots),
      first_snapshot_id_(config.first_snapshot_id) {
  RADIXLM_CHECK_GE(page_size_, 1);
  RADIXLM_CHECK_GE(sliding_window_, 0);
  RADIXLM_CHECK(snapshot_slots_ >= 0 && first_snapshot_id_ >= 0);
  RADIXLM_CHECK(snapshot_slots_ == 0 || sliding_window_ == 0)
      << "state snapshots in a sliding-window-aware cache";
  Reset();
}

RadixCache::~RadixCache() {
  // Tear down iteratively: the default recursive unique_ptr chain could overflow the stack on a
  // very deep tree (page_size 1, many divergent extensions).
  std::vector<std::unique_ptr<Node>> pending;
  pending.push_back(std::move(root_));
  while (!pending.empty()) {
    std::unique_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    for (auto& [page, child] : node->children) pending.push_back(std::move(child));
  }
}

void RadixCache::Reset() {
  if (root_ != nullptr) {
    std::vector<std::unique_ptr<Node>> pending;
    for (auto& [page, child] : root_->children) pending.push_back(std::move(child));
    while (!pending.empty()) {
      std::unique_ptr<Node> node = std::move(pending.back());
      pending.pop_back();
      for (auto& [page, child] : node->children) pending.push_back(std::move(child));
    }
  }
  ++version_;
  root_ = std::make_unique<Node>();
  root_->id = next_node_id_++;
  root_->lock_ref = 1;  // never evicted; lock walks stop below it
  leaves_.clear();
  evictable_size_ = 0;
  protected_size_ = 0;
  swa_evictable_size_ = 0;
  swa_protected_size_ = 0;
  num_nodes_ = 0;
  snapshot_nodes_.clear();
  free_snapshots_.clear();
  // Popped from the back: the lowest id goes first.
  for (int32_t i = snapshot_slots_ - 1; i >= 0; --i) free_snapshots_.push_back(first_snapshot_id_ + i);
}

uint64_t RadixCache::Now() { return clock_ ? clock_() : ++logical_clock_; }

int64_t RadixCache::MatchLength(std::span<const int32_t> run, std::span<const int32_t> key) const {
  const int64_t n = static_cast<int64_t>(std::min(run.size(), key.size()));
  return AlignDown(CommonPrefixLength(run.data(), key.data(), n));
}

RadixCache::MatchResult RadixCache::MatchPrefix(std::span<const int32_t> key,
                                                int32_t key_namespace) {
  return Match(NamespacedKey(key, key_namespace, &namespaced_key_), snapshots_enabled());
}

std::span<const int32_t> RadixCache::NamespacedKey(std::span<const int32_t> key,
                                                   int32_t key_namespace,
                                                   std::vector<int32_t>* scratch) {
  if (key_namespace == 0) return key;
  RADIXLM_CHECK(key_namespace > 0 && key_namespace <= kMaxKeyNamespace) << key_namespace;
  const int32_t offset = key_namespace * kKeyNamespaceStride;
  scratch->resize(key.size());
  for (size_t i = 0; i < key.size(); ++i) {
    RADIXLM_DCHECK(key[i] >= 0 && key[i] < kKeyNamespaceStride);
    (*scratch)[i] = key[i] + offset;
  }
  return *scratch;
}

RadixCache::MatchResult RadixCache::Match(std::span<const int32_t> key, bool cut_to_snapshot) {
  MatchResult result;
  result.last_node = root_.get();
  if (disable_) return result;
  key = key.first(AlignDown(static_cast<int64_t>(key.size())));
  if (key.empty()) return result;

  ++version_;
  const uint64_t now = Now();
  Node* node = root_.get();
  node->last_access_time = now;
  result.slots.reserve(key.size());
  // SWA-aware: tokens with windowed KV since the last tombstone (unbounded from the root), and
  // the deepest node boundary whose preceding window is intact.
  constexpr int64_t kFromRoot = INT64_MAX;
  int64_t live_run = kFromRoot;
  size_t best_len = 0;
  Node* best = node;
  size_t snapshot_len = 0;  // the deepest node walked that holds a state snapshot
  Node* snapshot_node = node;
  while (!key.empty()) {
    auto it = node->children.find(FirstPage(key));
    if (it == node->children.end()) break;
    Node* child = it->second.get();
    if (swa_aware() && child->swa_tombstone) {
      if (live_run >= sliding_window_) {
        best_len = result.slots.size();
        best = node;
      }
      live_run = 0;
    }
    const int64_t len = MatchLength(child->key, key);
    RADIXLM_DCHECK_GE(len, page_size_);  // the first page matched through the map
    // Only the matched part is stamped: the unmatched lower half of a split keeps its age.
    node = len < child->size() ? SplitNode(it, len) : child;
    node->last_access_time = now;
    ++node->hit_count;
    result.slots.insert(result.slots.end(), node->value.begin(), node->value.end());
    if (!node->swa_tombstone && live_run != kFromRoot) live_run += node->size();
    if (node->snapshot >= 0) {
      snapshot_len = result.slots.size();
      snapshot_node = node;
    }
    if (node != child) break;
    key = key.subspan(len);
  }
  if (!swa_aware() || live_run >= sliding_window_) {
    best_len = result.slots.size();
    best = node;
  }
  result.kv_match = static_cast<int64_t>(best_len);
  if (cut_to_snapshot) {
    best_len = snapshot_len;
    best = snapshot_node;
  }
  result.slots.resize(best_len);
  result.last_node = best;
  return result;
}

RadixCache::Node* RadixCache::SplitNode(RadixChildMap::iterator it, int64_t split_len) {
  Node* child = it->second.get();
  RADIXLM_CHECK(split_len > 0 && split_len < child->size() && split_len % page_size_ == 0)
      << "split at " << split_len << " of a node of " << child->size();
  auto upper = std::make_unique<Node>();
  upper->id = next_node_id_++;
  upper->parent = child->parent;
  upper->lock_ref = child->lock_ref;  // same requests hold both halves; sizes unchanged
  upper->last_access_time = child->last_access_time;
  upper->creation_time = child->creation_time;
  upper->hit_count = child->hit_count;
  upper->priority = child->priority;
  upper->swa_tombstone = child->swa_tombstone;
  upper->swa_lock_ref = child->swa_lock_ref;
  // The top of a lock's window moves to the upper half, which every such lock also holds.
  upper->swa_lock_id = child->swa_lock_id;
  child->swa_lock_id = 0;
  upper->key.assign(child->key.begin(), child->key.begin() + split_len);
  upper->value.assign(child->value.begin(), child->value.begin() + split_len);
  child->key.erase(child->key.begin(), child->key.begin() + split_len);
  child->value.erase(child->value.begin(), child->value.begin() + split_len);
  child->parent = upper.get();

  Node* upper_raw = upper.get();
  std::unique_ptr<Node> owned_child = std::move(it->second);
  it->second = std::move(upper);  // same first page: the parent's map key stays valid
  std::span<const int32_t> child_key(owned_child->key);
  upper_raw->children.emplace(
      std::vector<int32_t>(child_key.begin(), child_key.begin() + page_size_),
      std::move(owned_child));
  ++num_nodes_;
  return upper_raw;
}

RadixCache::Node* RadixCache::AddLeaf(Node* parent, std::span<const int32_t> key,
                                      std::span<const int32_t> slots, int32_t priority,
                                      uint64_t now, bool swa_tombstone) {
  auto leaf = std::make_unique<Node>();
  leaf->id = next_node_id_++;
  leaf->parent = parent;
  leaf->key.assign(key.begin(), key.end());
  leaf->value.assign(slots.begin(), slots.end());
  leaf->last_access_time = now;
  leaf->creation_time = now;
  leaf->priority = priority;
  leaf->swa_tombstone = swa_tombstone;
  Node* raw = leaf.get();
  if (parent != root_.get() && parent->is_leaf()) LeafListRemove(parent);
  const std::span<const int32_t> page = FirstPage(key);
  parent->children.emplace(std::vector<int32_t>(page.begin(), page.end()), std::move(leaf));
  LeafListAdd(raw);
  evictable_size_ += raw->size();
  if (swa_aware() && !swa_tombstone) swa_evictable_size_ += raw->size();
  ++num_nodes_;
  return raw;
}

size_t RadixCache::Insert(std::span<const int32_t> key, std::span<const int32_t> slots,
                          int32_t priority, KvPool* pool, Node** end_node) {
  RADIXLM_CHECK_EQ(key.size(), slots.size());
  if (end_node != nullptr) *end_node = root_.get();
  const int64_t aligned = AlignDown(static_cast<int64_t>(key.size()));
  if (disable_) return static_cast<size_t>(aligned);
  key = key.first(aligned);
  slots = slots.first(aligned);
  if (key.empty()) return 0;

  ++version_;
  const uint64_t now = Now();
  Node* node = root_.get();
  node->last_access_time = now;
  int64_t present = 0;
  while (!key.empty()) {
    auto it = node->children.find(FirstPage(key));
    if (it == node->children.end()) break;
    Node* child = it->second.get();
    const int64_t len = MatchLength(child->key, key);
    const std::span<const int32_t> mine = slots.first(len);
    present += len;
    key = key.subspan(len);
    slots = slots.subspan(len);
    // A split leaves the upper node with exactly the matched part; the rest of key (if any)
    // differs from the lower half at its first page, so the loop ends at the next find.
    node = len < child->size() ? SplitNode(it, len) : child;
    node->last_access_time = now;
    node->priority = std::max(node->priority, priority);
    if (swa_aware() && pool != nullptr && node->swa_tombstone) node = ReviveSwa(node, mine, *pool);
  }
  // The new tail, as alternating runs with and without windowed KV (SWA-aware with a pool).
  while (!key.empty()) {
    int64_t run = static_cast<int64_t>(key.size());
    bool tombstone = false;
    if (swa_aware() && pool != nullptr) {
      tombstone = !pool->HasSwa(slots[0]);
      run = page_size_;
      while (run < static_cast<int64_t>(key.size()) && pool->HasSwa(slots[run]) != tombstone) {
        run += page_size_;
      }
    }
    node = AddLeaf(node, key.first(run), slots.first(run), priority, now, tombstone);
    key = key.subspan(run);
    slots = slots.subspan(run);
  }
  if (end_node != nullptr) *end_node = node;
  return static_cast<size_t>(present);
}

int64_t RadixCache::IncLockRef(Node* node, uint64_t* swa_lock_id) {
  if (swa_lock_id != nullptr) *swa_lock_id = 0;
  if (disable_) return 0;
  RADIXLM_CHECK(node != nullptr);
  ++version_;
  int64_t delta = 0;
  int64_t window_covered = swa_aware() ? 0 : INT64_MAX;
  Node* const end = node;  // (a split below keeps it the lower, deeper node)
  for (; node != root_.get(); node = node->parent) {
    if (window_covered < sliding_window_) {
      // The window starts inside this node: split there so only its tail is window-locked
      // (the deeper half keeps this node's identity and the locks already on it).
      const int64_t need =
          (sliding_window_ - window_covered + page_size_ - 1) / page_size_ * page_size_;
      if (node->size() > need) {
        auto it = node->parent->children.find(FirstPage(node->key));
        RADIXLM_CHECK(it != node->parent->children.end() && it->second.get() == node);
        SplitNode(it, node->size() - need);
      }
    }
    if (node->lock_ref == 0) {
      evictable_size_ -= node->size();
      protected_size_ += node->size();
      delta -= node->size();
    }
    ++node->lock_ref;
    if (window_covered >= sliding_window_) continue;
    // Matches end only where the window before them is intact (MatchPrefix).
    RADIXLM_CHECK(!node->swa_tombstone) << "locking a window whose windowed KV was released";
    if (node->swa_lock_ref == 0) {
      swa_evictable_size_ -= node->size();
      swa_protected_size_ += node->size();
    }
    ++node->swa_lock_ref;
    window_covered += node->size();
    if (window_covered >= sliding_window_) {
      if (node->swa_lock_id == 0) node->swa_lock_id = ++next_swa_lock_id_;
      if (swa_lock_id != nullptr) *swa_lock_id = node->swa_lock_id;
    }
  }
  ++end->end_lock_ref;
  return delta;
}

int64_t RadixCache::DecLockRef(Node* node, uint64_t swa_lock_id) {
  if (disable_) return 0;
  RADIXLM_CHECK(node != nullptr);
  ++version_;
  RADIXLM_CHECK_GT(node->end_lock_ref, 0) << "DecLockRef without a matching IncLockRef";
  --node->end_lock_ref;
  int64_t delta = 0;
  bool in_window = swa_aware();
  for (; node != root_.get(); node = node->parent) {
    RADIXLM_CHECK_GT(node->lock_ref, 0) << "DecLockRef without a matching IncLockRef";
    if (node->lock_ref == 1) {
      evictable_size_ += node->size();
      protected_size_ -= node->size();
      delta += node->size();
    }
    --node->lock_ref;
    if (!in_window) continue;
    RADIXLM_CHECK_GT(node->swa_lock_ref, 0) << "DecLockRef with a wrong swa_lock_id";
    if (node->swa_lock_ref == 1) {
      swa_evictable_size_ += node->size();
      swa_protected_size_ -= node->size();
    }
    --node->swa_lock_ref;
    if (swa_lock_id != 0 && node->swa_lock_id == swa_lock_id) in_window = false;
  }
  return delta;
}

void RadixCache::LeafListAdd(Node* node) {
  RADIXLM_CHECK_LT(node->leaf_index, 0) << "a node listed twice as a leaf";
  node->leaf_index = static_cast<int64_t>(leaves_.size());
  leaves_.push_back(node);
}

void RadixCache::LeafListRemove(Node* node) {
  RADIXLM_CHECK(node->leaf_index >= 0 && leaves_[node->leaf_index] == node)
      << "a leaf missing from the leaf list";
  Node* last = leaves_.back();
  leaves_[node->leaf_index] = last;
  last->leaf_index = node->leaf_index;
  leaves_.pop_back();
  node->leaf_index = -1;
}

void RadixCache::DeleteLeaf(Node* leaf) {
  RADIXLM_CHECK(leaf != root_.get() && leaf->is_leaf() && leaf->lock_ref == 0)
      << "deleting the root, an inner node or a locked leaf";
  Node* parent = leaf->parent;
  LeafListRemove(leaf);
  if (leaf->snapshot >= 0) DetachSnapshot(leaf);
  evictable_size_ -= leaf->size();
  if (swa_aware() && !leaf->swa_tombstone) swa_evictable_size_ -= leaf->size();
  --num_nodes_;
  auto it = parent->children.find(FirstPage(leaf->key));
  RADIXLM_CHECK(it != parent->children.end() && it->second.get() == leaf)
      << "a leaf missing from its parent's children";
  parent->children.erase(it);  // destroys leaf
  if (parent != root_.get() && parent->is_leaf()) LeafListAdd(parent);
}

int64_t RadixCache::Evict(int64_t n_tokens, const FreeFn& free_fn) {
  if (disable_ || n_tokens <= 0) return 0;
  struct Candidate {
    EvictionKey key;
    Node* node;
    bool operator>(const Candidate& other) const { return key > other.key; }
  };
  std::vector<Candidate> storage;
  storage.reserve(leaves_.size());
  for (Node* leaf : leaves_) {
    if (leaf->lock_ref == 0) storage.push_back({MakeEvictionKey(policy_, *leaf), leaf});
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap(std::greater<>(),
                                                                              std::move(storage));

  int64_t evicted = 0;
  while (evicted < n_tokens && !heap.empty()) {
    Node* node = heap.top().node;
    heap.pop();
    // Nothing but deletions happens here, so a candidate is still an unlocked leaf.
    RADIXLM_CHECK(node->is_leaf() && node->lock_ref == 0) << "evicting a locked or inner node";
    if (release_observer_) release_observer_(*node);
    free_fn(node->value);
    RecordEviction(*node);
    evicted += node->size();
    Node* parent = node->parent;
    DeleteLeaf(node);
    if (parent != root_.get() && parent->is_leaf() && parent->lock_ref == 0) {
      heap.push({MakeEvictionKey(policy_, *parent), parent});
    }
  }
  return evicted;
}

void RadixCache::RecordEviction(const Node& node) {
  ++version_;
  evicted_tokens_total_ += node.size();
  RadixEviction& record = eviction_log_[eviction_seq_ % kEvictionLogSize];
  record.seq = ++eviction_seq_;
  record.node_id = node.id;
  record.parent_id = node.parent != nullptr ? node.parent->id : 0;
  record.tokens = node.size();
  record.hit_count = node.hit_count;
  record.head_size =
      static_cast<int32_t>(std::min<size_t>(node.key.size(), RadixEviction::kHeadTokens));
  std::copy_n(node.key.begin(), record.head_size, record.head.begin());
}

std::vector<RadixEviction> RadixCache::recent_evictions() const {
  std::vector<RadixEviction> out;
  const uint64_t kept = std::min<uint64_t>(eviction_seq_, kEvictionLogSize);
  out.reserve(kept);
  for (uint64_t seq = eviction_seq_ - kept; seq < eviction_seq_; ++seq) {
    out.push_back(eviction_log_[seq % kEvictionLogSize]);
  }
  return out;
}

int64_t RadixCache::Evict(int64_t n_tokens, KvPool& pool) {
  return Evict(n_tokens, [&pool](std::span<const int32_t> slots) { pool.Free(slots); });
}

}  // namespace radixlm
