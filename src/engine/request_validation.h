// Validation of a GenerateRequest at Submit time, with SGLang's wording where SGLang has one:
// every problem a user can cause is an InvalidArgument (or Unimplemented for features this
// build lacks) naming the field, before anything reaches the scheduler. This is the one place
// a request's fit is checked: Scheduler::AddRequest takes it as a precondition, and only
// decides when the memory to run a request is there.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/api.h"
#include "tokenizer/text_codec.h"
#include "util/status.h"

namespace radixlm {

struct ValidationLimits {
  int32_t vocab_size = 0;
  int64_t context_length = 0;
  int64_t pool_tokens = 0;  // KV pool capacity
};

// Checks `request`'s own fields and returns its own ids (tokenizing `text` with codec), all
// in the vocabulary. Not checked: whether the prompt fits (ValidatePromptFit), which for a
// session turn depends on the session's earlier turns.
StatusOr<std::vector<int32_t>> PrepareGenerateRequest(const GenerateRequest& request,
                                                      const TokenTextCodec& codec,
                                                      const ValidationLimits& limits);

// Checks that `ids`, the whole prompt of `request`, is not empty and fits the context length
// and the pool with its max_new_tokens, and that logprob_start_len is within it.
Status ValidatePromptFit(std::span<const int32_t> ids, const GenerateRequest& request,
                         const ValidationLimits& limits);

}  // namespace radixlm
