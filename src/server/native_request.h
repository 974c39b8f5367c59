// Parsing of SGLang's native POST /generate body into engine requests.
//
// Accepted shape (SGLang's GenerateReqInput): "text" (string or list of strings) or
// "input_ids" (list of ids or list of lists), "image_data" (per prompt: an image or a list;
// a model with --mmproj), "sampling_params" (object, or one object per
// prompt), "rid", "return_logprob", "logprob_start_len", "top_logprobs_num" (each a scalar or a
// per-prompt list), "return_text_in_logprobs", "stream", "priority". A list input is a batch.
// null means "default" everywhere; unknown fields are ignored, as SGLang does; fields for
// features radixlm does not have (audio, video, input embeddings, LoRA, sessions, ...) are rejected
// with a message naming them.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <vector>

#include "engine/api.h"
#include "server/server_config.h"
#include "util/status.h"

namespace radixlm::server {

struct NativeGenerateCall {
  std::vector<GenerateRequest> requests;  // one per prompt, in input order
  bool batch = false;                     // the input was a list: the response is a list
  bool stream = false;
  bool return_text_in_logprobs = false;
  // image_data: each prompt's image references (server/image_input.h), read before Submit.
  std::vector<std::vector<std::string>> image_refs;

  // The response is a list when the input was a batch or any prompt asks for n > 1 samples
  // (prompt-major: every sample of prompt 0, then of prompt 1, ...).
  bool ReturnsList() const;
};

// InvalidArgument (or Unimplemented) naming the field for anything malformed. Sampling ranges
// that need the vocabulary are left to Engine::Submit.
StatusOr<NativeGenerateCall> ParseNativeGenerate(const nlohmann::json& body,
                                                 const ServerConfig& limits);

// Applies the server's own limits to parsed params: an explicit max_new_tokens above
// --max-new-tokens-cap is InvalidArgument, a default (or "no limit") is lowered to the cap; n
// must be in [1, max_batch_samples].
Status ApplyServerLimits(bool max_new_tokens_given, const ServerConfig& limits,
                         SamplingParams* params);

// SGLang's session_params {"id", "rid", "offset", "replace", "drop_previous_output"} of a
// request body (/generate and the OpenAI routes): nullopt when absent or unset ({}, null);
// InvalidArgument naming the field when malformed or when `batch` (a turn is one prompt).
StatusOr<std::optional<SessionParams>> ReadSessionParams(const nlohmann::json& body, bool batch);

// SGLang's return_hidden_states (true), which every generation route refuses: radixlm has no
// hidden-state output (Unimplemented).
Status RejectHiddenStates(const nlohmann::json& body);

}  // namespace radixlm::server
