// SchedulerConfig: every knob of the scheduler, with SGLang's flag names and defaults where
// SGLang has them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cache/eviction_policy.h"
#include "spec/ngram_cache.h"
#include "util/status.h"

namespace radixlm {

class BlockFileIo;  // cache/block_file_io.h

// --schedule-policy.
enum class SchedulePolicyKind { kFcfs, kLpm, kDfsWeight, kLof, kRandom, kPriority };

// "fcfs" | "lpm" | "dfs-weight" | "lof" | "random" | "priority"; anything else is
// InvalidArgument naming the accepted values.
StatusOr<SchedulePolicyKind> ParseSchedulePolicy(std::string_view name);
const char* SchedulePolicyName(SchedulePolicyKind kind);

struct SchedulerConfig {
  // --- memory ---
  int64_t max_total_tokens = 0;  // KV pool size in tokens (--max-total-tokens); required
  int32_t page_size = 1;         // --page-size
  bool disable_radix_cache = false;
  EvictionPolicy radix_eviction_policy = EvictionPolicy::kLru;
  int64_t context_length = 0;  // <= 0: the runner's context length; never more than it
  // Sliding-window memory (SGLang's hybrid SWA pool): with both > 0, the KV of sliding-window
  // layers lives in a second pool of swa_max_total_tokens slots (max_total_tokens then counts
  // full-attention slots), tokens a window can no longer see release it, and the radix cache is
  // SWA-aware (RadixCache, "Sliding-window awareness"). sliding_window: the model's window.
  // The SWA pool needs at least 2 (sliding_window + 2 page_size) slots, or max_total_tokens.
  int64_t swa_max_total_tokens = 0;
  int64_t sliding_window = 0;
  // Hybrid models (a runner with state_slots() > 0; scheduler_snapshots.cc). With the radix
  // cache on, the tree keeps snapshots of the linear layers' state (RadixCache "State
  // snapshots") in the runner's state slots after the max_running_requests rows: at most
  // state_snapshot_slots of them (SGLang's --max-mamba-cache-size); at least 1 then. A
  // snapshot is taken where a prompt's prefill ends, where a request's KV goes to the tree,
  // and every hybrid_snapshot_interval tokens of a prefill (--hybrid-snapshot-interval, a
  // multiple of page_size): a prefill chunk ends at the next multiple of it.
  int32_t state_snapshot_slots = 0;
  int64_t hybrid_snapshot_interval = 512;

  // --- batching ---
  SchedulePolicyKind schedule_policy = SchedulePolicyKind::kLpm;
  int64_t chunked_prefill_size = 8192;  // <= 0: disabled (the runner's batch cap still applies)
  int64_t max_prefill_tokens = 16384;   // new prefill tokens per batch (one request may exceed)
  int32_t max_running_requests = 256;   // requests holding KV (decoding + prefilling)
  // Distinct LoRA adapters among the requests holding KV (they share forward passes); a
  // waiting request of another adapter waits. <= 0: no bound (--max-loras-per-batch).
  int32_t max_loras_per_batch = 0;
  // Shortest remaining work first (scheduler/prefill_deferral.h): a prefill estimated to take at
  // least this many seconds waits while every running decode would finish before it does.
  // 0 (SGLang's behaviour, and the default here): never; the server's default is 1 second
  // (--defer-long-prefill).
  double defer_long_prefill_s = 0;

  // --- decode reserve (SGLang's new_token_ratio) ---
  // A running request is expected to still need min(remaining max_new_tokens, clip) * ratio
  // tokens; the ratio starts at init, decays by (init - init * min_factor) / decay_steps per
  // decode step down to init * min_factor, and is raised again after a retraction.
  double init_new_token_ratio = 0.7;
  double min_new_token_ratio_factor = 0.14;
  int32_t new_token_ratio_decay_steps = 600;
  int32_t clip_max_new_tokens = 4096;
  int32_t retract_decode_steps = 20;  // after a retraction, room for this many steps per request

  // --- cache-aware policies ---
  // In-batch prefix dedup: a waiting request whose first (cache match + this many) tokens equal
  // those of a request already admitted this round waits a round, so that request fills the
  // tree first (SGLang checks only requests whose match is <= this; radixlm checks past any
  // match, which also dedups nested sharing). <= 0 disables.
  int32_t in_batch_prefix_threshold = 32;
  // LPM re-matches at most this many stale waiting requests per pass (new ones first, then
  // round-robin), and stops early once this many tokens have been matched.
  int32_t lpm_rematch_max_requests = 256;
  int64_t lpm_rematch_max_tokens = 1 << 20;
  // A waiting request passed over this many times, or waiting this long, goes first
  // (all policies but fcfs and priority). <= 0 disables the respective bound.
  int32_t starvation_max_skips = 128;
  double starvation_max_wait_s = 30.0;

  // --- logprobs ---
  // Most prompt positions whose full logits (kAll rows) one batch computes; prompts asking for
  // input logprobs are chunked to fit, which bounds the [rows, vocab] logits buffer.
  int64_t max_logprob_rows_per_batch = 128;

  uint64_t random_seed = 0;  // the random policy's shuffle

  // --- constrained decoding ---
  // Jump-forward (--disable-jump-forward turns it off): where a request's grammar forces the
  // next bytes, they are appended without forward passes, the newest sampled token and the
  // forced text are retokenized together, and the request re-enters as an extend over its
  // cached prefix. Needs the radix cache (off when it is disabled) and a codec that can
  // encode a continuation. See scheduler_jump_forward.cc.
  bool enable_jump_forward = true;

  // --- speculative decoding (--speculative-algorithm NGRAM) ---
  // Decoding requests get n-gram draft trees (cut to what their grammar allows, if they have
  // one) verified in the decode forward; each drafted token is kept only if the request's own
  // sampler, run on that node's logits, picks it, so outputs are exactly those without speculation
  // (greedy or seeded) and follow the model's distribution otherwise. See scheduler_speculative.cc.
  bool speculative_ngram = false;
  spec::NgramConfig ngram;
  // The trie is filled on a background thread (spec/ngram_filler.h); at most this many new
  // tokens wait for it, the oldest batches dropped past that (the scheduler never waits).
  int64_t speculative_ngram_fill_queue_tokens = 1 << 20;
  // --speculative-algorithm STANDALONE: drafts are chains of up to speculative_num_steps
  // tokens (or top-k trees, below) from a draft model (the draft runner given to
  // Scheduler::Create), verified the same way. See scheduler_draft_model.cc.
  bool speculative_draft_model = false;
  // --speculative-algorithm NEXTN: the draft model is the target's own NextN layer
  // (engine/nextn_runner.h; chains only). With speculative_draft_model.
  bool speculative_nextn = false;
  int32_t speculative_num_steps = 3;
  // --speculative-eagle-topk: 1 drafts chains; K > 1 drafts trees, each node expanded into its
  // K likeliest tokens, of at most speculative_num_draft_tokens nodes (root included) and
  // speculative_num_steps levels (spec/topk_tree_builder.h, scheduler_draft_tree.cc).
  int32_t speculative_eagle_topk = 1;
  int32_t speculative_num_draft_tokens = 12;
  // Most drafted tokens (roots excluded) one forward carries over all requests: past the
  // weight-bound regime of small batches, every drafted token costs real compute.
  int32_t speculative_max_draft_tokens_per_batch = 32;
  // Draft pacing by kept share and batch size (spec/draft_pacing.h). Off only in tests that
  // count the forward passes of whole drafts; the back-off after a draft that kept nothing
  // stays either way.
  bool speculative_pacing = true;
  // --- timeouts (SGLang's SGLANG_REQ_WAITING_TIMEOUT / SGLANG_REQ_RUNNING_TIMEOUT) ---
  // Seconds on the scheduler's clock; 0: none (negative or NaN: InvalidArgument). Checked once per
  // Step (scheduler_timeouts.cc) and not while generation is paused. waiting: since AddRequest, for
  // a request never admitted (it finishes with an abort carrying status 503). running: since its
  // first admission, for a request holding KV (prefilling or decoding).
  double waiting_timeout_s = 0;
  double running_timeout_s = 0;

  // --- disk tier (--enable-hierarchical-cache; scheduler_hicache.cc) ---
  struct HiCache {
    bool enable = false;
    bool write_through = false;   // --hicache-write-policy write_through (else write_back)
    std::string dir;              // --hicache-storage-dir
    uint64_t capacity_bytes = 0;  // --hicache-storage-size, in bytes
    // Identity of the model, its KV layout and the flags that change KV (see
    // engine_loader.cc); blocks of another identity are never used.
    uint64_t model_id = 0;
    int32_t block_tokens = 64;  // tokens per disk block; a multiple of page_size
    // Loads on the store's loader thread while the request waits in a load queue (else
    // synchronously at admission).
    bool async_load = true;
    // The disk store's file operations; null: the real file system. Tests pass one with
    // faults (a full disk); not owned, outlives the scheduler.
    BlockFileIo* file_io = nullptr;
  } hicache;

  // InvalidArgument naming the field when a value is out of range.
  Status Validate() const;
};

}  // namespace radixlm
