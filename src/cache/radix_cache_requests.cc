// RadixCache request helpers: move a request's KV into the tree when it finishes or pauses
// (SGLang's cache_finished_req / cache_unfinished_req).
//
// Slot ownership of a running request: its row holds prefix_slots (owned by the tree, kept alive
// by the lock on last_node) followed by slots it allocated itself. Inserting the row hands the
// request's own slots of the aligned part to the tree, except where the tree already had those
// tokens (another request inserted them meanwhile): those are duplicates, freed here.
#include <algorithm>
#include <utility>

#include "cache/radix_cache.h"
#include "util/check.h"

namespace radixlm {

void RadixCache::CacheFinishedRequest(CacheRequest& req, std::span<const int32_t> token_ids,
                                      ReqToTokenTable& table, KvPool& pool, int32_t snapshot) {
  token_ids = NamespacedKey(token_ids, req.key_namespace, &namespaced_key_);
  const int64_t n = static_cast<int64_t>(token_ids.size());
  RADIXLM_CHECK_LE(n, table.max_context_len());
  const std::span<const int32_t> kv = std::as_const(table).Row(req.req_pool_index).first(n);
  if (disable_) {
    pool.Free(kv);
  } else {
    const int64_t aligned = AlignDown(n);
    const int64_t prefix_len = static_cast<int64_t>(req.prefix_slots.size());
    RADIXLM_CHECK_LE(prefix_len, aligned);
    Node* end = nullptr;
    const auto present = static_cast<int64_t>(
        Insert(token_ids.first(aligned), kv.first(aligned), req.priority, &pool, &end));
    // The state is after all n tokens: it belongs to the node ending there, if one does.
    if (snapshot >= 0) {
      if (aligned == n && WantsSnapshot(end)) {
        AttachSnapshot(end, snapshot);
      } else {
        FreeSnapshot(snapshot);
      }
      snapshot = -1;
    }
    // The locked prefix cannot have been evicted, so the tree has at least that much.
    RADIXLM_CHECK_GE(present, prefix_len) << "a locked prefix was evicted";
    if (present > prefix_len) pool.Free(kv.subspan(prefix_len, present - prefix_len));
    if (aligned < n) pool.Free(kv.subspan(aligned));
    if (req.last_node != nullptr) DecLockRef(req.last_node, req.swa_lock_id);
  }
  if (snapshot >= 0) FreeSnapshot(snapshot);
  table.Free(req.req_pool_index);
  req.req_pool_index = -1;
  req.prefix_slots.clear();
  req.last_node = nullptr;
  req.swa_lock_id = 0;
  req.swa_evicted_len = 0;
}

void RadixCache::CacheUnfinishedRequest(CacheRequest& req, std::span<const int32_t> token_ids,
                                        ReqToTokenTable& table, KvPool& pool) {
  if (disable_) return;
  token_ids = NamespacedKey(token_ids, req.key_namespace, &namespaced_key_);
  const int64_t n = static_cast<int64_t>(token_ids.size());
  RADIXLM_CHECK_LE(n, table.max_context_len());
  const int64_t aligned = AlignDown(n);
  const int64_t prefix_len = static_cast<int64_t>(req.prefix_slots.size());
  RADIXLM_CHECK_LE(prefix_len, aligned);
  const std::span<const int32_t> kv = std::as_const(table).Row(req.req_pool_index).first(n);
  const std::span<const int32_t> aligned_ids = token_ids.first(aligned);

  const auto present =
      static_cast<int64_t>(Insert(aligned_ids, kv.first(aligned), req.priority, &pool));
  RADIXLM_CHECK_GE(present, prefix_len) << "a locked prefix was evicted";
  if (present > prefix_len) pool.Free(kv.subspan(prefix_len, present - prefix_len));

  // Re-match: the whole aligned part is in the tree now, possibly under other slots. (SWA-aware:
  // its last window holds windowed KV — the request's own, or revived by Insert — so the match
  // reaches the end.)
  // (Not cut to a state snapshot: the request's own state goes on from its end.)
  MatchResult match = Match(aligned_ids, /*cut_to_snapshot=*/false);
  RADIXLM_CHECK_EQ(static_cast<int64_t>(match.slots.size()), aligned);
  table.Write(req.req_pool_index, prefix_len,
              std::span<const int32_t>(match.slots).subspan(prefix_len));
  // Lock the new path before unlocking the old one: the shared part stays protected.
  uint64_t swa_lock_id = 0;
  IncLockRef(match.last_node, &swa_lock_id);
  if (req.last_node != nullptr) DecLockRef(req.last_node, req.swa_lock_id);
  req.prefix_slots = std::move(match.slots);
  req.last_node = match.last_node;
  req.swa_lock_id = swa_lock_id;
  // The tree owns everything up to the new prefix; the request releases only past it.
  req.swa_evicted_len = std::max<int64_t>(req.swa_evicted_len, aligned);
}

}  // namespace radixlm
