// Scheduler: a prefix's KV moved between servers (prefill/decode disaggregation). The scheduler
// lends and takes slots and owns the tree; the engine copies the rows (engine/prefix_kv.h).
#include <algorithm>
#include <optional>

#include "scheduler/scheduler.h"

namespace radixlm {

std::vector<int32_t> Scheduler::CachedPrefixSlots(std::span<const int32_t> ids,
                                                  int32_t key_namespace) {
  const CacheOpTimer timer(stats_);
  return cache_->MatchPrefix(ids, key_namespace).slots;
}

Scheduler::CachedPrefix Scheduler::ExportablePrefix(std::span<const int32_t> ids,
                                                    int32_t key_namespace) {
  const CacheOpTimer timer(stats_);
  if (!cache_->snapshots_enabled()) return {cache_->MatchPrefix(ids, key_namespace).slots, -1};
  const size_t limit = ids.empty() ? 0 : ids.size() - 1;
  RadixCache::MatchResult m = cache_->MatchPrefix(ids.first(limit), key_namespace);
  const int32_t state_slot = m.slots.empty() ? -1 : m.last_node->snapshot;
  return {std::move(m.slots), state_slot};
}

StatusOr<int64_t> Scheduler::ImportPrefix(uint64_t pin, std::span<const int32_t> ids,
                                          int32_t key_namespace, int64_t swa_valid_from,
                                          const PrefixWriter& write,
                                          const StateWriter& write_state) {
  if (cache_->disabled()) {
    return Unimplemented(
        "a transferred prefix needs the radix cache (--disable-radix-cache is set)");
  }
  if (pins_.count(pin) != 0) return InvalidArgument("pin " + std::to_string(pin) + " is in use");
  const int64_t page = pool_.page_size();
  int64_t aligned = static_cast<int64_t>(ids.size()) / page * page;
  // A hybrid model: the state after `ids` must go with their KV, at a node's end.
  std::optional<int32_t> snapshot;
  if (cache_->snapshots_enabled() && aligned > 0) {
    if (aligned != static_cast<int64_t>(ids.size()) || !write_state) {
      aligned = 0;
    } else {
      const CacheOpTimer timer(stats_);
      snapshot = cache_->AllocateSnapshot(pool_);
      if (!snapshot.has_value()) aligned = 0;
    }
  }
  if (snapshot.has_value()) {
    if (Status written = write_state(*snapshot); !written.ok()) {
      cache_->FreeSnapshot(*snapshot);
      return written;
    }
  }
  if (aligned > 0) {
    const auto give_back_snapshot = [&] {
      if (snapshot.has_value()) cache_->FreeSnapshot(*snapshot);
    };
    if (!EnsureFreePages(aligned / page)) {
      give_back_snapshot();
      return ResourceExhausted("the KV pool has no room for the transferred prefix of " +
                               std::to_string(aligned) + " tokens");
    }
    std::optional<std::vector<int32_t>> slots = pool_.Allocate(aligned);
    if (!slots.has_value()) {
      give_back_snapshot();
      return ResourceExhausted("the KV pool has no room for the transferred prefix of " +
                               std::to_string(aligned) + " tokens");
    }
    const std::span<const int32_t> mine(*slots);
    if (Status written = write(mine); !written.ok()) {
      pool_.Free(mine);
      give_back_snapshot();
      return written;
    }
    if (pool_.has_swa()) {
      // Pages whose windowed rows were not written become tombstones in the tree.
      const int64_t until =
          std::min(aligned, (std::max<int64_t>(swa_valid_from, 0) + page - 1) / page * page);
      if (until > 0) pool_.FreeSwa(mine.first(until));
    }
    const CacheOpTimer timer(stats_);
    std::vector<int32_t> scratch;
    const std::span<const int32_t> key =
        RadixCache::NamespacedKey(ids.first(aligned), key_namespace, &scratch);
    RadixNode* end = nullptr;
    const auto present = static_cast<int64_t>(cache_->Insert(key, mine, 0, &pool_, &end));
    if (present > 0) pool_.Free(mine.first(present));
    if (snapshot.has_value()) {
      // (The node may hold a snapshot already: one imported before, the same state.)
      if (cache_->WantsSnapshot(end)) {
        cache_->AttachSnapshot(end, *snapshot);
      } else {
        cache_->FreeSnapshot(*snapshot);
      }
    }
    ++tree_version_;
  }
  return PinPrefix(pin, ids.first(aligned), key_namespace);
}

}  // namespace radixlm
