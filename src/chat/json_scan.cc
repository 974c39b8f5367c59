#include "chat/json_scan.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <vector>

namespace radixlm::chat {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Scans a string literal starting at text[pos] == '"'.
JsonScanResult ScanString(std::string_view text, size_t pos) {
  for (size_t i = pos + 1; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"') return {JsonScan::kComplete, i + 1};
    if (c < 0x20) return {JsonScan::kInvalid, i};
    if (c == '\\') {
      if (++i >= text.size()) return {JsonScan::kIncomplete, text.size()};
      const char e = text[i];
      if (e == 'u') {
        for (int k = 0; k < 4; ++k) {
          if (++i >= text.size()) return {JsonScan::kIncomplete, text.size()};
          if (!std::isxdigit(static_cast<unsigned char>(text[i]))) {
            return {JsonScan::kInvalid, i};
          }
        }
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return {JsonScan::kInvalid, i};
      }
    }
  }
  return {JsonScan::kIncomplete, text.size()};
}

// A number ends at the first byte that cannot continue it; at the end of the text it may
// still grow, so it is incomplete there.
JsonScanResult ScanNumber(std::string_view text, size_t pos) {
  size_t i = pos;
  auto at_end = [&] { return i >= text.size(); };
  if (text[i] == '-') ++i;
  if (at_end()) return {JsonScan::kIncomplete, i};
  if (text[i] == '0') {
    ++i;
  } else if (IsDigit(text[i])) {
    while (!at_end() && IsDigit(text[i])) ++i;
  } else {
    return {JsonScan::kInvalid, i};
  }
  if (at_end()) return {JsonScan::kIncomplete, i};
  if (text[i] == '.') {
    ++i;
    if (at_end()) return {JsonScan::kIncomplete, i};
    if (!IsDigit(text[i])) return {JsonScan::kInvalid, i};
    while (!at_end() && IsDigit(text[i])) ++i;
    if (at_end()) return {JsonScan::kIncomplete, i};
  }
  if (text[i] == 'e' || text[i] == 'E') {
    ++i;
    if (!at_end() && (text[i] == '+' || text[i] == '-')) ++i;
    if (at_end()) return {JsonScan::kIncomplete, i};
    if (!IsDigit(text[i])) return {JsonScan::kInvalid, i};
    while (!at_end() && IsDigit(text[i])) ++i;
    if (at_end()) return {JsonScan::kIncomplete, i};
  }
  return {JsonScan::kComplete, i};
}

JsonScanResult ScanLiteral(std::string_view text, size_t pos, std::string_view word) {
  for (size_t k = 0; k < word.size(); ++k) {
    if (pos + k >= text.size()) return {JsonScan::kIncomplete, text.size()};
    if (text[pos + k] != word[k]) return {JsonScan::kInvalid, pos + k};
  }
  return {JsonScan::kComplete, pos + word.size()};
}

// One scalar (string, number, literal) at text[pos].
JsonScanResult ScanScalar(std::string_view text, size_t pos) {
  const char c = text[pos];
  if (c == '"') return ScanString(text, pos);
  if (c == '-' || IsDigit(c)) return ScanNumber(text, pos);
  if (c == 't') return ScanLiteral(text, pos, "true");
  if (c == 'f') return ScanLiteral(text, pos, "false");
  if (c == 'n') return ScanLiteral(text, pos, "null");
  return {JsonScan::kInvalid, pos};
}

}  // namespace

size_t SkipJsonSpace(std::string_view text, size_t pos) {
  while (pos < text.size() && IsSpace(text[pos])) ++pos;
  return pos;
}

JsonScanResult ScanJsonValue(std::string_view text, size_t begin) {
  if (begin >= text.size()) return {JsonScan::kIncomplete, text.size()};
  // What the scanner expects next inside the innermost container.
  enum class Want { kValue, kKeyOrClose, kKey, kColon, kCommaOrClose };
  std::vector<char> stack;  // '{' or '['
  Want want = Want::kValue;
  size_t i = begin;
  while (true) {
    if (!stack.empty()) {
      i = SkipJsonSpace(text, i);
      if (i >= text.size()) return {JsonScan::kIncomplete, text.size()};
    } else if (want != Want::kValue) {
      return {JsonScan::kComplete, i};  // the top-level value closed
    }
    const char c = text[i];
    switch (want) {
      case Want::kValue:
        if (c == '{' || c == '[') {
          if (static_cast<int>(stack.size()) >= kMaxJsonScanDepth) return {JsonScan::kInvalid, i};
          stack.push_back(c);
          ++i;
          want = c == '{' ? Want::kKeyOrClose : Want::kValue;
          // An empty array: "[" then "]".
          if (c == '[') {
            const size_t j = SkipJsonSpace(text, i);
            if (j >= text.size()) return {JsonScan::kIncomplete, text.size()};
            if (text[j] == ']') {
              stack.pop_back();
              i = j + 1;
              want = Want::kCommaOrClose;
            }
          }
          continue;
        } else {
          const JsonScanResult r = ScanScalar(text, i);
          if (r.status != JsonScan::kComplete) return r;
          // A number at the very end of the text may still grow: ScanNumber said incomplete.
          i = r.end;
          want = Want::kCommaOrClose;
          continue;
        }
      case Want::kKeyOrClose:
        if (c == '}') {
          stack.pop_back();
          ++i;
          want = Want::kCommaOrClose;
          continue;
        }
        [[fallthrough]];
      case Want::kKey: {
        if (c != '"') return {JsonScan::kInvalid, i};
        const JsonScanResult r = ScanString(text, i);
        if (r.status != JsonScan::kComplete) return r;
        i = r.end;
        want = Want::kColon;
        continue;
      }
      case Want::kColon:
        if (c != ':') return {JsonScan::kInvalid, i};
        ++i;
        want = Want::kValue;
        continue;
      case Want::kCommaOrClose:
        if (c == ',') {
          ++i;
          want = stack.back() == '{' ? Want::kKey : Want::kValue;
          continue;
        }
        if ((c == '}' && stack.back() == '{') || (c == ']' && stack.back() == '[')) {
          stack.pop_back();
          ++i;
          want = Want::kCommaOrClose;
          continue;
        }
        return {JsonScan::kInvalid, i};
    }
  }
}

bool DecodeJsonString(std::string_view literal, std::string* out) {
  const JsonScanResult r = ScanJsonValue(literal, 0);
  if (r.status != JsonScan::kComplete || r.end != literal.size() || literal.empty() ||
      literal[0] != '"') {
    return false;
  }
  nlohmann::json parsed = nlohmann::json::parse(literal, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_string()) return false;
  *out = parsed.get<std::string>();
  return true;
}

}  // namespace radixlm::chat
