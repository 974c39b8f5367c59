// ScanJsonValue: finds where one JSON value ends in model output that may still be growing.
// Tool-call parsers use it to split a call's text into its name and its raw arguments while
// the text streams in: a value is complete, a valid prefix of a value (more text may complete
// it), or not JSON at all.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace radixlm::chat {

enum class JsonScan {
  kComplete,    // a whole value ends at `end`
  kIncomplete,  // the text ends inside a value that more text could complete
  kInvalid,     // the text at `begin` is not (the start of) a JSON value
};

struct JsonScanResult {
  JsonScan status = JsonScan::kInvalid;
  size_t end = 0;  // kComplete: one past the value's last byte
};

// Scans the value starting at text[begin] (no leading whitespace skipped). Nesting deeper than
// kMaxJsonScanDepth is kInvalid (no recursion: an explicit stack).
inline constexpr int kMaxJsonScanDepth = 128;
JsonScanResult ScanJsonValue(std::string_view text, size_t begin);

// Index of the first byte at or after `pos` that is not JSON whitespace (text.size() if none).
size_t SkipJsonSpace(std::string_view text, size_t pos);

// A complete JSON string literal (quotes included) → its decoded UTF-8 content; false if it is
// not a valid string literal.
bool DecodeJsonString(std::string_view literal, std::string* out);

}  // namespace radixlm::chat
