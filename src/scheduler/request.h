// Request: the scheduler's state for one generation request (SGLang's Req).
//
// Lifecycle:  kWaiting ──admit──► kPrefilling ──last chunk──► kDecoding ──► kFinished
//                ▲                    │ (chunks)                  │
//                └──── retract ───────┴───────────────────────────┘
// A waiting request holds no KV. Admission matches its tokens against the radix tree, locks the
// matched prefix (cache.last_node), takes a ReqToTokenTable row and slots for the first chunk.
// A prefilling request's KV covers token_ids[0, kv_len) and grows chunk by chunk up to
// fill_len; a decoding request's KV covers every token but the newest output, which is the
// input of its next decode step (kv_len == token_ids.size() - 1). Retraction hands its KV to the
// tree and sends it back to waiting with its outputs kept: it later re-prefills prompt + outputs
// and goes on exactly where it stopped.
//
// Owned by the Scheduler; touched only by the scheduler thread.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cache/radix_cache.h"
#include "grammar/matcher.h"
#include "model/forward_batch.h"
#include "sampling/penalty_state.h"
#include "sampling/pooling.h"
#include "sampling/sampling_params.h"
#include "scheduler/prompt_image.h"
#include "scheduler/request_output.h"
#include "scheduler/stop_checker.h"
#include "spec/draft_pacing.h"
#include "spec/draft_tree.h"

namespace radixlm {

namespace model {
class LoraAdapter;
}  // namespace model

// What a caller submits to the scheduler. params must have passed SamplingParams::Validate.
struct RequestInput {
  uint64_t id = 0;  // unique among live requests
  std::vector<int32_t> input_ids;
  SamplingParams params;
  bool return_logprob = false;
  int32_t logprob_start_len = -1;  // first prompt position with an input logprob; -1: none
  int32_t top_logprobs_num = 0;
  // With return_logprob: ids whose logprobs every scored position reports (SGLang's
  // token_ids_logprob), each in [0, vocab); empty: none.
  std::vector<int32_t> token_ids_logprob;
  // A session turn: when the request finishes (not aborted), its KV, handed to the tree, is
  // pinned under this id in the same step, so nothing evicts it before the next turn, unless
  // the pool needs the memory: the pin is reclaimable (Scheduler::PinPrefix). The caller
  // unpins it. Must not be a pin in use.
  std::optional<uint64_t> pin_on_finish;
  int32_t priority = 0;  // higher first under --schedule-policy priority; also eviction priority
  std::optional<uint64_t> seed;  // nullopt: ResolveSeed(params)
  // n > 1: do not admit this request before request `prefill_after` has prefilled its prompt
  // (it then finds the prompt in the tree instead of computing it again).
  std::optional<uint64_t> prefill_after;
  // Constrained decoding (regex / json_schema / ebnf), compiled by the engine; null = none.
  std::shared_ptr<const grammar::CompiledGrammar> grammar;
  // Or a grammar still compiling (valid() when set; `grammar` is then null): the scheduler
  // keeps the request in its grammar queue until the future is ready, then takes the grammar,
  // or finishes the request with an abort carrying the compile error.
  using GrammarResult = StatusOr<std::shared_ptr<const grammar::CompiledGrammar>>;
  std::shared_future<GrammarResult> pending_grammar;
  grammar::GrammarKind grammar_kind = grammar::GrammarKind::kRegex;  // for the error message
  // An embedding request (not kNone): prefill only (max_new_tokens 0), the runner's rows are
  // hidden states (an embedding model's runner), pooled this way over the prompt and
  // L2-normalised into the final output's embedding. Mean and cls pooling read every
  // position, so they take nothing from the cache; last pooling reuses a cached prefix as
  // generation does (the last token is always computed).
  Pooling pooling = Pooling::kNone;
  // The LoRA adapter the request runs under (null: the base model), kept alive while the
  // request lives, and its radix-tree namespace (RadixCache "Namespaces"; 0 with no adapter).
  std::shared_ptr<const model::LoraAdapter> lora;
  int32_t lora_namespace = 0;
  // The adapter's content identity (LoraAdapter::identity; 0 with no adapter): the disk tier
  // keys the namespace's blocks by it, so they are found again for the same adapter only
  // (also after a restart, where the namespace number may differ).
  uint64_t lora_identity = 0;
  // A hybrid model (state snapshots): its state is also snapshotted where a request with this
  // prompt resumes from (MaxPrefixLen, in whole pages), its prefill chunk ending there. A
  // prefill server exports that snapshot with the prompt's KV (prefill/decode
  // disaggregation), so the decode server computes only the last prompt position.
  bool snapshot_resume_point = false;
  // The prompt's images (scheduler/prompt_image.h), in order and disjoint; input_ids holds
  // their ids (WriteImageIds) at their positions.
  std::vector<PromptImage> images;
};

enum class RequestState { kWaiting, kPrefilling, kDecoding, kFinished };

struct Request {
  Request(RequestInput input, int64_t effective_max_new_tokens, uint64_t seed);

  RequestInput in;
  RequestState state = RequestState::kWaiting;
  // Constrained decoding: the grammar's state after the outputs so far, and the allowed-token
  // bitmask of the next step (filled before each sampling; scheduler thread only).
  std::optional<grammar::Matcher> matcher;
  std::vector<int32_t> grammar_mask;
  std::vector<int32_t> token_ids;  // prompt, then outputs
  int64_t prompt_len = 0;
  int64_t max_new_tokens = 0;  // after clamping to the context length
  uint64_t seed = 0;

  // --- KV (valid while prefilling or decoding) ---
  CacheRequest cache;
  int64_t kv_len = 0;              // token_ids[0, kv_len) have KV in the row
  int64_t fill_len = 0;            // prefill target: prompt + outputs at admission
  int64_t disk_written_len = 0;    // tokens [0, this) were offered to the disk tier (write_through,
                                   // or before their windowed KV was released)
  bool disk_load_pending = false;  // in the disk tier's load queue (not admitted meanwhile)
  uint64_t disk_load_ticket = 0;
  int32_t disk_load_attempts = 0;

  // --- accounting ---
  bool prompt_prefilled = false;  // the whole prompt had KV once (n > 1 siblings wait for it)
  bool input_logprobs_done = false;
  bool admitted_once = false;
  int64_t cached_tokens = 0;  // prompt tokens taken from the cache at the first admission
  int32_t retractions = 0;
  int64_t forward_passes = 0;       // forward passes this request took part in
  int64_t sampled_tokens = 0;       // output tokens a forward pass sampled
  int64_t jump_forward_tokens = 0;  // output tokens placed by jump-forward (retokenized + EOS)

  // --- scheduling ---
  uint64_t arrival_seq = 0;
  double arrival_time = 0;          // seconds, scheduler clock
  double first_admission_time = 0;  // seconds, scheduler clock; set with admitted_once
  int32_t skipped_passes = 0;
  int64_t match_len = -1;           // cached MatchPrefix length; -1: never matched
  uint64_t match_version = 0;       // tree version when match_len was computed
  RadixNode* match_node = nullptr;  // valid only within the pass that set it (dfs-weight)

  // --- speculative decoding (scheduler_speculative.cc) ---
  // This round's draft: the root (token_ids[kv_len]) and drafted nodes, whose slots are row
  // positions kv_len .. kv_len + draft.size() - 1; size() <= 1 outside a drafted round.
  spec::DraftTree draft;
  size_t ngram_added = 0;       // token_ids already handed to the n-gram trie's filler
  int32_t draft_budget = 0;     // nodes the next draft may have (adapts to acceptance)
  spec::DraftPacer spec_pacer;  // when this request drafts (spec/draft_pacing.h)
  int64_t spec_verify_ct = 0;   // decode forwards while speculation was on
  int64_t spec_tokens = 0;      // output tokens those forwards produced
  int64_t drafted_tokens = 0;   // drafted nodes verified
  int64_t accepted_tokens = 0;  // of which kept
  // NEXTN speculation (scheduler_nextn.cc): the target's final-normed hidden state at
  // position nextn_hidden_pos (-1: none kept), the NextN layer's input beside the next token.
  std::vector<float> nextn_hidden;
  int64_t nextn_hidden_pos = -1;
  // A hybrid model mid-verification (scheduler_nextn.cc): the state slot holding the linear
  // layers' state after the kv_len tokens kept so far, when that is a checkpoint and not the
  // request's own slot (-1: its own).
  int32_t state_checkpoint = -1;

  // --- outputs ---
  PenaltyState penalties;
  StopChecker stop;
  std::vector<LogprobEntry> input_logprobs;   // accumulated over the prompt's chunks
  std::vector<LogprobEntry> output_logprobs;  // produced since the last RequestOutput
  size_t reported_tokens = 0;                 // outputs already reported
  bool input_logprobs_reported = false;
  std::optional<FinishReason> finish;
  std::optional<PoolingAccumulator> pooled;  // an embedding request's, while it prefills
  std::vector<float> embedding;              // its result, reported in the final output
  // The embedding spans of the chunk in the batch being built (BuildForwardBatch).
  std::vector<model::EmbeddingSpan> chunk_spans;
  // The M-RoPE positions of its new tokens in that batch (a prompt with grid images only;
  // MropePositions).
  std::vector<int64_t> rope_positions;

  int64_t output_len() const { return static_cast<int64_t>(token_ids.size()) - prompt_len; }
  std::span<const int32_t> prompt() const {
    return std::span<const int32_t>(token_ids).first(prompt_len);
  }
  std::span<const int32_t> output_ids() const {
    return std::span<const int32_t>(token_ids).subspan(prompt_len);
  }
  // Tokens the next decode steps may still add (for memory reserves).
  int64_t remaining_new_tokens() const { return max_new_tokens - output_len(); }
  bool is_embedding() const { return in.pooling != Pooling::kNone; }
  // Input logprobs still to be computed during the coming prefill.
  bool wants_input_logprobs() const {
    return in.return_logprob && in.logprob_start_len >= 0 && !input_logprobs_done;
  }
  // First position whose logits row an input logprob needs (row p-1 scores token p).
  int64_t first_logprob_row() const {
    return in.logprob_start_len > 0 ? in.logprob_start_len - 1 : 0;
  }
  // The longest prefix the cache may supply for the next prefill: all tokens but the last
  // (whose logits are needed), and none of the rows input logprobs need.
  int64_t MaxPrefixLen() const;
  // The ranges of token_ids[from, ...) a prefill chunk must not end inside (the rest of each
  // bidirectional image span), relative to `from`, in order.
  std::vector<std::pair<int64_t, int64_t>> WholeRanges(int64_t from) const;
};

}  // namespace radixlm
