#include "chat/lexer.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "chat/string_literal.h"
#include "chat/template_error.h"
#include "chat/text.h"

namespace radixlm::chat {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Jinja2's operators, longest first so that "//" wins over "/".
constexpr std::string_view kOperators[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "/",
                                           "*",  "%",  "~",  "[",  "]",  "(",  ")", "{", "}",
                                           "<",  ">",  "=",  ".",  ":",  "|",  ",", ";"};

class Lexer {
 public:
  explicit Lexer(std::string_view raw) : src_(Normalize(raw)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  std::vector<Token> Run() {
    while (pos_ < src_.size()) LexData();
    Token end;
    end.kind = TokenKind::kEnd;
    SetPosition(src_.size(), &end);
    tokens_.push_back(std::move(end));
    return std::move(tokens_);
  }

 private:
  // \r\n and \r become \n; one trailing newline is dropped (keep_trailing_newline=False).
  static std::string Normalize(std::string_view raw) {
    std::string out;
    out.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\r') {
        out.push_back('\n');
        if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
      } else {
        out.push_back(raw[i]);
      }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  // Line and code-point column of `offset`. Tokens arrive in increasing order, so the column
  // is counted on from the previous position instead of from the line start.
  void SetPosition(size_t offset, Token* token) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const size_t line_start = *(it - 1);
    const int line = static_cast<int>(it - line_starts_.begin());
    size_t from = line_start;
    int column = 1;
    if (line == cached_line_ && offset >= cached_offset_) {
      from = cached_offset_;
      column = cached_column_;
    }
    column += static_cast<int>(CodePointCount(std::string_view(src_).substr(from, offset - from)));
    cached_offset_ = offset;
    cached_line_ = line;
    cached_column_ = column;
    token->line = line;
    token->column = column;
  }

  [[noreturn]] void Fail(size_t offset, const std::string& message) const {
    Token where;
    SetPosition(offset, &where);
    throw TemplateError(ErrorKind::kSyntax, message, where.line, where.column);
  }

  void Emit(TokenKind kind, size_t offset, std::string value = {}) {
    Token token;
    token.kind = kind;
    token.value = std::move(value);
    SetPosition(offset, &token);
    tokens_.push_back(std::move(token));
  }

  bool IsSpaceAt(size_t i, size_t* next) const {
    size_t p = i;
    const bool space = IsPySpace(NextCodePoint(src_, &p));
    *next = p;
    return space;
  }
  size_t SkipSpaces(size_t i) const {
    size_t next = i;
    while (i < src_.size() && IsSpaceAt(i, &next)) i = next;
    return i;
  }
  bool AllSpaces(std::string_view text) const {
    for (size_t p = 0; p < text.size();) {
      if (!IsPySpace(NextCodePoint(text, &p))) return false;
    }
    return true;
  }
  std::string RStrip(std::string_view text) const { return PyStrip(text, nullptr, false, true); }

  // Applies `{%-` stripping or lstrip_blocks to the text before a tag, then emits it.
  void EmitTextBefore(std::string_view text, size_t text_offset, char sign, bool lstrip_applies) {
    std::string data(text);
    if (sign == '-') {
      data = RStrip(data);
    } else if (sign != '+' && lstrip_applies) {
      const size_t l_pos = data.rfind('\n') == std::string::npos ? 0 : data.rfind('\n') + 1;
      if ((l_pos > 0 || line_starting_) && l_pos < data.size() &&
          AllSpaces(std::string_view(data).substr(l_pos))) {
        data.resize(l_pos);
      }
    }
    if (!data.empty()) Emit(TokenKind::kText, text_offset, std::move(data));
  }

  // Matches `{%[-+]?\s*WORD\s*` at `at` and returns the offset after it, or npos.
  size_t MatchBlockWord(size_t at, std::string_view word, char* sign) const {
    if (src_.compare(at, 2, "{%") != 0) return std::string::npos;
    size_t p = at + 2;
    *sign = 0;
    if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) *sign = src_[p++];
    p = SkipSpaces(p);
    if (src_.compare(p, word.size(), word) != 0) return std::string::npos;
    return SkipSpaces(p + word.size());
  }

  void LexData() {
    size_t tag = pos_;
    while (true) {
      tag = src_.find('{', tag);
      if (tag == std::string::npos || tag + 1 >= src_.size()) {
        Emit(TokenKind::kText, pos_, src_.substr(pos_));
        pos_ = src_.size();
        return;
      }
      const char kind = src_[tag + 1];
      if (kind == '{' || kind == '%' || kind == '#') break;
      ++tag;
    }
    const std::string_view text = std::string_view(src_).substr(pos_, tag - pos_);
    const char kind = src_[tag + 1];
    const char sign = (tag + 2 < src_.size() && (src_[tag + 2] == '-' || src_[tag + 2] == '+'))
                          ? src_[tag + 2]
                          : 0;
    if (kind == '%' && LexRaw(tag, text)) return;
    EmitTextBefore(text, pos_, sign, /*lstrip_applies=*/kind != '{');
    size_t p = tag + 2 + (sign != 0 ? 1 : 0);
    if (kind == '#') {
      LexComment(tag, p);
    } else {
      LexTag(tag, p, kind == '{');
    }
  }

  bool LexRaw(size_t tag, std::string_view text) {
    char sign = 0;
    size_t p = MatchBlockWord(tag, "raw", &sign);
    if (p == std::string::npos) return false;
    if (src_.compare(p, 3, "-%}") == 0) {
      p = SkipSpaces(p + 3);
    } else if (src_.compare(p, 2, "%}") == 0) {
      p += 2;
    } else {
      return false;
    }
    EmitTextBefore(text, pos_, sign, /*lstrip_applies=*/true);
    line_starting_ = src_[p - 1] == '\n';
    const size_t body = p;
    for (size_t at = src_.find("{%", body); at != std::string::npos; at = src_.find("{%", at + 1)) {
      char end_sign = 0;
      size_t q = MatchBlockWord(at, "endraw", &end_sign);
      if (q == std::string::npos) continue;
      if (src_.compare(q, 3, "+%}") == 0) {
        q += 3;
      } else if (src_.compare(q, 3, "-%}") == 0) {
        q = SkipSpaces(q + 3);
      } else if (src_.compare(q, 2, "%}") == 0) {
        q += 2;
        if (q < src_.size() && src_[q] == '\n') ++q;  // trim_blocks
      } else {
        continue;
      }
      EmitTextBefore(std::string_view(src_).substr(body, at - body), body, end_sign, true);
      line_starting_ = src_[q - 1] == '\n';
      pos_ = q;
      return true;
    }
    Fail(tag, "Missing end of raw directive");
  }

  void LexComment(size_t tag, size_t body) {
    const size_t end = src_.find("#}", body);
    if (end == std::string::npos) Fail(tag, "Missing end of comment tag");
    size_t p = end + 2;
    const char before = end > body ? src_[end - 1] : 0;
    if (before == '-') {
      p = SkipSpaces(p);
    } else if (before != '+' && p < src_.size() && src_[p] == '\n') {
      ++p;  // trim_blocks
    }
    line_starting_ = src_[p - 1] == '\n';
    pos_ = p;
  }

  void LexTag(size_t tag, size_t p, bool variable) {
    Emit(variable ? TokenKind::kVariableBegin : TokenKind::kBlockBegin, tag);
    std::vector<char> balance;
    while (true) {
      p = SkipSpaces(p);
      if (p >= src_.size()) {
        Fail(tag, variable ? "unexpected end of template, expected '}}'"
                           : "unexpected end of template, expected '%}'");
      }
      if (balance.empty() && TryTagEnd(&p, variable)) {
        pos_ = p;
        return;
      }
      p = LexExpressionToken(p, &balance);
    }
  }

  bool TryTagEnd(size_t* p, bool variable) {
    const size_t at = *p;
    const std::string_view close = variable ? "}}" : "%}";
    if (src_.compare(at, 1, "-") == 0 && src_.compare(at + 1, 2, close) == 0) {
      Emit(variable ? TokenKind::kVariableEnd : TokenKind::kBlockEnd, at);
      *p = SkipSpaces(at + 3);
    } else if (!variable && src_.compare(at, 3, "+%}") == 0) {
      Emit(TokenKind::kBlockEnd, at);
      *p = at + 3;
    } else if (src_.compare(at, 2, close) == 0) {
      Emit(variable ? TokenKind::kVariableEnd : TokenKind::kBlockEnd, at);
      *p = at + 2;
      if (!variable && *p < src_.size() && src_[*p] == '\n') ++*p;  // trim_blocks
    } else {
      return false;
    }
    line_starting_ = src_[*p - 1] == '\n';
    return true;
  }

  size_t LexExpressionToken(size_t p, std::vector<char>* balance) {
    const char c = src_[p];
    if (IsDigit(c)) return LexNumber(p);
    if (IsNameStart(c)) {
      size_t q = p;
      while (q < src_.size() && IsNameChar(src_[q])) ++q;
      Emit(TokenKind::kName, p, src_.substr(p, q - p));
      return q;
    }
    if (c == '\'' || c == '"') return LexString(p);
    for (std::string_view op : kOperators) {
      if (src_.compare(p, op.size(), op) != 0) continue;
      if (op == "(" || op == "[" || op == "{") {
        balance->push_back(op == "(" ? ')' : op == "[" ? ']' : '}');
      } else if (op == ")" || op == "]" || op == "}") {
        if (balance->empty()) Fail(p, "unexpected '" + std::string(op) + "'");
        const char expected = balance->back();
        balance->pop_back();
        if (expected != op[0]) {
          Fail(p, "unexpected '" + std::string(op) + "', expected '" + expected + "'");
        }
      }
      Emit(TokenKind::kOperator, p, std::string(op));
      return p + op.size();
    }
    size_t next = p;
    const char32_t cp = NextCodePoint(src_, &next);
    std::string shown;
    AppendUtf8(cp, &shown);
    Fail(p, "unexpected char '" + shown + "'");
  }

  // Digits with optional '_' separators; returns the end offset.
  size_t ScanDigits(size_t p) const {
    while (p < src_.size() &&
           (IsDigit(src_[p]) || (src_[p] == '_' && p + 1 < src_.size() && IsDigit(src_[p + 1])))) {
      ++p;
    }
    return p;
  }

  size_t LexNumber(size_t p) {
    const bool after_dot = p > 0 && src_[p - 1] == '.';
    if (src_[p] == '0' && p + 1 < src_.size() &&
        std::string_view("xXoObB").find(src_[p + 1]) != std::string_view::npos) {
      return LexRadixInteger(p);
    }
    size_t q = ScanDigits(p);
    bool is_float = false;
    if (!after_dot) {
      if (q + 1 < src_.size() && src_[q] == '.' && IsDigit(src_[q + 1])) {
        q = ScanDigits(q + 1);
        is_float = true;
      }
      if (q < src_.size() && (src_[q] == 'e' || src_[q] == 'E')) {
        size_t e = q + 1;
        if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
        if (e < src_.size() && IsDigit(src_[e])) {
          q = ScanDigits(e);
          is_float = true;
        }
      }
    }
    std::string digits;
    for (size_t i = p; i < q; ++i) {
      if (src_[i] != '_') digits.push_back(src_[i]);
    }
    Token token;
    SetPosition(p, &token);
    if (is_float) {
      token.kind = TokenKind::kFloat;
      token.float_value = std::strtod(digits.c_str(), nullptr);
    } else {
      token.kind = TokenKind::kInteger;
      errno = 0;
      token.int_value = std::strtoll(digits.c_str(), nullptr, 10);
      if (errno == ERANGE) Fail(p, "integer literal out of range");
    }
    token.value = std::move(digits);
    tokens_.push_back(std::move(token));
    return q;
  }

  size_t LexRadixInteger(size_t p) {
    const char radix_char = static_cast<char>(src_[p + 1] | 0x20);
    const int radix = radix_char == 'x' ? 16 : radix_char == 'o' ? 8 : 2;
    size_t q = p + 2;
    uint64_t value = 0;
    bool any = false;
    while (q < src_.size()) {
      if (src_[q] == '_') {
        ++q;
        continue;
      }
      const int d = HexValue(src_[q]);
      if (d < 0 || d >= radix) break;
      if (value > (static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(d)) / radix) {
        Fail(p, "integer literal out of range");
      }
      value = value * radix + static_cast<uint64_t>(d);
      any = true;
      ++q;
    }
    if (!any) Fail(p, "invalid integer literal");
    Token token;
    SetPosition(p, &token);
    token.kind = TokenKind::kInteger;
    token.int_value = static_cast<int64_t>(value);
    tokens_.push_back(std::move(token));
    return q;
  }

  size_t LexString(size_t p) {
    const char quote = src_[p];
    size_t q = p + 1;
    while (q < src_.size() && src_[q] != quote)
      q += (src_[q] == '\\' && q + 1 < src_.size()) ? 2 : 1;
    if (q >= src_.size()) Fail(p, "unterminated string literal");
    Token token;
    SetPosition(p, &token);
    token.kind = TokenKind::kString;
    std::string error;
    if (!DecodeStringLiteral(std::string_view(src_).substr(p + 1, q - p - 1), &token.value,
                             &error)) {
      Fail(p, error);
    }
    tokens_.push_back(std::move(token));
    return q + 1;
  }

  std::string src_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  bool line_starting_ = true;
  mutable size_t cached_offset_ = 0;  // SetPosition's last answer
  mutable int cached_line_ = 1;
  mutable int cached_column_ = 1;
};

}  // namespace

std::vector<Token> Tokenize(std::string_view source) { return Lexer(source).Run(); }

}  // namespace radixlm::chat
