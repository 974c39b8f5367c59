#include "chat/string_literal.h"

#include <cstdint>

#include "chat/text.h"

namespace radixlm::chat {

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The single-character escapes: \a -> BEL, ...; 0 when `c` is not one.
char SimpleEscape(char c) {
  switch (c) {
    case '\\':
      return '\\';
    case '\'':
      return '\'';
    case '"':
      return '"';
    case 'a':
      return '\a';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'v':
      return '\v';
    default:
      return 0;
  }
}

}  // namespace

bool DecodeStringLiteral(std::string_view body, std::string* out, std::string* error) {
  out->clear();
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 >= body.size()) {
      out->push_back(body[i]);
      continue;
    }
    const char e = body[++i];
    if (e == '\n') continue;  // line continuation
    if (const char simple = SimpleEscape(e)) {
      out->push_back(simple);
      continue;
    }
    if (e == 'x' || e == 'u' || e == 'U') {
      const int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      uint32_t cp = 0;
      for (int k = 0; k < digits; ++k) {
        const int d = i + 1 < body.size() ? HexDigit(body[i + 1]) : -1;
        if (d < 0) {
          *error = e == 'x'   ? "truncated \\xXX escape"
                   : e == 'u' ? "truncated \\uXXXX escape"
                              : "truncated \\UXXXXXXXX escape";
          return false;
        }
        cp = cp * 16 + static_cast<uint32_t>(d);
        ++i;
      }
      if (cp > 0x10FFFF) {
        *error = "illegal Unicode character";
        return false;
      }
      AppendUtf8(cp, out);
    } else if (e >= '0' && e <= '7') {
      uint32_t cp = static_cast<uint32_t>(e - '0');
      for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7';
           ++k) {
        cp = cp * 8 + static_cast<uint32_t>(body[++i] - '0');
      }
      AppendUtf8(cp, out);
    } else if (e == 'N') {
      *error = "\\N{...} escapes are not supported";
      return false;
    } else {
      out->push_back('\\');  // unknown escapes stay as written
      out->push_back(e);
    }
  }
  return true;
}

}  // namespace radixlm::chat
