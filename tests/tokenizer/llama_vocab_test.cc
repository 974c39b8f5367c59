// llama.cpp's tokenizer test vectors (models/ggml-vocab-*.gguf.inp/.out): every case must
// tokenize to exactly the expected ids (add_special = false, parse_special = false), and decode
// back to the input wherever the tokenization is lossless.
#include <gtest/gtest.h>

#include <cctype>

#include "test_util.h"

namespace radixlm::tokenizer {
namespace {

using testutil::Escape;
using testutil::IdsToString;

class LlamaVocabTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LlamaVocabTest, EncodesEveryCaseExactly) {
  const std::string& name = GetParam();
  auto tok = testutil::LoadTokenizerFile(testutil::VocabPath(name));
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  auto cases = testutil::ReadVocabCases(name);
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  ASSERT_GE(cases->size(), 40u);

  int mismatches = 0;
  std::string report;
  for (const testutil::VocabCase& c : *cases) {
    const std::vector<int32_t> got = (*tok)->Encode(c.text, false, false);
    if (got != c.ids) {
      ++mismatches;
      report += "\n  text:     \"" + Escape(c.text) + "\"\n  expected: " + IdsToString(c.ids) +
                "\n  got:      " + IdsToString(got);
    }
  }
  EXPECT_EQ(mismatches, 0) << "vocab " << name << ": " << mismatches << " of " << cases->size()
                           << " cases differ:" << report;
}

TEST_P(LlamaVocabTest, DecodeInvertsEncode) {
  const std::string& name = GetParam();
  auto tok = testutil::LoadTokenizerFile(testutil::VocabPath(name));
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  auto cases = testutil::ReadVocabCases(name);
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  for (const testutil::VocabCase& c : *cases) {
    // SPM writes spaces as U+2581, so a literal U+2581 in the input cannot round-trip.
    if ((*tok)->kind() == ModelKind::kSpm && c.text.find("\xE2\x96\x81") != std::string::npos) {
      continue;
    }
    EXPECT_EQ((*tok)->Decode(c.ids), c.text) << name << ": \"" << Escape(c.text) << "\"";
  }
}

std::string ParamName(const ::testing::TestParamInfo<std::string>& info) {
  std::string s;
  for (char c : info.param) s.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return s;
}

INSTANTIATE_TEST_SUITE_P(Vocabs, LlamaVocabTest,
                         ::testing::ValuesIn(testutil::SupportedVocabNames()), ParamName);

// bert-bge (WordPiece) has its own suite: wordpiece_test.cc.

}  // namespace
}  // namespace radixlm::tokenizer
