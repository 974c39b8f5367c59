// radixlm's tokenizer against llama.cpp on the real Gemma-3 vocabulary (262,144 tokens): the
// golden file is written by bench/oracle_tokenizer.py (llama-cpp-python); never edit it by
// hand. Needs the default model; skipped when RADIXLM_DEFAULT_MODEL is unset or missing.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "golden_cases.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"

namespace radixlm::tokenizer {
namespace {

using testutil::IdsToString;

class Gemma3GoldenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    golden_ = testutil::LoadGoldenSuite("RADIXLM_DEFAULT_MODEL", "gemma3_tokenize_golden.json",
                                        "bench/oracle_tokenizer.py")
                  .release();
    if (golden_ == nullptr) return;
    tokenizer_ = golden_->tokenizer.get();
    n_vocab_ = golden_->file.at("n_vocab").get<int32_t>();
    bos_id_ = golden_->file.at("bos_id").get<int32_t>();
    eos_id_ = golden_->file.at("eos_id").get<int32_t>();
  }
  static void TearDownTestSuite() {
    tokenizer_ = nullptr;
    delete golden_;
    golden_ = nullptr;
  }
  void SetUp() override {
    if (golden_ == nullptr) {
      GTEST_SKIP() << "RADIXLM_DEFAULT_MODEL is unset or not a file";
    }
  }

  static testutil::GoldenSuite* golden_;
  static const Tokenizer* tokenizer_;
  static int32_t n_vocab_, bos_id_, eos_id_;
};

testutil::GoldenSuite* Gemma3GoldenTest::golden_ = nullptr;
const Tokenizer* Gemma3GoldenTest::tokenizer_ = nullptr;
int32_t Gemma3GoldenTest::n_vocab_ = 0;
int32_t Gemma3GoldenTest::bos_id_ = 0;
int32_t Gemma3GoldenTest::eos_id_ = 0;

TEST_F(Gemma3GoldenTest, VocabularyFacts) {
  EXPECT_EQ(tokenizer_->vocab_size(), n_vocab_);
  EXPECT_EQ(tokenizer_->bos_id(), bos_id_);
  EXPECT_EQ(tokenizer_->eos_id(), eos_id_);
  EXPECT_EQ(tokenizer_->kind(), ModelKind::kSpm);
  EXPECT_FALSE(tokenizer_->add_space_prefix());
  EXPECT_TRUE(tokenizer_->add_bos());
  const auto end_of_turn = tokenizer_->FindToken("<end_of_turn>");
  ASSERT_TRUE(end_of_turn.has_value());
  EXPECT_TRUE(tokenizer_->IsEog(*end_of_turn));
  EXPECT_TRUE(tokenizer_->IsEog(eos_id_));
  EXPECT_FALSE(tokenizer_->IsEog(bos_id_));
  EXPECT_TRUE(tokenizer_->IsControl(bos_id_));
}

TEST_F(Gemma3GoldenTest, EncodesLikeLlamaCpp) { testutil::ExpectEncodesLikeGolden(*golden_); }

TEST_F(Gemma3GoldenTest, DecodesLikeLlamaCpp) {
  for (const testutil::GoldenCase& c : golden_->cases) {
    EXPECT_EQ(tokenizer_->Decode(c.ids), c.decoded) << IdsToString(c.ids);
    // llama.cpp keeps USER_DEFINED tokens when skipping specials; radixlm drops the two that
    // are special markers (<start_of_image>, <end_of_image>: README.md).
    std::string expected = c.decoded_skip_special;
    for (const std::string marker : {"<start_of_image>", "<end_of_image>"}) {
      for (size_t at; (at = expected.find(marker)) != std::string::npos;) {
        expected.erase(at, marker.size());
      }
    }
    EXPECT_EQ(tokenizer_->Decode(c.ids, /*skip_special=*/true), expected) << IdsToString(c.ids);
  }
}

TEST_F(Gemma3GoldenTest, SkipSpecialOmitsImageMarkersButKeepsTextLikeUserTokens) {
  // <start_of_image> / <end_of_image> are USER_DEFINED in the GGUF but special in Hugging
  // Face's tokenizer: skip_special omits them (README.md). <table> and "\n\n" are
  // USER_DEFINED too, and text.
  const std::optional<int32_t> image = tokenizer_->FindToken("<start_of_image>");
  const std::optional<int32_t> image_end = tokenizer_->FindToken("<end_of_image>");
  const std::optional<int32_t> table = tokenizer_->FindToken("<table>");
  const std::optional<int32_t> newlines = tokenizer_->FindToken("\n\n");
  ASSERT_TRUE(image && image_end && table && newlines);
  EXPECT_TRUE(tokenizer_->IsUserDefined(*image));
  EXPECT_TRUE(tokenizer_->IsSpecial(*image));
  EXPECT_TRUE(tokenizer_->IsSpecial(*image_end));
  EXPECT_FALSE(tokenizer_->IsSpecial(*table));
  EXPECT_FALSE(tokenizer_->IsSpecial(*newlines));
  const std::vector<int32_t> ids = {*image, *table, *newlines, *image_end};
  EXPECT_EQ(tokenizer_->Decode(ids), "<start_of_image><table>\n\n<end_of_image>");
  EXPECT_EQ(tokenizer_->Decode(ids, /*skip_special=*/true), "<table>\n\n");
  int32_t markers = 0;
  for (int32_t id = 0; id < tokenizer_->vocab_size(); ++id) {
    markers += (tokenizer_->Attributes(id) & attr::kSpecialMarker) != 0;
  }
  EXPECT_EQ(markers, 2);  // of Gemma-3's 165 user-defined tokens
}

TEST_F(Gemma3GoldenTest, StreamingMatchesDecode) {
  testutil::ExpectStreamingMatchesDecode(*golden_);
}

}  // namespace
}  // namespace radixlm::tokenizer
