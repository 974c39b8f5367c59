// Regex → DFA: table-driven accept/reject cases, UTF-8 classes, and compile errors.
#include <gtest/gtest.h>

#include "grammar/compiled_grammar.h"
#include "grammar/regex_parser.h"
#include "grammar/stop_regex.h"
#include "test_util.h"

namespace radixlm::grammar {
namespace {

using testing::FullMatch;
using testing::MustCompile;
using testing::Printable;

struct MatchCase {
  const char* pattern;
  std::string input;
  bool matches;
};

// Each row is one case: the whole input must (not) match the pattern.
const MatchCase kRegexCases[] = {
    {"abc", "abc", true},
    {"abc", "ab", false},
    {"abc", "abcd", false},
    {"a|b", "a", true},
    {"a|b", "b", true},
    {"a|b", "ab", false},
    {"a*", "", true},
    {"a*", "aaaa", true},
    {"a*", "b", false},
    {"a+", "", false},
    {"a+", "aaa", true},
    {"ab?c", "ac", true},
    {"ab?c", "abc", true},
    {"ab?c", "abbc", false},
    {"a{3}", "aaa", true},
    {"a{3}", "aa", false},
    {"a{3}", "aaaa", false},
    {"a{2,}", "aa", true},
    {"a{2,}", "aaaaaaa", true},
    {"a{2,}", "a", false},
    {"a{1,3}", "a", true},
    {"a{1,3}", "aaa", true},
    {"a{1,3}", "aaaa", false},
    {"a{0,2}?b", "aab", true},  // lazy quantifier: same language
    {"[a-c]+", "abcabc", true},
    {"[a-c]+", "abd", false},
    {"[^a-c]", "d", true},
    {"[^a-c]", "a", false},
    {"[^a-c]", "é", true},
    {"[^a-c]", "\n", true},
    {R"G(\d{2}-\d{2})G", "12-34", true},
    {R"G(\d{2}-\d{2})G", "1a-34", false},
    {R"G(\w+)G", "foo_Bar1", true},
    {R"G(\w+)G", "foo-1", false},
    {R"G(\s)G", "\t", true},
    {R"G(\s)G", "x", false},
    {R"G(\D\W\S)G", "a-b", true},
    {R"G(\D)G", "5", false},
    {".", "x", true},
    {".", "é", true},
    {".", "😀", true},
    {".", "\n", false},
    {".", "ab", false},
    {".", "\xC3", false},          // a truncated UTF-8 character is not a character
    {".", "\xED\xA0\x80", false},  // an encoded surrogate is not valid UTF-8
    {"(?:ab)+", "abab", true},
    {"(?:ab)+", "aba", false},
    {"(a|bc)*d", "abcad", true},
    {"(a|bc)*d", "abd", false},
    {"[é-ë]", "ê", true},
    {"[é-ë]", "e", false},
    {"[é-ë]", "ì", false},
    {"[^é]", "€", true},
    {"[^é]", "é", false},
    {"日本+", "日本本", true},
    {"日本+", "日", false},
    {R"G(\x41\u00e9)G", "Aé", true},
    {R"G(\.\*)G", ".*", true},
    {R"G(\.\*)G", "a*", false},
    {R"G([\d\-]+)G", "1-2", true},
    {"[]a]+", "]a]", true},
    {"x{", "x{", true},
    {"^abc$", "abc", true},
    {"(?:a|)b", "b", true},
    {"(?:a|)b", "ab", true},
    {R"G([\U0001F600-\U0001F64F]+)G", "😀🙏", true},
    {R"G([\U0001F600-\U0001F64F])G", "☺", false},
    {R"G([^\x00-\x7F]+)G", "éß日😀", true},
    {R"G([^\x00-\x7F]+)G", "éa", false},
    {R"G([\u0800-\uFFFF])G", "\xEF\xBF\xBF", true},  // U+FFFF, a 3-byte boundary
    {R"G([\u0800-\uFFFF])G", "\xDF\xBF", false},     // U+07FF, a 2-byte character
    {R"G((\d+\.)?\d+)G", "3.14", true},
    {R"G((\d+\.)?\d+)G", "3.", false},
    {"(red|green|blue)(, (red|green|blue))*", "red, blue, green", true},
    {"(red|green|blue)(, (red|green|blue))*", "red,blue", false},
};

TEST(RegexTest, TableOfCases) {
  for (const MatchCase& c : kRegexCases) {
    auto grammar = MustCompile(GrammarKind::kRegex, c.pattern);
    ASSERT_NE(grammar, nullptr);
    EXPECT_EQ(FullMatch(*grammar, c.input), c.matches)
        << "pattern " << c.pattern << " input '" << Printable(c.input) << "'";
  }
}

TEST(RegexTest, DfaIsMinimal) {
  // (a|b)*abb: the textbook minimal DFA has 4 states.
  auto grammar = MustCompile(GrammarKind::kRegex, "(a|b)*abb");
  EXPECT_EQ(grammar->dfa()->num_states(), 4);
  // Equivalent spellings minimize to the same size.
  EXPECT_EQ(MustCompile(GrammarKind::kRegex, "a+|aa*")->dfa()->num_states(),
            MustCompile(GrammarKind::kRegex, "a+")->dfa()->num_states());
}

struct ErrorCase {
  const char* pattern;
  StatusCode code;
  const char* message_part;
};

const ErrorCase kRegexErrors[] = {
    {"(abc", StatusCode::kInvalidArgument, "missing ')'"},
    {"abc)", StatusCode::kInvalidArgument, "unbalanced ')'"},
    {"*a", StatusCode::kInvalidArgument, "nothing to repeat"},
    {"a{1001}", StatusCode::kInvalidArgument, "above 1000"},
    {"a{3,2}", StatusCode::kInvalidArgument, "n < m"},
    {R"G(\bword)G", StatusCode::kInvalidArgument, "unsupported escape"},
    {R"G((a)\1)G", StatusCode::kInvalidArgument, "unsupported escape"},
    {"(?=a)", StatusCode::kInvalidArgument, "lookaround"},
    {"[z-a]", StatusCode::kInvalidArgument, "out of order"},
    {"[abc", StatusCode::kInvalidArgument, "missing ']'"},
    {"a^b", StatusCode::kInvalidArgument, "'^'"},
    {"[^\\x00-\\U0010FFFF]", StatusCode::kInvalidArgument, "matches no string"},
    // The n-th-from-last-symbol language needs 2^n DFA states: the cap must stop it.
    {"(a|b)*a(a|b){20}", StatusCode::kResourceExhausted, "DFA exceeds"},
    // A quantifier on a quantifier is Python's "multiple repeat" (a lazy '?' is not one).
    {"a**", StatusCode::kInvalidArgument, "multiple repeat at offset 2"},
    {"a{2}{3}", StatusCode::kInvalidArgument, "multiple repeat at offset 4"},
    {"a*??", StatusCode::kInvalidArgument, "multiple repeat"},
};

TEST(RegexTest, ErrorsAreClear) {
  for (const ErrorCase& c : kRegexErrors) {
    auto compiled =
        CompiledGrammar::Compile(GrammarKind::kRegex, c.pattern, testing::SyntheticVocab());
    ASSERT_FALSE(compiled.ok()) << c.pattern;
    EXPECT_EQ(compiled.status().code(), c.code)
        << c.pattern << ": " << compiled.status().ToString();
    EXPECT_NE(compiled.status().message().find(c.message_part), std::string::npos)
        << c.pattern << ": " << compiled.status().message();
  }
}

// Found by fuzz/regex_fuzzer.cc: 100000 nested groups overflowed the stack in the recursive
// parser (and would have in NFA construction and the tree's destructor). Nesting is capped.
TEST(RegexTest, DeepNestingIsAnErrorNotAStackOverflow) {
  const int n = 100000;
  const std::string deep = std::string(n, '(') + "a" + std::string(n, ')');
  for (const std::string& pattern : {deep, "x" + deep + "|y"}) {
    auto compiled =
        CompiledGrammar::Compile(GrammarKind::kRegex, pattern, testing::SyntheticVocab());
    ASSERT_FALSE(compiled.ok());
    EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(compiled.status().message().find("groups nested deeper than 256"), std::string::npos)
        << compiled.status().message();
    EXPECT_FALSE(CompileStopRegex(pattern).ok());
  }
  // At the cap it still compiles.
  const std::string at_cap =
      std::string(kMaxRegexNesting, '(') + "a" + std::string(kMaxRegexNesting, ')') + "b*";
  auto compiled = MustCompile(GrammarKind::kRegex, at_cap);
  ASSERT_NE(compiled, nullptr);
  EXPECT_TRUE(FullMatch(*compiled, "abb"));
}

TEST(RegexTest, LazyQuantifiersAreStillOneRepeat) {
  for (const char* pattern : {"a*?b", "a+?b", "a??b", "a{1,3}?b"}) {
    auto compiled = MustCompile(GrammarKind::kRegex, pattern);
    ASSERT_NE(compiled, nullptr) << pattern;
    EXPECT_TRUE(FullMatch(*compiled, "ab")) << pattern;
  }
}

}  // namespace
}  // namespace radixlm::grammar
