// Reasoning parsers (`--reasoning-parser`): split a reply's thinking block from its answer.
//
//   deepseek-r1  the reply starts inside the thinking (the template's generation prompt opened
//                "<think>", as GLM-Z1's does): everything before "</think>" is reasoning; a
//                leading "<think>" is dropped. A reply without "</think>" is all reasoning.
//   deepseek-v3  DeepSeek V3.1 / V3.2, whose template opens "<think>" only when the request sets
//                chat_template_kwargs {"thinking": true} (and closes an empty one otherwise):
//                deepseek-r1 for such a request, qwen3 for any other (ForRequest below).
//   qwen3        the reply may open "<think>" itself; reasoning is what lies between
//   (alias       "<think>" and "</think>". A reply that does not start with "<think>" is all
//   glm45)       content. (SmolLM3's thinking, too.)
//   gemma4       the same with Gemma 4's thought channel, "<|channel>thought\n" and "<channel|>"
//                (with thinking off, its template's generation prompt closes an empty one)
//   mistral      the same with Mistral's "[THINK]" and "[/THINK]" (Magistral, the Ministral 3
//                and Mistral Small reasoning models).
//   granite      the same with Granite 3.2 / 3.3's plain-text markers (vLLM's granite parser):
//                the reply opens "Here is my thought process:" (or "Here's ..."), and the answer
//                follows "Here is my response:" (or "Here's ...").
//   gpt-oss      OpenAI's harmony messages (chat/harmony.h): the bodies of `analysis` messages
//                are reasoning, those of `final` and `commentary` (a preamble) messages are
//                content; a message addressed to a recipient (a tool call) is left in content
//                whole, markers included, for the gpt-oss tool-call parser. Text that is not
//                a harmony message is content.
//
// The streaming parser holds back text that may be the start of a tag, so no tag text ever
// reaches either field (gpt-oss: nor a marker, nor a message header still arriving).
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace radixlm::chat {

enum class ReasoningFormat {
  kDeepSeekR1,
  kDeepSeekV3,
  kQwen3,
  kMistral,
  kGemma4,
  kGranite,
  kGptOss
};

// "deepseek-r1" | "deepseek-v3" | "qwen3" | "glm45" | "mistral" | "gemma4" | "granite" |
// "gpt-oss"; InvalidArgument otherwise.
StatusOr<ReasoningFormat> ReasoningFormatFromName(std::string_view name);

// The format one request's reply is split with: deepseek-v3 becomes deepseek-r1 when the request
// asked for thinking (`thinking` true among its template variables), qwen3 otherwise (as SGLang's
// deepseek-v3 parser forces reasoning only on an explicit thinking: true). Others unchanged.
ReasoningFormat ForRequest(ReasoningFormat format, bool thinking_requested);

struct ReasoningSplit {
  std::string reasoning;
  std::string content;
};

// The whole reply at once.
ReasoningSplit SplitReasoning(ReasoningFormat format, std::string_view text);

class ReasoningStreamParser {
 public:
  explicit ReasoningStreamParser(ReasoningFormat format) : format_(format) {}
  // The new pieces of each field.
  ReasoningSplit Feed(std::string_view text);
  ReasoningSplit Finish();

 private:
  ReasoningSplit Emit(const ReasoningSplit& settled);

  ReasoningFormat format_;
  std::string text_;
  size_t reasoning_sent_ = 0;
  size_t content_sent_ = 0;
};

}  // namespace radixlm::chat
