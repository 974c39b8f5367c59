// Unigram tokenizer.json files (built with the `tokenizers` package by
// testdata/make_unigram_golden.py: pieces trained on the tests' corpus behind two normaliser /
// pre-tokenizer / byte-fallback / template set-ups) read from a folder: radixlm's ids, with and
// without the template's special tokens, and its decoded text equal the package's on every
// text of the corpus. Unsupported normalisers and pre-tokenizers are refused by name.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "hf/hf_tokenizer.h"
#include "hf_test_util.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace radixlm::hf {
namespace {

const nlohmann::json& Golden() {
  static const nlohmann::json golden = [] {
    std::ifstream in(std::string(RADIXLM_SOURCE_DIR) + "/tests/hf/testdata/unigram_golden.json");
    std::stringstream text;
    text << in.rdbuf();
    return nlohmann::json::parse(text.str());
  }();
  return golden;
}

// The folder's tokenizer as the server builds it: ReadHfTokenizer's metadata -> Tokenizer.
StatusOr<std::unique_ptr<tokenizer::Tokenizer>> FolderTokenizer(const std::string& dir,
                                                                const nlohmann::json& config,
                                                                HfTokenizer* read = nullptr) {
  RADIXLM_ASSIGN_OR_RETURN(HfTokenizer t, ReadHfTokenizer(dir, config));
  if (read != nullptr) *read = t;
  RADIXLM_ASSIGN_OR_RETURN(auto file,
                           gguf::GgufFile::FromParts(dir, std::move(t.metadata), {}, nullptr));
  return tokenizer::Tokenizer::FromGguf(*file);
}

class UnigramGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(UnigramGoldenTest, IdsAndTextEqualTheTokenizersPackage) {
  const nlohmann::json& variant = Golden()["variants"][GetParam()];
  const std::string dir = testing::FreshDir("unigram_" + GetParam());
  testing::WriteText(dir + "/tokenizer.json", variant["tokenizer"].dump());
  const auto n = static_cast<int64_t>(variant["tokenizer"]["model"]["vocab"].size());
  HfTokenizer read;
  // config.json's vocab_size past the pieces: padded, as the embedding matrix is.
  auto tok = FolderTokenizer(dir, {{"vocab_size", n + 3}}, &read);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  EXPECT_EQ((*tok)->vocab_size(), n + 3);
  EXPECT_STREQ((*tok)->kind_name(), "UGM");
  EXPECT_NE(read.kind.find("Unigram (" + std::to_string(n) + " pieces"), std::string::npos)
      << read.kind;
  const nlohmann::json& cases = variant["cases"];
  ASSERT_GE(cases.size(), 80u);
  int checked = 0;
  for (const nlohmann::json& c : cases) {
    const std::string text = c["text"].get<std::string>();
    const auto want = c["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ((*tok)->Encode(text, /*add_special=*/false, /*parse_special=*/true), want) << text;
    EXPECT_EQ((*tok)->Encode(text, /*add_special=*/true, /*parse_special=*/true),
              c["ids_special"].get<std::vector<int32_t>>())
        << text;
    EXPECT_EQ((*tok)->Decode(want, /*skip_special=*/true), c["decoded"].get<std::string>()) << text;
    tokenizer::StreamingDetokenizer stream(**tok, /*skip_special=*/true);
    std::string streamed;
    for (int32_t id : want) streamed += stream.Feed(id);
    EXPECT_EQ(streamed + stream.Flush(), c["decoded"].get<std::string>()) << text;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(cases.size()));
}

INSTANTIATE_TEST_SUITE_P(Variants, UnigramGoldenTest,
                         ::testing::Values("metaspace_always", "whitespace_first"));

// A tokenizer.json whose normaliser or pre-tokenizer is not built fails naming it.
TEST(UnigramRefusalTest, UnsupportedStepsAreNamed) {
  const nlohmann::json base = Golden()["variants"]["metaspace_always"]["tokenizer"];
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {{{"normalizer", {{"type", "Precompiled"}, {"precompiled_charsmap", "AAAA"}}}},
       "precompiled_charsmap: 3 bytes"},
      {{{"normalizer", {{"type", "Precompiled"}, {"precompiled_charsmap", "A*AA"}}}},
       "precompiled_charsmap is not base64"},
      {{{"normalizer", {{"type", "Precompiled"}, {"precompiled_charsmap", nullptr}}}},
       "no precompiled_charsmap"},
      {{{"normalizer", {{"type", "NFKC"}}}}, "NFKC normalizer"},
      {{{"normalizer", {{"type", "Replace"}, {"pattern", {{"Regex", "\\s+"}}}, {"content", " "}}}},
       "Regex"},
      {{{"pre_tokenizer", {{"type", "Whitespace"}}}}, "Whitespace"},
  };
  for (const auto& [patch, named] : cases) {
    nlohmann::json tok = base;
    tok.update(patch);
    const std::string dir = testing::FreshDir("unigram_refused");
    testing::WriteText(dir + "/tokenizer.json", tok.dump());
    auto t = ReadHfTokenizer(dir, nlohmann::json::object());
    ASSERT_FALSE(t.ok()) << named;
    EXPECT_NE(t.status().message().find(named), std::string::npos) << t.status().message();
  }
}

// A GGUF "t5" vocabulary (llama.cpp's UGM, not written from a tokenizer.json) stays refused.
TEST(UnigramRefusalTest, GgufT5VocabularyIsUnimplemented) {
  tokenizer::Vocab v;
  v.model = "t5";
  v.tokens = {"<pad>", "</s>", "<unk>", "\xE2\x96\x81"};
  auto t = tokenizer::Tokenizer::FromVocab(v);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("'t5'"), std::string::npos) << t.status().message();
}

}  // namespace
}  // namespace radixlm::hf
