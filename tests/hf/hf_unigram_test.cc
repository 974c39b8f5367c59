// Unigram tokenizer.json files (built with the `tokenizers` package by
// testdata/make_unigram_golden.py: pieces trained on the tests' corpus behind two normaliser /
// pre-tokenizer / byte-fallback / template set-ups) read from a folder: radixlm's ids, with and
// without the template's special tokens, and its decoded text equal the package's on every
// text of the corpus. Unsupported normalisers and pre-tokenizers are refused by name.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "hf/hf_tokenizer.h"
#include "hf_test_util.h"
#include "tokenizer/precompiled_charsmap.h"
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
      {{{"normalizer", {{"type", "NFKC_CF"}}}}, "NFKC_CF"},
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

// A GGUF "t5" vocabulary as llama.cpp's convert_hf_to_gguf.py writes XLM-RoBERTa's (no
// tokenizer.hf.* keys: the pieces, their scores and types, the precompiled charsmap,
// add_space_prefix and remove_extra_whitespaces) runs llama.cpp's UGM normalisation. On texts
// where that and the tokenizer.json's (Precompiled, Replace(" {2,}"), Metaspace) agree, whose
// normalised form does not end in white space (tokenizers keeps a trailing U+2581 piece,
// llama.cpp drops it), its ids are the `tokenizers` package's (precompiled_golden.json).
TEST(UnigramGgufTest, ConvertersT5VocabularyRunsLlamaCppsUgm) {
  std::ifstream in(std::string(RADIXLM_SOURCE_DIR) + "/tests/hf/testdata/precompiled_golden.json");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json golden = nlohmann::json::parse(text.str());
  const nlohmann::json& spec = golden["tokenizer"];
  tokenizer::Vocab v;
  v.model = "t5";
  for (const nlohmann::json& p : spec["model"]["vocab"]) {
    v.tokens.push_back(p[0].get<std::string>());
    v.scores.push_back(p[1].get<float>());
    v.token_types.push_back(1);  // NORMAL
  }
  const int64_t unk = spec["model"]["unk_id"].get<int64_t>();
  v.token_types[unk] = 2;  // UNKNOWN
  for (const nlohmann::json& a : spec["added_tokens"]) {
    const int64_t id = a["id"].get<int64_t>();
    if (id != unk) v.token_types[id] = 3;  // CONTROL
  }
  const std::string base64 = spec["normalizer"]["normalizers"][0]["precompiled_charsmap"];
  ASSERT_TRUE(tokenizer::DecodeBase64(base64, &v.precompiled_charsmap));
  EXPECT_EQ(tokenizer::EncodeBase64(v.precompiled_charsmap), base64);
  v.add_space_prefix = true;
  v.remove_extra_whitespaces = true;
  v.bos_id = 1;
  v.eos_id = 2;
  v.unk_id = unk;
  v.add_bos = true;
  v.add_eos = true;
  auto tok = tokenizer::Tokenizer::FromVocab(v);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  EXPECT_STREQ((*tok)->kind_name(), "UGM");
  int checked = 0;
  for (const nlohmann::json& c : golden["cases"]) {
    const std::string normalized = c["precompiled"].get<std::string>();
    if (normalized.empty() || std::isspace(static_cast<unsigned char>(normalized.back()))) {
      continue;
    }
    const std::string t = c["text"].get<std::string>();
    EXPECT_EQ((*tok)->Encode(t, /*add_special=*/true, /*parse_special=*/true),
              c["ids_special"].get<std::vector<int32_t>>())
        << t;
    ++checked;
  }
  EXPECT_GE(checked, 60);

  // llama.cpp's UGM defaults without the metadata's ids and flags (T5's): no BOS, </s> = 1 last.
  tokenizer::Vocab bare = v;
  bare.bos_id.reset();
  bare.eos_id.reset();
  bare.add_bos.reset();
  bare.add_eos.reset();
  auto t5 = tokenizer::Tokenizer::FromVocab(bare);
  ASSERT_TRUE(t5.ok()) << t5.status().ToString();
  const std::vector<int32_t> ids = (*t5)->Encode("Hello world", true, true);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.back(), 1);
  EXPECT_EQ(std::vector<int32_t>(ids.begin(), ids.end() - 1),
            (*tok)->Encode("Hello world", false, true));

  v.precompiled_charsmap = "bad";
  auto refused = tokenizer::Tokenizer::FromVocab(v);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("precompiled_charsmap"), std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace radixlm::hf
