// Eviction policies of the RadixCache: which unlocked leaf goes first.
//
// Each policy maps a node to an EvictionKey; the smallest key is evicted first. Ties on the
// policy's own criteria fall back to creation order (node id), so eviction is deterministic.
//   lru      least recently matched/inserted first (SGLang's default)
//   lfu      fewest hits first, then least recent
//   fifo     oldest tokens first
//   priority lowest request priority first, then least recent
#pragma once

#include <compare>
#include <cstdint>
#include <string_view>

#include "cache/radix_node.h"
#include "util/status.h"

namespace radixlm {

enum class EvictionPolicy { kLru, kLfu, kFifo, kPriority };

// "lru" | "lfu" | "fifo" | "priority" (the --radix-eviction-policy flag); anything else is
// InvalidArgument naming the accepted values.
StatusOr<EvictionPolicy> ParseEvictionPolicy(std::string_view name);
const char* EvictionPolicyName(EvictionPolicy policy);

struct EvictionKey {
  int64_t primary = 0;
  int64_t secondary = 0;
  uint64_t id = 0;
  auto operator<=>(const EvictionKey&) const = default;
};

EvictionKey MakeEvictionKey(EvictionPolicy policy, const RadixNode& node);

}  // namespace radixlm
