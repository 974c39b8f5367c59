// EngineConfig: how to build an Engine, with SGLang's server flag names (checked when the
// engine is created; scheduler_bridge.h turns them into the scheduler's config).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace radixlm {

struct EngineConfig {
  // --- model ---
  std::string model_path;      // --model-path; "" or "default": the default model
  int threads = 0;             // --threads; <= 0: one per hardware thread
  int64_t context_length = 0;  // --context-length; <= 0: the model's
  // --quantization (Hugging Face folders only): "" serves the weights in their stored type;
  // "q8_0", "q4_k" or "q6_k" quantizes every matrix at load (hf/hf_weights.h).
  std::string quantization;
  // --linear-attn-prefill (hybrid models): "recurrent" (default: token by token, so a row's
  // outputs never depend on how its prompt was chunked) or "chunked" (the gated DeltaNet's
  // chunked form for prefill chunks; faster, outputs depend within float rounding on where
  // the chunks start). model::ParseLinearAttnPrefill.
  std::string linear_attn_prefill = "recurrent";
  // --is-embedding: serve the model as an embedding model. Requests are GenerateRequest::embed
  // (prefill only; the final-normed hidden states pooled and L2-normalised), generation is
  // refused. --pooling mean|cls|last overrides the GGUF's <arch>.pooling_type; Create refuses a
  // model with neither. After Create, config().pooling holds the pooling in force.
  bool is_embedding = false;
  std::string pooling;  // "" : the model's
  // Hears how the weights' load goes, one line at a time ("loading weights: 12/18 layers, ..."),
  // on the thread calling Engine::Create, only for a load longer than about 2 s (at most one
  // line per 2 s and 10 %, then a last line when it is done); the draft model's lines start
  // with "draft model: ". Null: nothing is reported. Never called after Create returns.
  std::function<void(const std::string& line)> on_load_progress = nullptr;

  // --- memory ---
  // --max-total-tokens: KV pool size in tokens. <= 0: as many as kv_cache_memory_mb holds.
  int64_t max_total_tokens = 0;
  int64_t kv_cache_memory_mb = 1024;
  int32_t page_size = 1;  // --page-size
  // --kv-cache-dtype: "auto" (F16), "bf16", or "fp8_e5m2" (one byte per value: twice the
  // tokens in the same memory, values rounded to 2 mantissa bits). SGLang's fp8_e4m3 is not
  // built (refused at start-up).
  std::string kv_cache_dtype = "auto";
  // Sliding-window models (Gemma-3): windowed layers keep KV only for tokens their window can
  // still see, in a pool of their own (SGLang's hybrid SWA memory). --swa-full-tokens-ratio:
  // that pool's tokens per full-attention token, in (0, 1]; --disable-hybrid-swa-memory: every
  // layer keeps every token (one pool). No effect on models without both kinds of layers.
  double swa_full_tokens_ratio = 0.8;
  bool disable_hybrid_swa_memory = false;
  bool disable_radix_cache = false;  // --disable-radix-cache
  // Hybrid (linear-attention) models with the radix cache on: the tree keeps snapshots of the
  // linear layers' state. --max-mamba-cache-size (SGLang's name): how many; <= 0: as many as a
  // quarter of the KV memory holds (the KV pool keeping the other three quarters; with
  // --max-total-tokens, a third of that pool's bytes but at least 256 MiB), at least one.
  // --hybrid-snapshot-interval: a snapshot every this many tokens of a prefill (chunks end
  // there; a multiple of page size), besides those at each prompt's end and where a request's
  // KV enters the tree.
  int32_t max_mamba_cache_size = 0;
  int64_t hybrid_snapshot_interval = 512;
  std::string radix_eviction_policy = "lru";  // --radix-eviction-policy lru|lfu|fifo|priority
  // Disk tier of the KV cache (SGLang's HiCache; RAM is the first tier, disk the second):
  // --enable-hierarchical-cache with --hicache-storage-backend file (the only backend built),
  // --hicache-write-policy write_through|write_back, --hicache-storage-dir (required) and
  // --hicache-storage-size in GB.
  bool enable_hierarchical_cache = false;
  std::string hicache_storage_backend;  // "" (none) or "file"
  std::string hicache_write_policy = "write_through";
  std::string hicache_storage_dir;
  double hicache_storage_size_gb = 16;

  // --- images ---
  // --mmproj: llama.cpp's vision projector GGUF for the model (general.architecture clip): the
  // model then takes images (GenerateRequest::image_data). "": text only.
  std::string mmproj_path;
  int32_t max_images_per_request = 8;  // --max-images-per-request: more are refused
  // --image-cache-mb: encoder outputs kept by image content (engine/image_cache.h); 0: none.
  int64_t image_cache_mb = 256;

  // --- scheduling ---
  std::string schedule_policy = "lpm";  // --schedule-policy
  // --chunked-prefill-size; -1 disables. It also sizes the forward pass's activation scratch
  // (about 110 KB per token on a 1B model, 200 KB on an 8B one), committed the first time a
  // chunk that long runs: 2048 keeps a long prompt's peak memory near llama-server's at the
  // same KV capacity, and prefill runs at the same rate per token as with larger chunks.
  int64_t chunked_prefill_size = 2048;
  int64_t max_prefill_tokens = 16384;  // --max-prefill-tokens
  // --max-running-requests; <= 0: min(256, max(1, pool tokens / 32)).
  int32_t max_running_requests = 0;
  // --schedule-conservativeness: scales the initial new-token ratio (lower admits more and
  // retracts more).
  double schedule_conservativeness = 1.0;
  // --defer-long-prefill: a prefill estimated to take at least this many seconds waits while
  // every running decode would finish first (shortest remaining work first;
  // scheduler/prefill_deferral.h). 0 disables.
  double defer_long_prefill_s = 1.0;
  uint64_t random_seed = 0;  // --random-seed (the random policy)
  // --waiting-timeout / --running-timeout, seconds (0: none; negative: InvalidArgument at
  // Create): a request still queued, never run, after this long finishes with an abort the
  // server answers with 503; a request running (since its first admission) longer is aborted.
  double waiting_timeout_s = 0;
  double running_timeout_s = 0;

  // --max-open-sessions: sessions (/open_session) open at once; each pins its turns' KV while
  // open, so this bounds the protected share of the pool. Opening one more is refused.
  int32_t max_open_sessions = 64;

  // --- requests that do not fit ---
  // --allow-auto-truncate (SGLang's): a prompt or max_new_tokens past the context length (or
  // the KV pool's capacity, when smaller) is cut to fit, with a warning, instead of refused
  // with InvalidArgument (the server's 400). engine/request_validation.h's FitPrompt says how.
  bool allow_auto_truncate = false;
  // Hears one line per request cut to fit, on the submitting thread (or the scheduler thread,
  // for a session turn); must be thread-safe and must not block. Null: the line goes to
  // stderr.
  std::function<void(const std::string& line)> on_request_warning = nullptr;

  // --- constrained decoding ---
  bool disable_jump_forward = false;  // --disable-jump-forward
  // --constrained-json-whitespace-pattern: the regex for whitespace between JSON tokens of
  // json_schema outputs ("[ ]?": outlines' default; "": compact JSON). Unset: json.dumps's
  // fixed ", " and ": " separators (see grammar::JsonSchemaOptions), where a whole
  // `, "key": ` run is forced text for jump-forward.
  std::optional<std::string> constrained_json_whitespace_pattern;
  // Threads that compile grammars (automata, masks) off the submitting and scheduler threads.
  int grammar_compile_threads = 2;

  // --- LoRA adapters (SGLang's flag names; engine/lora_registry.h) ---
  // --enable-lora (implied by --lora-paths): requests may name an adapter (lora_path), and
  // adapters may be loaded and unloaded while the server runs. --lora-paths: "name=path" or
  // "path" items loaded at start-up. --max-lora-rank: larger ranks are refused (0: any).
  // --max-loras-per-batch: distinct adapters one forward pass serves at most.
  // --lora-target-modules: the matrices adapters may touch (q_proj, k_proj, v_proj, o_proj,
  // gate_proj, up_proj, down_proj, or "all"); empty: all of them.
  bool enable_lora = false;
  std::vector<std::string> lora_paths;
  int64_t max_lora_rank = 0;
  int32_t max_loras_per_batch = 8;
  std::vector<std::string> lora_target_modules;

  // --- speculative decoding (SGLang's flag names) ---
  // --speculative-algorithm: "" (off), "NGRAM", "STANDALONE" (a draft model) or "NEXTN" (the
  // model's own NextN layer, engine/nextn_runner.h).
  std::string speculative_algorithm;
  // Draft tree size, root included. STANDALONE with eagle_topk 1 (chains) uses
  // speculative_num_steps + 1 instead, as SGLang does.
  int speculative_num_draft_tokens = 12;
  // STANDALONE: the draft model's GGUF (same vocabulary as the target), the draft's depth
  // (draft model steps), and its branching (1: chains; K > 1: top-K trees).
  std::string speculative_draft_model_path;
  int speculative_num_steps = 3;
  int speculative_eagle_topk = 1;
  int speculative_ngram_min_bfs_breadth = 1;
  int speculative_ngram_max_bfs_breadth = 10;
  int speculative_ngram_max_trie_depth = 18;
  int64_t speculative_ngram_capacity = 1'000'000;    // trie nodes
  std::string speculative_ngram_match_type = "BFS";  // BFS | PROB
};

}  // namespace radixlm
