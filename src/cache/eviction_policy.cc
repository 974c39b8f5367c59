#include "cache/eviction_policy.h"

#include <string>

namespace radixlm {

StatusOr<EvictionPolicy> ParseEvictionPolicy(std::string_view name) {
  if (name == "lru") return EvictionPolicy::kLru;
  if (name == "lfu") return EvictionPolicy::kLfu;
  if (name == "fifo") return EvictionPolicy::kFifo;
  if (name == "priority") return EvictionPolicy::kPriority;
  return InvalidArgument("unknown radix eviction policy '" + std::string(name) +
                         "' (expected lru|lfu|fifo|priority)");
}

const char* EvictionPolicyName(EvictionPolicy policy) {
  switch (policy) {
    case EvictionPolicy::kLru:
      return "lru";
    case EvictionPolicy::kLfu:
      return "lfu";
    case EvictionPolicy::kFifo:
      return "fifo";
    case EvictionPolicy::kPriority:
      return "priority";
  }
  return "unknown";
}

EvictionKey MakeEvictionKey(EvictionPolicy policy, const RadixNode& node) {
  const auto access = static_cast<int64_t>(node.last_access_time);
  switch (policy) {
    case EvictionPolicy::kLru:
      return {access, 0, node.id};
    case EvictionPolicy::kLfu:
      return {static_cast<int64_t>(node.hit_count), access, node.id};
    case EvictionPolicy::kFifo:
      return {static_cast<int64_t>(node.creation_time), 0, node.id};
    case EvictionPolicy::kPriority:
      return {node.priority, access, node.id};
  }
  return {access, 0, node.id};
}

}  // namespace radixlm
