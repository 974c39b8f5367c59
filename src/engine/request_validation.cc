#include "engine/request_validation.h"

#include <algorithm>
#include <string>

#include "grammar/stop_regex.h"

namespace radixlm {

StatusOr<std::vector<int32_t>> PrepareGenerateRequest(const GenerateRequest& request,
                                                      const TokenTextCodec& codec,
                                                      const ValidationLimits& limits,
                                                      const ImagePrompt* images) {
  if (request.text.has_value() == request.input_ids.has_value()) {
    return InvalidArgument(request.text.has_value()
                               ? "Only one of text and input_ids may be provided."
                               : "Either text or input_ids should be provided.");
  }
  const SamplingParams& params = request.sampling_params;
  RADIXLM_RETURN_IF_ERROR(params.Validate(limits.vocab_size));
  for (size_t i = 0; i < params.stop_regex.size(); ++i) {
    if (Status s = grammar::CompileStopRegex(params.stop_regex[i]).status(); !s.ok()) {
      return Status(
          s.code() == StatusCode::kResourceExhausted ? StatusCode::kInvalidArgument : s.code(),
          "stop_regex[" + std::to_string(i) + "] is not a usable pattern: " + s.message());
    }
  }
  std::vector<int32_t> ids;
  std::vector<bool> image_position;
  if (images != nullptr) {
    ids = images->ids;
    image_position.resize(ids.size());
    for (const PromptImage& image : images->images) {
      std::fill_n(image_position.begin() + image.begin, image.n, true);
    }
  } else if (request.text.has_value()) {
    RADIXLM_ASSIGN_OR_RETURN(ids, request.text_verbatim ? codec.EncodeVerbatim(*request.text)
                                                        : codec.Encode(*request.text));
  } else {
    ids = *request.input_ids;
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!image_position.empty() && image_position[i]) continue;
    if (ids[i] < 0 || ids[i] >= limits.vocab_size) {
      return InvalidArgument("input_ids[" + std::to_string(i) + "] = " + std::to_string(ids[i]) +
                             " is outside the vocabulary [0, " + std::to_string(limits.vocab_size) +
                             ")");
    }
  }
  // Negative never makes sense; the bound matters only when logprobs are returned.
  if (request.top_logprobs_num < 0 ||
      (request.return_logprob && request.top_logprobs_num > limits.vocab_size)) {
    return InvalidArgument("top_logprobs_num must be in [0, " + std::to_string(limits.vocab_size) +
                           "], got " + std::to_string(request.top_logprobs_num));
  }
  for (size_t i = 0; i < request.token_ids_logprob.size(); ++i) {
    const int32_t id = request.token_ids_logprob[i];
    if (id < 0 || id >= limits.vocab_size) {
      return InvalidArgument("token_ids_logprob[" + std::to_string(i) +
                             "] = " + std::to_string(id) + " is outside the vocabulary [0, " +
                             std::to_string(limits.vocab_size) + ")");
    }
  }
  if (request.session_params.has_value() && params.n != 1) {
    return InvalidArgument("a session turn (session_params) takes n = 1, got n = " +
                           std::to_string(params.n));
  }
  return ids;
}

Status ValidatePromptFit(std::span<const int32_t> ids, const GenerateRequest& request,
                         const ValidationLimits& limits) {
  const SamplingParams& params = request.sampling_params;
  const auto n = static_cast<int64_t>(ids.size());
  if (n == 0) return InvalidArgument("The input is empty.");
  if (n >= limits.context_length) {
    return InvalidArgument("The input (" + std::to_string(n) +
                           " tokens) is longer than the model's context length (" +
                           std::to_string(limits.context_length) + " tokens).");
  }
  if (params.max_new_tokens.has_value() && n + *params.max_new_tokens > limits.context_length) {
    return InvalidArgument(
        "Requested token count exceeds the model's maximum context length of " +
        std::to_string(limits.context_length) + " tokens. You requested a total of " +
        std::to_string(n + *params.max_new_tokens) + " tokens: " + std::to_string(n) +
        " tokens from the input messages and " + std::to_string(*params.max_new_tokens) +
        " tokens for the completion. Please reduce the number of tokens in the input messages "
        "or the completion to fit within the limit.");
  }
  const int64_t needed = n + std::max<int64_t>(params.max_new_tokens.value_or(1), 1);
  if (needed > limits.pool_tokens) {
    return InvalidArgument("The request needs " + std::to_string(needed) +
                           " KV cache tokens (input plus max_new_tokens) but the KV cache holds " +
                           std::to_string(limits.pool_tokens) + " tokens.");
  }
  if (request.return_logprob &&
      (request.logprob_start_len < -1 || request.logprob_start_len >= n)) {
    return InvalidArgument("logprob_start_len must be in [-1, " + std::to_string(n) +
                           ") for this input, got " + std::to_string(request.logprob_start_len));
  }
  return Status::Ok();
}

std::string PromptCut::Describe(const std::string& rid) const {
  std::string line = "request " + (rid.empty() ? std::string("(no rid)") : rid) +
                     " truncated to fit " + std::to_string(room) +
                     " tokens (the context length, or the KV cache if smaller; "
                     "--allow-auto-truncate):";
  if (prompt_tokens != prompt_tokens_asked) {
    line += " input " + std::to_string(prompt_tokens_asked) + " -> its first " +
            std::to_string(prompt_tokens) + " tokens;";
  }
  if (max_new_tokens_asked.has_value()) {
    line += " max_new_tokens " + std::to_string(*max_new_tokens_asked) + " -> " +
            std::to_string(max_new_tokens) + ";";
  }
  if (logprob_start_len_asked.has_value()) {
    line += " logprob_start_len " + std::to_string(*logprob_start_len_asked) + " -> " +
            std::to_string(logprob_start_len) + ";";
  }
  line.pop_back();  // the last ';'
  return line;
}

StatusOr<PromptCut> FitPrompt(std::vector<int32_t>& ids, GenerateRequest& request,
                              const ValidationLimits& limits) {
  PromptCut cut;
  cut.room = std::min(limits.context_length, limits.pool_tokens);
  cut.prompt_tokens_asked = cut.prompt_tokens = static_cast<int64_t>(ids.size());
  // A request that fits as asked runs as asked. Without the flag, or when nothing could fit
  // (no room for one prompt token and one new one), or for an empty prompt: the error.
  Status fit = ValidatePromptFit(ids, request, limits);
  if (fit.ok()) return cut;
  if (!limits.allow_auto_truncate || cut.room < 2 || ids.empty()) return fit;
  const auto asked = static_cast<int64_t>(ids.size());
  if (request.return_logprob &&
      (request.logprob_start_len < -1 || request.logprob_start_len >= asked)) {
    // Outside the prompt as asked: the request's own mistake, not a question of fit.
    return InvalidArgument("logprob_start_len must be in [-1, " + std::to_string(asked) +
                           ") for this input, got " + std::to_string(request.logprob_start_len));
  }
  if (asked >= cut.room) ids.resize(static_cast<size_t>(cut.room - 1));
  const auto n = static_cast<int64_t>(ids.size());
  cut.prompt_tokens = n;
  SamplingParams& params = request.sampling_params;
  if (params.max_new_tokens.has_value() && n + *params.max_new_tokens > cut.room) {
    cut.max_new_tokens_asked = *params.max_new_tokens;
    cut.max_new_tokens = static_cast<int32_t>(cut.room - n);
    params.max_new_tokens = cut.max_new_tokens;
    params.min_new_tokens = std::min(params.min_new_tokens, cut.max_new_tokens);
  }
  if (request.return_logprob && request.logprob_start_len >= n) {
    cut.logprob_start_len_asked = request.logprob_start_len;
    cut.logprob_start_len = static_cast<int32_t>(n - 1);
    request.logprob_start_len = cut.logprob_start_len;
  }
  // It fits now; the one definition of fitting says so.
  RADIXLM_RETURN_IF_ERROR(ValidatePromptFit(ids, request, limits));
  return cut;
}

}  // namespace radixlm
