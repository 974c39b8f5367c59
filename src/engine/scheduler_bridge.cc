#include "engine/scheduler_bridge.h"

#include <algorithm>

namespace radixlm {
namespace {

Status ApplySpeculativeFlags(const EngineConfig& config, SchedulerConfig* c) {
  const std::string& algo = config.speculative_algorithm;
  if (algo.empty()) {
    if (!config.speculative_draft_model_path.empty()) {
      return InvalidArgument(
          "--speculative-draft-model-path needs --speculative-algorithm STANDALONE");
    }
    return Status::Ok();
  }
  if (algo == "STANDALONE") {
    if (config.speculative_draft_model_path.empty()) {
      return InvalidArgument(
          "--speculative-algorithm STANDALONE needs --speculative-draft-model-path");
    }
    c->speculative_draft_model = true;
    c->speculative_num_steps = config.speculative_num_steps;
    c->speculative_eagle_topk = config.speculative_eagle_topk;
    // As SGLang: a chain (top-1) is num_steps drafted tokens after its root.
    c->speculative_num_draft_tokens = config.speculative_eagle_topk == 1
                                          ? config.speculative_num_steps + 1
                                          : config.speculative_num_draft_tokens;
    return Status::Ok();
  }
  if (algo == "NEXTN") {  // the model's own NextN layer drafts (engine/nextn_runner.h)
    if (!config.speculative_draft_model_path.empty()) {
      return InvalidArgument(
          "--speculative-draft-model-path goes with STANDALONE; NEXTN drafts "
          "with the model's own NextN layer");
    }
    if (config.speculative_eagle_topk != 1) {
      return InvalidArgument(
          "--speculative-algorithm NEXTN drafts chains: "
          "--speculative-eagle-topk must be 1, got " +
          std::to_string(config.speculative_eagle_topk));
    }
    c->speculative_draft_model = true;
    c->speculative_nextn = true;
    c->speculative_num_steps = config.speculative_num_steps;
    c->speculative_eagle_topk = 1;
    c->speculative_num_draft_tokens = config.speculative_num_steps + 1;
    return Status::Ok();
  }
  if (algo != "NGRAM") {
    return InvalidArgument("--speculative-algorithm " + algo +
                           " is not supported; radixlm implements NGRAM, STANDALONE and NEXTN "
                           "(EAGLE-style heads are not built)");
  }
  if (!config.speculative_draft_model_path.empty()) {
    return InvalidArgument(
        "--speculative-draft-model-path needs --speculative-algorithm "
        "STANDALONE, not NGRAM");
  }
  c->speculative_ngram = true;
  c->ngram.num_draft_tokens = config.speculative_num_draft_tokens;
  c->ngram.min_bfs_breadth = config.speculative_ngram_min_bfs_breadth;
  c->ngram.max_bfs_breadth = config.speculative_ngram_max_bfs_breadth;
  c->ngram.max_trie_depth = config.speculative_ngram_max_trie_depth;
  c->ngram.capacity = config.speculative_ngram_capacity;
  RADIXLM_ASSIGN_OR_RETURN(c->ngram.match_type,
                           spec::ParseNgramMatchType(config.speculative_ngram_match_type));
  return Status::Ok();
}

Status ApplyHiCacheFlags(const EngineConfig& config, SchedulerConfig* c) {
  const std::string& backend = config.hicache_storage_backend;
  if (!config.enable_hierarchical_cache) {
    if (!backend.empty()) {
      return InvalidArgument("--hicache-storage-backend needs --enable-hierarchical-cache");
    }
    return Status::Ok();
  }
  if (backend.empty()) {
    return InvalidArgument(
        "--enable-hierarchical-cache needs --hicache-storage-backend file (RAM is the first "
        "tier; a disk directory is the only second tier built)");
  }
  if (backend != "file") {
    return InvalidArgument("--hicache-storage-backend " + backend +
                           " is not supported; radixlm implements only \"file\"");
  }
  const std::string& policy = config.hicache_write_policy;
  if (policy != "write_through" && policy != "write_back") {
    return InvalidArgument("--hicache-write-policy must be write_through or write_back, got " +
                           policy);
  }
  if (config.hicache_storage_dir.empty()) {
    return InvalidArgument("--enable-hierarchical-cache needs --hicache-storage-dir DIR");
  }
  if (!(config.hicache_storage_size_gb > 0) || config.hicache_storage_size_gb > 1e6) {
    return InvalidArgument("--hicache-storage-size must be a positive number of GB, got " +
                           std::to_string(config.hicache_storage_size_gb));
  }
  c->hicache.enable = true;
  c->hicache.write_through = policy == "write_through";
  c->hicache.dir = config.hicache_storage_dir;
  c->hicache.capacity_bytes =
      static_cast<uint64_t>(config.hicache_storage_size_gb * static_cast<double>(1ull << 30));
  // Blocks of at least 64 tokens (a whole number of pages): one file per block.
  c->hicache.block_tokens = (64 + config.page_size - 1) / config.page_size * config.page_size;
  return Status::Ok();
}

}  // namespace

StatusOr<SchedulerConfig> ToSchedulerConfig(const EngineConfig& config, int64_t pool_tokens,
                                            int64_t context, int64_t swa_pool_tokens,
                                            int64_t sliding_window) {
  SchedulerConfig c;
  RADIXLM_ASSIGN_OR_RETURN(c.schedule_policy, ParseSchedulePolicy(config.schedule_policy));
  RADIXLM_ASSIGN_OR_RETURN(c.radix_eviction_policy,
                           ParseEvictionPolicy(config.radix_eviction_policy));
  if (config.page_size < 1) return InvalidArgument("--page-size must be at least 1");
  if (!(config.schedule_conservativeness > 0)) {
    return InvalidArgument("--schedule-conservativeness must be positive");
  }
  c.max_total_tokens = pool_tokens;
  c.swa_max_total_tokens = swa_pool_tokens;
  c.sliding_window = sliding_window;
  c.page_size = config.page_size;
  c.disable_radix_cache = config.disable_radix_cache;
  c.context_length = context;
  c.chunked_prefill_size = config.chunked_prefill_size;
  c.max_prefill_tokens = config.max_prefill_tokens;
  c.max_running_requests =
      config.max_running_requests > 0
          ? config.max_running_requests
          : static_cast<int32_t>(std::clamp<int64_t>(pool_tokens / 32, 1, 256));
  if (config.enable_lora || !config.lora_paths.empty()) {
    c.max_loras_per_batch = config.max_loras_per_batch;
  }
  c.init_new_token_ratio = std::min(1.0, 0.7 * config.schedule_conservativeness);
  if (!(config.defer_long_prefill_s >= 0)) {
    return InvalidArgument("--defer-long-prefill must be at least 0 seconds, got " +
                           std::to_string(config.defer_long_prefill_s));
  }
  c.defer_long_prefill_s = config.defer_long_prefill_s;
  c.random_seed = config.random_seed;
  c.enable_jump_forward = !config.disable_jump_forward;
  RADIXLM_RETURN_IF_ERROR(ApplySpeculativeFlags(config, &c));
  if (!(config.waiting_timeout_s >= 0)) {
    return InvalidArgument("--waiting-timeout must be at least 0 seconds, got " +
                           std::to_string(config.waiting_timeout_s));
  }
  if (!(config.running_timeout_s >= 0)) {
    return InvalidArgument("--running-timeout must be at least 0 seconds, got " +
                           std::to_string(config.running_timeout_s));
  }
  RADIXLM_RETURN_IF_ERROR(ApplyHiCacheFlags(config, &c));
  c.waiting_timeout_s = config.waiting_timeout_s;
  c.running_timeout_s = config.running_timeout_s;
  RADIXLM_RETURN_IF_ERROR(c.Validate());
  return c;
}

EngineSettings ToEngineSettings(const SchedulerConfig& config) {
  return EngineSettings{
      .schedule_policy = SchedulePolicyName(config.schedule_policy),
      .radix_eviction_policy = EvictionPolicyName(config.radix_eviction_policy),
      .max_total_tokens = config.max_total_tokens,
      .swa_max_total_tokens = config.swa_max_total_tokens,
      .sliding_window = config.swa_max_total_tokens > 0 ? config.sliding_window : 0,
      .context_length = config.context_length,
      .chunked_prefill_size = config.chunked_prefill_size,
      .max_prefill_tokens = config.max_prefill_tokens,
      .max_running_requests = config.max_running_requests,
      .page_size = config.page_size,
      .disable_radix_cache = config.disable_radix_cache,
      .enable_jump_forward = config.enable_jump_forward,
      .speculative_algorithm = config.speculative_ngram         ? "NGRAM"
                               : config.speculative_nextn       ? "NEXTN"
                               : config.speculative_draft_model ? "STANDALONE"
                                                                : "",
      .speculative_num_draft_tokens =
          config.speculative_ngram ? config.ngram.num_draft_tokens
          : config.speculative_draft_model
              ? (config.speculative_eagle_topk > 1 ? config.speculative_num_draft_tokens
                                                   : config.speculative_num_steps + 1)
              : 0,
      .defer_long_prefill_s = config.defer_long_prefill_s,
      .waiting_timeout_s = config.waiting_timeout_s,
      .running_timeout_s = config.running_timeout_s,
      .hicache_write_policy = !config.hicache.enable         ? ""
                              : config.hicache.write_through ? "write_through"
                                                             : "write_back",
      .hicache_storage_dir = config.hicache.dir,
      .hicache_storage_bytes = config.hicache.capacity_bytes,
      .hicache_block_tokens = config.hicache.enable ? config.hicache.block_tokens : 0,
  };
}

Scheduler::PauseMode ToSchedulerPauseMode(PauseMode mode) {
  switch (mode) {
    case PauseMode::kAbort:
      return Scheduler::PauseMode::kAbort;
    case PauseMode::kRetract:
      return Scheduler::PauseMode::kRetract;
    case PauseMode::kInPlace:
      return Scheduler::PauseMode::kInPlace;
  }
  return Scheduler::PauseMode::kAbort;
}

SchedulerCounters ToSchedulerCounters(const SchedulerStats& s) {
  return SchedulerCounters{
      .running_requests = s.running_requests,
      .prefilling_requests = s.prefilling_requests,
      .waiting_requests = s.waiting_requests,
      .waiting_tokens = s.waiting_tokens,
      .waiting_uncached_tokens = s.waiting_uncached_tokens,
      .grammar_queue_requests = s.grammar_queue_requests,
      .paused = s.paused,
      .pool_size = s.pool_size,
      .pool_free = s.pool_free,
      .pool_used = s.pool_used,
      .evictable_tokens = s.evictable_tokens,
      .protected_tokens = s.protected_tokens,
      .swa_pool_size = s.swa_pool_size,
      .swa_pool_free = s.swa_pool_free,
      .swa_evictable_tokens = s.swa_evictable_tokens,
      .swa_protected_tokens = s.swa_protected_tokens,
      .state_snapshots = s.state_snapshots,
      .state_snapshot_capacity = s.state_snapshot_capacity,
      .state_snapshots_protected = s.state_snapshots_protected,
      .state_snapshot_bytes = s.state_snapshot_bytes,
      .state_snapshots_taken = s.state_snapshots_taken,
      .state_snapshot_resumes = s.state_snapshot_resumes,
      .cache_hit_tokens = s.cache_hit_tokens,
      .prefill_tokens = s.prefill_tokens,
      .decode_tokens = s.decode_tokens,
      .retractions = s.retractions,
      .reclaimed_session_pins = s.reclaimed_pins,
      .forward_passes = s.forward_passes,
      .finished_requests = s.finished_requests,
      .aborted_requests = s.aborted_requests,
      .new_token_ratio = s.new_token_ratio,
      .cache_op_seconds = s.cache_op_seconds,
      .cache_ops = s.cache_ops,
      .jump_forwards = s.jump_forwards,
      .jump_forward_tokens = s.jump_forward_tokens,
      .grammar_masks = s.grammar_masks,
      .grammar_mask_seconds = s.grammar_mask_seconds,
      .forward_seconds = s.forward_seconds,
      .deferred_prefill_steps = s.deferred_prefill_steps,
      .spec_verify_steps = s.spec_verify_steps,
      .spec_drafted_tokens = s.spec_drafted_tokens,
      .spec_accepted_tokens = s.spec_accepted_tokens,
      .hicache =
          HiCacheCounters{
              .enabled = s.hicache_enabled,
              .disk_tokens = s.disk.blocks * s.disk_block_tokens,
              .disk_bytes = s.disk.bytes_on_disk,
              .disk_hit_tokens = s.disk_hit_tokens,
              .blocks_loaded = s.disk.blocks_loaded,
              .bytes_loaded = s.disk.bytes_loaded,
              .load_seconds = s.disk.load_seconds,
              .blocks_stored = s.disk.blocks_stored,
              .bytes_stored = s.disk.bytes_stored,
              .store_seconds = s.disk.store_seconds,
              .load_failures = s.disk.load_failures,
              .write_failures = s.disk.write_failures,
              .writes_dropped = s.disk.writes_dropped,
              .files_evicted = s.disk.files_evicted,
          },
      .spec_ngram_dropped_tokens = s.spec_ngram_dropped_tokens,
  };
}

}  // namespace radixlm
