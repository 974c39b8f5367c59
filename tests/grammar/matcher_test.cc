// Matcher behaviour shared by all grammar kinds: tokens, EOS, rollback, cloning and the
// forced (jump-forward) bytes.
#include "grammar/matcher.h"

#include <gtest/gtest.h>

#include "sampling/token_bitmask.h"
#include "test_util.h"

namespace radixlm::grammar {
namespace {

using testing::kSyntheticEos;
using testing::kSyntheticSpecial;
using testing::MustCompile;

int32_t TokenId(const std::string& bytes) {
  const TokenVocab& vocab = *testing::SyntheticVocab();
  for (int32_t id = 0; id < vocab.size(); ++id) {
    if (vocab.bytes(id) == bytes) return id;
  }
  ADD_FAILURE() << "no token '" << bytes << "'";
  return -1;
}

std::vector<int32_t> Mask(const Matcher& m) {
  std::vector<int32_t> mask(BitmaskWords(m.grammar().vocab().size()));
  m.FillTokenMask(mask);
  return mask;
}

constexpr const char* kPersonSchema =
    R"G({"type":"object","properties":{"name":{"type":"string"}},"required":["name"]})G";

struct ForcedCase {
  GrammarKind kind;
  const char* grammar;
  const char* prefix;
  const char* forced;
};

const ForcedCase kForcedCases[] = {
    {GrammarKind::kRegex, "abc(d|e)", "", "abc"},
    {GrammarKind::kRegex, "abc(d|e)", "abc", ""},
    {GrammarKind::kRegex, "abc(de|df)", "abc", "d"},
    {GrammarKind::kRegex, "a+b", "", "a"},   // after one 'a', a choice
    {GrammarKind::kRegex, "x|xy", "x", ""},  // may end here: nothing is forced
    // 日 (E6 97 A5) and the lead byte E6 that 本 and 曜 share are forced.
    {GrammarKind::kRegex, "(日本|日曜)", "", "\xE6\x97\xA5\xE6"},
    // json.dumps's separators (the default): the key, ": " and the opening quote are forced.
    {GrammarKind::kJsonSchema, kPersonSchema, "", "{\"name\": \""},
    {GrammarKind::kJsonSchema, kPersonSchema, "{\"", "name\": \""},
    {GrammarKind::kJsonSchema, R"G({"enum":["alpha","alpine"]})G", "", "\"alp"},
    {GrammarKind::kJsonSchema, R"G({"const":true})G", "", "true"},
    {GrammarKind::kEbnf, R"G(root ::= "hello " [a-z]+)G", "", "hello "},
    {GrammarKind::kEbnf, R"G(root ::= "ab" ("cd" | "ce"))G", "a", "bc"},
    {GrammarKind::kEbnf, R"G(root ::= "(" root ")" | "x")G", "((x", "))"},
};

TEST(MatcherTest, ForcedBytes) {
  for (const ForcedCase& c : kForcedCases) {
    Matcher m(MustCompile(c.kind, c.grammar));
    ASSERT_TRUE(m.AcceptBytes(c.prefix)) << c.grammar << " / " << c.prefix;
    EXPECT_EQ(m.ForcedBytes(), c.forced) << c.grammar << " after '" << c.prefix << "'";
    // The forced bytes are indeed acceptable.
    EXPECT_TRUE(m.AcceptBytes(m.ForcedBytes()));
  }
}

TEST(MatcherTest, OptionalWhitespaceEndsAForcedRun) {
  CompileOptions options;
  options.json.whitespace_pattern = "[ ]?";
  Matcher m(MustCompile(GrammarKind::kJsonSchema, kPersonSchema, options));
  EXPECT_EQ(m.ForcedBytes(), "{");  // then a space or the key
  ASSERT_TRUE(m.AcceptBytes("{ "));
  EXPECT_EQ(m.ForcedBytes(), "\"name\"");
}

TEST(MatcherTest, EosOnlyWhereTheGrammarCanEnd) {
  for (auto [kind, text] : {std::pair{GrammarKind::kRegex, "ab+"},
                            std::pair{GrammarKind::kEbnf, "root ::= \"a\" \"b\"+"}}) {
    Matcher m(MustCompile(kind, text));
    EXPECT_FALSE(IsTokenAllowed(Mask(m), kSyntheticEos));
    EXPECT_FALSE(m.AcceptToken(kSyntheticEos));
    ASSERT_TRUE(m.AcceptToken(TokenId("ab")));
    EXPECT_TRUE(m.CanTerminate());
    EXPECT_TRUE(IsTokenAllowed(Mask(m), kSyntheticEos));
    ASSERT_TRUE(m.AcceptToken(kSyntheticEos));
    EXPECT_TRUE(m.IsTerminated());
    EXPECT_FALSE(m.AcceptToken(TokenId("b")));  // nothing after EOS
    const std::vector<int32_t> mask = Mask(m);
    for (int32_t id = 0; id < m.grammar().vocab().size(); ++id) {
      EXPECT_EQ(IsTokenAllowed(mask, id), id == kSyntheticEos) << id;
    }
    ASSERT_TRUE(m.Rollback(1).ok());  // un-terminate
    EXPECT_FALSE(m.IsTerminated());
    EXPECT_TRUE(m.AcceptToken(TokenId("b")));
  }
}

TEST(MatcherTest, ByteLessTokensAreNeverAllowed) {
  Matcher m(MustCompile(GrammarKind::kRegex, ".*"));
  EXPECT_FALSE(IsTokenAllowed(Mask(m), kSyntheticSpecial));
  EXPECT_FALSE(m.AcceptToken(kSyntheticSpecial));
  EXPECT_FALSE(m.AcceptToken(-1));
  EXPECT_FALSE(m.AcceptToken(m.grammar().vocab().size()));
}

TEST(MatcherTest, RollbackRestoresEarlierStates) {
  for (auto [kind, text] :
       {std::pair{GrammarKind::kJsonSchema, kPersonSchema},
        std::pair{GrammarKind::kEbnf,
                  "root ::= \"{\\\"name\\\":\" [ ]? \"\\\"\" [a-z]* \"\\\"}\""}}) {
    Matcher m(MustCompile(kind, text));
    std::vector<std::vector<int32_t>> masks = {Mask(m)};
    std::vector<std::string> forced = {m.ForcedBytes()};
    for (const char* tok : {"{\"", "name", "\":", " \"", "abc", "re"}) {
      ASSERT_TRUE(m.AcceptToken(TokenId(tok))) << text << " " << tok;
      masks.push_back(Mask(m));
      forced.push_back(m.ForcedBytes());
    }
    EXPECT_FALSE(m.AcceptToken(TokenId("\n")));  // a rejected token changes nothing
    EXPECT_EQ(Mask(m), masks.back());
    EXPECT_EQ(m.num_steps(), 6);
    EXPECT_EQ(m.Rollback(7).code(), StatusCode::kOutOfRange);
    ASSERT_TRUE(m.Rollback(2).ok());
    EXPECT_EQ(Mask(m), masks[4]);
    EXPECT_EQ(m.ForcedBytes(), forced[4]);
    ASSERT_TRUE(m.Rollback(4).ok());
    EXPECT_EQ(Mask(m), masks[0]);
    // Replaying after a rollback reaches the same states again.
    ASSERT_TRUE(m.AcceptToken(TokenId("{\"")));
    EXPECT_EQ(Mask(m), masks[1]);
    EXPECT_TRUE(m.AcceptBytes("name\": \"x\"}"));
    EXPECT_TRUE(m.CanTerminate());
  }
}

TEST(MatcherTest, AcceptBytesIsAllOrNothing) {
  for (auto [kind, text] : {std::pair{GrammarKind::kRegex, "abc|abd"},
                            std::pair{GrammarKind::kEbnf, "root ::= \"abc\" | \"abd\""}}) {
    Matcher m(MustCompile(kind, text));
    EXPECT_FALSE(m.AcceptBytes("abx"));
    EXPECT_EQ(m.num_steps(), 0);
    EXPECT_TRUE(m.AcceptBytes("ab"));
    EXPECT_EQ(m.ForcedBytes(), "");
    EXPECT_TRUE(m.AcceptBytes("d"));
    EXPECT_TRUE(m.CanTerminate());
  }
}

TEST(MatcherTest, ClonesAreIndependent) {
  for (auto [kind, text] : {std::pair{GrammarKind::kRegex, "(ab|cd)+"},
                            std::pair{GrammarKind::kEbnf, "root ::= (\"ab\" | \"cd\")+"}}) {
    Matcher a(MustCompile(kind, text));
    ASSERT_TRUE(a.AcceptBytes("ab"));
    Matcher b = a.Clone();
    ASSERT_TRUE(b.AcceptBytes("cd"));
    EXPECT_EQ(a.num_steps(), 1);
    EXPECT_EQ(b.num_steps(), 2);
    ASSERT_TRUE(a.AcceptBytes("c"));
    EXPECT_FALSE(a.CanTerminate());
    EXPECT_TRUE(b.CanTerminate());
    EXPECT_EQ(a.ForcedBytes(), "d");
    EXPECT_EQ(b.ForcedBytes(), "");
  }
}

}  // namespace
}  // namespace radixlm::grammar
