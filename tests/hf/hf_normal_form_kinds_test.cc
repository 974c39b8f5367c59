// tokenizer.json's Unicode normal forms (NFC, NFD, NFKC, NFKD, alone or in a Sequence) in front
// of the other model kinds than Unigram, built and trained with the `tokenizers` package by
// testdata/make_normal_form_kinds_golden.py: byte-level BPE (Qwen2's layout, NFC; NFKD in a
// Sequence), SentencePiece-style BPE (Llama 2's Sequence with NFKC in front; NFC with a
// Metaspace) and WordPiece (NFC or NFKD, then a cased BertNormalizer). radixlm's ids, with and
// without the template's special tokens, equal the package's on the corpus, composed and
// decomposed accents, compatibility characters, Hangul, emoji sequences, added tokens with
// normalized false next to decomposed text, and bytes that are not UTF-8. Without
// tokenizer.hf.normalizers (a GGUF file: llama.cpp applies no normal form) the same vocabulary
// gives the package's ids without the normal forms. Normalisers radixlm cannot place are
// refused by name.
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

namespace radixlm::hf {
namespace {

const nlohmann::json& KindsGolden() {
  static const nlohmann::json golden = testing::ReadTestdataJson("normal_form_kinds_golden.json");
  return golden;
}

// `metadata` without the key `drop` ("" keeps all) -> Tokenizer.
StatusOr<std::unique_ptr<tokenizer::Tokenizer>> TokenizerFrom(
    const std::string& dir, std::vector<std::pair<std::string, gguf::Value>> metadata,
    const std::string& drop = "") {
  std::erase_if(metadata, [&](const auto& kv) { return kv.first == drop; });
  RADIXLM_ASSIGN_OR_RETURN(auto file,
                           gguf::GgufFile::FromParts(dir, std::move(metadata), {}, nullptr));
  return tokenizer::Tokenizer::FromGguf(*file);
}

StatusOr<HfTokenizer> ReadJson(const std::string& name, const nlohmann::json& tok) {
  const std::string dir = testing::FreshDir(name);
  testing::WriteText(dir + "/tokenizer.json", tok.dump());
  return ReadHfTokenizer(dir, nlohmann::json::object());
}

class NormalFormKindsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NormalFormKindsTest, IdsEqualTheTokenizersPackage) {
  const nlohmann::json& variant = KindsGolden()["variants"][GetParam()];
  const std::string dir = testing::FreshDir("nf_kinds_" + GetParam());
  testing::WriteText(dir + "/tokenizer.json", variant["tokenizer"].dump());
  auto read = ReadHfTokenizer(dir, nlohmann::json::object());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_NE(read->kind.find("NF"), std::string::npos) << read->kind;  // the start-up log names it
  auto tok = TokenizerFrom(dir, read->metadata);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const nlohmann::json& cases = variant["cases"];
  ASSERT_GE(cases.size(), 130u);
  size_t invalid = 0, changed = 0;
  for (const nlohmann::json& c : cases) {
    const std::string input = testing::GoldenCaseInput(c);
    invalid += c.contains("bytes_hex");
    changed += c["changed"].get<bool>();
    EXPECT_EQ((*tok)->Encode(input, /*add_special=*/false, /*parse_special=*/true),
              c["ids"].get<std::vector<int32_t>>())
        << input;
    EXPECT_EQ((*tok)->Encode(input, /*add_special=*/true, /*parse_special=*/true),
              c["ids_special"].get<std::vector<int32_t>>())
        << input;
  }
  EXPECT_GE(invalid, 8u);
  EXPECT_GE(changed, 10u);  // texts whose ids the normal forms change
}

// A GGUF file of the same vocabulary (no tokenizer.hf.normalizers, as llama.cpp's converter
// writes it) is tokenized without normal forms, as llama.cpp does: the package's ids without
// them, on the texts whose ids they change.
TEST_P(NormalFormKindsTest, WithoutTheKeyNoNormalFormIsApplied) {
  const nlohmann::json& variant = KindsGolden()["variants"][GetParam()];
  const std::string dir = testing::FreshDir("nf_kinds_plain_" + GetParam());
  testing::WriteText(dir + "/tokenizer.json", variant["tokenizer"].dump());
  auto read = ReadHfTokenizer(dir, nlohmann::json::object());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  auto tok = TokenizerFrom(dir, read->metadata, "tokenizer.hf.normalizers");
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  size_t checked = 0;
  for (const nlohmann::json& c : variant["cases"]) {
    if (!c.contains("ids_plain") || c.contains("bytes_hex")) continue;
    ++checked;
    const std::string input = testing::GoldenCaseInput(c);
    EXPECT_EQ((*tok)->Encode(input, /*add_special=*/false, /*parse_special=*/true),
              c["ids_plain"].get<std::vector<int32_t>>())
        << input;
  }
  EXPECT_GE(checked, 10u);
}

INSTANTIATE_TEST_SUITE_P(Variants, NormalFormKindsTest,
                         ::testing::Values("byte_level_nfc", "byte_level_nfkd", "spm_bpe_nfkc",
                                           "spm_bpe_nfc_meta", "wordpiece_nfc", "wordpiece_nfkd"));

TEST(NormalFormKindsReadTest, StepsAreWrittenInOrderAndNamedInTheKind) {
  nlohmann::json tok = KindsGolden()["variants"]["byte_level_nfc"]["tokenizer"];
  auto read = ReadJson("nf_read_bpe", tok);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_NE(read->kind.find("byte-level BPE (pre-tokenizer qwen2, normalizer NFC, "),
            std::string::npos)
      << read->kind;
  EXPECT_TRUE(read->notes.empty());
  tok["normalizer"] = {{"type", "Sequence"},
                       {"normalizers", {{{"type", "NFKD"}}, {{"type", "NFC"}}}}};
  read = ReadJson("nf_read_bpe_seq", tok);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  bool found = false;
  for (const auto& [key, value] : read->metadata) {
    if (key != "tokenizer.hf.normalizers") continue;
    found = true;
    ASSERT_EQ(value.AsArray().items.size(), 2u);
    EXPECT_EQ(value.AsArray().items[0].AsString(), "NFKD");
    EXPECT_EQ(value.AsArray().items[1].AsString(), "NFC");
  }
  EXPECT_TRUE(found);

  read = ReadJson("nf_read_spm", KindsGolden()["variants"]["spm_bpe_nfkc"]["tokenizer"]);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_NE(read->kind.find("space prefix, NFKC)"), std::string::npos) << read->kind;
  read = ReadJson("nf_read_wp", KindsGolden()["variants"]["wordpiece_nfc"]["tokenizer"]);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->kind, "WordPiece (normalizer NFC BertNormalizer)");
}

TEST(NormalFormKindsReadTest, NormalisersRadixlmCannotPlaceAreRefusedByName) {
  nlohmann::json bpe = KindsGolden()["variants"]["byte_level_nfc"]["tokenizer"];
  bpe["normalizer"] = {{"type", "Sequence"},
                       {"normalizers", {{{"type", "NFC"}}, {{"type", "Lowercase"}}}}};
  auto read = ReadJson("nf_refuse_bpe", bpe);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(read.status().message().find("Lowercase"), std::string::npos)
      << read.status().ToString();

  // NFKC after the Replace would leave the spaces it makes (U+3000 -> " ") unescaped.
  nlohmann::json spm = KindsGolden()["variants"]["spm_bpe_nfkc"]["tokenizer"];
  auto& members = spm["normalizer"]["normalizers"];
  std::swap(members[0], members[2]);
  read = ReadJson("nf_refuse_spm", spm);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(read.status().message().find("NFKC after Replace"), std::string::npos)
      << read.status().ToString();

  // A normal form after the BertNormalizer (whose steps the WordPiece encoder runs).
  nlohmann::json wp = KindsGolden()["variants"]["wordpiece_nfc"]["tokenizer"];
  std::swap(wp["normalizer"]["normalizers"][0], wp["normalizer"]["normalizers"][1]);
  read = ReadJson("nf_refuse_wp", wp);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(read.status().message().find("\"NFC\""), std::string::npos) << read.status().ToString();
}

// tokenizer.hf.normalizers on a vocabulary other than Unigram takes only the normal forms.
TEST(NormalFormKindsReadTest, OtherStepsOnBpeMetadataAreRefused) {
  const std::string dir = testing::FreshDir("nf_refuse_meta");
  testing::WriteText(dir + "/tokenizer.json",
                     KindsGolden()["variants"]["byte_level_nfc"]["tokenizer"].dump());
  auto read = ReadHfTokenizer(dir, nlohmann::json::object());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  for (auto& [key, value] : read->metadata) {
    if (key == "tokenizer.hf.normalizers") value = gguf::Value::StrArr({"NFC", "Lowercase"});
  }
  auto tok = TokenizerFrom(dir, read->metadata);
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(tok.status().message().find("tokenizer.hf.normalizers"), std::string::npos)
      << tok.status().ToString();
}

}  // namespace
}  // namespace radixlm::hf
