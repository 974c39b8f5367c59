#include "chat/text.h"

#include <algorithm>

namespace radixlm::chat {

char32_t NextCodePoint(std::string_view s, size_t* pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const size_t i = *pos;
  const unsigned char b0 = byte(i);
  size_t len = 0;
  char32_t cp = 0;
  if (b0 < 0x80) {
    *pos = i + 1;
    return b0;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07;
  }
  if (len == 0 || i + len > s.size()) {
    *pos = i + 1;
    return b0;  // invalid lead byte or truncated sequence: one opaque code point
  }
  for (size_t k = 1; k < len; ++k) {
    const unsigned char b = byte(i + k);
    if ((b & 0xC0) != 0x80) {
      *pos = i + 1;
      return b0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  *pos = i + len;
  return cp;
}

void AppendUtf8(char32_t cp, std::string* out) {
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

bool IsAscii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c & 0x80) == 0; });
}

size_t CodePointCount(std::string_view s) {
  if (IsAscii(s)) return s.size();
  size_t n = 0;
  for (size_t pos = 0; pos < s.size(); ++n) NextCodePoint(s, &pos);
  return n;
}

std::vector<size_t> CodePointOffsets(std::string_view s) {
  std::vector<size_t> offsets;
  offsets.reserve(s.size() + 1);
  for (size_t pos = 0; pos < s.size();) {
    offsets.push_back(pos);
    NextCodePoint(s, &pos);
  }
  offsets.push_back(s.size());
  return offsets;
}

std::vector<char32_t> DecodeUtf8(std::string_view s) {
  std::vector<char32_t> cps;
  cps.reserve(s.size());
  for (size_t pos = 0; pos < s.size();) cps.push_back(NextCodePoint(s, &pos));
  return cps;
}

std::string EncodeUtf8(const std::vector<char32_t>& cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t cp : cps) AppendUtf8(cp, &out);
  return out;
}

bool IsPySpace(char32_t cp) {
  if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool IsPyPrintable(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD) return false;
  if (cp < 0x600) return true;
  if (IsPySpace(cp)) return false;  // Zs other than ' ', Zl, Zp
  const bool format = (cp >= 0x600 && cp <= 0x605) || cp == 0x61C || cp == 0x6DD || cp == 0x70F ||
                      cp == 0x890 || cp == 0x891 || cp == 0x8E2 || cp == 0x180E ||
                      (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
                      (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x206F) ||
                      cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB) || cp == 0x110BD ||
                      cp == 0x110CD || (cp >= 0x13430 && cp <= 0x1343F) ||
                      (cp >= 0x1BCA0 && cp <= 0x1BCA3) || (cp >= 0x1D173 && cp <= 0x1D17A) ||
                      cp == 0xE0001 || (cp >= 0xE0020 && cp <= 0xE007F);
  const bool private_use = (cp >= 0xE000 && cp <= 0xF8FF) || cp >= 0xF0000;
  const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
  const bool noncharacter = (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
  return !(format || private_use || surrogate || noncharacter || cp > 0x10FFFF);
}

namespace {

// Simple one-to-one case pairs: returns the other-case partner, or cp itself.
// `to_upper` selects the direction.
char32_t MapCase(char32_t cp, bool to_upper) {
  auto pair_even_upper = [&](char32_t lo, char32_t hi) -> char32_t {
    if (cp < lo || cp > hi) return 0;
    const bool is_upper = ((cp - lo) % 2) == 0;
    if (to_upper) return is_upper ? cp : cp - 1;
    return is_upper ? cp + 1 : cp;
  };
  if (cp < 0x80) {
    if (to_upper && cp >= 'a' && cp <= 'z') return cp - 32;
    if (!to_upper && cp >= 'A' && cp <= 'Z') return cp + 32;
    return cp;
  }
  if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) return to_upper ? cp : cp + 32;
  if (cp >= 0xE0 && cp <= 0xFE && cp != 0xF7) return to_upper ? cp - 32 : cp;
  if (cp == 0xFF) return to_upper ? 0x178 : cp;
  if (cp == 0x178) return to_upper ? cp : 0xFF;
  if (cp == 0xB5) return to_upper ? 0x39C : cp;
  if (cp == 0x131) return to_upper ? 'I' : cp;
  if (cp == 0x17F) return to_upper ? 'S' : cp;
  if (char32_t r = pair_even_upper(0x100, 0x12F)) return r;
  if (char32_t r = pair_even_upper(0x132, 0x137)) return r;
  if (cp >= 0x139 && cp <= 0x148) {  // odd = upper
    const bool is_upper = (cp % 2) == 1;
    return to_upper ? (is_upper ? cp : cp - 1) : (is_upper ? cp + 1 : cp);
  }
  if (char32_t r = pair_even_upper(0x14A, 0x177)) return r;
  if (cp >= 0x179 && cp <= 0x17E) {  // odd = upper
    const bool is_upper = (cp % 2) == 1;
    return to_upper ? (is_upper ? cp : cp - 1) : (is_upper ? cp + 1 : cp);
  }
  // Greek.
  if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return to_upper ? cp : cp + 32;
  if (cp >= 0x3B1 && cp <= 0x3C9) return to_upper ? (cp == 0x3C2 ? 0x3A3 : cp - 32) : cp;
  if (cp == 0x386) return to_upper ? cp : 0x3AC;
  if (cp == 0x3AC) return to_upper ? 0x386 : cp;
  if (cp >= 0x388 && cp <= 0x38A) return to_upper ? cp : cp + 37;
  if (cp >= 0x3AD && cp <= 0x3AF) return to_upper ? cp - 37 : cp;
  if (cp == 0x38C) return to_upper ? cp : 0x3CC;
  if (cp == 0x3CC) return to_upper ? 0x38C : cp;
  if (cp == 0x38E || cp == 0x38F) return to_upper ? cp : cp + 63;
  if (cp == 0x3CD || cp == 0x3CE) return to_upper ? cp - 63 : cp;
  // Cyrillic.
  if (cp >= 0x400 && cp <= 0x40F) return to_upper ? cp : cp + 80;
  if (cp >= 0x410 && cp <= 0x42F) return to_upper ? cp : cp + 32;
  if (cp >= 0x430 && cp <= 0x44F) return to_upper ? cp - 32 : cp;
  if (cp >= 0x450 && cp <= 0x45F) return to_upper ? cp - 80 : cp;
  if (char32_t r = pair_even_upper(0x460, 0x481)) return r;
  if (char32_t r = pair_even_upper(0x48A, 0x4BF)) return r;
  if (cp == 0x4C0) return to_upper ? cp : 0x4CF;
  if (cp == 0x4CF) return to_upper ? 0x4C0 : cp;
  if (cp >= 0x4C1 && cp <= 0x4CE) {  // odd = upper
    const bool is_upper = (cp % 2) == 1;
    return to_upper ? (is_upper ? cp : cp - 1) : (is_upper ? cp + 1 : cp);
  }
  if (char32_t r = pair_even_upper(0x4D0, 0x52F)) return r;
  return cp;
}

}  // namespace

void AppendUpper(char32_t cp, std::string* out) {
  if (cp == 0xDF) {  // ß
    out->append("SS");
    return;
  }
  AppendUtf8(MapCase(cp, /*to_upper=*/true), out);
}

char32_t ToLower(char32_t cp) { return MapCase(cp, /*to_upper=*/false); }

std::string PyUpper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t pos = 0; pos < s.size();) AppendUpper(NextCodePoint(s, &pos), &out);
  return out;
}

namespace {

bool IsCased(char32_t cp) {
  return cp == 0xDF || MapCase(cp, true) != cp || MapCase(cp, false) != cp;
}

}  // namespace

std::string PyLower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const std::vector<char32_t> cps = DecodeUtf8(s);
  for (size_t i = 0; i < cps.size(); ++i) {
    char32_t lower = ToLower(cps[i]);
    // Final sigma: a capital sigma ending a word lowercases to U+03C2.
    if (cps[i] == 0x3A3 && i > 0 && IsCased(cps[i - 1]) &&
        (i + 1 == cps.size() || !IsCased(cps[i + 1]))) {
      lower = 0x3C2;
    }
    AppendUtf8(lower, &out);
  }
  return out;
}

std::string PyStrip(std::string_view s, const std::string* chars, bool left, bool right) {
  std::vector<char32_t> strip_set;
  if (chars != nullptr) strip_set = DecodeUtf8(*chars);
  auto strippable = [&](char32_t cp) {
    if (chars == nullptr) return IsPySpace(cp);
    return std::find(strip_set.begin(), strip_set.end(), cp) != strip_set.end();
  };
  const std::vector<size_t> offsets = CodePointOffsets(s);
  size_t first = 0;
  size_t last = offsets.size() - 1;  // index of the end offset
  auto cp_at = [&](size_t idx) {
    size_t pos = offsets[idx];
    return NextCodePoint(s, &pos);
  };
  if (left) {
    while (first < last && strippable(cp_at(first))) ++first;
  }
  if (right) {
    while (last > first && strippable(cp_at(last - 1))) --last;
  }
  return std::string(s.substr(offsets[first], offsets[last] - offsets[first]));
}

std::vector<std::string> PySplit(std::string_view s, const std::string* sep, int64_t maxsplit) {
  std::vector<std::string> parts;
  if (sep != nullptr) {
    size_t start = 0;
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
      const size_t hit = s.find(*sep, start);
      if (hit == std::string_view::npos) break;
      parts.emplace_back(s.substr(start, hit - start));
      start = hit + sep->size();
    }
    parts.emplace_back(s.substr(start));
    return parts;
  }
  // Runs of whitespace separate; leading/trailing whitespace yields no empty parts.
  size_t pos = 0;
  while (true) {
    size_t word_start = pos;
    while (word_start < s.size()) {  // skip whitespace
      size_t next = word_start;
      if (!IsPySpace(NextCodePoint(s, &next))) break;
      word_start = next;
    }
    if (word_start >= s.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      // The remainder keeps its inner and trailing whitespace, like CPython.
      parts.emplace_back(s.substr(word_start));
      break;
    }
    size_t word_end = word_start;
    while (word_end < s.size()) {
      size_t next = word_end;
      if (IsPySpace(NextCodePoint(s, &next))) break;
      word_end = next;
    }
    parts.emplace_back(s.substr(word_start, word_end - word_start));
    pos = word_end;
  }
  return parts;
}

std::vector<std::string> PyRSplit(std::string_view s, const std::string* sep, int64_t maxsplit) {
  if (maxsplit < 0) return PySplit(s, sep, maxsplit);
  std::vector<std::string> parts;
  if (sep != nullptr) {
    size_t end = s.size();
    while (static_cast<int64_t>(parts.size()) < maxsplit) {
      if (end < sep->size()) break;
      const size_t hit = s.rfind(*sep, end - sep->size());
      if (hit == std::string_view::npos) break;
      parts.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
      end = hit;
    }
    parts.emplace_back(s.substr(0, end));
    std::reverse(parts.begin(), parts.end());
    return parts;
  }
  std::vector<char32_t> cps = DecodeUtf8(s);
  size_t end = cps.size();
  while (true) {
    while (end > 0 && IsPySpace(cps[end - 1])) --end;
    if (end == 0) break;
    if (static_cast<int64_t>(parts.size()) == maxsplit) {
      parts.push_back(EncodeUtf8(std::vector<char32_t>(cps.begin(), cps.begin() + end)));
      break;
    }
    size_t start = end;
    while (start > 0 && !IsPySpace(cps[start - 1])) --start;
    parts.push_back(EncodeUtf8(std::vector<char32_t>(cps.begin() + start, cps.begin() + end)));
    end = start;
  }
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::vector<std::string> PySplitLines(std::string_view s) {
  std::vector<std::string> lines;
  std::string current;
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    const char32_t cp = NextCodePoint(s, &pos);
    const bool boundary = cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C ||
                          (cp >= 0x1C && cp <= 0x1E) || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
    if (!boundary) {
      current.append(s.substr(start, pos - start));
      continue;
    }
    if (cp == '\r' && pos < s.size() && s[pos] == '\n') ++pos;
    lines.push_back(std::move(current));
    current.clear();
  }
  if (!current.empty()) lines.push_back(std::move(current));
  return lines;
}

std::string PyReplace(std::string_view s, std::string_view from, std::string_view to,
                      int64_t count) {
  std::string out;
  int64_t done = 0;
  if (from.empty()) {  // inserts `to` around every code point
    size_t pos = 0;
    while (true) {
      if (count >= 0 && done >= count) {
        out.append(s.substr(pos));
        break;
      }
      out.append(to);
      ++done;
      if (pos >= s.size()) break;
      const size_t start = pos;
      NextCodePoint(s, &pos);
      out.append(s.substr(start, pos - start));
    }
    return out;
  }
  size_t start = 0;
  while (count < 0 || done < count) {
    const size_t hit = s.find(from, start);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(start, hit - start));
    out.append(to);
    start = hit + from.size();
    ++done;
  }
  out.append(s.substr(start));
  return out;
}

}  // namespace radixlm::chat
