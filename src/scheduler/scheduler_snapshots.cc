// Scheduler: a hybrid model's linear-layer state in the radix tree (RadixCache "State
// snapshots"). A request's state lives in its state slot (its request-to-token row). Where
// its KV enters the tree at a page-aligned point — a prefill chunk's end (chunks end every
// hybrid_snapshot_interval tokens), the end of its prompt, its release (finish, retraction,
// jump-forward) — the state is copied into a snapshot id the tree then owns; a request
// admitted over a cached prefix (which MatchPrefix ends at a snapshot) copies that snapshot
// into its slot and computes only the rest, its first chunk ending where the tree's KV match
// ended (a branch point, where the next request with this prefix will resume).
#include "scheduler/scheduler.h"
#include "util/check.h"

namespace radixlm {

int64_t Scheduler::SnapshotChunkEnd(const Request& req, int64_t begin, int64_t end) const {
  if (!cache_->snapshots_enabled()) return end;
  const int64_t interval = config_.hybrid_snapshot_interval;
  end = std::min(end, (begin / interval + 1) * interval);
  // Where the tree's KV ran further than its snapshots (a branch point): the next request
  // sharing this prefix resumes there.
  if (req.cache.snapshot_due > begin) end = std::min(end, req.cache.snapshot_due);
  return end;
}

void Scheduler::SnapshotAtNode(Request* req) {
  RadixNode* node = req->cache.last_node;
  if (!cache_->snapshots_enabled() || req->kv_len % pool_.page_size() != 0 ||
      static_cast<int64_t>(req->cache.prefix_slots.size()) != req->kv_len ||
      !cache_->WantsSnapshot(node)) {
    return;
  }
  std::optional<int32_t> id;
  {
    const CacheOpTimer timer(stats_);
    id = cache_->AllocateSnapshot(pool_);  // may evict others (req's path is locked)
  }
  ++tree_version_;
  if (!id.has_value()) return;
  const Status copied = runner_->CopyState(StateSlotOf(*req), *id);
  RADIXLM_CHECK(copied.ok()) << copied.ToString();
  cache_->AttachSnapshot(node, *id);
  ++stats_.state_snapshots_taken;
  WriteThroughState(*req, *id);
}

int32_t Scheduler::SnapshotForRelease(const Request& req) {
  if (!cache_->snapshots_enabled() || state_untrusted_ || req.kv_len == 0 ||
      req.kv_len % pool_.page_size() != 0) {
    return -1;
  }
  std::optional<int32_t> id;
  {
    const CacheOpTimer timer(stats_);
    id = cache_->AllocateSnapshot(pool_);
  }
  ++tree_version_;
  if (!id.has_value()) return -1;
  const Status copied = runner_->CopyState(StateSlotOf(req), *id);
  RADIXLM_CHECK(copied.ok()) << copied.ToString();
  ++stats_.state_snapshots_taken;
  WriteThroughState(req, *id);
  return *id;
}

void Scheduler::ResumeFromSnapshot(const Request& req, const RadixNode* node) {
  if (!cache_->snapshots_enabled() || node == cache_->root()) return;
  RADIXLM_CHECK_GE(node->snapshot, 0) << "a match of a hybrid model ends at a snapshot";
  const Status copied = runner_->CopyState(node->snapshot, req.cache.req_pool_index);
  RADIXLM_CHECK(copied.ok()) << copied.ToString();
  ++stats_.state_snapshot_resumes;
}

}  // namespace radixlm
