#include "chat/gemma4_tool_syntax.h"

#include <algorithm>

#include "chat/json_scan.h"

namespace radixlm::chat {
// Named: the unity build puts this file beside others with helpers of the same names.
namespace gemma4_syntax {
namespace {

constexpr int kMaxDepth = 64;

// JSON string escaping of raw text (as nlohmann's dump, without the quotes; UTF-8 kept).
void AppendJsonEscaped(std::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char c : text) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[(c >> 4) & 15]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(c);
        }
    }
  }
}

// Length of the longest suffix of `text` that is a proper prefix of `marker`.
size_t HeldPrefix(std::string_view text, std::string_view marker) {
  for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
  }
  return 0;
}

bool IsNumberChar(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool ValidJsonNumber(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

// Recursive descent over one dict; out_ only ever grows by text the rest cannot change.
class Converter {
 public:
  explicit Converter(std::string_view text) : text_(text) {}

  Gemma4Scan Dict(size_t* pos, int depth) {
    if (depth > kMaxDepth) return Gemma4Scan::kInvalid;
    out_.push_back('{');
    size_t i = SkipJsonSpace(text_, *pos + 1);
    if (i >= text_.size()) return Gemma4Scan::kIncomplete;
    if (text_[i] == '}') {
      out_.push_back('}');
      *pos = i + 1;
      return Gemma4Scan::kComplete;
    }
    while (true) {
      if (const Gemma4Scan s = Key(&i); s != Gemma4Scan::kComplete) return s;
      i = SkipJsonSpace(text_, i);
      if (const Gemma4Scan s = Value(&i, depth); s != Gemma4Scan::kComplete) return s;
      i = SkipJsonSpace(text_, i);
      if (i >= text_.size()) return Gemma4Scan::kIncomplete;
      if (text_[i] == '}') {
        out_.push_back('}');
        *pos = i + 1;
        return Gemma4Scan::kComplete;
      }
      if (text_[i] != ',') return Gemma4Scan::kInvalid;
      out_.push_back(',');
      i = SkipJsonSpace(text_, i + 1);
      if (i >= text_.size()) return Gemma4Scan::kIncomplete;
    }
  }

  std::string& out() { return out_; }

 private:
  // key ':' — a bare key is everything up to ':' (llama.cpp: [^:}]+), a quoted one the text
  // between <|"|> quotes.
  Gemma4Scan Key(size_t* pos) {
    size_t i = *pos;
    std::string_view key;
    const std::string_view rest = text_.substr(i);
    if (rest.starts_with(kGemma4Quote)) {
      const size_t close = text_.find(kGemma4Quote, i + kGemma4Quote.size());
      if (close == std::string_view::npos) return Gemma4Scan::kIncomplete;
      key = text_.substr(i + kGemma4Quote.size(), close - i - kGemma4Quote.size());
      i = SkipJsonSpace(text_, close + kGemma4Quote.size());
      if (i >= text_.size()) return Gemma4Scan::kIncomplete;
      if (text_[i] != ':') return Gemma4Scan::kInvalid;
    } else {
      const size_t colon = text_.find_first_of(":}", i);
      if (colon == std::string_view::npos) return Gemma4Scan::kIncomplete;
      if (text_[colon] != ':') return Gemma4Scan::kInvalid;
      key = text_.substr(i, colon - i);
      while (!key.empty() && SkipJsonSpace(key.substr(key.size() - 1), 0) == 1) {
        key.remove_suffix(1);
      }
      i = colon;
    }
    if (key.empty()) return Gemma4Scan::kInvalid;
    out_.push_back('"');
    AppendJsonEscaped(key, &out_);
    out_.append("\":");
    *pos = i + 1;
    return Gemma4Scan::kComplete;
  }

  Gemma4Scan Value(size_t* pos, int depth) {
    const size_t i = *pos;
    if (i >= text_.size()) return Gemma4Scan::kIncomplete;
    const std::string_view rest = text_.substr(i);
    if (rest.starts_with(kGemma4Quote)) return String(pos);
    if (kGemma4Quote.starts_with(rest)) return Gemma4Scan::kIncomplete;
    const char c = rest[0];
    if (c == '{') return Dict(pos, depth + 1);
    if (c == '[') return Array(pos, depth + 1);
    if (c == '-' || (c >= '0' && c <= '9')) return Number(pos);
    for (std::string_view word : {"true", "false", "null"}) {
      if (rest.starts_with(word)) {
        out_.append(word);
        *pos = i + word.size();
        return Gemma4Scan::kComplete;
      }
      if (word.starts_with(rest)) return Gemma4Scan::kIncomplete;
    }
    return Gemma4Scan::kInvalid;
  }

  Gemma4Scan String(size_t* pos) {
    const size_t start = *pos + kGemma4Quote.size();
    out_.push_back('"');
    const size_t close = text_.find(kGemma4Quote, start);
    if (close == std::string_view::npos) {
      std::string_view tail = text_.substr(start);
      tail.remove_suffix(HeldPrefix(tail, kGemma4Quote));
      AppendJsonEscaped(tail, &out_);
      return Gemma4Scan::kIncomplete;
    }
    AppendJsonEscaped(text_.substr(start, close - start), &out_);
    out_.push_back('"');
    *pos = close + kGemma4Quote.size();
    return Gemma4Scan::kComplete;
  }

  Gemma4Scan Number(size_t* pos) {
    size_t end = *pos;
    while (end < text_.size() && IsNumberChar(text_[end])) ++end;
    const std::string_view number = text_.substr(*pos, end - *pos);
    if (end >= text_.size()) {
      out_.append(number);  // more digits may follow; what is here stays
      return Gemma4Scan::kIncomplete;
    }
    if (!ValidJsonNumber(number)) return Gemma4Scan::kInvalid;
    out_.append(number);
    *pos = end;
    return Gemma4Scan::kComplete;
  }

  Gemma4Scan Array(size_t* pos, int depth) {
    if (depth > kMaxDepth) return Gemma4Scan::kInvalid;
    out_.push_back('[');
    size_t i = SkipJsonSpace(text_, *pos + 1);
    if (i >= text_.size()) return Gemma4Scan::kIncomplete;
    if (text_[i] == ']') {
      out_.push_back(']');
      *pos = i + 1;
      return Gemma4Scan::kComplete;
    }
    while (true) {
      if (const Gemma4Scan s = Value(&i, depth); s != Gemma4Scan::kComplete) return s;
      i = SkipJsonSpace(text_, i);
      if (i >= text_.size()) return Gemma4Scan::kIncomplete;
      if (text_[i] == ']') {
        out_.push_back(']');
        *pos = i + 1;
        return Gemma4Scan::kComplete;
      }
      if (text_[i] != ',') return Gemma4Scan::kInvalid;
      out_.push_back(',');
      i = SkipJsonSpace(text_, i + 1);
    }
  }

  std::string_view text_;
  std::string out_;
};

void AppendGemma4Value(const nlohmann::json& value, std::string* out) {
  if (value.is_string()) {
    out->append(kGemma4Quote);
    out->append(value.get<std::string>());
    out->append(kGemma4Quote);
  } else if (value.is_object()) {
    out->push_back('{');
    bool first = true;
    for (const auto& [key, item] : value.items()) {  // nlohmann keeps keys sorted
      if (!first) out->push_back(',');
      first = false;
      out->append(key);
      out->push_back(':');
      AppendGemma4Value(item, out);
    }
    out->push_back('}');
  } else if (value.is_array()) {
    out->push_back('[');
    for (size_t i = 0; i < value.size(); ++i) {
      if (i > 0) out->push_back(',');
      AppendGemma4Value(value[i], out);
    }
    out->push_back(']');
  } else {
    out->append(value.dump());  // numbers, true, false, null
  }
}

}  // namespace
}  // namespace gemma4_syntax

using gemma4_syntax::AppendGemma4Value;
using gemma4_syntax::Converter;

Gemma4ArgsResult ConvertGemma4Args(std::string_view text, size_t pos) {
  Gemma4ArgsResult r;
  if (pos >= text.size()) {
    r.status = Gemma4Scan::kIncomplete;
    return r;
  }
  if (text[pos] != '{') return r;
  Converter converter(text);
  size_t end = pos;
  r.status = converter.Dict(&end, 0);
  if (r.status == Gemma4Scan::kInvalid) return r;
  r.json = std::move(converter.out());
  r.end = r.status == Gemma4Scan::kComplete ? end : 0;
  return r;
}

std::string FormatGemma4Args(const nlohmann::json& args) {
  std::string out;
  AppendGemma4Value(args, &out);
  return out;
}

}  // namespace radixlm::chat
