// Scheduler: prefix pins. A pin holds one lock on the node ending the longest cached prefix
// of its ids, exactly as an admitted request holds one on its matched prefix, so the path stays
// protected from eviction (and node splits keep the locked node valid) until it is unpinned.
#include "scheduler/scheduler.h"

namespace radixlm {

StatusOr<int64_t> Scheduler::PinPrefix(uint64_t pin, std::span<const int32_t> ids) {
  if (pins_.count(pin) != 0) return InvalidArgument("pin " + std::to_string(pin) + " is in use");
  const CacheOpTimer timer(stats_);
  RadixCache::MatchResult m = cache_->MatchPrefix(ids);
  uint64_t swa_lock_id = 0;
  cache_->IncLockRef(m.last_node, &swa_lock_id);
  pins_.emplace(pin, std::make_pair(m.last_node, swa_lock_id));
  return static_cast<int64_t>(m.slots.size());
}

bool Scheduler::UnpinPrefix(uint64_t pin) {
  auto it = pins_.find(pin);
  if (it == pins_.end()) return false;
  const CacheOpTimer timer(stats_);
  cache_->DecLockRef(it->second.first, it->second.second);
  pins_.erase(it);
  return true;
}

}  // namespace radixlm
