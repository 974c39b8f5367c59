#include "sampling/sampling_params.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace radixlm {
namespace {

// "-1", "0.5", "1e+10": short and stable, for error messages.
std::string Num(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", value);
  return buf;
}

}  // namespace

Status SamplingParams::Validate(int32_t vocab_size) const {
  if (!std::isfinite(temperature) || temperature < 0.0f) {
    return InvalidArgument("temperature must be a non-negative finite number, got " +
                           Num(temperature));
  }
  // Written as !(in range) so that NaN fails every check.
  if (!(top_p > 0.0f && top_p <= 1.0f)) {
    return InvalidArgument("top_p must be in (0, 1], got " + Num(top_p));
  }
  if (!(min_p >= 0.0f && min_p <= 1.0f)) {
    return InvalidArgument("min_p must be in [0, 1], got " + Num(min_p));
  }
  if (top_k != kTopKAll && top_k < 1) {
    return InvalidArgument("top_k must be -1 (disable) or at least 1, got " +
                           std::to_string(top_k));
  }
  if (!(frequency_penalty >= -2.0f && frequency_penalty <= 2.0f)) {
    return InvalidArgument("frequency_penalty must be in [-2, 2], got " + Num(frequency_penalty));
  }
  if (!(presence_penalty >= -2.0f && presence_penalty <= 2.0f)) {
    return InvalidArgument("presence_penalty must be in [-2, 2], got " + Num(presence_penalty));
  }
  if (!(repetition_penalty > 0.0f && repetition_penalty <= 2.0f)) {
    return InvalidArgument("repetition_penalty must be in (0, 2] (1.0 = no penalty), got " +
                           Num(repetition_penalty));
  }
  if (min_new_tokens < 0) {
    return InvalidArgument("min_new_tokens must be in [0, max_new_tokens], got " +
                           std::to_string(min_new_tokens));
  }
  if (max_new_tokens.has_value()) {
    if (*max_new_tokens < 0) {
      return InvalidArgument("max_new_tokens must be at least 0, got " +
                             std::to_string(*max_new_tokens));
    }
    if (min_new_tokens > *max_new_tokens) {
      return InvalidArgument("min_new_tokens must be in [0, max_new_tokens(" +
                             std::to_string(*max_new_tokens) + ")], got " +
                             std::to_string(min_new_tokens));
    }
  }
  if (n < 1) {
    return InvalidArgument("n must be at least 1, got " + std::to_string(n));
  }
  for (const auto& [token_id, bias] : logit_bias) {
    if (token_id < 0 || token_id >= vocab_size) {
      return InvalidArgument("logit_bias keys must be token ids in [0, " +
                             std::to_string(vocab_size - 1) + "], got " + std::to_string(token_id));
    }
    if (std::isnan(bias)) {
      return InvalidArgument("logit_bias value for token " + std::to_string(token_id) +
                             " must be a number, got NaN");
    }
  }
  for (int32_t token_id : stop_token_ids) {
    if (token_id < 0 || token_id >= vocab_size) {
      return InvalidArgument("stop_token_ids must be token ids in [0, " +
                             std::to_string(vocab_size - 1) + "], got " + std::to_string(token_id));
    }
  }
  const int grammars =
      int{regex.has_value()} + int{json_schema.has_value()} + int{ebnf.has_value()};
  if (grammars > 1) {
    return InvalidArgument("Only one of regex, json_schema, or ebnf can be set");
  }
  if (structural_tag.has_value() && grammars > 0) {
    return InvalidArgument("structural_tag cannot be combined with regex, json_schema or ebnf");
  }
  return Status::Ok();
}

}  // namespace radixlm
