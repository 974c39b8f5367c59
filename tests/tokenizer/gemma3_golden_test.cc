// radixlm's tokenizer against llama.cpp on the real Gemma-3 vocabulary (262,144 tokens): the
// golden file is written by bench/oracle_tokenizer.py (llama-cpp-python); never edit it by
// hand. Needs the default model; skipped when RADIXLM_DEFAULT_MODEL is unset or missing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"

namespace radixlm::tokenizer {
namespace {

using testutil::Escape;
using testutil::IdsToString;

struct GoldenCase {
  std::string text;
  bool add_bos = false;
  bool parse_special = false;
  std::vector<int32_t> ids;
  std::string decoded;
  std::string decoded_skip_special;
};

class Gemma3GoldenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* env = std::getenv("RADIXLM_DEFAULT_MODEL");
    if (env == nullptr || !std::filesystem::is_regular_file(env)) return;
    auto file = gguf::GgufFile::Open(env);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    auto tok = Tokenizer::FromGguf(**file);
    ASSERT_TRUE(tok.ok()) << tok.status().ToString();
    tokenizer_ = std::move(*tok).release();

    std::ifstream in(std::string(RADIXLM_SOURCE_DIR) +
                     "/tests/tokenizer/testdata/gemma3_tokenize_golden.json");
    ASSERT_TRUE(in) << "golden file missing; run bench/oracle_tokenizer.py";
    const nlohmann::json golden = nlohmann::json::parse(in);
    n_vocab_ = golden.at("n_vocab").get<int32_t>();
    bos_id_ = golden.at("bos_id").get<int32_t>();
    eos_id_ = golden.at("eos_id").get<int32_t>();
    cases_ = new std::vector<GoldenCase>();
    for (const nlohmann::json& c : golden.at("cases")) {
      cases_->push_back(GoldenCase{c.at("text"), c.at("add_bos"), c.at("parse_special"),
                                   c.at("ids").get<std::vector<int32_t>>(), c.at("decoded"),
                                   c.at("decoded_skip_special")});
    }
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    tokenizer_ = nullptr;
    delete cases_;
    cases_ = nullptr;
  }
  void SetUp() override {
    if (tokenizer_ == nullptr) {
      GTEST_SKIP() << "RADIXLM_DEFAULT_MODEL is unset or not a file";
    }
  }

  static Tokenizer* tokenizer_;
  static std::vector<GoldenCase>* cases_;
  static int32_t n_vocab_, bos_id_, eos_id_;
};

Tokenizer* Gemma3GoldenTest::tokenizer_ = nullptr;
std::vector<GoldenCase>* Gemma3GoldenTest::cases_ = nullptr;
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

TEST_F(Gemma3GoldenTest, EncodesLikeLlamaCpp) {
  ASSERT_GE(cases_->size(), 100u);
  int mismatches = 0;
  std::string report;
  for (const GoldenCase& c : *cases_) {
    const std::vector<int32_t> got = tokenizer_->Encode(c.text, c.add_bos, c.parse_special);
    if (got != c.ids) {
      ++mismatches;
      report += "\n  text: \"" + Escape(c.text) + "\" add_bos=" + std::to_string(c.add_bos) +
                " parse_special=" + std::to_string(c.parse_special) +
                "\n    expected: " + IdsToString(c.ids) + "\n    got:      " + IdsToString(got);
    }
  }
  EXPECT_EQ(mismatches, 0) << mismatches << " of " << cases_->size() << " differ:" << report;
}

TEST_F(Gemma3GoldenTest, DecodesLikeLlamaCpp) {
  for (const GoldenCase& c : *cases_) {
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
  for (const GoldenCase& c : *cases_) {
    for (bool skip : {false, true}) {
      StreamingDetokenizer stream(*tokenizer_, skip);
      std::string joined;
      for (int32_t id : c.ids) joined += stream.Feed(id);
      joined += stream.Flush();
      EXPECT_EQ(joined, tokenizer_->Decode(c.ids, skip)) << IdsToString(c.ids);
    }
  }
}

}  // namespace
}  // namespace radixlm::tokenizer
