// radixlm's BPE tokenizer against llama.cpp on SmolLM2-135M-Instruct's vocabulary (GPT-2 byte
// level BPE, 49,152 tokens, pre-tokenizer "smollm": digits one by one, no space clean-up). The
// golden file is written by bench/oracle_tokenizer_server.py (llama-server's /tokenize and
// /detokenize); never edit it by hand. Needs the chat model of the end-to-end tests; skipped when
// RADIXLM_CHAT_MODEL is unset or not a file (scripts/setup.sh sets it).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "golden_cases.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"

namespace radixlm::tokenizer {
namespace {

using testutil::IdsToString;

class SmolLm2GoldenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    golden_ = testutil::LoadGoldenSuite("RADIXLM_CHAT_MODEL", "smollm2_tokenize_golden.json",
                                        "bench/oracle_tokenizer_server.py")
                  .release();
    if (golden_ != nullptr) tokenizer_ = golden_->tokenizer.get();
  }
  static void TearDownTestSuite() {
    tokenizer_ = nullptr;
    delete golden_;
    golden_ = nullptr;
  }
  void SetUp() override {
    if (golden_ == nullptr) {
      GTEST_SKIP() << "RADIXLM_CHAT_MODEL is unset or not a file";
    }
  }

  static testutil::GoldenSuite* golden_;
  static const Tokenizer* tokenizer_;
};

testutil::GoldenSuite* SmolLm2GoldenTest::golden_ = nullptr;
const Tokenizer* SmolLm2GoldenTest::tokenizer_ = nullptr;

TEST_F(SmolLm2GoldenTest, VocabularyFacts) {
  EXPECT_EQ(tokenizer_->vocab_size(), 49152);
  EXPECT_EQ(tokenizer_->kind(), ModelKind::kBpe);
  EXPECT_FALSE(tokenizer_->add_bos());
  const auto im_start = tokenizer_->FindToken("<|im_start|>");
  const auto im_end = tokenizer_->FindToken("<|im_end|>");
  ASSERT_TRUE(im_start.has_value() && im_end.has_value());
  EXPECT_EQ(*im_end, tokenizer_->eos_id());
  EXPECT_TRUE(tokenizer_->IsEog(*im_end));
  EXPECT_FALSE(tokenizer_->IsEog(*im_start));
  EXPECT_TRUE(tokenizer_->IsSpecial(*im_start));
  EXPECT_TRUE(tokenizer_->IsSpecial(*im_end));
}

TEST_F(SmolLm2GoldenTest, EncodesLikeLlamaCpp) { testutil::ExpectEncodesLikeGolden(*golden_); }

TEST_F(SmolLm2GoldenTest, DecodesLikeLlamaCpp) {
  for (const testutil::GoldenCase& c : golden_->cases) {
    EXPECT_EQ(tokenizer_->Decode(c.ids), c.decoded) << IdsToString(c.ids);
  }
}

TEST_F(SmolLm2GoldenTest, StreamingMatchesDecode) {
  testutil::ExpectStreamingMatchesDecode(*golden_);
}

}  // namespace
}  // namespace radixlm::tokenizer
