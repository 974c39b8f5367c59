// tokenizer.json's Unicode normal form normalisers (NFC, NFD, NFKC, NFKD; NFKC inside a
// Sequence with Lowercase), behind a Unigram model with byte fallback (built with the
// `tokenizers` package by testdata/make_normal_form_golden.py): radixlm's ids, with and without
// the template's special tokens, and the normal form alone equal the package's on every corpus
// text, on composed / decomposed accents, compatibility characters (ligatures, full-width,
// circled and super/subscript digits), Hangul syllables and jamo, and on bytes that are not
// UTF-8 (each maximal ill-formed subsequence one U+FFFD, as the package's texts are made).
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "hf/hf_tokenizer.h"
#include "hf_test_util.h"
#include "tokenizer/normal_form.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace radixlm::hf {
namespace {

const nlohmann::json& NormalFormGolden() {
  static const nlohmann::json golden = testing::ReadTestdataJson("normal_form_golden.json");
  return golden;
}

class NormalFormGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NormalFormGoldenTest, IdsEqualTheTokenizersPackage) {
  const nlohmann::json& form = NormalFormGolden()["forms"][GetParam()];
  const std::string dir = testing::FreshDir("normal_form_" + GetParam());
  testing::WriteText(dir + "/tokenizer.json", form["tokenizer"].dump());
  auto read = ReadHfTokenizer(dir, nlohmann::json::object());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  auto file = gguf::GgufFile::FromParts(dir, std::move(read->metadata), {}, nullptr);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tok = tokenizer::Tokenizer::FromGguf(**file);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const nlohmann::json& cases = form["cases"];
  ASSERT_GE(cases.size(), 90u);
  size_t invalid = 0;
  for (const nlohmann::json& c : cases) {
    const std::string input = testing::GoldenCaseInput(c);
    invalid += c.contains("bytes_hex");
    EXPECT_EQ((*tok)->Encode(input, /*add_special=*/false, /*parse_special=*/true),
              c["ids"].get<std::vector<int32_t>>())
        << input;
    EXPECT_EQ((*tok)->Encode(input, /*add_special=*/true, /*parse_special=*/true),
              c["ids_special"].get<std::vector<int32_t>>())
        << input;
  }
  EXPECT_GE(invalid, 8u);
}

TEST_P(NormalFormGoldenTest, NormalFormEqualsTheTokenizersPackage) {
  const auto form = tokenizer::NormalFormFromName(GetParam());
  ASSERT_TRUE(form.has_value());
  EXPECT_STREQ(tokenizer::NormalFormName(*form), GetParam().c_str());
  for (const nlohmann::json& c : NormalFormGolden()["forms"][GetParam()]["cases"]) {
    std::string clean;
    tokenizer::SanitizeUtf8Lossy(testing::GoldenCaseInput(c), &clean);
    EXPECT_EQ(tokenizer::ToNormalForm(clean, *form), c["normalized"].get<std::string>()) << clean;
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, NormalFormGoldenTest,
                         ::testing::Values("NFC", "NFD", "NFKC", "NFKD"));

TEST(NormalFormTest, NamesOutsideTheFourAreNotForms) {
  EXPECT_FALSE(tokenizer::NormalFormFromName("nfc").has_value());
  EXPECT_FALSE(tokenizer::NormalFormFromName("NFKC_CF").has_value());
  EXPECT_FALSE(tokenizer::NormalFormFromName("").has_value());
}

// Unicode's maximal-subpart substitution (Rust's from_utf8_lossy, Python's errors="replace").
TEST(NormalFormTest, LossySanitisingReplacesMaximalIllFormedSubsequences) {
  const std::string fffd = "\xEF\xBF\xBD";
  std::string out;
  EXPECT_FALSE(tokenizer::SanitizeUtf8Lossy("caf\xC3\xA9", &out));
  EXPECT_EQ(out, "caf\xC3\xA9");
  EXPECT_TRUE(tokenizer::SanitizeUtf8Lossy("a\xE2\x82z", &out));  // a truncated 3-byte: one
  EXPECT_EQ(out, "a" + fffd + "z");
  EXPECT_TRUE(tokenizer::SanitizeUtf8Lossy("\xF0\x9F\x98", &out));  // a truncated 4-byte: one
  EXPECT_EQ(out, fffd);
  EXPECT_TRUE(tokenizer::SanitizeUtf8Lossy("\xED\xA0\x80", &out));  // a surrogate: three
  EXPECT_EQ(out, fffd + fffd + fffd);
  EXPECT_TRUE(tokenizer::SanitizeUtf8Lossy("\xC0\xAF\xFF", &out));  // overlong lead, stray bytes
  EXPECT_EQ(out, fffd + fffd + fffd);
}

}  // namespace
}  // namespace radixlm::hf
