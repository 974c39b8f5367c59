// Scheduler: prefix pins. A pin holds one lock on the node ending the longest cached prefix
// of its ids, exactly as an admitted request holds one on its matched prefix, so the path stays
// protected from eviction (and node splits keep the locked node valid) until it is unpinned.
//
// A reclaimable pin (a session turn's, RequestInput::pin_on_finish) is that too, with one
// exception: when the pool cannot otherwise give admission or a decode the memory it needs,
// reclaimable pins are released, oldest first, until it can (EnsureFreePages, SchedulePrefills).
// Session KV is thus the last cache to go (unpinned leaves are evicted first) but never makes a
// request wait, retract or fail: SGLang keeps a session's KV as ordinary evictable cache
// (session_controller.py; its --enable-session-radix-cache evicts session-referenced KV after
// the rest, the same two tiers).
#include <algorithm>

#include "scheduler/scheduler.h"

namespace radixlm {

StatusOr<int64_t> Scheduler::PinPrefix(uint64_t pin, std::span<const int32_t> ids,
                                       int32_t key_namespace) {
  if (pins_.count(pin) != 0) return InvalidArgument("pin " + std::to_string(pin) + " is in use");
  const CacheOpTimer timer(stats_);
  RadixCache::MatchResult m = cache_->MatchPrefix(ids, key_namespace);
  uint64_t swa_lock_id = 0;
  cache_->IncLockRef(m.last_node, &swa_lock_id);
  pins_.emplace(pin, std::make_pair(m.last_node, swa_lock_id));
  return static_cast<int64_t>(m.slots.size());
}

void Scheduler::PinReclaimable(uint64_t pin, std::span<const int32_t> ids, int32_t key_namespace) {
  // A pin id in use keeps its old prefix: the caller's mistake, not worth failing a request.
  if (!PinPrefix(pin, ids, key_namespace).ok()) return;
  const uint64_t seq = next_reclaim_seq_++;
  reclaimable_by_seq_.emplace(seq, pin);
  reclaimable_seq_.emplace(pin, seq);
}

bool Scheduler::UnpinPrefix(uint64_t pin) {
  auto it = pins_.find(pin);
  if (it == pins_.end()) return false;
  const CacheOpTimer timer(stats_);
  cache_->DecLockRef(it->second.first, it->second.second);
  pins_.erase(it);
  if (auto r = reclaimable_seq_.find(pin); r != reclaimable_seq_.end()) {
    reclaimable_by_seq_.erase(r->second);
    reclaimable_seq_.erase(r);
  }
  return true;
}

bool Scheduler::ReclaimOldestPin(AdmissionBudget* budget, double* budget_change) {
  if (reclaimable_by_seq_.empty()) return false;
  const uint64_t pin = reclaimable_by_seq_.begin()->second;
  reclaimable_by_seq_.erase(reclaimable_by_seq_.begin());
  reclaimable_seq_.erase(pin);
  auto it = pins_.find(pin);
  if (it == pins_.end()) return true;  // (not reachable: UnpinPrefix forgets both)
  auto [node, swa_lock_id] = it->second;
  pins_.erase(it);
  ++stats_.reclaimed_pins;
  const CacheOpTimer timer(stats_);
  const int64_t swa_before = cache_->swa_evictable_size();
  const int64_t freed = cache_->DecLockRef(node, swa_lock_id);
  if (budget != nullptr) {
    // As LockForAdmission, but the path was not locked in this pass: without a windowed pool
    // the budget's two sides are the same tokens and both grow.
    const double before = std::min(budget->full, budget->swa);
    budget->full += static_cast<double>(freed);
    budget->swa += static_cast<double>(
        pool_.has_swa() ? cache_->swa_evictable_size() - swa_before : freed);
    *budget_change = std::min(budget->full, budget->swa) - before;
  }
  return true;
}

void Scheduler::ReclaimAllPins() {
  while (ReclaimOldestPin(nullptr, nullptr)) {
  }
}

}  // namespace radixlm
