// Regex building blocks for JSON-schema lowering: JSON literal syntax, string formats and
// integer ranges. Every function returns a regex fragment safe to embed as one group.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace radixlm::grammar::json_patterns {

// One character inside a JSON string: anything but '"', '\\' and control characters, or an
// escape sequence.
extern const char* const kStringChar;
// Numbers are bounded in length: at most kMaxIntegerDigits integer digits, 16 fraction digits
// and 3 exponent digits (llama.cpp's bounds), so a small model cannot loop inside a number.
inline constexpr int kMaxIntegerDigits = 16;
inline constexpr int64_t kMaxBoundedInteger = 9999999999999999;  // kMaxIntegerDigits nines
extern const char* const kInteger;                               // -?(0|[1-9][0-9]{0,15})
extern const char* const kNumber;  // integer, optional fraction and exponent
extern const char* const kBoolean;
extern const char* const kNull;

// The regex for a JSON string "format" value (without the quotes), or nullopt if unknown.
std::optional<std::string> FormatRegex(std::string_view format);

// Escapes every regex metacharacter of `literal` so it matches itself.
std::string EscapeRegex(std::string_view literal);

// Integers in [lo, hi]; a nullopt bound is closed at ±kMaxBoundedInteger (unless the other
// bound lies beyond it: then it stays open). The regex matches the canonical JSON
// spelling only (no leading zeros, no "-0"). Requires lo <= hi when both are set.
std::string IntegerRange(std::optional<int64_t> lo, std::optional<int64_t> hi);

}  // namespace radixlm::grammar::json_patterns
