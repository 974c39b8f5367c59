// RadixCache: every cached KV run lives in one radix tree of token-id prefixes, so any overlap
// between any two requests is found and reused (SGLang's RadixCache).
//
// Pages. With page_size > 1 the tree works in whole pages: keys are truncated to a multiple of
// page_size, matches and splits happen only at page boundaries, and a node's children are keyed
// by their first page. Node values are then runs of whole KvPool pages.
//
// Ownership of KV slots. The tree owns the slots stored in its nodes: Insert takes ownership of
// the slots of the newly added tail, Evict hands slots back through a free callback, Reset drops
// them without freeing (pair it with KvPool::Reset, as a cache flush does). MatchPrefix only
// lends slots: a caller that keeps using them must IncLockRef the returned node until done.
//
// Locks. IncLockRef(node) protects the whole path root→node from eviction; DecLockRef undoes
// it. Every token in the tree is either evictable (its node's lock_ref == 0) or protected, and
// evictable_size() + protected_size() == TotalSize() always.
//
// Sliding-window awareness (sliding_window > 0, paired with a KvPool that has an SWA pool;
// SGLang's SWARadixCache). A node whose windowed-layer KV was released is a tombstone: its
// full-layer KV stays and a match may run through it, but a match may end at a point only when
// the `sliding_window` tokens before it still have their windowed KV (or the path from the root
// has no tombstone), so every window a new token attends to is intact; otherwise the match ends
// at the last point that satisfies this and the rest is recomputed. A lock protects the full KV
// of its whole path but the windowed KV only of the nodes covering its last sliding_window
// tokens. EvictSwa releases windowed KV of unprotected nodes: an unlocked leaf is deleted
// outright, an inner node becomes a tombstone. Insert (given the pool) stores pages whose
// windowed KV the caller released as tombstones, and revives a tombstone with the caller's
// windowed KV where the caller still has it.
//
// State snapshots (snapshot_slots > 0; a hybrid model, whose linear layers keep a fixed-size
// state per sequence instead of KV). A node may hold a snapshot: the id of a saved copy of
// every linear layer's state after the node's last token (ids name the runner's state slots;
// the tree hands them out and takes them back, the scheduler copies the state). KV alone
// cannot resume those layers, so MatchPrefix ends at the deepest node holding a snapshot (the
// root stands for the empty state); the KV past it is recomputed. Snapshots follow the lock
// rules: the node a lock ends at (a running request's prefix, a pin) keeps its snapshot; those
// above it on the locked path may go (a request copies its snapshot at admission, and the
// path's KV stays locked), as SGLang's hybrid cache locks a node's state apart from the path's
// KV. A deleted node frees its snapshot; EvictSnapshots frees the others, in policy order,
// deleting an unlocked leaf whose snapshot goes (its KV past the last snapshot above can no
// longer be resumed) and any snapshot-less unlocked leaf that leaves.
// Splits keep the snapshot on the lower node, which ends where it did. Not SWA-aware.
//
// Namespaces (LoRA adapters, SGLang's extra key): KV computed under one adapter must never
// serve another. Namespace k > 0 keys its runs by token + k * kKeyNamespaceStride, so the
// namespaces' runs never share a node: prefixes are shared within a namespace and never across
// (namespace 0, the base model, keys by the token ids themselves). Token ids must be below
// kKeyNamespaceStride and namespaces at most kMaxKeyNamespace. MatchPrefix takes the
// namespace; CacheFinishedRequest / CacheUnfinishedRequest use CacheRequest::key_namespace.
//
// Disabled mode (--disable-radix-cache): nothing is ever stored or shared. MatchPrefix returns
// an empty prefix at the root, Insert stores nothing and reports the whole key as "already
// present" so the caller frees all of it, lock calls do nothing.
//
// Not thread-safe: only the scheduler thread touches the cache (see DESIGN.md).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cache/eviction_policy.h"
#include "cache/kv_pool.h"
#include "cache/radix_node.h"
#include "cache/req_to_token.h"
#include "util/status.h"

namespace radixlm {

struct RadixCacheConfig {
  int32_t page_size = 1;  // must equal the KvPool's page_size
  bool disable = false;   // --disable-radix-cache
  EvictionPolicy eviction_policy = EvictionPolicy::kLru;
  // Logical time for access / creation stamps, read once per MatchPrefix / Insert. Null: an
  // internal counter that ticks once per operation. Tests inject their own.
  std::function<uint64_t()> clock = nullptr;
  // > 0: SWA-aware (see above), the sliding window of the model's windowed layers in tokens.
  int64_t sliding_window = 0;
  // > 0: state snapshots (see above), ids first_snapshot_id .. first_snapshot_id +
  // snapshot_slots - 1. Needs sliding_window == 0.
  int32_t snapshot_slots = 0;
  int32_t first_snapshot_id = 0;
};

// The request side of CacheFinishedRequest / CacheUnfinishedRequest: what the scheduler keeps
// per running request about its place in the tree.
struct CacheRequest {
  int32_t req_pool_index = -1;        // its row in the ReqToTokenTable
  std::vector<int32_t> prefix_slots;  // slots of its prefix owned by the tree (page-aligned);
                                      // the row holds these first, then the request's own slots
  RadixNode* last_node = nullptr;     // end of that prefix; the request holds a lock on it
  int32_t priority = 0;               // passed to Insert (for the priority eviction policy)
  int32_t key_namespace = 0;          // its tree namespace (RadixCache "Namespaces"); 0: base
  uint64_t swa_lock_id = 0;           // from IncLockRef(last_node); passed to DecLockRef
  // Tokens [prefix_slots.size(), swa_evicted_len) of the row have had their windowed KV
  // released by the request (they fell out of its window); 0: none.
  int64_t swa_evicted_len = 0;
  // State snapshots: a position past the prefix where the tree's KV match ended (a branch
  // point, or the end of an identical prompt) with no snapshot there; the request's prefill
  // chunk ends at it, so one is taken. 0: none.
  int64_t snapshot_due = 0;
};

// One evicted node, kept in a small ring (RadixCache::recent_evictions) for observers such as
// the web page's tree view. `seq` counts evictions since the cache was built (1, 2, ...).
struct RadixEviction {
  static constexpr size_t kHeadTokens = 16;
  uint64_t seq = 0;
  uint64_t node_id = 0;
  uint64_t parent_id = 0;
  int64_t tokens = 0;
  uint64_t hit_count = 0;
  int32_t head_size = 0;                       // ids kept in head (≤ kHeadTokens)
  std::array<int32_t, kHeadTokens> head = {};  // the first ids of the evicted run
};

class RadixCache {
 public:
  using Node = RadixNode;
  static constexpr size_t kEvictionLogSize = 64;
  // Called with the slots of each evicted node (one call per node).
  using FreeFn = std::function<void(std::span<const int32_t>)>;

  struct MatchResult {
    std::vector<int32_t> slots;  // KV slots of the matched prefix (page-aligned length)
    Node* last_node = nullptr;   // node ending exactly at the matched prefix (root if none)
    // Tokens the KV matched before the cut to a state snapshot (>= slots.size(); equal
    // without snapshots): where a snapshot would let the next match go further.
    int64_t kv_match = 0;
  };

  explicit RadixCache(RadixCacheConfig config);
  ~RadixCache();
  RadixCache(const RadixCache&) = delete;
  RadixCache& operator=(const RadixCache&) = delete;

  // Longest cached prefix of key (truncated to whole pages). A match ending inside a node splits
  // it, so last_node ends exactly at the prefix. Stamps the path with the current time and
  // counts a hit on every node walked. With state snapshots, the prefix ends at the deepest
  // node of that walk holding a snapshot (the root if none).
  MatchResult MatchPrefix(std::span<const int32_t> key, int32_t key_namespace = 0);

  static constexpr int32_t kKeyNamespaceStride = 1 << 20;
  static constexpr int32_t kMaxKeyNamespace = 2047;
  // key as namespace key_namespace keys it (key itself for 0; else a copy in *scratch).
  static std::span<const int32_t> NamespacedKey(std::span<const int32_t> key,
                                                int32_t key_namespace,
                                                std::vector<int32_t>* scratch);

  // Adds key → slots (same length; truncated to whole pages) and returns how many leading
  // tokens were already in the tree. The tree takes ownership of slots[returned, aligned len);
  // the caller still owns — and usually frees — slots[0, returned), duplicates of what the tree
  // has, and any unaligned tail. Raises the priority of the walked nodes to `priority`.
  // SWA-aware with a pool: new pages without windowed KV become tombstones, and a tombstone the
  // key walks through takes the caller's windowed KV (KvPool::MoveSwa) where the caller's
  // slots have it for the rest of that node.
  // end_node (if not null): set to the node ending at the inserted key's (aligned) end, or
  // the root for an empty key (and in disabled mode).
  size_t Insert(std::span<const int32_t> key, std::span<const int32_t> slots, int32_t priority = 0,
                KvPool* pool = nullptr, Node** end_node = nullptr);

  // Lock / unlock the path root→node. Return the change in evictable_size() (≤ 0 / ≥ 0).
  // SWA-aware, IncLockRef splits the node where the lock's window begins (page-aligned), so
  // the window lock covers about sliding_window tokens however long the nodes are.
  // DecLockRef requires a matching earlier IncLockRef on the same node, and (SWA-aware) the
  // swa_lock_id that IncLockRef stored (0 when the window reached the root).
  int64_t IncLockRef(Node* node, uint64_t* swa_lock_id = nullptr);
  int64_t DecLockRef(Node* node, uint64_t swa_lock_id = 0);

  // Evicts unlocked leaves, in policy order, until at least n_tokens are freed or nothing
  // evictable is left; a parent left childless and unlocked becomes a candidate in turn.
  // Returns the tokens freed.
  int64_t Evict(int64_t n_tokens, const FreeFn& free_fn);
  int64_t Evict(int64_t n_tokens, KvPool& pool);

  // SWA-aware: releases the windowed KV of at least n_tokens tokens (or all it can) from nodes
  // outside every lock's window, in policy order (ancestors first among equals). First what no
  // match end point needs: every token but the last window before each leaf end and each
  // branch point (split off as tombstones), so those matches stay valid; then whole nodes: an
  // unlocked leaf is deleted (freeing its full KV too), any other node becomes a tombstone. Returns
  // the tokens whose windowed KV was released. 0 when not SWA-aware.
  int64_t EvictSwa(int64_t n_tokens, KvPool& pool);

  // Stores a finished request's KV in the tree and releases the request: inserts
  // token_ids[0, aligned) with the row's slots, frees the duplicates and the unaligned tail,
  // frees the row, drops the request's lock. token_ids are the tokens that have KV, i.e. the
  // prompt plus all outputs but the last (SGLang: (origin_input_ids + output_ids)[:-1]).
  // In disabled mode it frees all of the request's slots and its row.
  // With state snapshots, `snapshot` (an allocated id, or -1) is the request's state after
  // all of token_ids: attached to the node ending there when token_ids is page-aligned and that
  // node has none yet, freed otherwise.
  void CacheFinishedRequest(CacheRequest& req, std::span<const int32_t> token_ids,
                            ReqToTokenTable& table, KvPool& pool, int32_t snapshot = -1);

  // Same for a request that goes on (after a prefill chunk): inserts its aligned tokens, frees
  // duplicates, re-matches, points its row at the tree's slots, moves its lock to the new last
  // node and updates req.prefix_slots / last_node. The unaligned tail stays the request's own.
  // Does nothing in disabled mode.
  void CacheUnfinishedRequest(CacheRequest& req, std::span<const int32_t> token_ids,
                              ReqToTokenTable& table, KvPool& pool);

  // Called with a node just before its KV is released: evicted (Evict, EvictSwa), or its
  // windowed KV released (tombstoned). The node's whole path is intact during the call and the
  // observer must not change the tree. The disk tier's write-back hook; null: none.
  using ReleaseObserver = std::function<void(const Node&)>;
  void set_release_observer(ReleaseObserver observer) { release_observer_ = std::move(observer); }
  // State snapshots: the release observer also sees a deleted node's snapshot (node.snapshot
  // is still set during the call); the snapshot observer is called with a node whose snapshot
  // EvictSnapshots is about to free, the node itself staying or not (the disk tier's
  // write-back of snapshots). The same rules as the release observer's.
  void set_snapshot_observer(ReleaseObserver observer) { snapshot_observer_ = std::move(observer); }

  // --- state snapshots (radix_cache_snapshots.cc; see "State snapshots" above) ---
  bool snapshots_enabled() const { return snapshot_slots_ > 0; }
  // A free snapshot id, after evicting one (EvictSnapshots) when none is free; nullopt when
  // every snapshot belongs to a locked node (or snapshots are off).
  std::optional<int32_t> AllocateSnapshot(KvPool& pool);
  // Whether node (not the root) lacks a snapshot; AttachSnapshot then gives it an allocated id.
  bool WantsSnapshot(const Node* node) const;
  void AttachSnapshot(Node* node, int32_t id);
  // Returns an allocated id that was not attached.
  void FreeSnapshot(int32_t id);
  // Frees at least n snapshots of nodes no lock ends at (or all it can), in policy order;
  // returns how many. Deleted leaves hand their slots back to pool.
  int64_t EvictSnapshots(int64_t n, KvPool& pool);
  int64_t snapshot_capacity() const { return snapshot_slots_; }
  int64_t snapshot_count() const { return static_cast<int64_t>(snapshot_nodes_.size()); }
  // Snapshots held where a lock ends (kept until unlocked).
  int64_t protected_snapshots() const;

  // Drops every node without freeing slots (see Ownership above).
  void Reset();

  int64_t TotalSize() const { return evictable_size_ + protected_size_; }
  int64_t evictable_size() const { return evictable_size_; }
  int64_t protected_size() const { return protected_size_; }
  int64_t num_nodes() const { return num_nodes_; }  // excluding the root
  // Tokens in the tree that still hold windowed KV, outside / inside some lock's window.
  int64_t swa_evictable_size() const { return swa_evictable_size_; }
  int64_t swa_protected_size() const { return swa_protected_size_; }
  int64_t sliding_window() const { return sliding_window_; }
  bool swa_aware() const { return sliding_window_ > 0; }
  int32_t page_size() const { return page_size_; }
  bool disabled() const { return disable_; }
  EvictionPolicy eviction_policy() const { return policy_; }
  Node* root() { return root_.get(); }
  const Node* root() const { return root_.get(); }

  // Observation (read-only; for the tree view). version() changes whenever anything a viewer
  // shows may have changed (match stamps and hit counts, inserts, splits, locks, evictions,
  // Reset); logical_time() is the internal clock the access stamps use when no clock is
  // injected. Evictions are counted, and the last kEvictionLogSize are kept (oldest first).
  uint64_t version() const { return version_; }
  uint64_t logical_time() const { return logical_clock_; }
  int64_t evicted_tokens_total() const { return evicted_tokens_total_; }
  uint64_t evictions_total() const { return eviction_seq_; }
  std::vector<RadixEviction> recent_evictions() const;

  // The tree, one node per line, indented by depth (long runs abbreviated).
  std::string DebugString() const;

  // Structural invariants: sizes add up (evictable + protected == tokens in the tree), lock_ref
  // ≥ 0 and ≥ each child's, keys page-aligned with matching values, children keyed by their
  // first page, parent links and leaf list consistent.
  Status CheckInvariants() const;
  // Also against the pool: tree slots distinct and allocated, tombstones exactly the nodes
  // whose pages lack windowed KV, and
  // pool.available() + TotalSize() + in_flight_tokens == pool.size(), where in_flight_tokens
  // are slots held by requests outside the tree (whole pages in paged mode).
  Status CheckInvariants(const KvPool& pool, int64_t in_flight_tokens) const;
  // State snapshots: ids distinct, in range, listed, and held + free == snapshot_slots.
  Status CheckSnapshots() const;

 private:
  uint64_t Now();
  int64_t AlignDown(int64_t n) const { return n / page_size_ * page_size_; }
  // Length of the common prefix of run and key, rounded down to whole pages.
  int64_t MatchLength(std::span<const int32_t> run, std::span<const int32_t> key) const;
  std::span<const int32_t> FirstPage(std::span<const int32_t> key) const {
    return key.first(page_size_);
  }
  // Splits child (found at `it` in its parent's map) after split_len tokens; returns the new
  // upper node, which keeps the child's lock state and stamps.
  Node* SplitNode(RadixChildMap::iterator it, int64_t split_len);
  Node* AddLeaf(Node* parent, std::span<const int32_t> key, std::span<const int32_t> slots,
                int32_t priority, uint64_t now, bool swa_tombstone = false);
  void DeleteLeaf(Node* leaf);
  // Gives a tombstone matched by Insert the caller's windowed KV (`mine`: the caller's slots
  // for node's run) for the part where the caller has it; returns the deepest node for that run.
  Node* ReviveSwa(Node* node, std::span<const int32_t> mine, KvPool& pool);
  // Releases node's windowed KV (node unlocked in its window); then deletes the chain of
  // unlocked tombstone leaves it may leave behind.
  void Tombstone(Node* node, KvPool& pool);
  void DeleteTombstoneLeaves(Node* node, KvPool& pool);
  // Nodes holding windowed KV outside every lock's window, in eviction order, each with how
  // many of its last tokens the nearest match end point below it needs (EvictSwa's pass 1).
  struct SwaCandidate {
    Node* node;
    int64_t keep;
  };
  std::vector<SwaCandidate> SwaEvictionOrder();
  void LeafListAdd(Node* node);
  void LeafListRemove(Node* node);
  // The walk of MatchPrefix; cut_to_snapshot: end at the deepest snapshot (MatchPrefix with
  // snapshots), else at the longest KV match (a request re-matching its own inserted tokens).
  MatchResult Match(std::span<const int32_t> key, bool cut_to_snapshot);
  void DetachSnapshot(Node* node);  // frees node's snapshot id

  int32_t page_size_;
  bool disable_;
  EvictionPolicy policy_;
  std::function<uint64_t()> clock_;
  uint64_t logical_clock_ = 0;
  uint64_t next_node_id_ = 0;

  std::unique_ptr<Node> root_;
  std::vector<Node*> leaves_;  // every leaf but the root, locked or not (eviction candidates)
  std::vector<int32_t> namespaced_key_;  // NamespacedKey's copy for the current operation
  int64_t evictable_size_ = 0;
  int64_t protected_size_ = 0;
  int64_t num_nodes_ = 0;

  // Observation state (see version()): a counter bump per mutation, a fixed ring per eviction.
  void RecordEviction(const Node& node);
  uint64_t version_ = 0;
  int64_t evicted_tokens_total_ = 0;
  uint64_t eviction_seq_ = 0;
  std::array<RadixEviction, kEvictionLogSize> eviction_log_ = {};

  ReleaseObserver release_observer_;
  ReleaseObserver snapshot_observer_;

  int64_t sliding_window_ = 0;
  int64_t swa_evictable_size_ = 0;
  int64_t swa_protected_size_ = 0;
  uint64_t next_swa_lock_id_ = 0;

  int32_t snapshot_slots_ = 0;
  int32_t first_snapshot_id_ = 0;
  std::vector<int32_t> free_snapshots_;  // ids not held by a node nor lent out
  std::vector<Node*> snapshot_nodes_;    // nodes holding a snapshot (Node::snapshot_index)
};

}  // namespace radixlm
