// Parsing of OpenAI's /v1/completions and /v1/chat/completions bodies into engine requests.
//
// Standard fields: model, prompt | messages, max_tokens (chat: max_completion_tokens wins),
// temperature, top_p, n, stop, seed, presence_penalty, frequency_penalty, logit_bias, stream,
// stream_options (include_usage, continuous_usage_stats), logprobs (+ top_logprobs for chat),
// echo (completions; with logprobs the prompt is scored too), response_format (text |
// json_object | json_schema | structural_tag, on both routes, as in SGLang), user. SGLang's
// extras: top_k, min_p, min_tokens, repetition_penalty, stop_token_ids, ignore_eos,
// skip_special_tokens, no_stop_trim, spaces_between_special_tokens, regex, json_schema, ebnf,
// rid, priority. Unknown fields are ignored; fields for features radixlm lacks (suffix,
// best_of != n, images, lora_path, return_hidden_states, the deprecated `functions` /
// `function_call`) are refused with a message naming them. Chat: tools, tool_choice and
// parallel_tool_calls (openai_tools.h), chat_template_kwargs and continue_final_message
// (chat_prompt.h), separate_reasoning and stream_reasoning.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/api.h"
#include "server/chat_prompt.h"
#include "server/openai_tools.h"
#include "server/server_config.h"
#include "util/status.h"

namespace radixlm::server {

struct ChatMessage {
  std::string role;     // system | developer | user | assistant | tool
  std::string content;  // text parts joined
  bool content_is_null = false;
};

struct OpenAiRequest {
  bool chat = false;
  std::string model;
  // Completions: one entry per prompt; each is text or token ids.
  std::vector<GenerateRequest> prompts;
  std::vector<ChatMessage> messages;    // chat only
  nlohmann::json raw_messages;          // chat only: as sent (for templates that want more),
                                        // image parts turned into text parts with the marker
  std::vector<std::string> image_urls;  // chat only: the image parts' URLs, in order
  SamplingParams sampling;              // shared by every prompt
  bool stream = false;
  bool include_usage = false;
  bool continuous_usage = false;         // stream_options.continuous_usage_stats
  bool echo = false;                     // completions
  bool logprobs = false;                 // return logprobs at all
  int32_t top_logprobs = 0;              // alternatives per position
  std::string rid;                       // SGLang extra; "" lets the engine choose
  int32_t priority = 0;                  // SGLang extra (--schedule-policy priority)
  std::string lora_path;                 // SGLang extra: a loaded adapter's name; "": none
  std::optional<SessionParams> session;  // SGLang extra: a session turn (one prompt)
  ToolRequest tools;                     // chat only
  ChatTemplateOptions chat_template;     // chat only: chat_template_kwargs, continue_final_message
  // Chat with --reasoning-parser (SGLang's fields): false keeps the thinking in content /
  // sends streamed thinking in one delta when it ends.
  bool separate_reasoning = true;
  bool stream_reasoning = true;
};

// InvalidArgument / Unimplemented naming the field.
StatusOr<OpenAiRequest> ParseCompletionRequest(const nlohmann::json& body,
                                               const ServerConfig& limits);
StatusOr<OpenAiRequest> ParseChatRequest(const nlohmann::json& body, const ServerConfig& limits);

// The checks ParseChatRequest makes of the body's `messages` alone (a non-empty list of
// objects with a known role and text content), for routes that render messages without
// running them (/tokenize).
Status CheckChatMessages(const nlohmann::json& body);

}  // namespace radixlm::server
