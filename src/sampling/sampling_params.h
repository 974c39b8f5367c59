// SamplingParams: the per-request sampling settings, with SGLang's field names and defaults.
//
// A SamplingParams value is plain data. It is built from a request's JSON by FromJson (type
// checks only: a field of the wrong JSON type is an InvalidArgument naming the field) and then
// checked against the model by Validate (ranges, vocabulary bounds, mutual exclusion). The
// sampler and the penalty code assume a params value that passed Validate.
//
// Semantics follow SGLang's python/sglang/srt/sampling/sampling_params.py:
//   * temperature < 1e-6 (kSamplingEps) means greedy, as does top_k == 1.
//   * top_k == -1 (kTopKAll) means the whole vocabulary.
//   * max_new_tokens may be absent (JSON null): no per-request cap; the engine bounds the output
//     by the context length. This matches SGLang, where `max_new_tokens: null` means "no limit".
//   * stop strings, stop_token_ids and skip_special_tokens etc. are carried here for the
//     detokenizer / scheduler; this module only uses stop_token_ids (min_new_tokens masking).
//   * regex / json_schema / ebnf / structural_tag are reserved for the grammar module; at most
//     one may be set.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace radixlm {

// Below this temperature, sampling is greedy (argmax), as in SGLang.
inline constexpr float kSamplingEps = 1e-6f;
// top_k value meaning "no top-k filtering".
inline constexpr int32_t kTopKAll = -1;

struct SamplingParams {
  // --- length ---
  std::optional<int32_t> max_new_tokens = 128;  // nullopt: bounded only by the context length
  int32_t min_new_tokens = 0;  // EOS and stop_token_ids are masked until this many are out

  // --- stopping ---
  std::vector<std::string> stop;        // stop strings (matched by the detokenizer)
  std::vector<std::string> stop_regex;  // stop patterns, searched in the output text
  std::vector<int32_t> stop_token_ids;  // extra stop tokens besides the tokenizer's EOS
  bool ignore_eos = false;              // EOS does not finish the request

  // --- distribution shaping, applied in this order: temperature, top_k, top_p, min_p ---
  float temperature = 1.0f;  // <= kSamplingEps: greedy
  float top_p = 1.0f;        // (0, 1]; 1 disables
  int32_t top_k = kTopKAll;  // -1 or >= 1
  float min_p = 0.0f;        // [0, 1]; 0 disables

  // --- penalties (see penalties.h for the exact formulas) ---
  float frequency_penalty = 0.0f;       // [-2, 2]; logit -= frequency_penalty * count
  float presence_penalty = 0.0f;        // [-2, 2]; logit -= presence_penalty if count > 0
  float repetition_penalty = 1.0f;      // (0, 2]; 1 disables
  std::map<int32_t, float> logit_bias;  // token id -> added to that token's logit

  // --- randomness ---
  // Same seed => same tokens, whatever else is in the batch. nullopt: a random per-request seed.
  std::optional<int64_t> sampling_seed;
  int32_t n = 1;  // parallel samples per prompt (expanded by the server / engine)

  // --- detokenization (carried, not used here) ---
  bool skip_special_tokens = true;
  bool spaces_between_special_tokens = true;
  bool no_stop_trim = false;  // keep the matched stop string in the output

  // --- constrained decoding (reserved for the grammar module) ---
  std::optional<std::string> regex;
  std::optional<std::string> json_schema;
  std::optional<std::string> ebnf;
  // SGLang's structural tag, as JSON text (grammar/structural_tag.h).
  std::optional<std::string> structural_tag;

  // True when the sampler takes the argmax (temperature below kSamplingEps, or top_k == 1).
  bool IsGreedy() const { return temperature < kSamplingEps || top_k == 1; }

  // top_k as a count in [1, vocab_size]: kTopKAll (and anything above vocab_size) maps to
  // vocab_size. Requires vocab_size >= 1.
  int32_t EffectiveTopK(int32_t vocab_size) const {
    return (top_k == kTopKAll || top_k > vocab_size) ? vocab_size : top_k;
  }

  // Range and consistency checks, with SGLang's rules. Returns InvalidArgument whose message
  // names the offending field and value, e.g. "top_p must be in (0, 1], got 0". vocab_size
  // (> 0) bounds logit_bias keys and stop_token_ids.
  Status Validate(int32_t vocab_size) const;

  // Parses SGLang's `sampling_params` JSON object. Null (the whole value or any field) means the
  // default, except max_new_tokens where null means "no cap" as in SGLang. `stop` and `stop_regex`
  // may each be a string or a list of strings ("" entries are dropped: unset); `logit_bias` is an
  // object whose keys are token ids as strings; `json_schema` may be a string or a JSON value
  // (serialized), and so may `structural_tag`. Unknown fields are ignored, as SGLang does. A field
  // of the wrong type is an InvalidArgument naming it. Does not call Validate (ranges need the
  // vocabulary size).
  static StatusOr<SamplingParams> FromJson(const nlohmann::json& json);

  // The inverse of FromJson (every field written; optional fields absent as null).
  nlohmann::json ToJson() const;
};

}  // namespace radixlm
