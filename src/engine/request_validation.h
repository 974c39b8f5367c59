// Validation of a GenerateRequest at Submit time, with SGLang's wording where SGLang has one:
// every problem a user can cause is an InvalidArgument (or Unimplemented for features this
// build lacks) naming the field, before anything reaches the scheduler; with
// --allow-auto-truncate, a prompt or max_new_tokens past the context is cut to fit instead
// (FitPrompt). This is the one place a request's fit is checked: Scheduler::AddRequest takes
// it as a precondition, and only decides when the memory to run a request is there.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/api.h"
#include "engine/image_prompt.h"
#include "tokenizer/text_codec.h"
#include "util/status.h"

namespace radixlm {

struct ValidationLimits {
  int32_t vocab_size = 0;
  int64_t context_length = 0;
  int64_t pool_tokens = 0;  // KV pool capacity
  // --allow-auto-truncate: a request that does not fit is cut to fit (FitPrompt) instead of
  // refused.
  bool allow_auto_truncate = false;
};

// Checks `request`'s own fields and returns its own ids (tokenizing `text` with codec), all
// in the vocabulary. Not checked: whether the prompt fits (ValidatePromptFit), which for a
// session turn depends on the session's earlier turns.
// With `images` (a prompt with images, already built from request.text: BuildImagePrompt),
// its ids are the request's, the images' ids exempt from the vocabulary check.
StatusOr<std::vector<int32_t>> PrepareGenerateRequest(const GenerateRequest& request,
                                                      const TokenTextCodec& codec,
                                                      const ValidationLimits& limits,
                                                      const ImagePrompt* images = nullptr);

// Checks that `ids`, the whole prompt of `request`, is not empty and fits the context length
// and the pool with its max_new_tokens, and that logprob_start_len is within it.
Status ValidatePromptFit(std::span<const int32_t> ids, const GenerateRequest& request,
                         const ValidationLimits& limits);

// What FitPrompt cut to make a request fit; cut() is false when it fit as asked.
struct PromptCut {
  int64_t room = 0;  // tokens the prompt and its output may take: min(context, pool)
  int64_t prompt_tokens_asked = 0;
  int64_t prompt_tokens = 0;                       // kept: the first ones
  std::optional<int32_t> max_new_tokens_asked;     // set when max_new_tokens was lowered
  int32_t max_new_tokens = 0;                      // then, what it was lowered to
  std::optional<int32_t> logprob_start_len_asked;  // set when logprob_start_len was lowered
  int32_t logprob_start_len = 0;                   // then, what it was lowered to

  bool cut() const {
    return prompt_tokens != prompt_tokens_asked || max_new_tokens_asked.has_value() ||
           logprob_start_len_asked.has_value();
  }
  // One line for the log: what request `rid` asked and what it runs.
  std::string Describe(const std::string& rid) const;
};

// ValidatePromptFit, except that with limits.allow_auto_truncate a request that does not fit
// is made to fit, as SGLang's --allow-auto-truncate does (its tokenizer manager and
// scheduler). With room = min(context length, pool tokens):
//   * a prompt of room tokens or more keeps its first room - 1 (its end is cut: a chat
//     prompt loses its last turn and the template's generation prompt, as in SGLang);
//   * a max_new_tokens past room - prompt is lowered to that (at least 1), min_new_tokens
//     with it; an unset max_new_tokens stays unset (the engine stops at the context);
//   * a logprob_start_len within the prompt as asked but past the kept prompt is lowered to
//     the kept prompt's last position (SGLang refuses it: its truncation comes first).
// The prompt's fit is against the pool's capacity, not its free tokens: a busy pool only
// makes a request wait. Updates `ids` and `request` in place and returns what was cut. Still
// errors, as ValidatePromptFit words them: an empty prompt, a logprob_start_len outside the
// prompt as asked. Without the flag: exactly ValidatePromptFit (nothing changes).
StatusOr<PromptCut> FitPrompt(std::vector<int32_t>& ids, GenerateRequest& request,
                              const ValidationLimits& limits);

}  // namespace radixlm
