// OpenAI response shapes for /v1/completions and /v1/chat/completions, built from engine
// results: choices (index = prompt * n + sample), finish_reason ("stop" | "length", plus
// SGLang's matched_stop), logprobs (completions: tokens / token_logprobs / top_logprobs /
// text_offset; chat: content[{token, logprob, bytes, top_logprobs}]), and usage with
// prompt_tokens_details.cached_tokens. Streams are "chat.completion.chunk" /
// "text_completion" events, an optional usage event, then "data: [DONE]".
//
// Chat with a tool parser: message.tool_calls ([{id: "call_...", type: "function", function:
// {name, arguments}}]) and finish_reason "tool_calls"; streamed as delta.tool_calls events (a
// call's id, type and name first with arguments "", then its arguments in pieces). With a
// reasoning parser: message.reasoning_content apart from content, streamed as its own deltas.
// Text the parsers hold back (a possible marker) is sent once decided; the logprobs of its
// tokens ride on the next event.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/reasoning_parser.h"
#include "chat/tool_call_parser.h"
#include "server/generation_call.h"
#include "server/openai_request.h"

namespace radixlm::server {

struct OpenAiResponseOptions {
  bool chat = false;
  std::string id;  // "chatcmpl-..." / "cmpl-..."
  std::string model;
  int64_t created = 0;  // unix seconds
  int32_t n = 1;
  bool logprobs = false;
  int32_t top_logprobs = 0;
  bool include_usage = false;
  bool continuous_usage = false;  // stream_options.continuous_usage_stats
  std::vector<std::string> echo_prefixes;           // completions with echo: per prompt, else empty
  std::optional<chat::ToolCallParser> tool_parser;  // chat with tools
  std::optional<chat::ReasoningFormat> reasoning;   // chat with --reasoning-parser
  bool stream_reasoning = true;  // false: streamed reasoning is sent whole when it ends
};

std::unique_ptr<GenerationFormatter> MakeOpenAiFormatter(OpenAiResponseOptions options,
                                                         const TokenTextCodec* codec);

// The usage object over all results (prompt tokens counted once per prompt).
nlohmann::json UsageJson(const ResultGrid& results);

}  // namespace radixlm::server
