// Tool-call parsers: split a chat model's output into content text and function calls, for the
// formats common chat templates teach (`--tool-call-parser`, SGLang's names where SGLang has
// one):
//
//   qwen25 (alias hermes, qwen)  <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>
//                                (Qwen 2.5 / 3, Hermes, SmolLM3)
//   llama3                       [<|python_tag|>]{"name": "f", "parameters": {...}}; {...}
//   mistral                      [TOOL_CALLS] [{"name": "f", "arguments": {...}}, ...] or, from
//                                Mistral's v11 tokenizer on (Mistral Small 3.2, Ministral 3,
//                                Magistral), [TOOL_CALLS]f[ARGS]{...} once per call (an
//                                optional [CALL_ID]id before [ARGS] is skipped)
//   granite                      <|tool_call|>[{"name": "f", "arguments": {...}}, ...]
//                                (Granite 3.x; vLLM's name)
//   phi4_mini (alias             functools[{"name": "f", "arguments": {...}}, ...] or
//     phi4_mini_json)            <|tool_call|>{...} or [...] <|/tool_call|> (Phi-4-mini)
//   glm4                         f\n{...}: the reply is the function's name on its own line and
//                                its arguments object (GLM-4-0414 / GLM-Z1; radixlm's name, as
//                                SGLang's glm / glm45 parse GLM-4.5's XML calls)
//   gemma4                       <|tool_call>call:f{key:<|"|>text<|"|>,n:3}<tool_call|>, once per
//                                call (Gemma 4; the arguments converted to JSON, see
//                                gemma4_tool_syntax.h)
//   gpt-oss                      OpenAI's harmony messages (chat/harmony.h): a message to
//                                functions.f, <|channel|>commentary to=functions.f
//                                <|constrain|>json<|message|>{...} (or the recipient in the
//                                role header, <|start|>assistant to=functions.f<|channel|>
//                                commentary json<|message|>{...}), ended by <|call|> or by the
//                                end of the output (<|call|> ends the generation); the bodies
//                                of final and preamble messages are content, analysis bodies
//                                are left out (they are the reasoning parser's)
//   json                         the whole reply is {"name": "f", "arguments": {...}}, such
//                                objects one after another, or a list of them (templates
//                                without tool syntax, e.g. Gemma-3's: the tools are described
//                                in the system turn)
//
// Lenient where constrained decoding needs it: json and llama3 accept call objects written back
// to back, lists accept a missing or trailing comma, llama3 a trailing ';'.
//
// A call's arguments are returned as the raw JSON text the model wrote ("{}" when absent), so
// streamed pieces concatenate to exactly the non-streamed value (gemma4: the JSON its dict
// converts to, streamed as a growing prefix of that). A call whose JSON is malformed
// or cut short, or whose name is not among the request's tools, comes back as content text.
//
// Streaming: ToolCallStreamParser never emits text that may still turn out to be part of a
// call (a marker's prefix is held back), emits a call's name once it is complete and its
// arguments in pieces as they arrive. Once a call's name went out it stays a call, even if the
// output is later cut short (non-streamed parsing would return such a call as text).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace radixlm::chat {

enum class ToolCallFormat {
  kQwen25,
  kLlama3,
  kMistral,
  kGranite,
  kPhi4Mini,
  kGlm4,
  kGemma4,
  kGptOss,
  kJson
};

// "qwen25" | "qwen" | "hermes" | "llama3" | "mistral" | "granite" | "phi4_mini" |
// "phi4_mini_json" | "glm4" | "gemma4" | "gpt-oss" | "json"; InvalidArgument otherwise.
StatusOr<ToolCallFormat> ToolCallFormatFromName(std::string_view name);
std::string_view ToolCallFormatName(ToolCallFormat format);
// The format a chat template's tool syntax shows (<tool_call>, [TOOL_CALLS], <|tool_call|>,
// Phi-4-mini's <|tool|>, GLM-4's <|observation|>, Gemma 4's <|tool_call>call:, harmony's
// <|channel|> and <|call|>, <|python_tag|>); kJson when it has none.
ToolCallFormat DetectToolCallFormat(std::string_view template_source);

struct ToolCall {
  std::string name;
  std::string arguments;  // raw JSON text
};

struct ParsedToolOutput {
  std::string content;  // text outside calls
  std::vector<ToolCall> calls;
};

// What a call's parse looks like while text is still arriving.
struct PartialToolCall {
  std::string name;       // set once known
  std::string arguments;  // the raw JSON text so far (a prefix of the final value)
  bool complete = false;
};
struct ToolParseSnapshot {
  std::string content;                 // final: all of it; partial: the part that is settled
  std::vector<PartialToolCall> calls;  // partial: only calls whose name is known
};

class ToolCallParser {
 public:
  // `tool_names` empty: any name is accepted.
  ToolCallParser(ToolCallFormat format, std::vector<std::string> tool_names)
      : format_(format), tool_names_(std::move(tool_names)) {}

  ParsedToolOutput Parse(std::string_view text) const;
  // final == false: the text may grow; the snapshot only holds what more text cannot change.
  ToolParseSnapshot Snapshot(std::string_view text, bool final) const;

  ToolCallFormat format() const { return format_; }

 private:
  bool KnownName(std::string_view name) const;
  // Whether `prefix` may still grow into an acceptable name.
  bool MaybeName(std::string_view prefix) const;
  friend class ToolOutputScanner;

  ToolCallFormat format_;
  std::vector<std::string> tool_names_;
};

// One streamed event's worth of changes.
struct ToolCallDelta {
  int index = 0;                    // the call's position in the reply
  std::optional<std::string> name;  // the call's first delta only
  std::string arguments;            // the next piece of the arguments
};
struct ToolStreamDelta {
  std::string content;
  std::vector<ToolCallDelta> calls;
  bool empty() const { return content.empty() && calls.empty(); }
};

class ToolCallStreamParser {
 public:
  explicit ToolCallStreamParser(ToolCallParser parser) : parser_(std::move(parser)) {}
  ToolStreamDelta Feed(std::string_view text);
  ToolStreamDelta Finish();  // the output ended
  int calls_started() const { return static_cast<int>(sent_.size()); }

 private:
  ToolStreamDelta Diff(const ToolParseSnapshot& snapshot);

  ToolCallParser parser_;
  std::string text_;
  size_t content_sent_ = 0;
  std::vector<size_t> sent_;  // per call started: bytes of arguments sent
};

// Writes calls the way `format` expects a model to (for assistant turns in the history of
// templates without tool syntax, and for the instructions that describe the format).
std::string FormatToolCalls(ToolCallFormat format, const std::vector<ToolCall>& calls);

}  // namespace radixlm::chat
