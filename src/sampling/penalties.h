// Logits processors: penalties, min_new_tokens, the grammar bitmask hook and logit_bias.
//
// Each function edits one row of logits ([vocab], f32) in place and touches only the tokens it
// must (sparse in the history / bias / stop ids), except the bitmask, which is one pass over
// the mask words. None allocates. All are pure functions of their arguments, so rows of a batch
// may be processed concurrently.
//
// Formulas (SGLang's penaltylib; `count` = occurrences of the token in the output so far):
//   repetition:  for tokens seen (output, plus prompt when PenaltyState has one):
//                logit < 0 ? logit * penalty : logit / penalty        (penalty > 1 discourages)
//   frequency:   logit -= frequency_penalty * count
//   presence:    logit -= presence_penalty            if count > 0
//   min_new:     logit = -inf for EOS ids and stop_token_ids while num_output < min_new_tokens
//   bitmask:     logit = -inf for tokens whose bit is clear
//   logit_bias:  logit += bias[token]
//
// Prompt tokens and the repetition penalty: SGLang up to v0.3 (and HF / vLLM) count the prompt
// for the repetition penalty; SGLang's later penaltylib counts output tokens only. Here the
// caller decides: call PenaltyState::SetPromptTokens to include the prompt (the engine does, for
// parity with HF / vLLM), or leave it empty for output-only.
#pragma once

#include <cstdint>
#include <map>
#include <span>

#include "sampling/penalty_state.h"
#include "sampling/sampling_params.h"

namespace radixlm {

// logits[t] scaled by `penalty` for every t seen in the prompt or the output (each at most once).
// penalty == 1 is a no-op. Token ids >= logits.size() are ignored.
void ApplyRepetitionPenalty(std::span<float> logits, const PenaltyState& history, float penalty);

// Additive OpenAI-style penalties over the output tokens. Both zero is a no-op.
void ApplyFrequencyPresencePenalties(std::span<float> logits, const PenaltyState& history,
                                     float frequency_penalty, float presence_penalty);

// While num_output_tokens < min_new_tokens, bans every id in eos_token_ids and stop_token_ids
// (out-of-range ids are ignored). The EOS ids come from the tokenizer / model config.
void ApplyMinNewTokens(std::span<float> logits, int32_t num_output_tokens, int32_t min_new_tokens,
                       std::span<const int32_t> eos_token_ids,
                       std::span<const int32_t> stop_token_ids);

// logits[t] += bias for each (t, bias); out-of-range ids are ignored.
void ApplyLogitBias(std::span<float> logits, const std::map<int32_t, float>& logit_bias);

// Everything a request contributes to the processing of its row, besides SamplingParams.
struct LogitsProcessorInput {
  const PenaltyState* history = nullptr;   // null: no history (no penalties, step 0)
  std::span<const int32_t> eos_token_ids;  // the tokenizer's EOS ids, for min_new_tokens
  // Allowed-token bitmask [BitmaskWords(vocab)] from the grammar module; null = all allowed.
  const int32_t* allowed_token_bitmask = nullptr;
};

// Applies everything above in SGLang's order: repetition (multiplicative, on the raw logits),
// frequency + presence, min_new_tokens, the allowed-token bitmask, logit_bias. Temperature and
// the top-k / top-p / min-p filters are the Sampler's job. params must have passed Validate.
void ProcessLogits(std::span<float> logits, const SamplingParams& params,
                   const LogitsProcessorInput& input);

}  // namespace radixlm
