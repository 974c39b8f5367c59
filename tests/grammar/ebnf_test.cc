// EBNF (GBNF) → Earley: table-driven accept/reject cases, recursion that no regex can express,
// and parse errors.
#include <gtest/gtest.h>

#include "grammar/ebnf_parser.h"
#include "test_util.h"

namespace radixlm::grammar {
namespace {

using testing::FullMatch;
using testing::MustCompile;
using testing::Printable;

struct EbnfCase {
  const char* grammar;
  std::string input;
  bool matches;
};

constexpr const char* kArithmetic = R"G(
root   ::= expr
expr   ::= term (("+" | "-") term)*
term   ::= factor (("*" | "/") factor)*
factor ::= num | "(" expr ")"
num    ::= [0-9]+
)G";

constexpr const char* kJson = R"G(
root   ::= value
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( string ws ":" ws value ( ws "," ws string ws ":" ws value )* )? ws "}"
array  ::= "[" ws ( value ( ws "," ws value )* )? ws "]"
string ::= "\"" [^"\\]* "\""
number ::= "-"? [0-9]+
ws     ::= [ \t\n]*
)G";

constexpr const char* kMultiline =
    "# a comment line\n"
    "root ::= a\n"
    "       | b   # trailing comment\n"
    "a ::= \"x\" 'y'\n"
    "b ::= [0-9]\n";

const EbnfCase kEbnfCases[] = {
    {R"G(root ::= "a" "b" | "c")G", "ab", true},
    {R"G(root ::= "a" "b" | "c")G", "c", true},
    {R"G(root ::= "a" "b" | "c")G", "a", false},
    {R"G(root ::= "a" "b" | "c")G", "abc", false},
    {"root ::= [a-z]+", "", false},
    {"root ::= [a-z]+", "abc", true},
    {"root ::= [a-z]+", "aB", false},
    {R"G(root ::= "(" root ")" | "")G", "", true},
    {R"G(root ::= "(" root ")" | "")G", "((()))", true},
    {R"G(root ::= "(" root ")" | "")G", "(()", false},
    {R"G(root ::= "(" root ")" | "")G", "())", false},
    {kArithmetic, "1+2*3", true},
    {kArithmetic, "(1+2)*3", true},
    {kArithmetic, "12*(3-4)/5", true},
    {kArithmetic, "1+", false},
    {kArithmetic, "(1", false},
    {kArithmetic, "1++2", false},
    {kJson, R"G({"a": [1, 2, {"b": null}]})G", true},
    {kJson, "[[[[[[[[]]]]]]]]", true},  // deeper than any bounded regex
    {kJson, R"G({"a" 1})G", false},
    {kJson, "[1, 2,]", false},
    {kJson, "{\n\t\"k\" : -5\n}", true},
    {R"G(root ::= [^\x00-\x7F]+)G", "éß日", true},
    {R"G(root ::= [^\x00-\x7F]+)G", "éa", false},
    {R"G(root ::= "é"{2} | "x"{1,3})G", "éé", true},
    {R"G(root ::= "é"{2} | "x"{1,3})G", "xxx", true},
    {R"G(root ::= "é"{2} | "x"{1,3})G", "xxxx", false},
    {R"G(root ::= "é"{2} | "x"{1,3})G", "é", false},
    {R"G(root ::= "a"{2,} "b")G", "aaaab", true},
    {R"G(root ::= "a"{2,} "b")G", "ab", false},
    {R"G(root ::= . "!")G", "日!", true},
    {R"G(root ::= . "!")G", "!", false},
    {R"G(root ::= . "!")G", "\xC3!", false},
    {kMultiline, "xy", true},
    {kMultiline, "7", true},
    {kMultiline, "x", false},
    {R"G(root ::= "\n\t\"\\" "\x41" "\u00e9")G", "\n\t\"\\Aé", true},
    {R"G(root ::= root "a" | "b")G", "baaa", true},
    {R"G(root ::= root "a" | "b")G", "ab", false},
    {R"G(root ::= "a"? "b")G", "b", true},
    {R"G(root ::= "a"? "b")G", "ab", true},
    {R"G(root ::= "a"? "b")G", "aab", false},
    {R"G(root ::= "\"" [^"]* "\"")G", R"G("hi there")G", true},
    {R"G(root ::= "\"" [^"]* "\"")G", R"G("hi"there")G", false},
    {R"G(root ::= item ("," item)* 
item ::= "yes" | "no" | "y")G",
     "yes,no,y", true},
    {R"G(root ::= item ("," item)* 
item ::= "yes" | "no" | "y")G",
     "yes,", false},
    {R"G(root ::= [a-c-] [\]x])G", "-]", true},
    {R"G(root ::= x* y
x ::= "a" | ""
y ::= "b")G",
     "aab", true},  // a nullable rule under a star
};

TEST(EbnfTest, TableOfCases) {
  for (const EbnfCase& c : kEbnfCases) {
    auto grammar = MustCompile(GrammarKind::kEbnf, c.grammar);
    ASSERT_NE(grammar, nullptr) << c.grammar;
    EXPECT_EQ(FullMatch(*grammar, c.input), c.matches)
        << "grammar " << c.grammar << "\ninput '" << Printable(c.input) << "'";
  }
}

struct EbnfError {
  const char* grammar;
  const char* message_part;
};

const EbnfError kEbnfErrors[] = {
    {R"G(root ::= item)G", "rule 'item' is used but never defined"},
    {R"G(start ::= "a")G", "no 'root' rule"},
    {R"G(root ::= ("a" | "b")G", "missing ')'"},
    {R"G(root ::= "a" ) "b")G", "unbalanced ')'"},
    {"root ::= \"a\"\nroot ::= \"b\"", "defined twice"},
    {R"G(root ::= "abc)G", "unterminated"},
    {R"G(root ::= [abc)G", "unterminated"},
    {R"G(root ::= root "a")G", "can never finish"},
    {R"G(root ::= "\q")G", "unsupported escape"},
    {R"G(root ::= [z-a])G", "out of order"},
    {"root = \"a\"", "expected '::='"},
    {R"G(root ::= "a"{5,2})G", "n < m"},
};

TEST(EbnfTest, ErrorsNameTheProblem) {
  for (const EbnfError& c : kEbnfErrors) {
    auto compiled =
        CompiledGrammar::Compile(GrammarKind::kEbnf, c.grammar, testing::SyntheticVocab());
    ASSERT_FALSE(compiled.ok()) << c.grammar;
    EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(compiled.status().message().find(c.message_part), std::string::npos)
        << c.grammar << ": " << compiled.status().message();
  }
}

// Found by fuzz/ebnf_fuzzer.cc: 100000 nested groups overflowed the stack in the recursive
// parser. Nesting is capped at kMaxEbnfNesting.
TEST(EbnfTest, DeepNestingIsAnErrorNotAStackOverflow) {
  const int n = 100000;
  const std::string grammar = "root ::= " + std::string(n, '(') + "\"a\"" + std::string(n, ')');
  auto compiled = CompiledGrammar::Compile(GrammarKind::kEbnf, grammar, testing::SyntheticVocab());
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(compiled.status().message().find("groups nested deeper than 256"), std::string::npos)
      << compiled.status().message();

  const std::string at_cap = "root ::= " + std::string(kMaxEbnfNesting, '(') + "\"a\" | \"b\"" +
                             std::string(kMaxEbnfNesting, ')');
  auto ok = MustCompile(GrammarKind::kEbnf, at_cap);
  ASSERT_NE(ok, nullptr);
  EXPECT_TRUE(FullMatch(*ok, "b"));
}

// Found by fuzz/ebnf_fuzzer.cc: {m,n} copies its body, so nested bounded repetitions multiply
// (10^9 symbols here, out of memory). The copies are capped.
TEST(EbnfTest, NestedRepetitionBlowupIsAnError) {
  for (const char* grammar : {R"(root ::= (("ab"{1000}){1000}){1000})",
                              R"(root ::= ((("ab"{500,1000}){1000,}){1000})+)"}) {
    auto compiled =
        CompiledGrammar::Compile(GrammarKind::kEbnf, grammar, testing::SyntheticVocab());
    ASSERT_FALSE(compiled.ok()) << grammar;
    EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(compiled.status().message().find("expand the grammar beyond 1048576 symbols"),
              std::string::npos)
        << compiled.status().message();
  }
  // Large but reasonable repetitions still compile.
  auto ok = MustCompile(GrammarKind::kEbnf, R"(root ::= ("ab"{1000}){100})");
  ASSERT_NE(ok, nullptr);
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "ab";
  EXPECT_TRUE(FullMatch(*ok, text));
}

TEST(EbnfTest, LongRepetitionStaysLinear) {
  // Left-recursive lowering of `*`: each byte adds a bounded number of Earley items.
  auto grammar = MustCompile(GrammarKind::kEbnf, R"(root ::= "\"" [a-z ]* "\"")");
  std::string text = "\"" + std::string(20000, 'a') + "\"";
  EXPECT_TRUE(FullMatch(*grammar, text));
}

}  // namespace
}  // namespace radixlm::grammar
