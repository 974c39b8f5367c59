// RequestOutput: what the scheduler reports about one request after a step (or on abort).
//
// Outputs are deltas: each carries the tokens, text and logprobs produced since the previous
// output of the same request, so concatenating them gives the whole result. The last output of
// a request has `finish` set. Input (prompt) logprobs, when asked for, arrive once, in the first
// output that carries tokens (or the final one when max_new_tokens == 0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sampling/finish_reason.h"
#include "sampling/logprobs.h"

namespace radixlm {

struct RequestOutput {
  uint64_t id = 0;                            // the scheduler-level request id
  std::vector<int32_t> new_token_ids;         // output ids produced since the last output
  std::string text;                           // output text produced since the last output
  std::vector<LogprobEntry> output_logprobs;  // one per new token, when return_logprob
  std::vector<LogprobEntry> input_logprobs;   // prompt positions [logprob_start_len, prompt)
  std::optional<FinishReason> finish;

  // Running totals (SGLang's meta_info).
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;  // prompt tokens whose KV came from the radix cache
  // Jump-forward (constrained decoding): output tokens it placed, and output tokens that no
  // forward pass sampled (completion_tokens minus sampled tokens: the decode steps saved).
  int64_t jump_forward_tokens = 0;
  int64_t forward_passes_saved = 0;
  int64_t forward_passes = 0;  // forward passes the request took part in
};

}  // namespace radixlm
