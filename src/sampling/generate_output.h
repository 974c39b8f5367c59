// GenerateOutput: one output chunk of one sample, the single type that carries a request's
// output from the scheduler (which fills it after a step) through the engine (which adds the
// sample index and the rid) to the HTTP formatters (server/) and the frontend. It lives below
// both the scheduler and the engine so neither has to retype it; engine/api.h re-exports it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sampling/finish_reason.h"
#include "sampling/logprobs.h"

namespace radixlm {

// SGLang's meta_info counters of one sample (running totals).
struct GenerateMeta {
  std::string id;  // the rid
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;  // prompt tokens whose KV came from the radix cache
  // Constrained decoding with jump-forward: output tokens it placed, output tokens no forward
  // pass sampled (the decode steps saved), and the forward passes the sample took part in.
  int64_t jump_forward_tokens = 0;
  int64_t forward_passes_saved = 0;
  int64_t forward_passes = 0;
  // Speculative decoding: decode steps taken while it was on (SGLang's spec_verify_ct), and the
  // drafted tokens verified / kept in them.
  int64_t spec_verify_ct = 0;
  int64_t spec_drafted_tokens = 0;
  int64_t spec_accepted_tokens = 0;
};

// What sample `index` produced: as a streamed chunk, what it produced since its previous chunk
// (meta: running totals); as a GenerateResult, every chunk so far concatenated (Append).
struct GenerateOutput {
  int32_t index = 0;                // which sample, in [0, n)
  std::string text;                 // new text (UTF-8 complete; stop strings trimmed)
  std::vector<int32_t> output_ids;  // new output ids
  std::vector<LogprobEntry> output_token_logprobs;  // one per new id, when return_logprob
  std::vector<LogprobEntry> input_token_logprobs;   // in the first chunk only
  std::optional<FinishReason> finish_reason;        // set on the sample's last chunk
  GenerateMeta meta;                                // running totals
  // An embedding request's pooled (and L2-normalised) hidden state, in its last chunk only;
  // empty for generation (sampling/pooling.h).
  std::vector<float> embedding;

  // Adds the next chunk of the same sample.
  void Append(GenerateOutput&& chunk);
};

// A sample's chunks concatenated (the same fields, whole rather than deltas).
using GenerateResult = GenerateOutput;

}  // namespace radixlm
