#include "tokenizer/unicode.h"

#include <array>

namespace radixlm::tokenizer {
namespace {

bool IsContinuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// Expected sequence length for a strictly valid lead byte, or 0 if `lead` cannot start one.
size_t StrictSequenceLength(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Valid range of the byte after `lead` (excludes overlongs, surrogates and > U+10FFFF).
bool SecondByteValid(uint8_t lead, uint8_t second) {
  switch (lead) {
    case 0xE0:
      return second >= 0xA0 && second <= 0xBF;
    case 0xED:
      return second >= 0x80 && second <= 0x9F;
    case 0xF0:
      return second >= 0x90 && second <= 0xBF;
    case 0xF4:
      return second >= 0x80 && second <= 0x8F;
    default:
      return IsContinuation(second);
  }
}

struct ByteTables {
  std::array<std::string, 256> byte_to_utf8;
  std::array<int16_t, 324> code_point_to_byte;  // code points < 324 cover the whole mapping
};

const ByteTables& GetByteTables() {
  static const ByteTables tables = [] {
    ByteTables t;
    t.code_point_to_byte.fill(-1);
    auto printable = [](int b) {
      return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    int next_extra = 256;
    for (int b = 0; b < 256; ++b) {
      const uint32_t cp = printable(b) ? static_cast<uint32_t>(b) : next_extra++;
      AppendUtf8(cp, &t.byte_to_utf8[b]);
      t.code_point_to_byte[cp] = static_cast<int16_t>(b);
    }
    return t;
  }();
  return tables;
}

}  // namespace

uint32_t DecodeUtf8(std::string_view s, size_t* pos) {
  const size_t i = *pos;
  const auto lead = static_cast<uint8_t>(s[i]);
  const size_t len = StrictSequenceLength(lead);
  if (len == 1) {
    *pos = i + 1;
    return lead;
  }
  if (len == 0 || i + len > s.size() || !SecondByteValid(lead, static_cast<uint8_t>(s[i + 1]))) {
    *pos = i + 1;
    return kReplacementChar;
  }
  uint32_t cp = lead & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<uint8_t>(s[i + k]);
    if (!IsContinuation(b)) {
      *pos = i + 1;
      return kReplacementChar;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  *pos = i + len;
  return cp;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool SanitizeUtf8(std::string_view text, std::string* out) {
  out->clear();
  out->reserve(text.size());
  bool replaced = false;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    const uint32_t cp = DecodeUtf8(text, &pos);
    if (cp == kReplacementChar && pos == start + 1) {
      // Either a real U+FFFD (3 bytes, so pos advanced by 3) or an invalid byte.
      AppendUtf8(kReplacementChar, out);
      replaced = true;
    } else {
      out->append(text.substr(start, pos - start));
    }
  }
  return replaced;
}

bool SanitizeUtf8Lossy(std::string_view text, std::string* out) {
  out->clear();
  out->reserve(text.size());
  bool replaced = false;
  size_t pos = 0;
  while (pos < text.size()) {
    const auto lead = static_cast<uint8_t>(text[pos]);
    const size_t want = StrictSequenceLength(lead);
    size_t got = 1;  // bytes of a well-formed prefix so far
    if (want > 1) {
      while (got < want && pos + got < text.size()) {
        const auto b = static_cast<uint8_t>(text[pos + got]);
        if (got == 1 ? !SecondByteValid(lead, b) : !IsContinuation(b)) break;
        ++got;
      }
    }
    if (want != 0 && got == want) {
      out->append(text.substr(pos, got));
    } else {
      AppendUtf8(kReplacementChar, out);
      replaced = true;
    }
    pos += got;
  }
  return replaced;
}

size_t CompleteUtf8PrefixLength(std::string_view bytes) {
  const size_t n = bytes.size();
  // Find the last byte that is not a continuation byte, within the last 4 bytes.
  size_t i = n;
  for (size_t back = 1; back <= 4 && back <= n; ++back) {
    if (!IsContinuation(static_cast<uint8_t>(bytes[n - back]))) {
      i = n - back;
      break;
    }
  }
  if (i == n) return n;  // no lead byte nearby: nothing can complete
  const auto lead = static_cast<uint8_t>(bytes[i]);
  const size_t expected = StrictSequenceLength(lead);
  const size_t have = n - i;
  if (expected <= have) return n;  // complete (or an invalid lead that never will be)
  if (have >= 2 && !SecondByteValid(lead, static_cast<uint8_t>(bytes[i + 1]))) return n;
  return i;
}

bool IsUnicodeWhitespace(uint32_t cp) {
  if (cp < 0x80) return IsAsciiSpace(static_cast<char>(cp));
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

const std::string& ByteToUnicode(uint8_t byte) { return GetByteTables().byte_to_utf8[byte]; }

int UnicodeToByte(uint32_t cp) {
  const ByteTables& t = GetByteTables();
  return cp < t.code_point_to_byte.size() ? t.code_point_to_byte[cp] : -1;
}

}  // namespace radixlm::tokenizer
