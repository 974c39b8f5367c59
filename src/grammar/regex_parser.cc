#include "grammar/regex_parser.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>
#include <utility>

namespace radixlm::grammar {
namespace {

// Thrown inside the parser only; ParseRegex turns it into a Status at the boundary.
struct RegexError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

RegexNode ClassNode(const std::vector<CodepointRange>& ranges) {
  RegexNode node;
  node.kind = RegexNode::Kind::kClass;
  node.seqs = Utf8Sequences(ranges);
  return node;
}

// The ASCII meaning of \d \w \s (as outlines and Python's re.ASCII): predictable masks.
std::vector<CodepointRange> ShorthandClass(char c) {
  switch (c) {
    case 'd':
    case 'D':
      return {{'0', '9'}};
    case 'w':
    case 'W':
      return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
    default:
      return {{'\t', '\r'}, {' ', ' '}};  // s, S: \t \n \v \f \r and space
  }
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  RegexNode ParseAll() {
    if (Peek('^')) ++pos_;
    RegexNode node = ParseAlternation();
    if (pos_ < text_.size()) Fail(text_[pos_] == ')' ? "unbalanced ')'" : "unexpected character");
    return node;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw RegexError("regex: " + what + " at offset " + std::to_string(pos_));
  }
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool AtEnd() const { return pos_ >= text_.size(); }

  RegexNode ParseAlternation() {
    RegexNode first = ParseConcat();
    if (!Peek('|')) return first;
    RegexNode alt;
    alt.kind = RegexNode::Kind::kAlt;
    alt.children.push_back(std::move(first));
    while (Peek('|')) {
      ++pos_;
      alt.children.push_back(ParseConcat());
    }
    return alt;
  }

  RegexNode ParseConcat() {
    RegexNode concat;
    concat.kind = RegexNode::Kind::kConcat;
    while (!AtEnd() && !Peek('|') && !Peek(')')) {
      if (Peek('$') && pos_ + 1 == text_.size()) {  // trailing anchor: whole match anyway
        ++pos_;
        break;
      }
      concat.children.push_back(ParseRepeat());
    }
    if (concat.children.size() == 1) return std::move(concat.children[0]);
    return concat;
  }

  // Parses "{m}", "{m,}", "{m,n}" at pos_; returns false (pos_ unchanged) if this brace is not
  // a quantifier, in which case it is a literal '{' (as in Python).
  bool ParseBraces(int32_t* min, int32_t* max) {
    size_t p = pos_ + 1;
    auto number = [&](int64_t* out) {
      const size_t start = p;
      int64_t v = 0;
      while (p < text_.size() && text_[p] >= '0' && text_[p] <= '9') {
        v = std::min<int64_t>(v * 10 + (text_[p] - '0'), 1'000'000'000);
        ++p;
      }
      *out = v;
      return p > start;
    };
    int64_t lo = 0, hi = RegexNode::kUnbounded;
    if (!number(&lo)) return false;
    if (p < text_.size() && text_[p] == ',') {
      ++p;
      if (!number(&hi)) hi = RegexNode::kUnbounded;
    } else {
      hi = lo;
    }
    if (p >= text_.size() || text_[p] != '}') return false;
    if (lo > kMaxRegexRepeat || hi > kMaxRegexRepeat) Fail("repetition bound above 1000");
    if (hi != RegexNode::kUnbounded && hi < lo) Fail("repetition {m,n} with n < m");
    pos_ = p + 1;
    *min = static_cast<int32_t>(lo);
    *max = static_cast<int32_t>(hi);
    return true;
  }

  // Parses one quantifier (* + ? {m} {m,} {m,n}) at pos_; false (pos_ unchanged) if none.
  bool ParseQuantifier(int32_t* min, int32_t* max) {
    if (AtEnd()) return false;
    const char c = text_[pos_];
    if (c == '*') {
      *min = 0, *max = RegexNode::kUnbounded, ++pos_;
    } else if (c == '+') {
      *min = 1, *max = RegexNode::kUnbounded, ++pos_;
    } else if (c == '?') {
      *min = 0, *max = 1, ++pos_;
    } else if (c != '{' || !ParseBraces(min, max)) {
      return false;
    }
    return true;
  }

  RegexNode ParseRepeat() {
    RegexNode atom = ParseAtom();
    int32_t min, max;
    if (!ParseQuantifier(&min, &max)) return atom;
    if (Peek('?')) ++pos_;  // lazy: same language
    if (Peek('+')) Fail("possessive quantifiers are not supported");
    // A quantifier on a quantifier ("a**", "a{2}{3}") is Python's "multiple repeat" error; it
    // also keeps the tree no deeper than the groups (see kMaxRegexNesting).
    const size_t second = pos_;
    if (int32_t unused_min, unused_max; ParseQuantifier(&unused_min, &unused_max)) {
      pos_ = second;
      Fail("multiple repeat");
    }
    RegexNode rep;
    rep.kind = RegexNode::Kind::kRepeat;
    rep.min = min;
    rep.max = max;
    rep.children.push_back(std::move(atom));
    return rep;
  }

  RegexNode ParseAtom() {
    const char c = text_[pos_];
    switch (c) {
      case '(': {
        ++pos_;
        if (Peek('?')) {
          if (pos_ + 1 < text_.size() && text_[pos_ + 1] == ':') {
            pos_ += 2;
          } else {
            Fail("unsupported group syntax '(?' (lookaround, named groups and flags)");
          }
        }
        if (++depth_ > kMaxRegexNesting) {
          Fail("groups nested deeper than " + std::to_string(kMaxRegexNesting));
        }
        RegexNode inner = ParseAlternation();
        --depth_;
        if (!Peek(')')) Fail("missing ')'");
        ++pos_;
        return inner;
      }
      case '[':
        return ParseClass();
      case '.':
        ++pos_;
        return ClassNode(ComplementRanges({{'\n', '\n'}}));
      case '\\': {
        std::vector<CodepointRange> ranges;
        ParseEscape(/*in_class=*/false, &ranges);
        return ClassNode(ranges);
      }
      case '*':
      case '+':
      case '?':
        Fail("quantifier with nothing to repeat");
      case '^':
        Fail("'^' is only supported at the start of the pattern");
      case '$':
        Fail("'$' is only supported at the end of the pattern");
      default: {
        uint32_t cp;
        if (!DecodeUtf8(text_, &pos_, &cp)) Fail("invalid UTF-8");
        return ClassNode({{cp, cp}});
      }
    }
  }

  uint32_t ParseHex(int digits) {
    uint32_t v = 0;
    if (const char* error = ReadHexEscape(text_, &pos_, digits, &v)) Fail(error);
    return v;
  }

  // Parses the escape at pos_ (a backslash) and appends what it denotes.
  void ParseEscape(bool in_class, std::vector<CodepointRange>* out) {
    ++pos_;
    if (AtEnd()) Fail("trailing backslash");
    const char c = text_[pos_++];
    uint32_t cp;
    switch (c) {
      case 'd':
      case 'w':
      case 's': {
        auto r = ShorthandClass(c);
        out->insert(out->end(), r.begin(), r.end());
        return;
      }
      case 'D':
      case 'W':
      case 'S': {
        auto r = ComplementRanges(ShorthandClass(c));
        out->insert(out->end(), r.begin(), r.end());
        return;
      }
      case 'n':
        cp = '\n';
        break;
      case 't':
        cp = '\t';
        break;
      case 'r':
        cp = '\r';
        break;
      case 'f':
        cp = '\f';
        break;
      case 'v':
        cp = '\v';
        break;
      case '0':
        cp = 0;
        break;
      case 'x':
        cp = ParseHex(2);
        break;
      case 'u':
        cp = ParseHex(4);
        break;
      case 'U':
        cp = ParseHex(8);
        break;
      default:
        if (std::isalnum(static_cast<unsigned char>(c))) {
          --pos_;
          Fail(std::string("unsupported escape '\\") + c + "'" +
               (in_class ? "" : " (backreferences, \\b, \\A... are not supported)"));
        }
        --pos_;
        if (!DecodeUtf8(text_, &pos_, &cp)) Fail("invalid UTF-8");
    }
    out->push_back({cp, cp});
  }

  RegexNode ParseClass() {
    ++pos_;  // '['
    bool negated = false;
    if (Peek('^')) negated = true, ++pos_;
    std::vector<CodepointRange> ranges;
    bool first = true;
    while (true) {
      if (AtEnd()) Fail("missing ']'");
      if (Peek(']') && !first) break;
      first = false;
      // One endpoint: a literal codepoint, an escape denoting one codepoint, or a shorthand.
      auto endpoint = [&](uint32_t* cp) {
        if (Peek('\\')) {
          std::vector<CodepointRange> r;
          ParseEscape(/*in_class=*/true, &r);
          if (r.size() == 1 && r[0].lo == r[0].hi) {
            *cp = r[0].lo;
            return true;
          }
          ranges.insert(ranges.end(), r.begin(), r.end());  // \d etc.: a set, not an endpoint
          return false;
        }
        if (!DecodeUtf8(text_, &pos_, cp)) Fail("invalid UTF-8");
        return true;
      };
      uint32_t lo;
      if (!endpoint(&lo)) continue;
      if (Peek('-') && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        uint32_t hi;
        if (!endpoint(&hi)) Fail("class range ends in a shorthand like \\d");
        if (hi < lo) Fail("class range out of order");
        ranges.push_back({lo, hi});
      } else {
        ranges.push_back({lo, lo});
      }
    }
    ++pos_;  // ']'
    return ClassNode(negated ? ComplementRanges(ranges) : ranges);
  }

  std::string_view text_;
  size_t pos_ = 0;
  int32_t depth_ = 0;  // groups open at pos_
};

}  // namespace

StatusOr<RegexNode> ParseRegex(std::string_view pattern) {
  try {
    return Parser(pattern).ParseAll();
  } catch (const RegexError& e) {
    return InvalidArgument(e.what());
  }
}

}  // namespace radixlm::grammar
