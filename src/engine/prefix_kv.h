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
// their rows through the pool's SWA map and start after the last position without one; a layer
// reading another's K/V, or a hybrid model's linear layer, has none).
PrefixKv ReadPrefixKv(model::KvCache& kv, const KvPool& pool, std::span<const int32_t> tokens,
                      std::span<const int32_t> slots);

// Writes prefix.kv's rows for positions [0, slots.size()) into `slots` (sliding-window layers
// through the pool's SWA map). InvalidArgument when the prefix's layout does not match this
// model's storage (layers, row size, dtype) or holds fewer positions than slots.
Status WritePrefixKv(model::KvCache& kv, const KvPool& pool, const PrefixKv& prefix,
                     std::span<const int32_t> slots);

// A hybrid model's linear layers (model/recurrent_state.h): ReadPrefixState sets prefix's
// state shape and, for a non-empty prefix, copies state slot `state_slot` (the snapshot after
// all of prefix->tokens) into prefix->state. CheckPrefixState: InvalidArgument naming both
// shapes when the prefix's differ from this model's (one hybrid and the other not, other
// layers, or a state of the wrong size). WritePrefixState copies prefix.state (checked, and
// non-empty) into state slot `state_slot`.
Status ReadPrefixState(model::KvCache& kv, int32_t state_slot, PrefixKv* prefix);
Status CheckPrefixState(model::KvCache& kv, const PrefixKv& prefix);
Status WritePrefixState(model::KvCache& kv, const PrefixKv& prefix, int32_t state_slot);

// The first position from which every sliding-window layer of `prefix` has rows (0 without
// sliding-window layers).
int64_t PrefixKvSwaValidFrom(const model::KvCache& kv, const PrefixKv& prefix);

}  // namespace radixlm
