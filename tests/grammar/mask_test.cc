// Token masks against brute force: for sampled matcher states, the mask bit of every token
// must equal "AcceptToken on a clone succeeds". Synthetic vocabulary for all three grammar
// kinds, then real GGUF vocabularies when the test data is present.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "gguf/gguf_file.h"
#include "grammar/matcher.h"
#include "sampling/token_bitmask.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"
#include "util/thread_pool.h"

namespace radixlm::grammar {
namespace {

using testing::MustCompile;
using testing::RandomWalkCheck;

struct WalkCase {
  GrammarKind kind;
  const char* grammar;
};

const WalkCase kWalkCases[] = {
    {GrammarKind::kRegex, "[a-z]+( [a-z]+)*"},
    {GrammarKind::kRegex, "(true|false|null|[0-9]{1,5})"},
    {GrammarKind::kRegex, "[^a-z]{3,8}"},  // multi-byte characters and lone UTF-8 bytes
    {GrammarKind::kRegex, R"G(\{"x":\[[0-9](, ?[0-9])*\]\})G"},
    {GrammarKind::kJsonSchema,
     R"G({"type":"object","properties":{"name":{"type":"string","maxLength":6},
         "age":{"type":"integer","minimum":0,"maximum":120},"tags":{"type":"array",
         "items":{"enum":["red","green"]}}},"required":["name"]})G"},
    {GrammarKind::kJsonSchema, R"G({"type":"string","format":"date-time"})G"},
    {GrammarKind::kEbnf, R"G(root ::= "(" root ")" | [a-z]+ | "")G"},
    {GrammarKind::kEbnf, R"G(
root   ::= value
value  ::= "{" ws (pair ("," ws pair)*)? "}" | "[" ws (value ("," ws value)*)? "]" | num | "true"
pair   ::= "\"" [a-z]* "\"" ws ":" ws value
num    ::= "-"? [0-9]+
ws     ::= " "?
)G"},
    {GrammarKind::kEbnf, R"G(root ::= [^\x00-\x7F]* "!")G"},
};

TEST(MaskTest, SyntheticVocabAgreesWithBruteForce) {
  for (const WalkCase& c : kWalkCases) {
    auto grammar = MustCompile(c.kind, c.grammar);
    ASSERT_NE(grammar, nullptr);
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      EXPECT_EQ(RandomWalkCheck(grammar, 24, seed), "") << c.grammar << " seed " << seed;
    }
  }
}

TEST(MaskTest, EbnfMasksAreSharedPerParseState) {
  auto grammar = MustCompile(GrammarKind::kEbnf, R"G(root ::= "say: " [a-z ]* ".")G");
  Matcher m(grammar);
  ASSERT_TRUE(m.AcceptBytes("say: "));
  std::vector<int32_t> mask(BitmaskWords(grammar->vocab().size()));
  std::vector<int32_t> first;
  for (char c : std::string("hello world and more")) {
    ASSERT_TRUE(m.AcceptBytes(std::string(1, c)));
    m.FillTokenMask(mask);
    if (first.empty()) first = mask;
    EXPECT_EQ(mask, first) << "after '" << c << "'";
    EXPECT_EQ(testing::CheckMaskBruteForce(m), "");
  }
  // After every letter the free-text loop is in the same parse state: one mask, computed once.
  EXPECT_EQ(grammar->earley_masks_cached(), 1u);
}

TEST(MaskTest, EbnfStatesAtDifferentDepthsKeepTheirOwnMasks) {
  auto grammar = MustCompile(GrammarKind::kEbnf, R"G(root ::= "(" root ")" | "x")G");
  const TokenVocab& vocab = grammar->vocab();
  int32_t close2 = -1;
  for (int32_t id = 0; id < vocab.size() && close2 < 0; ++id) {
    if (vocab.bytes(id) == "))") close2 = id;
  }
  ASSERT_GE(close2, 0);
  std::vector<int32_t> mask(BitmaskWords(grammar->vocab().size()));
  for (int depth = 1; depth <= 3; ++depth) {
    Matcher m(grammar);
    ASSERT_TRUE(m.AcceptBytes(std::string(depth, '(') + "x"));
    m.FillTokenMask(mask);
    EXPECT_EQ(IsTokenAllowed(mask, close2), depth >= 2) << depth;
    EXPECT_EQ(testing::CheckMaskBruteForce(m), "") << depth;
  }
  // Same depth again: served from the cache, still right.
  Matcher again(grammar);
  ASSERT_TRUE(again.AcceptBytes("(x"));
  again.FillTokenMask(mask);
  EXPECT_FALSE(IsTokenAllowed(mask, close2));
}

TEST(MaskTest, MasksAreSharedPerDfaState) {
  auto grammar = MustCompile(GrammarKind::kRegex, "(ab)+");
  Matcher a(grammar), b(grammar);
  ASSERT_TRUE(a.AcceptBytes("ab"));
  ASSERT_TRUE(b.AcceptBytes("abab"));
  std::vector<int32_t> ma(BitmaskWords(grammar->vocab().size()));
  std::vector<int32_t> mb(ma.size());
  a.FillTokenMask(ma);
  b.FillTokenMask(mb);
  EXPECT_EQ(ma, mb);
  // Both matchers are in the same minimized state, so they read the same cached vector.
  EXPECT_EQ(&grammar->DfaStateMask(grammar->dfa()->Walk(0, "ab", 2)),
            &grammar->DfaStateMask(grammar->dfa()->Walk(0, "abab", 4)));
}

std::shared_ptr<const TokenVocab> LoadVocab(const std::string& name) {
  const std::string path =
      std::string(RADIXLM_TESTDATA_DIR) + "/llama-vocab/ggml-vocab-" + name + ".gguf";
  if (!std::filesystem::exists(path)) return nullptr;
  auto file = gguf::GgufFile::Open(path);
  if (!file.ok()) return nullptr;
  auto tok = tokenizer::Tokenizer::FromGguf(**file);
  if (!tok.ok()) return nullptr;
  return TokenVocab::FromTokenizer(**tok, (*tok)->eog_ids());
}

TEST(MaskTest, RealVocabulariesAgreeWithBruteForce) {
  int loaded = 0;
  for (const char* name : {"llama-spm", "gpt-2"}) {
    auto vocab = LoadVocab(name);
    if (!vocab) continue;
    ++loaded;
    for (const WalkCase& c : {kWalkCases[0], kWalkCases[4], kWalkCases[7]}) {
      auto grammar = CompiledGrammar::Compile(c.kind, c.grammar, vocab);
      ASSERT_TRUE(grammar.ok()) << grammar.status().ToString();
      std::string walked;
      EXPECT_EQ(RandomWalkCheck(*grammar, 6, 7, &walked), "") << name << ": " << c.grammar;
      EXPECT_FALSE(walked.empty()) << name << ": the walk must visit more than the start state";
    }
  }
  if (loaded == 0) GTEST_SKIP() << "no vocab GGUFs under " << RADIXLM_TESTDATA_DIR;
}

TEST(MaskTest, TokenizerBytesAreOutputBytes) {
  auto vocab = LoadVocab("llama-spm");
  if (!vocab) GTEST_SKIP() << "no llama-spm vocab";
  // SPM pieces: U+2581 is a space, <0x0A> is the newline byte, control tokens have no bytes.
  int spaced = 0, newline = 0;
  for (int32_t id = 0; id < vocab->size(); ++id) {
    const std::string& b = vocab->bytes(id);
    EXPECT_EQ(b.find("\xE2\x96\x81"), std::string::npos) << id;
    spaced += !b.empty() && b[0] == ' ';
    newline += b == "\n";
  }
  EXPECT_GT(spaced, 1000);
  EXPECT_EQ(newline, 1);
  EXPECT_TRUE(vocab->bytes(1).empty());  // <s>
  EXPECT_TRUE(vocab->IsEos(2));          // </s>
}

}  // namespace
}  // namespace radixlm::grammar

namespace radixlm::grammar {
namespace {

TEST(MaskTest, ConcurrentMatchersShareTheMaskCacheSafely) {
  auto grammar = testing::MustCompile(
      GrammarKind::kJsonSchema,
      R"G({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}})G");
  const int32_t words = BitmaskWords(grammar->vocab().size());
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int32_t s = 0; s < grammar->dfa()->num_states(); ++s) {
        const int32_t state = (s * 7 + t * 13) % grammar->dfa()->num_states();
        const std::vector<int32_t>& mask = grammar->DfaStateMask(state);
        if (static_cast<int32_t>(mask.size()) != words) errors[t] = "bad mask size";
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  // After the concurrent fill, every state's cached mask still matches brute force.
  EXPECT_EQ(testing::RandomWalkCheck(grammar, 20, 3), "");
}

TEST(MaskTest, ConcurrentEbnfMatchersShareParseStatesAndMasksSafely) {
  // Clones share their Earley sets, so threads key the same sets at once.
  auto grammar = testing::MustCompile(GrammarKind::kEbnf, R"G(
root  ::= "[" item ("," item)* "]"
item  ::= "(" item ")" | [a-z]+
)G");
  Matcher base(grammar);
  ASSERT_TRUE(base.AcceptBytes("[(ab"));
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Matcher m = base.Clone();
      const std::string tail = t % 2 ? "c),((x" : "),(y";
      for (char c : tail) {
        if (!m.AcceptBytes(std::string(1, c))) errors[t] = "rejected";
        const std::string e = testing::CheckMaskBruteForce(m);
        if (!e.empty()) errors[t] = e;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  EXPECT_GT(grammar->earley_masks_cached(), 0u);
}

}  // namespace
}  // namespace radixlm::grammar

namespace radixlm::grammar {
namespace {

TEST(MaskTest, PrecomputedMasksOnAPoolMatchBruteForce) {
  auto grammar = testing::MustCompile(
      GrammarKind::kJsonSchema,
      R"G({"type":"object","properties":{"n":{"type":"integer","maximum":99}},"required":["n"]})G");
  ThreadPool pool(2);
  grammar->PrecomputeMasks(&pool);
  EXPECT_EQ(testing::RandomWalkCheck(grammar, 12, 5), "");
  // EBNF grammars have no per-state masks: a no-op.
  testing::MustCompile(GrammarKind::kEbnf, "root ::= \"a\"")->PrecomputeMasks(&pool);
}

}  // namespace
}  // namespace radixlm::grammar
