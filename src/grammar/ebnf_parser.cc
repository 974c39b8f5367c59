#include "grammar/ebnf_parser.h"

#include <cctype>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "grammar/utf8_ranges.h"

namespace radixlm::grammar {
namespace {

struct EbnfError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Sequence = std::vector<CfgSymbol>;

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Cfg Parse() {
    SkipSpace();
    while (!AtEnd()) {
      const size_t name_pos = pos_;
      const std::string name = ParseName();
      SkipSpace();
      if (text_.substr(pos_, 3) != "::=") Fail("expected '::=' after rule name '" + name + "'");
      pos_ += 3;
      const int32_t rule = RuleId(name);
      if (defined_.count(rule)) {
        pos_ = name_pos;
        Fail("rule '" + name + "' is defined twice");
      }
      defined_[rule] = true;
      for (Sequence& seq : ParseAlternatives(/*nested=*/false)) AddProduction(rule, std::move(seq));
    }
    for (size_t r = 0; r < cfg_.rule_names.size(); ++r) {
      if (!defined_.count(static_cast<int32_t>(r))) {
        throw EbnfError("grammar: rule '" + cfg_.rule_names[r] + "' is used but never defined");
      }
    }
    auto root = names_.find("root");
    if (root == names_.end()) throw EbnfError("grammar: no 'root' rule");
    cfg_.root = root->second;
    return std::move(cfg_);
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    size_t line = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) line += text_[i] == '\n';
    throw EbnfError("grammar: " + what + " (line " + std::to_string(line) + ")");
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  void SkipSpace() {
    while (!AtEnd()) {
      if (std::isspace(static_cast<unsigned char>(text_[pos_]))) {
        ++pos_;
      } else if (text_[pos_] == '#') {
        while (!AtEnd() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  std::string ParseName() {
    const size_t start = pos_;
    while (!AtEnd() && IsNameChar(text_[pos_])) ++pos_;
    if (pos_ == start) Fail("expected a rule name");
    return std::string(text_.substr(start, pos_ - start));
  }

  // True if a new rule definition (`name ::=`) starts at pos_: it ends the current rule.
  bool AtRuleStart() const {
    size_t p = pos_;
    while (p < text_.size() && IsNameChar(text_[p])) ++p;
    if (p == pos_) return false;
    while (p < text_.size() && std::isspace(static_cast<unsigned char>(text_[p]))) ++p;
    return text_.substr(p, 3) == "::=";
  }

  int32_t RuleId(const std::string& name) {
    auto [it, inserted] = names_.emplace(name, static_cast<int32_t>(cfg_.rule_names.size()));
    if (inserted) cfg_.rule_names.push_back(name);
    return it->second;
  }

  int32_t NewHelperRule() {
    const int32_t id = static_cast<int32_t>(cfg_.rule_names.size());
    std::string name = "#";  // append, not "#" + ...: GCC 12 -Wrestrict false positive
    name += std::to_string(id);
    cfg_.rule_names.push_back(std::move(name));
    defined_[id] = true;
    return id;
  }

  void AddProduction(int32_t lhs, Sequence rhs) {
    cfg_.productions.push_back({lhs, std::move(rhs)});
  }

  std::vector<Sequence> ParseAlternatives(bool nested) {
    std::vector<Sequence> alts;
    alts.push_back(ParseSequence(nested));
    while (Peek('|')) {
      ++pos_;
      alts.push_back(ParseSequence(nested));
    }
    return alts;
  }

  Sequence ParseSequence(bool nested) {
    Sequence seq;
    while (true) {
      SkipSpace();
      if (AtEnd() || Peek('|') || Peek(')')) break;
      if (!nested && AtRuleStart()) break;
      Sequence item = ParseItem();
      ParseQuantifier(&item);
      seq.insert(seq.end(), item.begin(), item.end());
    }
    if (Peek(')') && !nested) Fail("unbalanced ')'");
    return seq;
  }

  // Wraps `item` in a helper rule according to a postfix quantifier, if one follows.
  void ParseQuantifier(Sequence* item) {
    int64_t min, max;  // max < 0: unbounded
    if (Peek('*')) {
      min = 0, max = -1, ++pos_;
    } else if (Peek('+')) {
      min = 1, max = -1, ++pos_;
    } else if (Peek('?')) {
      min = 0, max = 1, ++pos_;
    } else if (Peek('{')) {
      ++pos_;
      auto number = [&] {
        if (AtEnd() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
          Fail("expected a number in {m,n}");
        }
        int64_t v = 0;
        while (!AtEnd() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
          v = std::min<int64_t>(v * 10 + (text_[pos_++] - '0'), 100000);
        }
        return v;
      };
      min = number();
      max = min;
      if (Peek(',')) {
        ++pos_;
        max = Peek('}') ? -1 : number();
      }
      if (!Peek('}')) Fail("expected '}'");
      ++pos_;
      if (min > 1000 || max > 1000) Fail("repetition bound above 1000");
      if (max >= 0 && max < min) Fail("repetition {m,n} with n < m");
    } else {
      return;
    }
    // {m,n} copies the body m + (n - m) times, so nested bounded repetitions multiply:
    // "((x{1000}){1000}){1000}" would be 10^9 symbols. Count what the copies add.
    const int64_t copies = max < 0 ? min + 1 : max;
    copied_symbols_ += static_cast<int64_t>(item->size()) * copies;
    if (copied_symbols_ > kMaxEbnfCopiedSymbols) {
      Fail("repetitions expand the grammar beyond " + std::to_string(kMaxEbnfCopiedSymbols) +
           " symbols");
    }
    Sequence body = std::move(*item);
    item->clear();
    for (int64_t i = 0; i < min; ++i) item->insert(item->end(), body.begin(), body.end());
    if (max < 0) {  // N ::= N body | ε
      const int32_t n = NewHelperRule();
      Sequence loop = {CfgSymbol{n, 0, 0}};
      loop.insert(loop.end(), body.begin(), body.end());
      AddProduction(n, std::move(loop));
      AddProduction(n, {});
      item->push_back(CfgSymbol{n, 0, 0});
      return;
    }
    // Up to (max - min) optional copies: O_k ::= body O_{k-1} | ε, built innermost first.
    int32_t inner = -1;
    for (int64_t i = min; i < max; ++i) {
      const int32_t o = NewHelperRule();
      Sequence more = body;
      if (inner >= 0) more.push_back(CfgSymbol{inner, 0, 0});
      AddProduction(o, std::move(more));
      AddProduction(o, {});
      inner = o;
    }
    if (inner >= 0) item->push_back(CfgSymbol{inner, 0, 0});
  }

  // A set of codepoints as symbols: inline when it is one byte-range sequence, else a helper
  // rule with one alternative per sequence.
  Sequence CodepointSet(const std::vector<CodepointRange>& ranges) {
    const std::vector<ByteSeq> seqs = Utf8Sequences(ranges);
    if (seqs.empty()) Fail("character class matches nothing");
    auto to_symbols = [](const ByteSeq& s) {
      Sequence out;
      for (const ByteRange& r : s) out.push_back(CfgSymbol{CfgSymbol::kTerminal, r.lo, r.hi});
      return out;
    };
    if (seqs.size() == 1) return to_symbols(seqs[0]);
    const int32_t helper = NewHelperRule();
    for (const ByteSeq& s : seqs) AddProduction(helper, to_symbols(s));
    return {CfgSymbol{helper, 0, 0}};
  }

  uint32_t ParseHex(int digits) {
    uint32_t v = 0;
    if (const char* error = ReadHexEscape(text_, &pos_, digits, &v)) Fail(error);
    return v;
  }

  // One (possibly escaped) codepoint of a literal or class.
  uint32_t ParseChar() {
    if (AtEnd()) Fail("unterminated literal or class");
    uint32_t cp;
    if (text_[pos_] != '\\') {
      if (!DecodeUtf8(text_, &pos_, &cp)) Fail("invalid UTF-8");
      return cp;
    }
    ++pos_;
    if (AtEnd()) Fail("trailing backslash");
    const char c = text_[pos_++];
    switch (c) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'x':
        return ParseHex(2);
      case 'u':
        return ParseHex(4);
      case 'U':
        return ParseHex(8);
      case '\\':
      case '"':
      case '\'':
      case '[':
      case ']':
      case '-':
      case '^':
        return c;
      default:
        --pos_;
        Fail(std::string("unsupported escape '\\") + c + "'");
    }
  }

  Sequence ParseItem() {
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      if (++depth_ > kMaxEbnfNesting) {
        Fail("groups nested deeper than " + std::to_string(kMaxEbnfNesting));
      }
      std::vector<Sequence> alts = ParseAlternatives(/*nested=*/true);
      --depth_;
      SkipSpace();
      if (!Peek(')')) Fail("missing ')'");
      ++pos_;
      if (alts.size() == 1) return std::move(alts[0]);
      const int32_t helper = NewHelperRule();
      for (Sequence& s : alts) AddProduction(helper, std::move(s));
      return {CfgSymbol{helper, 0, 0}};
    }
    if (c == '"' || c == '\'') {
      ++pos_;
      Sequence seq;
      while (!Peek(c)) {
        std::string utf8;
        AppendUtf8(ParseChar(), &utf8);
        for (char b : utf8) {
          const auto byte = static_cast<uint8_t>(b);
          seq.push_back(CfgSymbol{CfgSymbol::kTerminal, byte, byte});
        }
      }
      ++pos_;
      return seq;
    }
    if (c == '[') {
      ++pos_;
      const bool negated = Peek('^');
      if (negated) ++pos_;
      std::vector<CodepointRange> ranges;
      while (!Peek(']')) {
        const uint32_t lo = ParseChar();
        uint32_t hi = lo;
        if (Peek('-') && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
          ++pos_;
          hi = ParseChar();
          if (hi < lo) Fail("class range out of order");
        }
        ranges.push_back({lo, hi});
      }
      ++pos_;
      return CodepointSet(negated ? ComplementRanges(ranges) : ranges);
    }
    if (c == '.') {
      ++pos_;
      return CodepointSet({{0, kMaxCodepoint}});
    }
    if (IsNameChar(c)) return {CfgSymbol{RuleId(ParseName()), 0, 0}};
    Fail(std::string("unexpected character '") + c + "'");
  }

  std::string_view text_;
  size_t pos_ = 0;
  int32_t depth_ = 0;           // groups open at pos_
  int64_t copied_symbols_ = 0;  // symbols the {m,n} expansions have copied so far
  Cfg cfg_;
  std::map<std::string, int32_t> names_;
  std::map<int32_t, bool> defined_;
};

}  // namespace

StatusOr<Cfg> ParseEbnf(std::string_view text) {
  Cfg cfg;
  try {
    cfg = Parser(text).Parse();
  } catch (const EbnfError& e) {
    return InvalidArgument(e.what());
  }
  RADIXLM_RETURN_IF_ERROR(cfg.Finalize());
  return cfg;
}

}  // namespace radixlm::grammar
