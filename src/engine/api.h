// The engine's public surface, in its own small types: what the HTTP server, the frontend
// language, benchmarks and tests exchange with an Engine (engine.h), and nothing of the
// scheduler, the cache or the model file behind it.
//
//   GenerateRequest  a request, mapping one-to-one onto SGLang's native POST /generate JSON:
//                    {"rid", "text" | "input_ids", "sampling_params", "return_logprob",
//                     "logprob_start_len", "top_logprobs_num", "token_ids_logprob", "stream",
//                     "priority", "session_params"}
//   GenerateOutput   one streamed chunk of one sample: deltas since the previous chunk
//                    (sampling/generate_output.h: the scheduler emits this type itself)
//   GenerateResult   the same type: one sample's chunks concatenated (result_json.h writes
//                    SGLang's JSON of it)
//   EngineStats      a snapshot of the engine's counters (/get_server_info, /metrics)
//   EngineSettings   the scheduling settings the engine resolved from its EngineConfig
//   PrefixPin        a cached prefix kept from eviction (Engine::PinPrefix)
//   PauseMode        how Engine::PauseGeneration treats the requests in flight
//   SessionParams, OpenSessionRequest   sessions (Engine::OpenSession, session_table.h)
// Abort and flush are Engine methods (by rid; no argument).
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sampling/generate_output.h"
#include "sampling/sampling_params.h"
#include "util/status.h"

namespace radixlm {

// SGLang's session_params on /generate: run this request as a turn of an open session
// (engine/session_table.h says how its prompt is composed).
struct SessionParams {
  std::string id;                     // the session
  std::optional<std::string> rid;     // the turn to continue from
  std::optional<int64_t> offset;      // cut the continued turn's tokens here (a Python slice end)
  bool replace = false;               // drop the turns after `rid` (abort it if it still runs)
  bool drop_previous_output = false;  // continue from the turn's prompt, not its output
};

// SGLang's POST /open_session body.
struct OpenSessionRequest {
  int64_t capacity_of_str_len = 0;        // accepted and reported, not enforced (as SGLang)
  std::optional<std::string> session_id;  // unset: the engine makes one up
  bool streaming = false;  // turns without a rid continue from the last complete turn
  // SGLang's timeout: seconds after the session's last turn started (or its opening) at which
  // it closes itself, as /close_session would; unset: never.
  std::optional<double> timeout;
};

// The KV of a token prefix, every layer, as prefill/decode disaggregation moves it between
// servers (docs/disaggregation.md; disagg/kv_transfer_record.h has the same layout): for each
// layer in order, its K rows then its V rows for positions [rows_from[layer], tokens.size()),
// each row `row_elems` values of `dtype` (kernels::KvDtype as an integer; 2 bytes each, 1 for
// fp8_e5m2). Full-attention
// layers have every position; sliding-window layers may start later. A hybrid model's record
// also carries its linear layers' state after all of `tokens` (model/recurrent_state.h).
struct PrefixKv {
  std::vector<int32_t> tokens;
  int32_t row_elems = 0;
  int32_t dtype = 0;
  std::vector<uint32_t> rows_from;  // [n_layers]
  std::vector<uint8_t> kv;
  // The LoRA adapter the KV was computed under: its content identity (LoraAdapter::identity;
  // 0: the base model), which an importing request's adapter must equal, and its name on the
  // exporting server ("": the base model), for messages.
  uint64_t lora_identity = 0;
  std::string lora_name;
  // A hybrid model's linear layers (state_layers > 0; 0: a model without them): their shape
  // (RecurrentState's conv_floats and delta_floats per layer) and their state after all of
  // `tokens`, as RecurrentState::ReadSlot lays it out (f32): state_layers * (conv + delta) * 4
  // bytes, or none when `tokens` is empty (the initial, zero state).
  uint32_t state_layers = 0;
  uint64_t state_conv_floats = 0;
  uint64_t state_delta_floats = 0;
  std::vector<uint8_t> state;
};

struct GenerateRequest {
  std::string rid;  // "" : the engine makes one up; must be unique among live requests
  std::optional<std::string> text;  // exactly one of text / input_ids
  std::optional<std::vector<int32_t>> input_ids;
  SamplingParams sampling_params;  // .n > 1: n samples sharing one prefill of the prompt
  bool return_logprob = false;
  int32_t logprob_start_len = -1;  // first prompt position with an input logprob; -1: none
  int32_t top_logprobs_num = 0;
  // With return_logprob: ids whose logprobs every scored position also reports (SGLang's
  // token_ids_logprob: meta_info input_token_ids_logprobs / output_token_ids_logprobs); each
  // in [0, vocab); empty: none.
  std::vector<int32_t> token_ids_logprob;
  std::optional<SessionParams> session_params;  // a session turn (n must be 1)
  bool stream = false;  // informational: outputs always arrive as chunks (see GenerateStream)
  // An embedding request (an --is-embedding engine only, which runs nothing else): the prompt
  // is prefilled and its pooled, L2-normalised hidden state is the result's `embedding`; no
  // token is generated (sampling_params is ignored but for n, which must be 1). Neither
  // logprobs, sessions nor disaggregation.
  bool embed = false;
  int32_t priority = 0;
  // SGLang's lora_path: the name of a loaded LoRA adapter (Engine::lora()) the request runs
  // under; "": the base model. An unknown name is InvalidArgument naming it.
  std::string lora_path;
  // Prefill/decode disaggregation (docs/disaggregation.md); neither with a session turn.
  // export_kv_room (prefill side; n must be 1): when it finishes, its prompt's KV is read from
  // the tree in that same step and handed to the engine's KV export sink
  // (Engine::SetKvExportSink) under this room; an aborted request hands it an error.
  std::optional<uint64_t> export_kv_room;
  // import_kv (decode side; valid() when set): the prompt's KV, arriving from the prefill
  // server. The request waits (without a slot) until the future is ready, then the KV is
  // inserted into the tree, pinned while any of its n samples runs, and they run as samples of
  // a cached prompt do. A failed future ends the request with finish_reason abort, status 503,
  // and the future's message. Only the tokens the KV and the prompt share are used.
  std::shared_future<StatusOr<PrefixKv>> import_kv;
  // Images in the prompt (an engine with a vision projector, --mmproj): each one image file's
  // bytes (PNG, JPEG, WebP, GIF), placed where `text` holds the marker "<__media__>"
  // (engine/image_prompt.h), one marker per image, in order. With text only; neither with
  // sessions, disaggregation nor input logprobs over an image.
  std::vector<std::vector<uint8_t>> image_data;
  // `text` is a rendered chat template (its BOS written out): tokenized with none added.
  bool text_verbatim = false;
};

// SGLang's POST /pause_generation {"mode": ...}: what happens to the live requests when
// generation pauses. New requests are accepted while paused; they queue and do not run.
enum class PauseMode {
  kAbort,    // "abort": every live request finishes with finish_reason abort
  kRetract,  // "retract": running requests go back to the waiting queue (their KV to the
             // radix tree) and are re-prefilled after continue, output unchanged
  kInPlace,  // "in_place": running requests stop where they are, KV kept
};

// The disk tier's counters (--enable-hierarchical-cache; all zero without it).
struct HiCacheCounters {
  bool enabled = false;
  int64_t disk_tokens = 0;      // tokens held on disk (whole blocks, stored or queued)
  int64_t disk_bytes = 0;       // bytes of this model's block files
  int64_t disk_hit_tokens = 0;  // tokens matches gained from disk (cumulative)
  int64_t blocks_loaded = 0;
  int64_t bytes_loaded = 0;
  double load_seconds = 0;  // time reading and checking blocks
  int64_t blocks_stored = 0;
  int64_t bytes_stored = 0;
  double store_seconds = 0;    // writer thread time writing blocks
  int64_t load_failures = 0;   // truncated / corrupt / foreign / vanished, not evicted, files
  int64_t write_failures = 0;  // full disk, unwritable or removed directory (skipped)
  int64_t writes_dropped = 0;  // not attempted: write queue full, or writes paused after a failure
  int64_t files_evicted = 0;   // deleted for the size cap
  double load_bandwidth() const {
    return load_seconds > 0 ? static_cast<double>(bytes_loaded) / load_seconds : 0;
  }
  double store_bandwidth() const {
    return store_seconds > 0 ? static_cast<double>(bytes_stored) / store_seconds : 0;
  }
};

// The scheduler's counters, as of the snapshot.
struct SchedulerCounters {
  int64_t running_requests = 0;     // decoding
  int64_t prefilling_requests = 0;  // mid chunked prefill
  int64_t waiting_requests = 0;
  int64_t waiting_tokens = 0;           // tokens of the waiting requests
  int64_t waiting_uncached_tokens = 0;  // of those, not found in the tree at their last match
  int64_t grammar_queue_requests = 0;   // waiting for their grammar to compile
  bool paused = false;                  // PauseGeneration without ContinueGeneration since
  int64_t pool_size = 0;                // usable KV token slots
  int64_t pool_free = 0;
  int64_t pool_used = 0;
  int64_t evictable_tokens = 0;  // in the radix tree, unlocked
  int64_t protected_tokens = 0;  // in the radix tree, locked by requests or pins
  // Sliding-window pool (hybrid SWA memory; all 0 without it): slots, free slots, and tree
  // tokens still holding windowed KV outside / inside a lock's window.
  int64_t swa_pool_size = 0;
  int64_t swa_pool_free = 0;
  int64_t swa_evictable_tokens = 0;
  int64_t swa_protected_tokens = 0;
  // A hybrid model's linear-layer state snapshots in the radix tree (all 0 for other models):
  // held, the most there may be, held by locked nodes, their bytes; taken and resumed from
  // (cumulative).
  int64_t state_snapshots = 0;
  int64_t state_snapshot_capacity = 0;
  int64_t state_snapshots_protected = 0;
  int64_t state_snapshot_bytes = 0;
  int64_t state_snapshots_taken = 0;
  int64_t state_snapshot_resumes = 0;
  // Cumulative.
  int64_t cache_hit_tokens = 0;  // tokens supplied by the tree at admissions
  int64_t prefill_tokens = 0;    // tokens computed by prefill chunks
  int64_t decode_tokens = 0;     // tokens computed by decode steps
  int64_t retractions = 0;
  // Session KV pins released because the pool needed the memory, or by a cache flush.
  int64_t reclaimed_session_pins = 0;
  int64_t forward_passes = 0;
  int64_t finished_requests = 0;
  int64_t aborted_requests = 0;
  double new_token_ratio = 0;
  double cache_op_seconds = 0;  // wall time inside radix-cache operations
  int64_t cache_ops = 0;
  int64_t jump_forwards = 0;
  int64_t jump_forward_tokens = 0;
  int64_t grammar_masks = 0;  // grammar masks built (one per constrained row sampled)
  double grammar_mask_seconds = 0;
  double forward_seconds = 0;          // inside the model's forward passes
  int64_t deferred_prefill_steps = 0;  // decode-only steps while a long prefill waited
  // Speculative decoding: decode steps of requests that could speculate, drafted tokens
  // verified, and those kept.
  int64_t spec_verify_steps = 0;
  int64_t spec_drafted_tokens = 0;
  int64_t spec_accepted_tokens = 0;
  HiCacheCounters hicache;
  // NGRAM: new tokens whose windows the trie's background filler dropped (its queue was full).
  int64_t spec_ngram_dropped_tokens = 0;
  // Mean tokens per speculative decode step (kept drafts + the sampled token); 0 when none.
  double spec_accept_length() const {
    return spec_verify_steps > 0
               ? 1.0 + static_cast<double>(spec_accepted_tokens) / spec_verify_steps
               : 0.0;
  }
};

// The grammar cache's counters (constrained decoding).
struct GrammarCounters {
  int64_t lookups = 0;         // requests with a grammar
  int64_t compiles = 0;        // cache misses: compilations started
  double compile_seconds = 0;  // wall time of the compilations finished
  double hit_rate() const {
    return lookups > 0 ? static_cast<double>(lookups - compiles) / static_cast<double>(lookups)
                       : 0.0;
  }
};

// Resident bytes by kind, as of the snapshot: the model's (and a draft model's) weights as the
// forward pass reads them (packed copies, matrices read unpacked from the mapping, 1-D
// tensors), their KV storage as allocated (pages never written cost nothing yet), their
// forward-pass activation scratch, and the whole process's resident set (/proc/self/statm;
// 0 where unknown). The first three are 0 with a runner that does not report them (fakes).
struct MemoryCounters {
  int64_t weights_bytes = 0;
  int64_t kv_pool_bytes = 0;
  int64_t scratch_bytes = 0;
  int64_t rss_bytes = 0;
  // A hybrid model's linear-layer state slots as allocated: running requests' and the radix
  // tree's snapshots (0 for other models).
  int64_t recurrent_state_bytes = 0;
};

// The image encoder's cache (engine/image_cache.h).
struct ImageCounters {
  int64_t encodes = 0;  // images the encoder ran on
  int64_t hits = 0;     // images found already encoded
};

struct EngineStats {
  SchedulerCounters scheduler;
  std::optional<ImageCounters> images;  // nullopt: the engine takes no images
  int64_t live_requests = 0;            // submitted and not yet ended (all samples)
  int64_t open_sessions = 0;            // /open_session without /close_session since
  GrammarCounters grammar;
  MemoryCounters memory;
  // Share of prefill tokens served by the radix cache: hit / (hit + computed).
  double cache_hit_rate() const {
    const double total = static_cast<double>(scheduler.cache_hit_tokens + scheduler.prefill_tokens);
    return total > 0 ? static_cast<double>(scheduler.cache_hit_tokens) / total : 0.0;
  }
};

// The scheduling settings in force: EngineConfig's flags with the defaults resolved.
struct EngineSettings {
  std::string schedule_policy;        // "lpm", "fcfs", ...
  std::string radix_eviction_policy;  // "lru", "lfu", ...
  int64_t max_total_tokens = 0;       // KV pool size in tokens (full-attention layers)
  // Hybrid SWA memory: the sliding-window pool's size and the window (0: one pool).
  int64_t swa_max_total_tokens = 0;
  int64_t sliding_window = 0;
  int64_t context_length = 0;
  int64_t chunked_prefill_size = 0;  // <= 0: no chunking
  int64_t max_prefill_tokens = 0;
  int32_t max_running_requests = 0;
  int32_t page_size = 1;
  bool disable_radix_cache = false;
  bool enable_jump_forward = true;
  std::string speculative_algorithm;         // "" (off), "NGRAM", "STANDALONE" or "NEXTN"
  int32_t speculative_num_draft_tokens = 0;  // most draft nodes per request, root included
  double defer_long_prefill_s = 0;           // 0: never (scheduler/prefill_deferral.h)
  double waiting_timeout_s = 0;              // 0: none
  double running_timeout_s = 0;              // 0: none
  // Disk tier: "" (off), "write_through" or "write_back"; its directory, size cap, block size.
  std::string hicache_write_policy;
  std::string hicache_storage_dir;
  uint64_t hicache_storage_bytes = 0;
  int32_t hicache_block_tokens = 0;
};

// A pinned prefix: `tokens` of it were cached (0 with the radix cache disabled).
struct PrefixPin {
  uint64_t id = 0;
  int64_t tokens = 0;
};

}  // namespace radixlm
