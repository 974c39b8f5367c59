// GenerateRequest / GenerateOutput / GenerateResult: the Engine's request and response shapes,
// mapping one-to-one onto SGLang's native POST /generate JSON.
//
//   GenerateRequest  {"rid", "text" | "input_ids", "sampling_params", "return_logprob",
//                     "logprob_start_len", "top_logprobs_num", "stream", "priority"}
//   GenerateOutput   one streamed chunk of one sample: deltas since the previous chunk
//   GenerateResult   one sample's whole result: {"text", "output_ids", "meta_info": {"id",
//                     "finish_reason", "prompt_tokens", "completion_tokens", "cached_tokens",
//                     "jump_forward_tokens", "forward_passes_saved", "forward_passes",
//                     "input_token_logprobs", "output_token_logprobs", "input_top_logprobs",
//                     "output_top_logprobs"}}
// Logprob entries serialize as SGLang's [logprob, token_id, text-or-null] triples.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sampling/sampling_params.h"
#include "scheduler/finish_reason.h"
#include "scheduler/request_output.h"
#include "tokenizer/text_codec.h"

namespace radixlm {

struct GenerateRequest {
  std::string rid;  // "" : the engine makes one up; must be unique among live requests
  std::optional<std::string> text;  // exactly one of text / input_ids
  std::optional<std::vector<int32_t>> input_ids;
  SamplingParams sampling_params;  // .n > 1: n samples sharing one prefill of the prompt
  bool return_logprob = false;
  int32_t logprob_start_len = -1;  // first prompt position with an input logprob; -1: none
  int32_t top_logprobs_num = 0;
  bool stream = false;  // informational: outputs always arrive as chunks (see GenerateStream)
  int32_t priority = 0;
};

struct GenerateMeta {
  std::string id;  // the rid
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  // Constrained decoding with jump-forward (see RequestOutput).
  int64_t jump_forward_tokens = 0;
  int64_t forward_passes_saved = 0;
  int64_t forward_passes = 0;
};

// One chunk of sample `index`: what it produced since its previous chunk.
struct GenerateOutput {
  int32_t index = 0;                // which sample, in [0, n)
  std::string text;                 // new text (UTF-8 complete; stop strings trimmed)
  std::vector<int32_t> output_ids;  // new output ids
  std::vector<LogprobEntry> output_token_logprobs;  // one per new id, when return_logprob
  std::vector<LogprobEntry> input_token_logprobs;   // in the first chunk only
  std::optional<FinishReason> finish_reason;        // set on the sample's last chunk
  GenerateMeta meta;                                // running totals
};

// A sample's chunks concatenated.
struct GenerateResult {
  int32_t index = 0;
  std::string text;
  std::vector<int32_t> output_ids;
  std::vector<LogprobEntry> output_token_logprobs;
  std::vector<LogprobEntry> input_token_logprobs;
  std::optional<FinishReason> finish_reason;
  GenerateMeta meta;

  void Append(GenerateOutput&& chunk);
};

// SGLang's /generate response object of one sample (a streamed chunk is the same object built
// from the result accumulated so far, as SGLang streams cumulative text). With return_logprob
// the logprob lists are included, token texts filled in when codec is not null. The server adds
// "index" for n > 1.
nlohmann::json ResultToJson(const GenerateResult& result, bool return_logprob,
                            const TokenTextCodec* codec);
}  // namespace radixlm
