#include "grammar/json_patterns.h"

#include <cstdlib>
#include <vector>

namespace radixlm::grammar::json_patterns {

const char* const kStringChar = R"((?:[^"\\\x00-\x1F]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4}))";
// Bounded as llama.cpp's json-schema-to-grammar bounds them (16 integer digits, 16 fraction
// digits, 3 exponent digits), so a model cannot loop inside a number until max_tokens.
const char* const kInteger = "-?(?:0|[1-9][0-9]{0,15})";
const char* const kNumber = R"(-?(?:0|[1-9][0-9]{0,15})(?:\.[0-9]{1,16})?(?:[eE][+-]?[0-9]{1,3})?)";
const char* const kBoolean = "(?:true|false)";
const char* const kNull = "null";

namespace {

constexpr const char* kDate = "[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])";
constexpr const char* kTime =
    R"((?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?)"
    R"((?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])?)";
constexpr const char* kOctet = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
constexpr const char* kEmailAtom = "[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+";
constexpr const char* kDomainLabel = "[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?";

std::string Join(const std::vector<std::string>& parts) {
  if (parts.size() == 1) return parts[0];
  std::string out = "(?:";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "|" : "") + parts[i];
  return out + ")";
}

bool AllOf(std::string_view s, char c) { return s.find_first_not_of(c) == std::string_view::npos; }

// Digit strings x <= y of the same length (no leading zeros unless length 1).
std::string SameLengthRange(const std::string& x, const std::string& y) {
  if (x.size() == 1) {
    if (x == y) return x;
    std::string cls = "[";  // built by append: GCC 12 misreports "lit" + string (-Wrestrict)
    cls.append(x).append("-").append(y).append("]");
    return cls;
  }
  const std::string xs = x.substr(1), ys = y.substr(1);
  const std::string any_rest = "[0-9]{" + std::to_string(xs.size()) + "}";
  if (x[0] == y[0]) return std::string(1, x[0]) + SameLengthRange(xs, ys);
  std::vector<std::string> parts;
  char low = x[0], high = y[0];
  if (!AllOf(xs, '0')) {  // x0 followed by [xs, 99..9]
    parts.push_back(std::string(1, x[0]) + SameLengthRange(xs, std::string(xs.size(), '9')));
    ++low;
  }
  std::string tail;
  if (!AllOf(ys, '9')) {  // y0 followed by [00..0, ys]
    tail = std::string(1, y[0]) + SameLengthRange(std::string(ys.size(), '0'), ys);
    --high;
  }
  if (low <= high) {
    std::string middle(1, low);
    if (low != high)
      middle = std::string("[").append(1, low).append("-").append(1, high).append("]");
    parts.push_back(middle + any_rest);
  }
  if (!tail.empty()) parts.push_back(tail);
  return Join(parts);
}

uint64_t Pow10(int d) {
  uint64_t p = 1;
  while (d-- > 0) p *= 10;
  return p;
}

// Non-negative integers in [a, b]; b == nullopt is unbounded.
std::string NonNegativeRange(uint64_t a, std::optional<uint64_t> b) {
  const int da = static_cast<int>(std::to_string(a).size());
  std::vector<std::string> parts;
  // 19 digits is the most a uint64 power of ten can bound; beyond it only count digits.
  const int db = b ? static_cast<int>(std::to_string(*b).size()) : std::min(da, 18);
  for (int d = da; d <= db; ++d) {
    const uint64_t lo = std::max<uint64_t>(a, d == 1 ? 0 : Pow10(d - 1));
    const uint64_t hi = b && d == db ? *b : Pow10(d) - 1;
    if (lo <= hi) parts.push_back(SameLengthRange(std::to_string(lo), std::to_string(hi)));
  }
  if (!b) {
    // Every number with more digits than the last range covered ({da,} trailing digits after
    // the first), or, past 18 digits, an approximation by digit count alone.
    const int more = db >= da ? da : da - 1;
    parts.push_back("[1-9][0-9]{" + std::to_string(more) + ",}");
  }
  return Join(parts);
}

}  // namespace

std::optional<std::string> FormatRegex(std::string_view format) {
  if (format == "date") return std::string(kDate);
  if (format == "time") return std::string(kTime);
  if (format == "date-time") return std::string(kDate) + "T" + kTime;
  if (format == "uuid") {
    return std::string(
        "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
  }
  if (format == "ipv4") return "(?:" + std::string(kOctet) + "\\.){3}" + kOctet;
  if (format == "email") {
    return std::string(kEmailAtom) + "(?:\\." + kEmailAtom + ")*@(?:" + kDomainLabel + "\\.)+" +
           kDomainLabel;
  }
  return std::nullopt;
}

std::string EscapeRegex(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\.^$|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string IntegerRange(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  if (!lo && !hi) return kInteger;
  // A half-open range is closed at kMaxIntegerDigits digits on its open side (as kInteger is),
  // unless the schema's own bound already lies beyond that.
  if (!hi && (!lo || *lo <= kMaxBoundedInteger)) hi = kMaxBoundedInteger;
  if (!lo && *hi >= -kMaxBoundedInteger) lo = -kMaxBoundedInteger;
  // Magnitude of a negative int64 without overflow for INT64_MIN.
  auto magnitude = [](int64_t v) { return static_cast<uint64_t>(-(v + 1)) + 1; };
  std::vector<std::string> parts;
  // Negative part: [lo, min(hi, -1)], written as '-' and a magnitude range.
  if (!lo || *lo < 0) {
    const int64_t neg_hi = hi ? std::min<int64_t>(*hi, -1) : -1;
    if (!lo || *lo <= neg_hi) {
      std::optional<uint64_t> max_mag;
      if (lo) max_mag = magnitude(*lo);
      std::string negative = "-";
      negative += NonNegativeRange(magnitude(neg_hi), max_mag);
      parts.push_back(std::move(negative));
    }
  }
  // Non-negative part: [max(lo, 0), hi].
  if (!hi || *hi >= 0) {
    const uint64_t from = lo && *lo > 0 ? static_cast<uint64_t>(*lo) : 0;
    std::optional<uint64_t> to;
    if (hi) to = static_cast<uint64_t>(*hi);
    if (!to || from <= *to) parts.push_back(NonNegativeRange(from, to));
  }
  return Join(parts);
}

}  // namespace radixlm::grammar::json_patterns
