#include "grammar/utf8_ranges.h"

#include <algorithm>
#include <cctype>

namespace radixlm::grammar {
namespace {

constexpr uint32_t kSurrogateLo = 0xD800;
constexpr uint32_t kSurrogateHi = 0xDFFF;

int EncodeUtf8(uint32_t cp, uint8_t out[4]) {
  if (cp < 0x80) {
    out[0] = static_cast<uint8_t>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<uint8_t>(0xC0 | (cp >> 6));
    out[1] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<uint8_t>(0xE0 | (cp >> 12));
    out[1] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<uint8_t>(0xF0 | (cp >> 18));
  out[1] = static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
  return 4;
}

// Splits [lo, hi] (no surrogates inside) until every piece encodes to byte sequences whose
// positions vary independently, then emits one ByteSeq per piece.
void EncodeRange(CodepointRange range, std::vector<ByteSeq>* out) {
  std::vector<CodepointRange> stack = {range};
  while (!stack.empty()) {
    CodepointRange r = stack.back();
    stack.pop_back();
    bool split = false;
    // Pieces must not straddle an encoded-length boundary.
    for (uint32_t max : {0x7Fu, 0x7FFu, 0xFFFFu}) {
      if (r.lo <= max && max < r.hi) {
        stack.push_back({max + 1, r.hi});
        stack.push_back({r.lo, max});
        split = true;
        break;
      }
    }
    if (split) continue;
    if (r.hi <= 0x7F) {
      out->push_back({{static_cast<uint8_t>(r.lo), static_cast<uint8_t>(r.hi)}});
      continue;
    }
    // Pieces must be aligned so that each trailing group of continuation bytes spans its full
    // range (0x80..0xBF) whenever a more significant byte varies.
    for (int i = 1; i < 4 && !split; ++i) {
      const uint32_t m = (1u << (6 * i)) - 1;
      if ((r.lo & ~m) != (r.hi & ~m)) {
        if ((r.lo & m) != 0) {
          stack.push_back({(r.lo | m) + 1, r.hi});
          stack.push_back({r.lo, r.lo | m});
          split = true;
        } else if ((r.hi & m) != m) {
          stack.push_back({r.hi & ~m, r.hi});
          stack.push_back({r.lo, (r.hi & ~m) - 1});
          split = true;
        }
      }
    }
    if (split) continue;
    uint8_t lo[4], hi[4];
    const int n = EncodeUtf8(r.lo, lo);
    EncodeUtf8(r.hi, hi);
    ByteSeq seq;
    for (int i = 0; i < n; ++i) seq.push_back({lo[i], hi[i]});
    out->push_back(std::move(seq));
  }
}

}  // namespace

std::vector<CodepointRange> NormalizeRanges(std::vector<CodepointRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const CodepointRange& a, const CodepointRange& b) { return a.lo < b.lo; });
  std::vector<CodepointRange> out;
  for (const CodepointRange& r : ranges) {
    if (r.lo > r.hi) continue;
    if (!out.empty() && r.lo <= out.back().hi + 1) {
      out.back().hi = std::max(out.back().hi, r.hi);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

std::vector<CodepointRange> ComplementRanges(const std::vector<CodepointRange>& ranges) {
  std::vector<CodepointRange> sorted = NormalizeRanges(ranges);
  std::vector<CodepointRange> out;
  uint32_t next = 0;
  for (const CodepointRange& r : sorted) {
    if (r.lo > next) out.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= kMaxCodepoint) out.push_back({next, kMaxCodepoint});
  return out;
}

std::vector<ByteSeq> Utf8Sequences(const std::vector<CodepointRange>& ranges) {
  std::vector<ByteSeq> out;
  for (CodepointRange r : NormalizeRanges(ranges)) {
    r.hi = std::min(r.hi, kMaxCodepoint);
    if (r.lo > r.hi) continue;
    // Cut the surrogate block out: it has no valid UTF-8 encoding.
    if (r.lo < kSurrogateLo && r.hi >= kSurrogateLo) {
      EncodeRange({r.lo, kSurrogateLo - 1}, &out);
      r.lo = kSurrogateLo;
    }
    if (r.lo >= kSurrogateLo && r.lo <= kSurrogateHi) {
      if (r.hi <= kSurrogateHi) continue;
      r.lo = kSurrogateHi + 1;
    }
    EncodeRange(r, &out);
  }
  return out;
}

bool DecodeUtf8(std::string_view text, size_t* pos, uint32_t* codepoint) {
  const size_t p = *pos;
  if (p >= text.size()) return false;
  const auto b0 = static_cast<uint8_t>(text[p]);
  int len;
  uint32_t cp;
  if (b0 < 0x80) {
    len = 1, cp = b0;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07;
  } else {
    return false;
  }
  if (p + len > text.size()) return false;
  for (int i = 1; i < len; ++i) {
    const auto b = static_cast<uint8_t>(text[p + i]);
    if ((b & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr uint32_t kMinForLength[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[len] || cp > kMaxCodepoint || (cp >= kSurrogateLo && cp <= kSurrogateHi)) {
    return false;
  }
  *pos = p + len;
  *codepoint = cp;
  return true;
}

void AppendUtf8(uint32_t codepoint, std::string* out) {
  uint8_t buf[4];
  const int n = EncodeUtf8(codepoint, buf);
  out->append(reinterpret_cast<const char*>(buf), n);
}

const char* ReadHexEscape(std::string_view text, size_t* pos, int digits, uint32_t* codepoint) {
  uint32_t v = 0;
  for (int i = 0; i < digits; ++i, ++*pos) {
    if (*pos >= text.size() || !std::isxdigit(static_cast<unsigned char>(text[*pos]))) {
      return "bad hex escape";
    }
    const char h = text[*pos];
    v = v * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
  }
  if (v > kMaxCodepoint) return "escape beyond U+10FFFF";
  *codepoint = v;
  return nullptr;
}

}  // namespace radixlm::grammar
