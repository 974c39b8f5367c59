#include "chat/tool_call_parser.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "chat/gemma4_tool_syntax.h"
#include "chat/harmony.h"
#include "chat/json_scan.h"

namespace radixlm::chat {
namespace {

constexpr std::string_view kHermesOpen = "<tool_call>";
constexpr std::string_view kHermesClose = "</tool_call>";
constexpr std::string_view kMistralMarker = "[TOOL_CALLS]";
constexpr std::string_view kMistralArgs = "[ARGS]";
constexpr std::string_view kMistralCallId = "[CALL_ID]";
constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kGraniteMarker = "<|tool_call|>";  // also Phi-4-mini's opening tag
constexpr std::string_view kPhi4Close = "<|/tool_call|>";
constexpr std::string_view kPhi4Functools = "functools";
constexpr std::string_view kGemma4Open = "<|tool_call>call:";
constexpr std::string_view kGemma4Close = "<tool_call|>";
constexpr std::string_view kHarmonyChannel = "<|channel|>";
constexpr std::string_view kHarmonyCall = "<|call|>";
constexpr std::string_view kHarmonyFunctions = "functions.";

// Characters of a function name written bare (mistral's compact calls, glm4).
bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}
bool AllNameChars(std::string_view text) {
  for (char c : text) {
    if (!NameChar(c)) return false;
  }
  return true;
}

bool AllSpace(std::string_view text) { return SkipJsonSpace(text, 0) == text.size(); }

// Length of the longest suffix of `text` that is a proper prefix of `marker` (text that may
// still become the marker once more arrives).
size_t HeldMarkerPrefix(std::string_view text, std::string_view marker) {
  for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
  }
  return 0;
}

// Where calls begin and end in a format whose calls follow a marker.
struct Tagging {
  std::vector<std::string_view> markers;  // any of them opens calls
  std::string_view close;                 // optional closing tag after the calls ("" none)
  bool list = false;                      // a '[' list of calls may follow the marker
};

enum class Scan { kComplete, kIncomplete, kInvalid };

// One call object {"name": ..., "arguments" | "parameters": ...} at text[pos].
struct CallScan {
  Scan status = Scan::kInvalid;
  size_t end = 0;  // kComplete: one past '}'
  PartialToolCall call;
  bool name_known = false;
};

}  // namespace

// Walks one reply; shared by every format.
class ToolOutputScanner {
 public:
  ToolOutputScanner(const ToolCallParser& parser, std::string_view text, bool final)
      : parser_(parser), text_(text), final_(final) {}

  ToolParseSnapshot Run() {
    switch (parser_.format_) {
      case ToolCallFormat::kQwen25:
        RunTagged({{kHermesOpen}, kHermesClose, /*list=*/false});
        break;
      case ToolCallFormat::kMistral:
        RunTagged({{kMistralMarker}, "", /*list=*/true});
        break;
      case ToolCallFormat::kGranite:
        RunTagged({{kGraniteMarker}, "", /*list=*/true});
        break;
      case ToolCallFormat::kPhi4Mini:
        RunTagged({{kPhi4Functools, kGraniteMarker}, kPhi4Close, /*list=*/true});
        break;
      case ToolCallFormat::kGlm4:
        RunGlm4();
        break;
      case ToolCallFormat::kGemma4:
        RunGemma4();
        break;
      case ToolCallFormat::kGptOss:
        RunGptOss();
        break;
      case ToolCallFormat::kLlama3:
        RunLlama3();
        break;
      case ToolCallFormat::kJson:
        RunLeading(0, /*list=*/true, /*separator=*/'\0');
        break;
    }
    return std::move(out_);
  }

 private:
  CallScan ScanCall(size_t pos) const {
    CallScan r;
    if (pos >= text_.size()) return {Scan::kIncomplete, pos, {}, false};
    if (text_[pos] != '{') return r;
    bool has_args = false;
    size_t i = pos + 1;
    bool first = true;
    while (true) {
      i = SkipJsonSpace(text_, i);
      if (i >= text_.size()) return Partial(r, has_args);
      if (text_[i] == '}' && first) break;
      if (!first) {
        if (text_[i] == '}') break;
        if (text_[i] != ',') return r;
        i = SkipJsonSpace(text_, i + 1);
        if (i >= text_.size()) return Partial(r, has_args);
      }
      first = false;
      const JsonScanResult key = ScanJsonValue(text_, i);
      if (key.status != JsonScan::kComplete) {
        return key.status == JsonScan::kIncomplete ? Partial(r, has_args) : r;
      }
      std::string key_text;
      if (!DecodeJsonString(text_.substr(i, key.end - i), &key_text)) return r;
      i = SkipJsonSpace(text_, key.end);
      if (i >= text_.size()) return Partial(r, has_args);
      if (text_[i] != ':') return r;
      i = SkipJsonSpace(text_, i + 1);
      if (i >= text_.size()) return Partial(r, has_args);
      const JsonScanResult value = ScanJsonValue(text_, i);
      if (value.status == JsonScan::kInvalid) return r;
      const bool is_args = key_text == "arguments" || key_text == "parameters";
      if (value.status == JsonScan::kIncomplete) {
        if (is_args) {
          has_args = true;
          r.call.arguments = std::string(text_.substr(i));
        }
        return Partial(r, has_args);
      }
      if (key_text == "name") {
        if (!DecodeJsonString(text_.substr(i, value.end - i), &r.call.name)) return r;
        if (!parser_.KnownName(r.call.name)) return r;
        r.name_known = true;
      } else if (is_args) {
        has_args = true;
        r.call.arguments = std::string(text_.substr(i, value.end - i));
      }
      i = value.end;
    }
    if (!r.name_known) return r;
    if (!has_args) r.call.arguments = "{}";
    r.call.complete = true;
    r.status = Scan::kComplete;
    r.end = i + 1;
    return r;
  }

  // An unfinished call: its arguments are only shown while they are the last thing written
  // after a known name (before that, nothing of the call is settled).
  static CallScan Partial(CallScan r, bool args_in_progress) {
    r.status = Scan::kIncomplete;
    if (!r.name_known) r.call = {};
    if (r.name_known && !args_in_progress) r.call.arguments.clear();
    return r;
  }

  // Content outside calls. After a call, leading whitespace is dropped (the newline before the
  // next marker is layout, not content).
  void AddContent(std::string_view text) {
    if (!out_.calls.empty() || calls_seen_) {
      const size_t start = SkipJsonSpace(text, 0);
      text = text.substr(start);
    }
    out_.content.append(text);
  }

  // Content at the end of the settled text: on a partial parse, a tail that may still grow
  // into `marker` is held back, and whitespace after a call is held until something follows.
  void AddTail(std::string_view tail, std::string_view marker) {
    AddTail(tail, std::vector<std::string_view>{marker});
  }
  void AddTail(std::string_view tail, const std::vector<std::string_view>& markers) {
    if (!final_) {
      size_t held = 0;
      for (std::string_view marker : markers) {
        if (!marker.empty()) held = std::max(held, HeldMarkerPrefix(tail, marker));
      }
      tail.remove_suffix(held);
      if (calls_seen_ && AllSpace(tail)) return;
    }
    AddContent(tail);
  }

  // Calls from text_[pos]: one object, a '[' list of objects (list), or objects separated by
  // `separator`. Returns where the calls end, or nullopt when the text ends inside them (the
  // parse is then over). On a malformed call, the text from it on is content.
  std::optional<size_t> ScanCalls(size_t pos, bool list, char separator) {
    size_t i = SkipJsonSpace(text_, pos);
    if (i >= text_.size()) return Unfinished(pos);
    const bool in_list = list && text_[i] == '[';
    if (in_list) i = SkipJsonSpace(text_, i + 1);
    // json and llama3 accept objects written back to back ("{...}{...}" or "{...}\n{...}").
    const bool adjacent =
        parser_.format_ == ToolCallFormat::kJson || parser_.format_ == ToolCallFormat::kLlama3;
    while (true) {
      const CallScan call = ScanCall(i);
      if (call.status == Scan::kInvalid) return Malformed(pos);
      if (call.status == Scan::kIncomplete) {
        if (call.name_known) pending_.push_back(call.call);
        return Unfinished(pos);
      }
      pending_.push_back(call.call);
      size_t j = SkipJsonSpace(text_, call.end);
      if (j >= text_.size()) {
        if (!final_ && (in_list || separator != '\0' || adjacent)) return Unfinished(pos);
        if (in_list) return Malformed(pos);
        return Commit(j);
      }
      if (in_list) {
        if (text_[j] == ']') return Commit(j + 1);
        if (text_[j] == '{') {  // a missing comma
          i = j;
          continue;
        }
        if (text_[j] != ',') return Malformed(pos);
        i = SkipJsonSpace(text_, j + 1);
        if (i < text_.size() && text_[i] == ']') return Commit(i + 1);  // a trailing comma
        continue;
      }
      if (separator != '\0' && text_[j] == separator) {
        i = SkipJsonSpace(text_, j + 1);
        if (i >= text_.size()) return final_ ? Commit(j + 1) : Unfinished(pos);
        continue;
      }
      if (adjacent && text_[j] == '{') {
        i = j;
        continue;
      }
      return Commit(call.end);
    }
  }

  std::optional<size_t> Commit(size_t end) {
    for (PartialToolCall& c : pending_) out_.calls.push_back(std::move(c));
    pending_.clear();
    calls_seen_ = true;
    return end;
  }
  // The text ends inside the calls: a partial parse shows the calls whose names are known;
  // a final one gives the unfinished calls back as text.
  std::optional<size_t> Unfinished(size_t pos) {
    if (final_) {
      pending_.clear();
      AddContent(text_.substr(region_start_));
    } else {
      for (PartialToolCall& c : pending_) out_.calls.push_back(std::move(c));
      pending_.clear();
    }
    (void)pos;
    return std::nullopt;
  }
  std::optional<size_t> Malformed(size_t) {
    pending_.clear();
    AddContent(text_.substr(region_start_));
    return std::nullopt;
  }

  // Formats whose calls follow a marker anywhere in the text (qwen25's, granite's and
  // phi4_mini's repeat; mistral's once, or once per call in its compact form).
  void RunTagged(const Tagging& tagging) {
    size_t pos = 0;
    while (true) {
      size_t m = std::string_view::npos;
      std::string_view marker;
      for (std::string_view candidate : tagging.markers) {
        const size_t at = text_.find(candidate, pos);
        if (at < m) {
          m = at;
          marker = candidate;
        }
      }
      if (m == std::string_view::npos) {
        AddTail(text_.substr(pos), tagging.markers);
        return;
      }
      AddContent(text_.substr(pos, m - pos));
      region_start_ = m;
      const size_t after = m + marker.size();
      const size_t first = SkipJsonSpace(text_, after);
      std::optional<size_t> end;
      if (marker == kMistralMarker && first < text_.size() && NameChar(text_[first])) {
        end = ScanMistralCompactCall(first);
      } else if (marker == kMistralMarker && first == text_.size() && !final_) {
        return;  // which form follows is not known yet
      } else {
        end = ScanCalls(after, tagging.list, '\0');
      }
      if (!end.has_value()) return;
      pos = *end;
      if (!tagging.close.empty()) {
        // The closing tag; a reply cut right after the JSON still counts as a call.
        const size_t j = SkipJsonSpace(text_, pos);
        const std::string_view rest = text_.substr(j);
        if (rest.substr(0, tagging.close.size()) == tagging.close) {
          pos = j + tagging.close.size();
        } else if (tagging.close.substr(0, rest.size()) == rest) {
          if (!final_) return;  // maybe the closing tag, arriving
          pos = text_.size();
        }
      }
    }
  }

  // Mistral's compact call after [TOOL_CALLS]: name[ARGS]{...}, or name[CALL_ID]id[ARGS]{...}.
  std::optional<size_t> ScanMistralCompactCall(size_t pos) {
    const size_t args = text_.find(kMistralArgs, pos);
    const size_t call_id = text_.find(kMistralCallId, pos);
    const size_t name_end = std::min(args, call_id);
    if (name_end == std::string_view::npos) {
      // The name (or a marker after it) may still be arriving.
      std::string_view rest = text_.substr(pos);
      rest.remove_suffix(
          std::max(HeldMarkerPrefix(rest, kMistralArgs), HeldMarkerPrefix(rest, kMistralCallId)));
      if (!final_ && AllNameChars(rest) && parser_.MaybeName(rest)) return Unfinished(pos);
      return Malformed(pos);
    }
    const std::string_view name = text_.substr(pos, name_end - pos);
    if (!AllNameChars(name) || !parser_.KnownName(name)) return Malformed(pos);
    if (args == std::string_view::npos) return final_ ? Malformed(pos) : Unfinished(pos);
    if (call_id < args && !AllNameChars(text_.substr(call_id + kMistralCallId.size(),
                                                     args - call_id - kMistralCallId.size()))) {
      return Malformed(pos);
    }
    PartialToolCall call;
    call.name = std::string(name);
    const size_t i = SkipJsonSpace(text_, args + kMistralArgs.size());
    if (i >= text_.size()) {
      pending_.push_back(std::move(call));
      return Unfinished(pos);
    }
    const JsonScanResult value = ScanJsonValue(text_, i);
    if (value.status == JsonScan::kInvalid || text_[i] != '{') return Malformed(pos);
    if (value.status == JsonScan::kIncomplete) {
      call.arguments = std::string(text_.substr(i));
      pending_.push_back(std::move(call));
      return Unfinished(pos);
    }
    call.arguments = std::string(text_.substr(i, value.end - i));
    call.complete = true;
    pending_.push_back(std::move(call));
    return Commit(value.end);
  }

  // GLM-4's call: the reply opens with the function's name on a line of its own, then its
  // arguments object. Anything else is content.
  void RunGlm4() {
    const size_t i = SkipJsonSpace(text_, 0);
    const size_t newline = text_.find('\n', i);
    const std::string_view first_line =
        text_.substr(i, (newline == std::string_view::npos ? text_.size() : newline) - i);
    const bool name_like = !first_line.empty() && AllNameChars(first_line);
    if (newline == std::string_view::npos) {
      // Hold back what may still become a call's name.
      if (!final_ && (i >= text_.size() || (name_like && parser_.MaybeName(first_line)))) return;
      AddContent(text_);
      return;
    }
    if (!name_like || !parser_.KnownName(first_line)) {
      AddContent(text_);
      return;
    }
    const size_t j = SkipJsonSpace(text_, newline + 1);
    if (j >= text_.size()) {
      if (final_) AddContent(text_);
      return;  // the arguments have not begun: nothing is settled
    }
    if (text_[j] != '{') {
      AddContent(text_);
      return;
    }
    region_start_ = 0;
    PartialToolCall call;
    call.name = std::string(first_line);
    const JsonScanResult value = ScanJsonValue(text_, j);
    if (value.status == JsonScan::kInvalid) {
      Malformed(0);
      return;
    }
    if (value.status == JsonScan::kIncomplete) {
      call.arguments = std::string(text_.substr(j));
      pending_.push_back(std::move(call));
      Unfinished(0);
      return;
    }
    call.arguments = std::string(text_.substr(j, value.end - j));
    call.complete = true;
    pending_.push_back(std::move(call));
    Commit(value.end);
    AddTail(text_.substr(value.end), "");
  }

  // Gemma 4's calls, anywhere in the text: <|tool_call>call:NAME{dict}<tool_call|>, each one
  // tagged on its own.
  void RunGemma4() {
    size_t pos = 0;
    while (true) {
      const size_t m = text_.find(kGemma4Open, pos);
      if (m == std::string_view::npos) {
        AddTail(text_.substr(pos), kGemma4Open);
        return;
      }
      AddContent(text_.substr(pos, m - pos));
      region_start_ = m;
      std::optional<size_t> end = ScanGemma4Call(m + kGemma4Open.size());
      if (!end.has_value()) return;
      pos = *end;
    }
  }

  // NAME{dict}<tool_call|> at text_[pos]; where the call ends, or nullopt (parse over).
  std::optional<size_t> ScanGemma4Call(size_t pos) {
    const size_t brace = text_.find('{', pos);
    const std::string_view name =
        text_.substr(pos, (brace == std::string_view::npos ? text_.size() : brace) - pos);
    if (brace == std::string_view::npos) {
      if (!final_ && AllNameChars(name) && parser_.MaybeName(name)) return Unfinished(pos);
      return Malformed(pos);
    }
    if (!AllNameChars(name) || !parser_.KnownName(name)) return Malformed(pos);
    Gemma4ArgsResult args = ConvertGemma4Args(text_, brace);
    if (args.status == Gemma4Scan::kInvalid) return Malformed(pos);
    PartialToolCall call;
    call.name = std::string(name);
    call.arguments = std::move(args.json);
    if (args.status == Gemma4Scan::kIncomplete) {
      pending_.push_back(std::move(call));
      return Unfinished(pos);
    }
    call.complete = true;
    pending_.push_back(std::move(call));
    // The closing tag; a reply cut right after the dict still counts as a call.
    const std::string_view rest = text_.substr(args.end);
    if (rest.starts_with(kGemma4Close)) return Commit(args.end + kGemma4Close.size());
    if (kGemma4Close.starts_with(rest)) {
      if (!final_) return Unfinished(pos);  // maybe the closing tag, arriving
      return Commit(text_.size());
    }
    return Malformed(pos);
  }

  // Harmony messages: those to functions.NAME are calls, the bodies of final and preamble
  // messages and text outside messages are content, analysis bodies are dropped.
  void RunGptOss() {
    for (const HarmonyPart& part : ScanHarmony(text_, final_).parts) {
      if (!part.is_message) {
        AddContent(part.raw);
      } else if (!part.recipient.empty()) {
        AddGptOssCall(part);
      } else if (part.channel != "analysis") {
        AddContent(part.body);
      }
    }
  }

  // A message to a recipient: a call when the recipient is a known function and the body is
  // one JSON object (or still may become one); otherwise the message's text is content.
  void AddGptOssCall(const HarmonyPart& part) {
    std::string_view name = part.recipient;
    if (name.starts_with(kHarmonyFunctions)) name.remove_prefix(kHarmonyFunctions.size());
    if (!AllNameChars(name) || !parser_.KnownName(name)) {
      AddContent(part.raw);
      return;
    }
    PartialToolCall call;
    call.name = std::string(name);
    const std::string_view args = part.body.substr(SkipJsonSpace(part.body, 0));
    const bool growing = !final_ && !part.closed;
    const JsonScanResult value = ScanJsonValue(args, 0);
    if (args.empty() || (growing && value.status == JsonScan::kIncomplete && args[0] == '{')) {
      if (!growing) call.arguments = "{}";
      if (growing) call.arguments = std::string(args);
      call.complete = !growing;
      out_.calls.push_back(std::move(call));
      calls_seen_ = calls_seen_ || !growing;
      return;
    }
    if (args[0] != '{' || value.status != JsonScan::kComplete ||
        !AllSpace(args.substr(value.end))) {
      AddContent(part.raw);  // malformed or cut short
      return;
    }
    call.arguments = std::string(args.substr(0, value.end));
    call.complete = true;
    out_.calls.push_back(std::move(call));
    calls_seen_ = true;
  }

  // Calls at the start of the text (after whitespace): json and llama3 without the tag. Text
  // that does not start like a call is content.
  void RunLeading(size_t pos, bool list, char separator) {
    const size_t i = SkipJsonSpace(text_, pos);
    if (i >= text_.size()) {
      if (final_) AddContent(text_.substr(pos));
      return;
    }
    if (text_[i] != '{' && !(list && text_[i] == '[')) {
      AddContent(text_.substr(pos));
      return;
    }
    region_start_ = pos;
    std::optional<size_t> end = ScanCalls(i, list, separator);
    if (end.has_value()) AddTail(text_.substr(*end), "");
  }

  void RunLlama3() {
    const size_t tag = text_.find(kPythonTag);
    if (tag != std::string_view::npos) {
      AddContent(text_.substr(0, tag));
      region_start_ = tag;
      std::optional<size_t> end = ScanCalls(tag + kPythonTag.size(), false, ';');
      if (end.has_value()) AddTail(text_.substr(*end), "");
      return;
    }
    const size_t i = SkipJsonSpace(text_, 0);
    if (i < text_.size() && text_[i] == '{') {
      region_start_ = 0;
      std::optional<size_t> end = ScanCalls(i, false, ';');
      if (end.has_value()) AddTail(text_.substr(*end), "");
      return;
    }
    if (!final_ && i >= text_.size()) return;  // only whitespace yet
    AddTail(text_, kPythonTag);
  }

  const ToolCallParser& parser_;
  const std::string_view text_;
  const bool final_;
  ToolParseSnapshot out_;
  std::vector<PartialToolCall> pending_;
  size_t region_start_ = 0;  // where the calls being scanned begin (their text if malformed)
  bool calls_seen_ = false;
};

StatusOr<ToolCallFormat> ToolCallFormatFromName(std::string_view name) {
  if (name == "qwen25" || name == "qwen" || name == "hermes") return ToolCallFormat::kQwen25;
  if (name == "llama3") return ToolCallFormat::kLlama3;
  if (name == "mistral") return ToolCallFormat::kMistral;
  if (name == "granite") return ToolCallFormat::kGranite;
  if (name == "phi4_mini" || name == "phi4_mini_json") return ToolCallFormat::kPhi4Mini;
  if (name == "glm4") return ToolCallFormat::kGlm4;
  if (name == "gemma4") return ToolCallFormat::kGemma4;
  if (name == "gpt-oss") return ToolCallFormat::kGptOss;
  if (name == "json") return ToolCallFormat::kJson;
  return InvalidArgument("unknown tool-call parser \"" + std::string(name) +
                         "\"; expected qwen25 (hermes), llama3, mistral, granite, phi4_mini, "
                         "glm4, gemma4, gpt-oss or json");
}

std::string_view ToolCallFormatName(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::kQwen25:
      return "qwen25";
    case ToolCallFormat::kLlama3:
      return "llama3";
    case ToolCallFormat::kMistral:
      return "mistral";
    case ToolCallFormat::kGranite:
      return "granite";
    case ToolCallFormat::kPhi4Mini:
      return "phi4_mini";
    case ToolCallFormat::kGlm4:
      return "glm4";
    case ToolCallFormat::kGemma4:
      return "gemma4";
    case ToolCallFormat::kGptOss:
      return "gpt-oss";
    case ToolCallFormat::kJson:
      return "json";
  }
  return "json";
}

ToolCallFormat DetectToolCallFormat(std::string_view source) {
  if (source.find(kHarmonyChannel) != std::string_view::npos &&
      source.find(kHarmonyCall) != std::string_view::npos) {
    return ToolCallFormat::kGptOss;
  }
  if (source.find(kGemma4Open) != std::string_view::npos) return ToolCallFormat::kGemma4;
  if (source.find(kHermesOpen) != std::string_view::npos) return ToolCallFormat::kQwen25;
  if (source.find(kMistralMarker) != std::string_view::npos) return ToolCallFormat::kMistral;
  if (source.find(kGraniteMarker) != std::string_view::npos) {
    return source.find(kPhi4Close) != std::string_view::npos ||
                   source.find(kPhi4Functools) != std::string_view::npos
               ? ToolCallFormat::kPhi4Mini
               : ToolCallFormat::kGranite;
  }
  // Phi-4-mini's own template only wraps the tools in <|tool|> ... <|/tool|>.
  if (source.find("<|tool|>") != std::string_view::npos) return ToolCallFormat::kPhi4Mini;
  // GLM-4's templates: results come back in <|observation|> turns.
  if (source.find("<|observation|>") != std::string_view::npos) return ToolCallFormat::kGlm4;
  if (source.find(kPythonTag) != std::string_view::npos ||
      source.find("ipython") != std::string_view::npos) {
    return ToolCallFormat::kLlama3;
  }
  return ToolCallFormat::kJson;
}

bool ToolCallParser::KnownName(std::string_view name) const {
  if (tool_names_.empty()) return !name.empty();
  return std::find(tool_names_.begin(), tool_names_.end(), name) != tool_names_.end();
}

bool ToolCallParser::MaybeName(std::string_view prefix) const {
  if (tool_names_.empty()) return true;
  return std::any_of(tool_names_.begin(), tool_names_.end(), [&](const std::string& name) {
    return std::string_view(name).substr(0, prefix.size()) == prefix;
  });
}

ToolParseSnapshot ToolCallParser::Snapshot(std::string_view text, bool final) const {
  return ToolOutputScanner(*this, text, final).Run();
}

ParsedToolOutput ToolCallParser::Parse(std::string_view text) const {
  ToolParseSnapshot snapshot = Snapshot(text, /*final=*/true);
  ParsedToolOutput out;
  out.content = std::move(snapshot.content);
  for (PartialToolCall& c : snapshot.calls) {
    out.calls.push_back({std::move(c.name), std::move(c.arguments)});
  }
  return out;
}

ToolStreamDelta ToolCallStreamParser::Diff(const ToolParseSnapshot& snapshot) {
  ToolStreamDelta delta;
  // A call already streamed turned out malformed or cut short: the parse now reads its text
  // as content, which must not be streamed; nothing more is.
  if (snapshot.calls.size() < sent_.size()) return delta;
  // The settled content only grows.
  if (snapshot.content.size() > content_sent_) {
    delta.content = snapshot.content.substr(content_sent_);
    content_sent_ = snapshot.content.size();
  }
  for (size_t i = 0; i < snapshot.calls.size(); ++i) {
    const PartialToolCall& call = snapshot.calls[i];
    ToolCallDelta d;
    d.index = static_cast<int>(i);
    if (i >= sent_.size()) {
      sent_.push_back(0);
      d.name = call.name;
    }
    if (call.arguments.size() > sent_[i]) {
      d.arguments = call.arguments.substr(sent_[i]);
      sent_[i] = call.arguments.size();
    }
    if (d.name.has_value() || !d.arguments.empty()) delta.calls.push_back(std::move(d));
  }
  return delta;
}

ToolStreamDelta ToolCallStreamParser::Feed(std::string_view text) {
  text_.append(text);
  return Diff(parser_.Snapshot(text_, /*final=*/false));
}

ToolStreamDelta ToolCallStreamParser::Finish() {
  return Diff(parser_.Snapshot(text_, /*final=*/true));
}

std::string FormatToolCalls(ToolCallFormat format, const std::vector<ToolCall>& calls) {
  auto object = [&](const ToolCall& c) {
    const char* args_key = format == ToolCallFormat::kLlama3 ? "parameters" : "arguments";
    return "{\"name\": " + nlohmann::json(c.name).dump() + ", \"" + args_key +
           "\": " + (c.arguments.empty() ? std::string("{}") : c.arguments) + "}";
  };
  std::string out;
  switch (format) {
    case ToolCallFormat::kQwen25:
      for (size_t i = 0; i < calls.size(); ++i) {
        if (i > 0) out += "\n";
        out +=
            std::string(kHermesOpen) + "\n" + object(calls[i]) + "\n" + std::string(kHermesClose);
      }
      return out;
    case ToolCallFormat::kLlama3:
      for (size_t i = 0; i < calls.size(); ++i) out += (i > 0 ? "; " : "") + object(calls[i]);
      return out;
    case ToolCallFormat::kJson:
      for (size_t i = 0; i < calls.size(); ++i) out += (i > 0 ? "\n" : "") + object(calls[i]);
      return out;
    case ToolCallFormat::kMistral:
      out = std::string(kMistralMarker) + " [";
      for (size_t i = 0; i < calls.size(); ++i) out += (i > 0 ? ", " : "") + object(calls[i]);
      return out + "]";
    case ToolCallFormat::kGranite:
    case ToolCallFormat::kPhi4Mini:
      out = std::string(format == ToolCallFormat::kGranite ? kGraniteMarker : kPhi4Functools) + "[";
      for (size_t i = 0; i < calls.size(); ++i) out += (i > 0 ? ", " : "") + object(calls[i]);
      return out + "]";
    case ToolCallFormat::kGemma4:
      for (const ToolCall& c : calls) {
        nlohmann::json args = nlohmann::json::object();
        if (!c.arguments.empty()) {
          args = nlohmann::json::parse(c.arguments, nullptr, /*allow_exceptions=*/false);
        }
        // Arguments that are not JSON are written as they are (the template does the same).
        out += std::string(kGemma4Open) + c.name +
               (args.is_discarded() ? c.arguments : FormatGemma4Args(args)) +
               std::string(kGemma4Close);
      }
      return out;
    case ToolCallFormat::kGptOss:
      // As the model writes them: the first call opens the reply (the generation prompt wrote
      // its <|start|>assistant), each one after it is a message of its own.
      for (size_t i = 0; i < calls.size(); ++i) {
        out += std::string(i > 0 ? "<|start|>assistant" : "") +
               "<|channel|>commentary to=functions." + calls[i].name +
               " <|constrain|>json<|message|>" +
               (calls[i].arguments.empty() ? std::string("{}") : calls[i].arguments) +
               std::string(kHarmonyCall);
      }
      return out;
    case ToolCallFormat::kGlm4:
      // One call per reply; further calls would be replies of their own.
      for (size_t i = 0; i < calls.size(); ++i) {
        out += (i > 0 ? "\n\n" : "") + calls[i].name + "\n" +
               (calls[i].arguments.empty() ? std::string("{}") : calls[i].arguments);
      }
      return out;
  }
  return out;
}

}  // namespace radixlm::chat
