#include "chat/reasoning_parser.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "chat/harmony.h"

namespace radixlm::chat {
namespace {

// Each field lists the spellings a model uses (Granite writes "Here's" as well as "Here is").
struct Tags {
  std::vector<std::string_view> open;
  std::vector<std::string_view> close;
};

const Tags& TagsOf(ReasoningFormat format) {
  static const Tags kThink{{"<think>"}, {"</think>"}};
  static const Tags kMistral{{"[THINK]"}, {"[/THINK]"}};
  static const Tags kGemma4{{"<|channel>thought\n"}, {"<channel|>"}};
  static const Tags kGranite{{"Here is my thought process:", "Here's my thought process:"},
                             {"Here is my response:", "Here's my response:"}};
  switch (format) {
    case ReasoningFormat::kMistral:
      return kMistral;
    case ReasoningFormat::kGemma4:
      return kGemma4;
    case ReasoningFormat::kGranite:
      return kGranite;
    case ReasoningFormat::kDeepSeekR1:
    case ReasoningFormat::kDeepSeekV3:
    case ReasoningFormat::kQwen3:
    case ReasoningFormat::kGptOss:
      break;
  }
  return kThink;
}

size_t HeldPrefix(std::string_view text, const std::vector<std::string_view>& tags) {
  size_t held = 0;
  for (std::string_view tag : tags) {
    for (size_t n = std::min(text.size(), tag.size() - 1); n > held; --n) {
      if (text.substr(text.size() - n) == tag.substr(0, n)) {
        held = n;
        break;
      }
    }
  }
  return held;
}

// The spelling of `tags` that `text` starts with, or "".
std::string_view OpeningTag(std::string_view text, const std::vector<std::string_view>& tags) {
  for (std::string_view tag : tags) {
    if (text.starts_with(tag)) return tag;
  }
  return {};
}

// Whether `text` may still grow into one of `tags`.
bool MayBecomeTag(std::string_view text, const std::vector<std::string_view>& tags) {
  return std::any_of(tags.begin(), tags.end(),
                     [&](std::string_view tag) { return tag.starts_with(text); });
}

// The first occurrence of any of `tags` in `text`: {position, length}, or {npos, 0}.
std::pair<size_t, size_t> FindTag(std::string_view text,
                                  const std::vector<std::string_view>& tags) {
  std::pair<size_t, size_t> first{std::string_view::npos, 0};
  for (std::string_view tag : tags) {
    const size_t at = text.find(tag);
    if (at < first.first) first = {at, tag.size()};
  }
  return first;
}

std::string_view TrimLeadingNewlines(std::string_view text) {
  while (!text.empty() && (text.front() == '\n' || text.front() == ' ')) text.remove_prefix(1);
  return text;
}

// Harmony: analysis bodies are reasoning; final and preamble bodies, tool calls (whole) and
// text outside messages are content.
ReasoningSplit SplitHarmony(std::string_view text, bool final) {
  ReasoningSplit out;
  for (const HarmonyPart& part : ScanHarmony(text, final).parts) {
    if (!part.is_message || !part.recipient.empty()) {
      out.content.append(part.raw);
    } else if (part.channel == "analysis") {
      out.reasoning.append(part.body);
    } else {
      out.content.append(part.body);
    }
  }
  return out;
}

// The split of `text`; when !final, only what more text cannot change.
ReasoningSplit Split(ReasoningFormat format, std::string_view text, bool final) {
  if (format == ReasoningFormat::kGptOss) return SplitHarmony(text, final);
  ReasoningSplit out;
  const Tags& tags = TagsOf(format);
  std::string_view rest = text;
  const std::string_view open = OpeningTag(rest, tags.open);
  if (open.empty()) {
    if (!final && MayBecomeTag(rest, tags.open)) return out;  // maybe the tag arriving
    if (format != ReasoningFormat::kDeepSeekR1) {
      out.content = std::string(rest);
      return out;
    }
  } else {
    rest.remove_prefix(open.size());
  }
  const auto [close, close_size] = FindTag(rest, tags.close);
  if (close == std::string_view::npos) {
    std::string_view reasoning = rest;
    if (!final) reasoning.remove_suffix(HeldPrefix(reasoning, tags.close));
    out.reasoning = std::string(reasoning);
    return out;
  }
  out.reasoning = std::string(rest.substr(0, close));
  std::string_view content = rest.substr(close + close_size);
  // The newlines after "</think>" are layout; held until something else arrives.
  const std::string_view trimmed = TrimLeadingNewlines(content);
  if (!final && trimmed.empty()) return out;
  out.content = std::string(trimmed);
  return out;
}

}  // namespace

StatusOr<ReasoningFormat> ReasoningFormatFromName(std::string_view name) {
  if (name == "deepseek-r1") return ReasoningFormat::kDeepSeekR1;
  if (name == "deepseek-v3") return ReasoningFormat::kDeepSeekV3;
  if (name == "qwen3" || name == "glm45") return ReasoningFormat::kQwen3;
  if (name == "mistral") return ReasoningFormat::kMistral;
  if (name == "gemma4") return ReasoningFormat::kGemma4;
  if (name == "granite") return ReasoningFormat::kGranite;
  if (name == "gpt-oss") return ReasoningFormat::kGptOss;
  return InvalidArgument("unknown reasoning parser \"" + std::string(name) +
                         "\"; expected deepseek-r1, deepseek-v3, qwen3 (glm45), mistral, gemma4, "
                         "granite or gpt-oss");
}

ReasoningFormat ForRequest(ReasoningFormat format, bool thinking_requested) {
  if (format != ReasoningFormat::kDeepSeekV3) return format;
  return thinking_requested ? ReasoningFormat::kDeepSeekR1 : ReasoningFormat::kQwen3;
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
