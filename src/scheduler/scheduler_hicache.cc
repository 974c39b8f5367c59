// Scheduler: the disk tier of the KV cache (SGLang's HiCache with a file storage backend;
// cache/disk_store.h holds the files).
//
// Blocks. The unit on disk is a block of config_.hicache.block_tokens tokens (a multiple of the
// page size) at a block-aligned position; its key is the hash of the whole token prefix up to
// the block's end (kv_block.h), so a block is reused only after the very same prefix.
//
// LoRA adapters. The tree keeps an adapter's KV in a namespace of its own (its keys offset by
// the namespace, RadixCache "Namespaces"); on disk, a block holds the token ids themselves and
// its prefix hash is seeded with the adapter's content identity (DiskDomain; the base model's
// is 0). So a block computed under adapter A is found only for A, never for another adapter
// or the base model, and a restarted server finds it again for the same adapter file, whatever
// its namespace number or name there. A namespace whose adapter identity the scheduler has not
// learnt (no request of it carried one) neither writes nor loads.
//
// Writes. write_back: a node's blocks are written when its KV is about to be released (the
// radix cache's release observer: eviction, or the release of its windowed KV), after those of
// its ancestors not on disk yet: a block is found on disk only after every block before it,
// and eviction releases leaves first, so writing only the node's own blocks would store a
// prefix's end before its start (useless while the disk fills up, and after a restart when
// the start, a prefix still in RAM, was never evicted). write_through:
// also as soon as a request's KV enters the tree (after each prefill chunk and when it
// finishes). Either way a block is written only while every layer's KV of all its tokens is
// held: with the hybrid sliding-window pool, a block containing a token whose windowed KV was
// already released is not written (its full-layer KV alone could not serve a match), so a
// released node also writes, for each path below it, the block that starts in it and ends
// below (WriteStraddlingBlocks: the window's release splits nodes inside blocks). A
// decoding request's own tokens (its output) lose their windowed KV as its window moves on
// (ReleaseOutOfWindowKv, before they are in the tree); just before that, under either policy,
// the blocks the release reaches into whose KV is all computed are offered
// (WriteBeforeWindowRelease). A block is complete before the release reaches it whenever
// sliding_window >= block_tokens (Gemma-3: 512 and 64); with a smaller window its first tokens
// lose their windowed KV before its last one is computed, and it is not stored. The
// scheduler thread only copies the KV bytes out (ModelRunner::ReadKv); the store's writer
// thread encodes and writes them. While the store pauses writes after a failure (a full disk),
// blocks are not even copied out (DiskStore::AcceptsWrite).
//
// Loads. When a waiting request's match ends before what its prompt could reuse, the blocks
// that follow are looked up on disk (an in-memory index), in order, up to the first one
// missing. They are loaded only when that gives at least one full block of tokens beyond the
// RAM match (loading less than a block's worth never beats computing it). With
// config_.hicache.async_load (the default) the request then waits in the load queue
// (disk_load_pending; admission passes over it) while the store's loader thread reads and
// checks the blocks and the scheduler keeps stepping the others; each round, finished loads are
// taken, and their blocks that still extend what RAM holds get slots (evicting as a decode
// would), their KV is written into the KV storage and they are inserted into the radix tree, so
// the request's next match (and any later one) takes them from RAM. Without async_load the same
// happens synchronously inside admission. A block that fails to load ends its run there; the
// rest is recomputed. A request is sent to the load queue at most kMaxDiskLoadAttempts times.
//
// A hybrid model's state snapshots (scheduler_hicache_state.cc) go to disk beside the block
// ending where they were taken, and a load brings the blocks up to the deepest snapshot on disk
// with that snapshot, or nothing (KV the linear layers cannot resume from is useless).
#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "cache/kv_block.h"
#include "scheduler/scheduler.h"
#include "util/check.h"

namespace radixlm {
namespace {

// Appends the first n ids of a tree key of namespace key_namespace as token ids (RadixCache
// "Namespaces").
void AppendTokenIds(std::span<const int32_t> key, size_t n, int32_t key_namespace,
                    std::vector<int32_t>* out) {
  const int32_t offset = key_namespace * RadixCache::kKeyNamespaceStride;
  for (size_t i = 0; i < n; ++i) out->push_back(key[i] - offset);
}

}  // namespace

Status Scheduler::OpenDiskTier() {
  const SchedulerConfig::HiCache& h = config_.hicache;
  if (!h.enable) return Status::Ok();
  if (config_.disable_radix_cache) {
    return InvalidArgument(
        "--enable-hierarchical-cache needs the radix cache (drop "
        "--disable-radix-cache)");
  }
  if (config_.speculative_draft_model) {
    return InvalidArgument(
        "--enable-hierarchical-cache is not built for a draft model "
        "(its KV cache would miss the loaded prefixes)");
  }
  if (runner_->kv_token_bytes() <= 0) {
    return InvalidArgument("--enable-hierarchical-cache: this model runner cannot move KV");
  }
  DiskStoreConfig store;
  store.dir = h.dir;
  store.capacity_bytes = h.capacity_bytes;
  store.model_id = h.model_id;
  store.io = h.file_io;
  RADIXLM_ASSIGN_OR_RETURN(disk_, DiskStore::Open(std::move(store)));
  cache_->set_release_observer([this](const RadixNode& node) { WriteNodeToDisk(node); });
  if (cache_->snapshots_enabled()) {
    cache_->set_snapshot_observer([this](const RadixNode& node) { WriteSnapshotToDisk(node); });
  }
  return Status::Ok();
}

StatusOr<int64_t> Scheduler::ClearDiskTier() {
  if (disk_ == nullptr) {
    return InvalidArgument(
        "the hierarchical cache is not enabled (--enable-hierarchical-cache "
        "--hicache-storage-backend file)");
  }
  return disk_->Clear();
}

std::optional<uint64_t> Scheduler::DiskDomain(int32_t key_namespace) const {
  if (key_namespace == 0) return 0;
  auto it = lora_identities_.find(key_namespace);
  if (it == lora_identities_.end()) return std::nullopt;
  return it->second;
}

void Scheduler::WriteBlocksToDisk(std::span<const int32_t> tokens, std::span<const int32_t> slots,
                                  int64_t from, uint64_t domain) {
  const int64_t block = config_.hicache.block_tokens;
  const int64_t token_bytes = runner_->kv_token_bytes();
  const auto n = static_cast<int64_t>(tokens.size());
  PrefixHasher hasher(domain);
  std::vector<int32_t> swa_rows;
  for (int64_t end = block; end <= n; end += block) {
    hasher.Update(tokens.subspan(end - block, block));
    if (end <= from) continue;
    const BlockKey key = hasher.key();
    if (!disk_->AcceptsWrite(key)) continue;  // held, or writes paused after a failure
    const std::span<const int32_t> run = slots.subspan(end - block, block);
    swa_rows.clear();
    if (pool_.has_swa()) {
      bool all_layers = true;
      for (const int32_t slot : run) {
        all_layers = all_layers && pool_.HasSwa(slot);
        swa_rows.push_back(pool_.swa_slot_map()[slot]);
      }
      if (!all_layers) continue;  // windowed KV released: not storable (see above)
    }
    std::vector<uint8_t> payload(static_cast<size_t>(block * token_bytes));
    if (!runner_->ReadKv(run, swa_rows, payload).ok()) continue;
    const std::span<const int32_t> ids = tokens.subspan(end - block, block);
    disk_->EnqueueWrite(key, std::vector<int32_t>(ids.begin(), ids.end()), std::move(payload));
  }
}

std::optional<uint64_t> Scheduler::NodePath(const RadixNode& node, std::vector<int32_t>* tokens,
                                            std::vector<int32_t>* slots,
                                            int32_t* key_namespace) const {
  std::vector<const RadixNode*> path;
  for (const RadixNode* n = &node; n != nullptr && n->parent != nullptr; n = n->parent) {
    path.push_back(n);
  }
  if (path.empty() || path.back()->key.empty()) return std::nullopt;
  // The namespace of the path (all of it: namespaces never share a node), from its first id;
  // without adapters ids are plain (and may exceed the stride: LoRA refuses such vocabularies).
  *key_namespace =
      lora_identities_.empty() ? 0 : path.back()->key.front() / RadixCache::kKeyNamespaceStride;
  const std::optional<uint64_t> domain = DiskDomain(*key_namespace);
  if (!domain.has_value()) return std::nullopt;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    AppendTokenIds((*it)->key, (*it)->key.size(), *key_namespace, tokens);
    slots->insert(slots->end(), (*it)->value.begin(), (*it)->value.end());
  }
  return domain;
}

void Scheduler::WriteNodeToDisk(const RadixNode& node) {
  std::vector<int32_t> tokens;
  std::vector<int32_t> slots;
  int32_t key_namespace = 0;
  const std::optional<uint64_t> domain = NodePath(node, &tokens, &slots, &key_namespace);
  if (!domain.has_value()) return;
  // From position 0: the ancestors' blocks not on disk yet go first (see the top).
  WriteBlocksToDisk(tokens, slots, 0, *domain);
  // A hybrid model's snapshot at the node's end goes beside its last block.
  if (node.snapshot >= 0) WriteStateToDisk(tokens, node.snapshot, *domain);
  // The block that starts in this node and ends below it: its tokens below keep their windowed
  // KV (a window is released from the front), this node's is about to go, so it is now or
  // never. Without it a sliding-window model's stored prefix would stop at the first split
  // that the window's release made inside a block.
  const auto total = static_cast<int64_t>(tokens.size());
  const int64_t block = config_.hicache.block_tokens;
  if (total % block != 0) {
    WriteStraddlingBlocks(node, (total / block + 1) * block, tokens, slots, key_namespace, *domain);
  }
}

void Scheduler::WriteStraddlingBlocks(const RadixNode& node, int64_t block_end,
                                      std::vector<int32_t>& tokens, std::vector<int32_t>& slots,
                                      int32_t key_namespace, uint64_t domain) {
  const size_t depth = tokens.size();
  for (const auto& [page, child] : node.children) {
    const size_t take = std::min(child->key.size(), static_cast<size_t>(block_end) - depth);
    AppendTokenIds(child->key, take, key_namespace, &tokens);
    slots.insert(slots.end(), child->value.begin(), child->value.begin() + take);
    if (static_cast<int64_t>(tokens.size()) == block_end) {
      WriteBlocksToDisk(tokens, slots, block_end - config_.hicache.block_tokens + 1, domain);
    } else {
      WriteStraddlingBlocks(*child, block_end, tokens, slots, key_namespace, domain);
    }
    tokens.resize(depth);
    slots.resize(depth);
  }
}

void Scheduler::WriteThroughToDisk(Request* req) {
  if (disk_ == nullptr || !config_.hicache.write_through || req->cache.req_pool_index < 0) return;
  const int64_t n = req->kv_len / config_.hicache.block_tokens * config_.hicache.block_tokens;
  if (n <= req->disk_written_len) return;
  const std::optional<uint64_t> domain = DiskDomain(req->cache.key_namespace);
  if (!domain.has_value()) return;
  WriteBlocksToDisk(std::span<const int32_t>(req->token_ids).first(n),
                    std::as_const(table_).Row(req->cache.req_pool_index).first(n),
                    req->disk_written_len, *domain);
  req->disk_written_len = n;
}

void Scheduler::WriteBeforeWindowRelease(Request* req, int64_t until) {
  const int64_t block = config_.hicache.block_tokens;
  // Blocks starting before `until` (the release reaches into them) and ending within kv_len.
  const int64_t end = std::min(req->kv_len / block, (until + block - 1) / block) * block;
  // The tree's blocks are the tree's to write (its release observer); a block straddling the
  // end of the tree's prefix is offered here.
  const auto prefix = static_cast<int64_t>(req->cache.prefix_slots.size());
  const int64_t from = std::max(req->disk_written_len, prefix / block * block);
  if (end <= from) return;
  const std::optional<uint64_t> domain = DiskDomain(req->cache.key_namespace);
  if (!domain.has_value()) return;
  WriteBlocksToDisk(std::span<const int32_t>(req->token_ids).first(end),
                    std::as_const(table_).Row(req->cache.req_pool_index).first(end), from, *domain);
  req->disk_written_len = end;
}

std::optional<Scheduler::DiskLoadPlan> Scheduler::PlanDiskLoad(const Request& req,
                                                               int64_t matched) const {
  if (disk_ == nullptr) return std::nullopt;
  const std::optional<uint64_t> domain = DiskDomain(req.cache.key_namespace);
  if (!domain.has_value()) return std::nullopt;
  const int64_t block = config_.hicache.block_tokens;
  const int64_t limit = req.MaxPrefixLen() / block * block;
  if (limit - matched < block) return std::nullopt;
  const std::span<const int32_t> tokens(req.token_ids);
  DiskLoadPlan plan;
  plan.start = matched / block * block;
  PrefixHasher hasher(*domain);
  hasher.Update(tokens.first(plan.start));
  for (int64_t end = plan.start + block; end <= limit; end += block) {
    hasher.Update(tokens.subspan(end - block, block));
    if (!disk_->Contains(hasher.key())) break;
    plan.keys.push_back(hasher.key());
  }
  if (cache_->snapshots_enabled() && !PlanStateLoad(matched, &plan)) return std::nullopt;
  const int64_t end = plan.start + static_cast<int64_t>(plan.keys.size()) * block;
  if (end - matched < block) return std::nullopt;  // less than a block beyond RAM: recompute
  return plan;
}

int64_t Scheduler::InsertLoadedBlocks(Request* req, int64_t start, std::span<const uint8_t> bytes,
                                      int64_t n_blocks, std::span<const uint8_t> state) {
  // A hybrid model's KV is of no use without the state after it (see the top).
  if (cache_->snapshots_enabled() && state.empty()) return 0;
  const int64_t block = config_.hicache.block_tokens;
  const int64_t token_bytes = runner_->kv_token_bytes();
  const std::span<const int32_t> tokens(req->token_ids);
  const int64_t end = start + n_blocks * block;
  RadixCache::MatchResult match = [&] {
    const CacheOpTimer timer(stats_);
    return cache_->MatchPrefix(tokens.first(req->MaxPrefixLen()), req->cache.key_namespace);
  }();
  const auto matched = static_cast<int64_t>(match.slots.size());
  // The tree may have changed while the blocks were read: they extend it only when what RAM
  // holds now reaches their start (no gap) and stops before their end.
  if (matched < start || matched >= end) return 0;
  const int64_t first = matched / block * block;  // the first block not wholly in RAM
  const int64_t n = end - first;
  uint64_t swa_lock_id = 0;
  RadixNode* node = match.last_node;
  {
    const CacheOpTimer timer(stats_);
    cache_->IncLockRef(node, &swa_lock_id);  // kept while slots are made (eviction)
  }
  std::optional<std::vector<int32_t>> slots;
  if (EnsureFreePages(n / pool_.page_size())) slots = pool_.Allocate(n);
  bool written = false;
  if (slots.has_value()) {
    std::vector<int32_t> swa_rows;
    if (pool_.has_swa()) {
      for (const int32_t slot : *slots) swa_rows.push_back(pool_.swa_slot_map()[slot]);
    }
    written = runner_
                  ->WriteKv(*slots, swa_rows,
                            bytes.subspan(static_cast<size_t>((first - start) * token_bytes),
                                          static_cast<size_t>(n * token_bytes)))
                  .ok();
    if (!written) pool_.Free(*slots);
  }
  const CacheOpTimer timer(stats_);
  int64_t gained = 0;
  if (written) {
    // The tree's own slots up to `first`, then the loaded ones; the loaded copies of tokens
    // the tree already has are duplicates, freed.
    std::vector<int32_t> run(match.slots.begin(), match.slots.begin() + first);
    run.insert(run.end(), slots->begin(), slots->end());
    const std::span<const int32_t> key =
        RadixCache::NamespacedKey(tokens.first(end), req->cache.key_namespace, &disk_key_scratch_);
    RadixNode* end_node = nullptr;
    const auto present =
        static_cast<int64_t>(cache_->Insert(key, run, req->in.priority, &pool_, &end_node));
    RADIXLM_CHECK_GE(present, matched) << "a locked prefix was evicted";
    pool_.Free(std::span<const int32_t>(*slots).first(present - first));
    ++tree_version_;
    if (state.empty() || AttachLoadedState(end_node, state)) {
      gained = end - matched;
      stats_.disk_hit_tokens += gained;
    }
  }
  cache_->DecLockRef(node, swa_lock_id);
  return gained;
}

void Scheduler::LoadFromDisk(Request* req, RadixCache::MatchResult* match) {
  std::optional<DiskLoadPlan> plan = PlanDiskLoad(*req, static_cast<int64_t>(match->slots.size()));
  if (!plan.has_value()) return;
  const int64_t block = config_.hicache.block_tokens;
  const auto block_bytes = static_cast<size_t>(block * runner_->kv_token_bytes());
  disk_buffer_.resize(plan->keys.size() * block_bytes);
  const std::span<const int32_t> tokens(req->token_ids);
  int64_t loaded = 0;
  for (const BlockKey& key : plan->keys) {
    const std::span<uint8_t> out =
        std::span<uint8_t>(disk_buffer_)
            .subspan(static_cast<size_t>(loaded) * block_bytes, block_bytes);
    if (!disk_->Load(key, tokens.subspan(plan->start + loaded * block, block), out).ok()) break;
    ++loaded;
  }
  // A hybrid model's state after the last block (whose tokens its file holds too).
  std::vector<uint8_t> state;
  if (plan->state_key.has_value() && loaded == static_cast<int64_t>(plan->keys.size())) {
    state.resize(static_cast<size_t>(runner_->state_slot_bytes()));
    if (!disk_
             ->Load(*plan->state_key, tokens.subspan(plan->start + (loaded - 1) * block, block),
                    state)
             .ok()) {
      state.clear();
    }
  }
  if (loaded == 0 || InsertLoadedBlocks(req, plan->start, disk_buffer_, loaded, state) == 0) {
    return;
  }
  const CacheOpTimer timer(stats_);
  *match = cache_->MatchPrefix(tokens.first(req->MaxPrefixLen()), req->cache.key_namespace);
}

bool Scheduler::SubmitDiskLoad(Request* req, int64_t matched) {
  if (disk_ == nullptr || req->disk_load_attempts >= kMaxDiskLoadAttempts) return false;
  std::optional<DiskLoadPlan> plan = PlanDiskLoad(*req, matched);
  if (!plan.has_value()) return false;
  const int64_t block = config_.hicache.block_tokens;
  DiskLoadJob job;
  job.ticket = next_disk_ticket_++;
  job.tokens.assign(
      req->token_ids.begin() + plan->start,
      req->token_ids.begin() + plan->start + static_cast<int64_t>(plan->keys.size()) * block);
  job.keys = std::move(plan->keys);
  job.block_bytes = static_cast<size_t>(block * runner_->kv_token_bytes());
  if (plan->state_key.has_value()) {
    job.state_key = *plan->state_key;
    job.state_bytes = static_cast<size_t>(runner_->state_slot_bytes());
  }
  req->disk_load_pending = true;
  req->disk_load_ticket = job.ticket;
  ++req->disk_load_attempts;
  disk_loads_[job.ticket] = PendingDiskLoad{req, plan->start};
  disk_->SubmitLoad(std::move(job));
  return true;
}

void Scheduler::PollDiskLoads() {
  if (disk_ == nullptr || disk_loads_.empty()) return;
  std::vector<DiskLoadResult> results;
  disk_->TakeLoadResults(&results);
  for (DiskLoadResult& r : results) {
    auto it = disk_loads_.find(r.ticket);
    if (it == disk_loads_.end()) continue;  // its request ended meanwhile
    const PendingDiskLoad pending = it->second;
    disk_loads_.erase(it);
    pending.req->disk_load_pending = false;
    pending.req->match_len = -1;  // re-matched at admission
    if (r.blocks_loaded > 0)
      InsertLoadedBlocks(pending.req, pending.start, r.bytes, r.blocks_loaded, r.state);
  }
}

void Scheduler::DropDiskLoad(Request* req) {
  if (!req->disk_load_pending) return;
  disk_loads_.erase(req->disk_load_ticket);
  req->disk_load_pending = false;
}

bool Scheduler::WaitForDiskLoads() {
  if (disk_ == nullptr || disk_loads_.empty()) return false;
  disk_->WaitForLoadResult(std::chrono::milliseconds(20));
  return true;
}

}  // namespace radixlm
