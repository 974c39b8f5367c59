// radixlm's "gemma4" tokenizer (SPM-style BPE: spaces as U+2581, merges over raw UTF-8
// characters, <0xXX> byte fallback, BOS always added) against llama.cpp, on a 7,931-token cut of
// Gemma 4's vocabulary (testdata/gemma4_vocab.gguf: its first 12,000 merges, byte tokens and
// control tokens). The ids and pieces in testdata/gemma4_tokenize_golden.json are llama.cpp's
// llama-tokenize output on that file, written by testdata/make_gemma4_vocab.py (the command is
// in its docstring); never edit them by hand.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "golden_cases.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"

namespace radixlm::tokenizer {
namespace {

using testutil::IdsToString;

class Gemma4GoldenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    golden_ = testutil::LoadGoldenSuiteFromFile(
                  std::string(RADIXLM_SOURCE_DIR) + "/tests/tokenizer/testdata/gemma4_vocab.gguf",
                  "gemma4_tokenize_golden.json", "tests/tokenizer/testdata/make_gemma4_vocab.py")
                  .release();
  }
  static void TearDownTestSuite() {
    delete golden_;
    golden_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(golden_, nullptr); }
  const Tokenizer& tokenizer() const { return *golden_->tokenizer; }
  int32_t Id(const std::string& text) const {
    const auto id = tokenizer().FindToken(text);
    EXPECT_TRUE(id.has_value()) << text;
    return id.value_or(-1);
  }

  static testutil::GoldenSuite* golden_;
};

testutil::GoldenSuite* Gemma4GoldenTest::golden_ = nullptr;

TEST_F(Gemma4GoldenTest, VocabularyFacts) {
  EXPECT_EQ(tokenizer().vocab_size(), golden_->file.at("vocab_size").get<int>());
  EXPECT_EQ(tokenizer().kind(), ModelKind::kBpe);
  EXPECT_EQ(tokenizer().pre_tokenizer(), "gemma4");
  EXPECT_TRUE(tokenizer().add_bos());
  EXPECT_FALSE(tokenizer().add_space_prefix());
  EXPECT_EQ(tokenizer().bos_id(), Id("<bos>"));
  EXPECT_EQ(tokenizer().eos_id(), Id("<eos>"));
  // llama.cpp's end-of-generation tokens for Gemma 4; <|turn> opens a turn and is control.
  for (const char* eog : {"<eos>", "<turn|>", "<|tool_response>"}) {
    EXPECT_TRUE(tokenizer().IsEog(Id(eog))) << eog;
  }
  EXPECT_FALSE(tokenizer().IsEog(Id("<|turn>")));
  EXPECT_TRUE(tokenizer().IsControl(Id("<|turn>")));
  EXPECT_TRUE(tokenizer().IsControl(Id("<|tool_response>")));  // promoted, as llama.cpp
  EXPECT_TRUE(tokenizer().IsUserDefined(Id("<|tool_call>")));
  EXPECT_TRUE(tokenizer().IsByte(Id("<0x0A>")));
}

TEST_F(Gemma4GoldenTest, EncodesLikeLlamaCpp) { testutil::ExpectEncodesLikeGolden(*golden_); }

TEST_F(Gemma4GoldenTest, CasesExerciseByteFallbackAndSpecialTokens) {
  // The golden cases are only worth their name if they reach these paths.
  bool byte_fallback = false, control_in_text = false;
  for (const testutil::GoldenCase& c : golden_->cases) {
    for (int32_t id : c.ids) {
      byte_fallback |= tokenizer().IsByte(id);
      control_in_text |= c.parse_special && id == Id("<|turn>");
    }
  }
  EXPECT_TRUE(byte_fallback);
  EXPECT_TRUE(control_in_text);
}

TEST_F(Gemma4GoldenTest, DecodesLikeLlamaCpp) {
  for (const testutil::GoldenCase& c : golden_->cases) {
    EXPECT_EQ(tokenizer().Decode(c.ids), c.decoded) << IdsToString(c.ids);
  }
}

TEST_F(Gemma4GoldenTest, TextRoundTrips) {
  for (const testutil::GoldenCase& c : golden_->cases) {
    if (c.text.find("\xE2\x96\x81") != std::string::npos) continue;  // U+2581 decodes to ' '
    const auto ids = tokenizer().Encode(c.text, /*add_special=*/false, /*parse_special=*/false);
    EXPECT_EQ(tokenizer().Decode(ids), c.text) << IdsToString(ids);
  }
}

TEST_F(Gemma4GoldenTest, SkipSpecialDropsControlTokens) {
  const auto ids = tokenizer().Encode("<|turn>user\nHi<turn|>", /*add_special=*/true,
                                      /*parse_special=*/true);
  EXPECT_EQ(tokenizer().Decode(ids, /*skip_special=*/true), "user\nHi");
  EXPECT_EQ(tokenizer().Decode(ids, /*skip_special=*/false), "<bos><|turn>user\nHi<turn|>");
}

TEST_F(Gemma4GoldenTest, ToolCallSyntaxSurvivesSkippingSpecialTokens) {
  // The tool-call parser reads <|tool_call>, <|"|> and <tool_call|> from the decoded text, which
  // skips special tokens by default: they are user-defined text, not special markers.
  const std::string call = "<|tool_call>call:f{a:<|\"|>x<|\"|>}<tool_call|>";
  const auto ids = tokenizer().Encode(call, /*add_special=*/false, /*parse_special=*/true);
  EXPECT_EQ(tokenizer().Decode(ids, /*skip_special=*/true), call);
  EXPECT_FALSE(tokenizer().IsSpecial(Id("<|\"|>")));
  EXPECT_TRUE(tokenizer().IsUserDefined(Id("<|\"|>")));
}

TEST_F(Gemma4GoldenTest, StreamingMatchesDecode) {
  testutil::ExpectStreamingMatchesDecode(*golden_);
}

TEST_F(Gemma4GoldenTest, StreamingHoldsBackSplitCharacters) {
  // A character outside the vocabulary arrives as its <0xXX> bytes: nothing is streamed until
  // the last byte completes it.
  const std::string text = "\xF0\x9F\xA6\x99";  // U+1F999, not a token in the cut
  const auto ids = tokenizer().Encode(text, /*add_special=*/false, /*parse_special=*/false);
  ASSERT_EQ(ids.size(), 4u) << IdsToString(ids);
  StreamingDetokenizer stream(tokenizer());
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    ASSERT_TRUE(tokenizer().IsByte(ids[i]));
    EXPECT_EQ(stream.Feed(ids[i]), "");
  }
  EXPECT_EQ(stream.Feed(ids.back()), text);
  EXPECT_EQ(stream.Flush(), "");
}

TEST(Gemma4VocabTest, AddBosNeedsABosToken) {
  Vocab v;
  v.model = "gemma4";
  v.tokens = {"<pad>", "a", "b", "ab"};
  v.merges = {"a b"};
  v.add_bos = false;  // Gemma 4 adds BOS whatever the metadata says, so it needs the id
  const auto tok = Tokenizer::FromVocab(v);
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.status().message().find("bos_token_id"), std::string::npos)
      << tok.status().ToString();
}

}  // namespace
}  // namespace radixlm::tokenizer
