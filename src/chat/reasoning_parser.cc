#include "chat/reasoning_parser.h"

#include <algorithm>

namespace radixlm::chat {
namespace {

struct Tags {
  std::string_view open;
  std::string_view close;
};

Tags TagsOf(ReasoningFormat format) {
  if (format == ReasoningFormat::kMistral) return {"[THINK]", "[/THINK]"};
  if (format == ReasoningFormat::kGemma4) return {"<|channel>thought\n", "<channel|>"};
  return {"<think>", "</think>"};
}

size_t HeldPrefix(std::string_view text, std::string_view tag) {
  for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

std::string_view TrimLeadingNewlines(std::string_view text) {
  while (!text.empty() && (text.front() == '\n' || text.front() == ' ')) text.remove_prefix(1);
  return text;
}

// The split of `text`; when !final, only what more text cannot change.
ReasoningSplit Split(ReasoningFormat format, std::string_view text, bool final) {
  ReasoningSplit out;
  const Tags tags = TagsOf(format);
  std::string_view rest = text;
  const bool opens = rest.substr(0, tags.open.size()) == tags.open;
  if (!opens) {
    if (!final && tags.open.substr(0, rest.size()) == rest) return out;  // maybe the tag arriving
    if (format != ReasoningFormat::kDeepSeekR1) {
      out.content = std::string(rest);
      return out;
    }
  } else {
    rest.remove_prefix(tags.open.size());
  }
  const size_t close = rest.find(tags.close);
  if (close == std::string_view::npos) {
    std::string_view reasoning = rest;
    if (!final) reasoning.remove_suffix(HeldPrefix(reasoning, tags.close));
    out.reasoning = std::string(reasoning);
    return out;
  }
  out.reasoning = std::string(rest.substr(0, close));
  std::string_view content = rest.substr(close + tags.close.size());
  // The newlines after "</think>" are layout; held until something else arrives.
  const std::string_view trimmed = TrimLeadingNewlines(content);
  if (!final && trimmed.empty()) return out;
  out.content = std::string(trimmed);
  return out;
}

}  // namespace

StatusOr<ReasoningFormat> ReasoningFormatFromName(std::string_view name) {
  if (name == "deepseek-r1") return ReasoningFormat::kDeepSeekR1;
  if (name == "qwen3" || name == "glm45") return ReasoningFormat::kQwen3;
  if (name == "mistral") return ReasoningFormat::kMistral;
  if (name == "gemma4") return ReasoningFormat::kGemma4;
  return InvalidArgument("unknown reasoning parser \"" + std::string(name) +
                         "\"; expected deepseek-r1, qwen3 (glm45), mistral or gemma4");
}

ReasoningSplit SplitReasoning(ReasoningFormat format, std::string_view text) {
  return Split(format, text, /*final=*/true);
}

ReasoningSplit ReasoningStreamParser::Emit(const ReasoningSplit& settled) {
  ReasoningSplit delta;
  if (settled.reasoning.size() > reasoning_sent_) {
    delta.reasoning = settled.reasoning.substr(reasoning_sent_);
    reasoning_sent_ = settled.reasoning.size();
  }
  if (settled.content.size() > content_sent_) {
    delta.content = settled.content.substr(content_sent_);
    content_sent_ = settled.content.size();
  }
  return delta;
}

ReasoningSplit ReasoningStreamParser::Feed(std::string_view text) {
  text_.append(text);
  return Emit(Split(format_, text_, /*final=*/false));
}

ReasoningSplit ReasoningStreamParser::Finish() { return Emit(Split(format_, text_, true)); }

}  // namespace radixlm::chat
