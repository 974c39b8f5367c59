// Scheduler: a hybrid model's state snapshots in the disk tier (scheduler_hicache.cc has the
// blocks). A snapshot goes to disk only where a block ends (hybrid_snapshot_interval is a
// multiple of the block size, so every interval snapshot does): its file, keyed by
// StateSnapshotKey of the prefix's block key (kv_block.h), so found only after the very same
// tokens under the same model and adapter, holds the last block's tokens and the linear
// layers' state after them (ModelRunner::ReadState). It is written when the tree frees it
// (write_back: its node evicted, or the snapshot alone, after the node's path blocks, so that
// the pair is on disk), or as soon as a request takes it (write_through, after the blocks). A
// load brings a run of blocks only up to the deepest one with a snapshot on disk, and the
// snapshot with them: the request then resumes from it as from a snapshot in memory. The same
// store holds both kinds of file, so the size cap and its eviction count and drop them alike;
// a snapshot whose blocks are gone is never loaded (its blocks are looked up first), and blocks
// whose snapshot is gone are not loaded either.
#include <vector>

#include "cache/kv_block.h"
#include "scheduler/scheduler.h"

namespace radixlm {

void Scheduler::WriteStateToDisk(std::span<const int32_t> tokens, int32_t state_slot,
                                 uint64_t domain) {
  const int64_t block = config_.hicache.block_tokens;
  const auto n = static_cast<int64_t>(tokens.size());
  if (disk_ == nullptr || n == 0 || n % block != 0) return;
  PrefixHasher hasher(domain);
  hasher.Update(tokens);
  const BlockKey key = StateSnapshotKey(hasher.key());
  if (!disk_->AcceptsWrite(key)) return;  // held, or writes paused after a failure
  std::vector<uint8_t> payload(static_cast<size_t>(runner_->state_slot_bytes()));
  if (!runner_->ReadState(state_slot, payload).ok()) return;
  const std::span<const int32_t> last = tokens.last(static_cast<size_t>(block));
  disk_->EnqueueWrite(key, std::vector<int32_t>(last.begin(), last.end()), std::move(payload));
}

void Scheduler::WriteSnapshotToDisk(const RadixNode& node) {
  std::vector<int32_t> tokens;
  std::vector<int32_t> slots;
  int32_t key_namespace = 0;
  const std::optional<uint64_t> domain = NodePath(node, &tokens, &slots, &key_namespace);
  if (!domain.has_value() || node.snapshot < 0 ||
      static_cast<int64_t>(tokens.size()) % config_.hicache.block_tokens != 0) {
    return;
  }
  WriteBlocksToDisk(tokens, slots, 0, *domain);
  WriteStateToDisk(tokens, node.snapshot, *domain);
}

void Scheduler::WriteThroughState(const Request& req, int32_t state_slot) {
  if (disk_ == nullptr || !config_.hicache.write_through ||
      req.kv_len % config_.hicache.block_tokens != 0) {
    return;
  }
  const std::optional<uint64_t> domain = DiskDomain(req.cache.key_namespace);
  if (!domain.has_value()) return;
  WriteStateToDisk(std::span<const int32_t>(req.token_ids).first(req.kv_len), state_slot, *domain);
}

bool Scheduler::PlanStateLoad(int64_t matched, DiskLoadPlan* plan) const {
  const int64_t block = config_.hicache.block_tokens;
  for (auto n = static_cast<int64_t>(plan->keys.size()); n > 0; --n) {
    if (plan->start + n * block <= matched) return false;
    const BlockKey key = StateSnapshotKey(plan->keys[n - 1]);
    if (!disk_->Contains(key)) continue;
    plan->keys.resize(static_cast<size_t>(n));
    plan->state_key = key;
    return true;
  }
  return false;
}

bool Scheduler::AttachLoadedState(RadixNode* node, std::span<const uint8_t> state) {
  if (!cache_->WantsSnapshot(node)) return node != cache_->root();  // it has one already
  uint64_t swa_lock_id = 0;
  cache_->IncLockRef(node, &swa_lock_id);  // taking an id may evict snapshots and leaves
  const std::optional<int32_t> id = cache_->AllocateSnapshot(pool_);
  bool attached = false;
  if (id.has_value()) {
    if (runner_->WriteState(*id, state).ok()) {
      cache_->AttachSnapshot(node, *id);
      attached = true;
    } else {
      cache_->FreeSnapshot(*id);
    }
  }
  cache_->DecLockRef(node, swa_lock_id);
  ++tree_version_;
  return attached;
}

}  // namespace radixlm
