// WordPiece ("bert") against llama.cpp on bge-small's real vocabulary
// (tests/data/llama-vocab/ggml-vocab-bert-bge.gguf): llama.cpp's own test vectors for that file
// (.inp / .out, add_special and parse_special off), and the ids llama-tokenize printed for the
// cases of testdata/bert_bge_tokenize_golden.json (written by testdata/make_wordpiece_golden.py,
// the command in its docstring; never edit it by hand). Then the normaliser's options on a
// hand-built vocabulary.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "golden_cases.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode_classes.h"
#include "tokenizer/vocab.h"

namespace radixlm::tokenizer {
namespace {

using WpmIds = std::vector<int32_t>;

TEST(WordPieceTest, LlamaCppTestVectorsOfBgeVocabulary) {
  auto tok = testutil::LoadTokenizerFile(testutil::VocabPath("bert-bge"));
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  EXPECT_STREQ((*tok)->kind_name(), "WPM");
  auto cases = testutil::ReadVocabCases("bert-bge");
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  ASSERT_GE(cases->size(), 40u);
  int mismatches = 0;
  std::string report;
  for (const testutil::VocabCase& c : *cases) {
    const WpmIds got = (*tok)->Encode(c.text, false, false);
    if (got != c.ids) {
      ++mismatches;
      report += "\n  text:     \"" + testutil::Escape(c.text) +
                "\"\n  expected: " + testutil::IdsToString(c.ids) +
                "\n  got:      " + testutil::IdsToString(got);
    }
  }
  EXPECT_EQ(mismatches, 0) << mismatches << " of " << cases->size() << " differ:" << report;
}

TEST(WordPieceTest, LlamaTokenizeGoldenCases) {
  auto suite = testutil::LoadGoldenSuiteFromFile(
      testutil::VocabPath("bert-bge"), "bert_bge_tokenize_golden.json",
      "tests/tokenizer/testdata/make_wordpiece_golden.py");
  ASSERT_NE(suite, nullptr);
  testutil::ExpectEncodesLikeGolden(*suite, 120);
  // [CLS] and [SEP] around the text with add_special, even for an empty text.
  const Tokenizer& tok = *suite->tokenizer;
  EXPECT_EQ(tok.Encode("", true, false), (WpmIds{101, 102}));
  EXPECT_EQ(tok.bos_id(), 101);
  EXPECT_EQ(tok.sep_id(), 102);
  EXPECT_EQ(tok.unk_id(), 100);
}

// [PAD] [UNK] [CLS] [SEP] [MASK], then phantom-space pieces.
Vocab SmallWpmVocab() {
  Vocab v;
  v.model = "bert";
  const std::string sp = "\xE2\x96\x81";
  const std::vector<std::string> control = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (const std::string& t : control) {
    v.tokens.push_back(t);
    v.token_types.push_back(static_cast<int32_t>(TokenType::kControl));
  }
  for (const std::string& t :
       std::vector<std::string>{sp + "cafe", sp + "caf", "e", sp + "Caf", "\xC3\xA9", sp + "un",
                                "aff", "able", sp + ",", sp + "\xE4\xB8\xAD", sp + "x"}) {
    v.tokens.push_back(t);
    v.token_types.push_back(static_cast<int32_t>(TokenType::kNormal));
  }
  v.unk_id = 1;
  v.bos_id = 2;
  v.sep_id = 3;
  return v;
}

int32_t WpmId(const Tokenizer& t, const std::string& text) {
  return t.FindToken(text).value_or(-1);
}

TEST(WordPieceTest, LowercasesAndStripsAccentsByDefault) {
  auto tok = Tokenizer::FromVocab(SmallWpmVocab());
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const Tokenizer& t = **tok;
  const std::string sp = "\xE2\x96\x81";
  // "CAFÉ" -> "cafe" (é: NFD's first code point, the accent dropped); "unaffable" in pieces;
  // punctuation and CJK ideographs are words of their own; a word with an unknown part is one
  // [UNK].
  EXPECT_EQ(t.Encode("CAFÉ unaffable,中 qx", true, false),
            (WpmIds{2, WpmId(t, sp + "cafe"), WpmId(t, sp + "un"), WpmId(t, "aff"),
                    WpmId(t, "able"), WpmId(t, sp + ","), WpmId(t, sp + "\xE4\xB8\xAD"), 1, 3}));
  // Control characters and U+200B (a format character) vanish; a tab separates words.
  EXPECT_EQ(t.Encode("x\x07x\xE2\x80\x8B\tx", false, false), (WpmIds{1, WpmId(t, sp + "x")}));
  // Control tokens are parsed only with parse_special.
  EXPECT_EQ(t.Encode("[MASK]", false, true), (WpmIds{4}));
}

TEST(WordPieceTest, NormaliserOptionsFromMetadata) {
  Vocab v = SmallWpmVocab();
  v.normalizer_lowercase = false;  // strip_accents follows lowercase unless it is set
  auto tok = Tokenizer::FromVocab(v);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const std::string sp = "\xE2\x96\x81";
  const Tokenizer& t = **tok;
  EXPECT_EQ(t.Encode("Café", false, false), (WpmIds{WpmId(t, sp + "Caf"), WpmId(t, "\xC3\xA9")}));
  v.normalizer_strip_accents = true;
  auto stripped = Tokenizer::FromVocab(v);
  ASSERT_TRUE(stripped.ok());
  EXPECT_EQ((*stripped)->Encode("Café", false, false),
            (WpmIds{WpmId(t, sp + "Caf"), WpmId(t, "e")}));
}

TEST(WordPieceTest, VocabularyWithoutUnknownIsRefused) {
  Vocab v = SmallWpmVocab();
  v.tokens.resize(3);  // [PAD] [UNK] [CLS]: the default [SEP] id 102 is out of range
  v.token_types.resize(3);
  v.sep_id.reset();
  auto tok = Tokenizer::FromVocab(v);
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.status().message().find("[SEP]"), std::string::npos) << tok.status().message();
}

TEST(WordPieceTest, UnicodeClassesAndMappings) {
  EXPECT_EQ(ClassOfCodePoint('a'), UnicodeClass::kOther);
  EXPECT_EQ(ClassOfCodePoint(','), UnicodeClass::kPunctuation);
  EXPECT_EQ(ClassOfCodePoint('$'), UnicodeClass::kSymbol);
  EXPECT_EQ(ClassOfCodePoint(0x0301), UnicodeClass::kMark);
  EXPECT_EQ(ClassOfCodePoint(0x200B), UnicodeClass::kControl);
  EXPECT_EQ(ClassOfCodePoint(0x0378), UnicodeClass::kOther);    // unassigned
  EXPECT_EQ(ClassOfCodePoint(0x1F6DC), UnicodeClass::kSymbol);  // Unicode 15.0
  EXPECT_EQ(SimpleLowercase('A'), uint32_t{'a'});
  EXPECT_EQ(SimpleLowercase(0x130), uint32_t{'i'});  // İ: its simple mapping
  EXPECT_EQ(SimpleLowercase(0x1E9E), uint32_t{0xDF});
  EXPECT_EQ(NfdFirstCodePoint(0xE9), uint32_t{'e'});
  EXPECT_EQ(NfdFirstCodePoint(0xAC00), uint32_t{0x1100});  // Hangul: the leading jamo
  EXPECT_EQ(NfdFirstCodePoint('e'), uint32_t{'e'});
}

}  // namespace
}  // namespace radixlm::tokenizer
