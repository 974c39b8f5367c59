#include "sampling/penalties.h"

#include <limits>

#include "sampling/token_bitmask.h"

namespace radixlm {
namespace {

inline bool InRange(int32_t token, std::span<float> logits) {
  return token >= 0 && static_cast<size_t>(token) < logits.size();
}

inline float RepetitionScale(float logit, float penalty) {
  return logit < 0.0f ? logit * penalty : logit / penalty;
}

}  // namespace

void ApplyRepetitionPenalty(std::span<float> logits, const PenaltyState& history, float penalty) {
  if (penalty == 1.0f) return;
  for (int32_t token : history.prompt_tokens()) {
    if (InRange(token, logits)) logits[token] = RepetitionScale(logits[token], penalty);
  }
  for (const TokenCount& entry : history.output_counts()) {
    // A token in both the prompt and the output is penalized once.
    if (InRange(entry.token, logits) && !history.InPrompt(entry.token)) {
      logits[entry.token] = RepetitionScale(logits[entry.token], penalty);
    }
  }
}

void ApplyFrequencyPresencePenalties(std::span<float> logits, const PenaltyState& history,
                                     float frequency_penalty, float presence_penalty) {
  if (frequency_penalty == 0.0f && presence_penalty == 0.0f) return;
  for (const TokenCount& entry : history.output_counts()) {
    if (!InRange(entry.token, logits)) continue;
    logits[entry.token] -= frequency_penalty * static_cast<float>(entry.count) + presence_penalty;
  }
}

void ApplyMinNewTokens(std::span<float> logits, int32_t num_output_tokens, int32_t min_new_tokens,
                       std::span<const int32_t> eos_token_ids,
                       std::span<const int32_t> stop_token_ids) {
  if (num_output_tokens >= min_new_tokens) return;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int32_t token : eos_token_ids) {
    if (InRange(token, logits)) logits[token] = kNegInf;
  }
  for (int32_t token : stop_token_ids) {
    if (InRange(token, logits)) logits[token] = kNegInf;
  }
}

void ApplyLogitBias(std::span<float> logits, const std::map<int32_t, float>& logit_bias) {
  for (const auto& [token, bias] : logit_bias) {
    if (InRange(token, logits)) logits[token] += bias;
  }
}

void ProcessLogits(std::span<float> logits, const SamplingParams& params,
                   const LogitsProcessorInput& input) {
  if (input.history != nullptr) {
    ApplyRepetitionPenalty(logits, *input.history, params.repetition_penalty);
    ApplyFrequencyPresencePenalties(logits, *input.history, params.frequency_penalty,
                                    params.presence_penalty);
  }
  const int32_t num_output = input.history != nullptr ? input.history->num_output_tokens() : 0;
  ApplyMinNewTokens(logits, num_output, params.min_new_tokens, input.eos_token_ids,
                    params.stop_token_ids);
  if (input.allowed_token_bitmask != nullptr) {
    const size_t words = static_cast<size_t>(BitmaskWords(static_cast<int32_t>(logits.size())));
    ApplyTokenBitmask(logits, std::span<const int32_t>(input.allowed_token_bitmask, words));
  }
  if (!params.logit_bias.empty()) ApplyLogitBias(logits, params.logit_bias);
}

}  // namespace radixlm
