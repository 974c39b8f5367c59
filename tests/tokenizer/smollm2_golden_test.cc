// radixlm's BPE tokenizer against llama.cpp on SmolLM2-135M-Instruct's vocabulary (GPT-2 byte
// level BPE, 49,152 tokens, pre-tokenizer "smollm": digits one by one, no space clean-up). The
// golden file is written by bench/oracle_tokenizer_server.py (llama-server's /tokenize and
// /detokenize); never edit it by hand. Needs the chat model of the end-to-end tests; skipped when
// RADIXLM_CHAT_MODEL is unset or not a file (scripts/setup.sh sets it).
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
#include "tokenizer/detokenizer.h"
#include "tokenizer/tokenizer.h"

namespace radixlm::tokenizer {
namespace {

using testutil::Escape;
using testutil::IdsToString;

struct GoldenCase {
  std::string text;
  bool parse_special = false;
  std::vector<int32_t> ids;
  std::string decoded;  // the pieces with special tokens shown
};

class SmolLm2GoldenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* env = std::getenv("RADIXLM_CHAT_MODEL");
    if (env == nullptr || !std::filesystem::is_regular_file(env)) return;
    auto file = gguf::GgufFile::Open(env);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    auto tok = Tokenizer::FromGguf(**file);
    ASSERT_TRUE(tok.ok()) << tok.status().ToString();
    tokenizer_ = std::move(*tok).release();

    std::ifstream in(std::string(RADIXLM_SOURCE_DIR) +
                     "/tests/tokenizer/testdata/smollm2_tokenize_golden.json");
    ASSERT_TRUE(in) << "golden file missing; run bench/oracle_tokenizer_server.py";
    const nlohmann::json golden = nlohmann::json::parse(in);
    cases_ = new std::vector<GoldenCase>();
    for (const nlohmann::json& c : golden.at("cases")) {
      cases_->push_back(GoldenCase{c.at("text"), c.at("parse_special"),
                                   c.at("ids").get<std::vector<int32_t>>(), c.at("decoded")});
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
      GTEST_SKIP() << "RADIXLM_CHAT_MODEL is unset or not a file";
    }
  }

  static Tokenizer* tokenizer_;
  static std::vector<GoldenCase>* cases_;
};

Tokenizer* SmolLm2GoldenTest::tokenizer_ = nullptr;
std::vector<GoldenCase>* SmolLm2GoldenTest::cases_ = nullptr;

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

TEST_F(SmolLm2GoldenTest, EncodesLikeLlamaCpp) {
  ASSERT_GE(cases_->size(), 100u);
  int mismatches = 0;
  std::string report;
  for (const GoldenCase& c : *cases_) {
    const std::vector<int32_t> got = tokenizer_->Encode(c.text, /*add_bos=*/false, c.parse_special);
    if (got != c.ids) {
      ++mismatches;
      report += "\n  text: \"" + Escape(c.text) +
                "\" parse_special=" + std::to_string(c.parse_special) +
                "\n    expected: " + IdsToString(c.ids) + "\n    got:      " + IdsToString(got);
    }
  }
  EXPECT_EQ(mismatches, 0) << mismatches << " of " << cases_->size() << " differ:" << report;
}

TEST_F(SmolLm2GoldenTest, DecodesLikeLlamaCpp) {
  for (const GoldenCase& c : *cases_) {
    EXPECT_EQ(tokenizer_->Decode(c.ids), c.decoded) << IdsToString(c.ids);
  }
}

TEST_F(SmolLm2GoldenTest, StreamingMatchesDecode) {
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
