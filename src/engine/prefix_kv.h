// Copies a prefix's KV rows out of and into the model's KV storage (prefill/decode
// disaggregation; api.h's PrefixKv says the layout). Scheduler thread only: the slots come from
// Scheduler::CachedPrefixSlots / ImportPrefix, and no forward runs meanwhile.
#pragma once

#include <cstdint>
#include <span>

#include "cache/kv_pool.h"
#include "engine/api.h"
#include "model/kv_cache.h"
#include "util/status.h"

namespace radixlm {

// The rows of tokens[0, slots.size()) held at `slots` (full slots; sliding-window layers read
// their rows through the pool's SWA map and start after the last position without one).
PrefixKv ReadPrefixKv(model::KvCache& kv, const KvPool& pool, std::span<const int32_t> tokens,
                      std::span<const int32_t> slots);

// Writes prefix.kv's rows for positions [0, slots.size()) into `slots` (sliding-window layers
// through the pool's SWA map). InvalidArgument when the prefix's layout does not match this
// model's storage (layers, row size, dtype) or holds fewer positions than slots.
Status WritePrefixKv(model::KvCache& kv, const KvPool& pool, const PrefixKv& prefix,
                     std::span<const int32_t> slots);

// The first position from which every sliding-window layer of `prefix` has rows (0 without
// sliding-window layers).
int64_t PrefixKvSwaValidFrom(const model::KvCache& kv, const PrefixKv& prefix);

}  // namespace radixlm
