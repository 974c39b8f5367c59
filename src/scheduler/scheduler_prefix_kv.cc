// Scheduler: a prefix's KV moved between servers (prefill/decode disaggregation). The scheduler
// lends and takes slots and owns the tree; the engine copies the rows (engine/prefix_kv.h).
#include <algorithm>

#include "scheduler/scheduler.h"

namespace radixlm {

std::vector<int32_t> Scheduler::CachedPrefixSlots(std::span<const int32_t> ids,
                                                  int32_t key_namespace) {
  const CacheOpTimer timer(stats_);
  return cache_->MatchPrefix(ids, key_namespace).slots;
}

StatusOr<int64_t> Scheduler::ImportPrefix(uint64_t pin, std::span<const int32_t> ids,
                                          int32_t key_namespace, int64_t swa_valid_from,
                                          const PrefixWriter& write) {
  if (cache_->disabled()) {
    return Unimplemented(
        "a transferred prefix needs the radix cache (--disable-radix-cache is set)");
  }
  if (pins_.count(pin) != 0) return InvalidArgument("pin " + std::to_string(pin) + " is in use");
  const int64_t page = pool_.page_size();
  const int64_t aligned = static_cast<int64_t>(ids.size()) / page * page;
  if (aligned > 0) {
    if (!EnsureFreePages(aligned / page)) {
      return ResourceExhausted("the KV pool has no room for the transferred prefix of " +
                               std::to_string(aligned) + " tokens");
    }
    std::optional<std::vector<int32_t>> slots = pool_.Allocate(aligned);
    if (!slots.has_value()) {
      return ResourceExhausted("the KV pool has no room for the transferred prefix of " +
                               std::to_string(aligned) + " tokens");
    }
    const std::span<const int32_t> mine(*slots);
    if (Status written = write(mine); !written.ok()) {
      pool_.Free(mine);
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
    const auto present = static_cast<int64_t>(cache_->Insert(key, mine, 0, &pool_));
    if (present > 0) pool_.Free(mine.first(present));
    ++tree_version_;
  }
  return PinPrefix(pin, ids.first(aligned), key_namespace);
}

}  // namespace radixlm
