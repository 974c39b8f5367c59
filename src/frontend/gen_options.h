// GenOptions: the sampling parameters one `gen` call takes, every field optional so a program
// states only what it means (`gen("answer", {.max_tokens = 64, .stop = {"\n"}})`) and the rest
// comes from the run's defaults (RunOptions::default_gen) or, failing that, SGLang's defaults
// (SamplingParams). Names follow SGLang's frontend (max_tokens, not max_new_tokens).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sampling/sampling_params.h"

namespace radixlm::frontend {

struct GenOptions {
  std::optional<int32_t> max_tokens = std::nullopt;
  std::optional<int32_t> min_tokens = std::nullopt;
  std::vector<std::string> stop = {};        // empty: not set
  std::vector<int32_t> stop_token_ids = {};  // empty: not set
  std::optional<float> temperature = std::nullopt;
  std::optional<float> top_p = std::nullopt;
  std::optional<int32_t> top_k = std::nullopt;
  std::optional<float> min_p = std::nullopt;
  std::optional<float> frequency_penalty = std::nullopt;
  std::optional<float> presence_penalty = std::nullopt;
  std::optional<float> repetition_penalty = std::nullopt;
  std::map<int32_t, float> logit_bias = {};  // empty: not set
  std::optional<bool> ignore_eos = std::nullopt;
  std::optional<int64_t> seed = std::nullopt;
  std::optional<bool> skip_special_tokens = std::nullopt;
  std::optional<bool> no_stop_trim = std::nullopt;
  // Constraints (at most one): the generated text matches the regex / the JSON schema / the
  // EBNF grammar.
  std::optional<std::string> regex = std::nullopt;
  std::optional<std::string> json_schema = std::nullopt;
  std::optional<std::string> ebnf = std::nullopt;
};

// The fields set in `over` replace those of `base`.
GenOptions MergeGenOptions(const GenOptions& base, const GenOptions& over);

// The engine's sampling parameters: set fields copied, the rest SamplingParams' defaults.
SamplingParams ToSamplingParams(const GenOptions& options);

// "max_tokens=64, stop=[\"\\n\"]": the set fields, for the printed IR.
std::string DescribeGenOptions(const GenOptions& options);

// SGLang's regexes for gen_int / gen_string (python/sglang/lang/ir.py).
inline constexpr const char* kIntRegex = "[-+]?[0-9]+[ \\n]*";
inline constexpr const char* kStringRegex = "\"[\\w\\d\\s]*\"";

}  // namespace radixlm::frontend
