// A Unigram tokenizer.json with a Precompiled normaliser (SentencePiece's nmt_nfkc charsmap,
// made by testdata/make_precompiled_golden.py: sentencepiece trains a model on the tests'
// corpus, the `tokenizers` package converts it as XLM-RoBERTa's files were converted): radixlm's
// ids, with and without the template's special tokens, its decoded text and the charsmap's
// normalisation equal the package's on every corpus text and on NFKC cases. And the grapheme
// clusters the charsmap is looked up by equal the package's on every code point
// (testdata/grapheme_probe.json).
#include <gtest/gtest.h>

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
#include "tokenizer/unicode.h"

namespace radixlm::hf {
namespace {

const nlohmann::json& PrecompiledGolden() {
  static const nlohmann::json golden = testing::ReadTestdataJson("precompiled_golden.json");
  return golden;
}

tokenizer::PrecompiledCharsmap CharsmapOf(const std::string& base64) {
  std::string blob;
  EXPECT_TRUE(tokenizer::DecodeBase64(base64, &blob));
  auto map = tokenizer::PrecompiledCharsmap::Parse(blob);
  EXPECT_TRUE(map.ok()) << map.status().ToString();
  return std::move(*map);
}

TEST(PrecompiledGoldenTest, IdsTextAndNormalisationEqualTheTokenizersPackage) {
  const nlohmann::json& spec = PrecompiledGolden()["tokenizer"];
  ASSERT_EQ(spec["normalizer"]["normalizers"][0]["type"], "Precompiled");
  const std::string dir = testing::FreshDir("precompiled");
  testing::WriteText(dir + "/tokenizer.json", spec.dump());
  auto read = ReadHfTokenizer(dir, nlohmann::json::object());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_NE(read->kind.find("2 normalizer steps"), std::string::npos) << read->kind;
  auto file = gguf::GgufFile::FromParts(dir, std::move(read->metadata), {}, nullptr);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tok = tokenizer::Tokenizer::FromGguf(**file);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const tokenizer::PrecompiledCharsmap charsmap =
      CharsmapOf(spec["normalizer"]["normalizers"][0]["precompiled_charsmap"]);

  const nlohmann::json& cases = PrecompiledGolden()["cases"];
  ASSERT_GE(cases.size(), 120u);
  for (const nlohmann::json& c : cases) {
    const std::string text = c["text"].get<std::string>();
    EXPECT_EQ(charsmap.Normalize(text), c["precompiled"].get<std::string>()) << text;
    const auto want = c["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ((*tok)->Encode(text, /*add_special=*/false, /*parse_special=*/true), want) << text;
    EXPECT_EQ((*tok)->Encode(text, /*add_special=*/true, /*parse_special=*/true),
              c["ids_special"].get<std::vector<int32_t>>())
        << text;
    EXPECT_EQ((*tok)->Decode(want, /*skip_special=*/true), c["decoded"].get<std::string>()) << text;
  }
}

// Each probe is before + c + after for every code point c but NUL, LF, CR and U+0301, under a
// charsmap that maps all others to "#": the package's output shows its cluster boundaries
// (a cluster under 6 bytes becomes one "#"; a longer one, one "#" per character).
TEST(PrecompiledGoldenTest, GraphemeClustersEqualTheTokenizersPackage) {
  const nlohmann::json probe = testing::ReadTestdataJson("grapheme_probe.json");
  const tokenizer::PrecompiledCharsmap charsmap = CharsmapOf(probe["charsmap"]);
  // Every code point the golden has, but only every 251st of planes 4 to 13 (all unassigned).
  std::vector<uint32_t> cps;
  for (uint32_t cp = 1; cp < 0x110000; ++cp) {
    if ((cp < 0xD800 || cp > 0xDFFF) && cp != 0x0A && cp != 0x0D && cp != 0x301 &&
        (cp < 0x40000 || cp >= 0xE0000 || cp % 251 == 0)) {
      cps.push_back(cp);
    }
  }
  ASSERT_GE(probe["probes"].size(), 15u);
  for (const nlohmann::json& p : probe["probes"]) {
    const std::string name = p["name"], before = p["before"], after = p["after"];
    std::string text;
    for (uint32_t cp : cps) {
      if (!text.empty()) text.push_back('\n');
      text += before;
      tokenizer::AppendUtf8(cp, &text);
      text += after;
    }
    const std::string out = charsmap.Normalize(text);
    const nlohmann::json& runs = p["runs"];
    size_t run = 0, pos = 0;
    int mismatches = 0;
    for (uint32_t cp : cps) {
      while (run + 1 < runs.size() && runs[run + 1][0].get<uint32_t>() <= cp) ++run;
      const size_t end = std::min(out.find('\n', pos), out.size());
      const std::string got = out.substr(pos, end - pos);
      pos = end + 1;
      if (got != runs[run][1].get<std::string>() && ++mismatches <= 5) {
        ADD_FAILURE() << name << ": U+" << std::hex << cp << " gives '" << got << "', not '"
                      << runs[run][1].get<std::string>() << "'";
      }
    }
    EXPECT_EQ(mismatches, 0) << name;
  }
}

}  // namespace
}  // namespace radixlm::hf
