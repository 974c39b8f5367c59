// Behaviour on small hand-built vocabularies: SPM merge order and byte fallback, BPE ranks,
// special-token splitting, BOS/EOS, decoding, end-of-generation tokens and load errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer/vocab.h"

namespace radixlm::tokenizer {
namespace {

using Ids = std::vector<int32_t>;

struct TokenSpec {
  std::string text;
  float score = 0.0f;
  TokenType type = TokenType::kNormal;
};

// <unk> <s> </s>, the 256 byte tokens (ids 3..258), then `extra`.
Vocab SpmVocab(const std::vector<TokenSpec>& extra) {
  Vocab v;
  v.model = "llama";
  auto add = [&](const std::string& text, float score, TokenType type) {
    v.tokens.push_back(text);
    v.scores.push_back(score);
    v.token_types.push_back(static_cast<int32_t>(type));
  };
  add("<unk>", 0, TokenType::kUnknown);
  add("<s>", 0, TokenType::kControl);
  add("</s>", 0, TokenType::kControl);
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    add(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">", 0, TokenType::kByte);
  }
  for (const TokenSpec& t : extra) add(t.text, t.score, t.type);
  return v;
}

int32_t ByteId(uint8_t b) { return 3 + b; }

std::unique_ptr<Tokenizer> Make(Vocab v) {
  auto tok = Tokenizer::FromVocab(std::move(v));
  EXPECT_TRUE(tok.ok()) << tok.status().ToString();
  return tok.ok() ? std::move(*tok) : nullptr;
}

int32_t Id(const Tokenizer& t, const std::string& text) {
  auto id = t.FindToken(text);
  EXPECT_TRUE(id.has_value()) << text;
  return id.value_or(-1);
}

const std::string kSp = "\xE2\x96\x81";  // U+2581

TEST(SpmTest, MergesHighestScoreFirst) {
  Vocab v = SpmVocab({{"a", -5}, {"b", -5}, {"c", -5}, {"ab", -1}, {"bc", -0.5f}, {"abc", -2}});
  v.add_space_prefix = false;
  auto t = Make(std::move(v));
  // "bc" outscores "ab", then "a"+"bc" forms "abc".
  EXPECT_EQ(t->Encode("abc", false, false), Ids{Id(*t, "abc")});
  // Without "abc" reachable through "ab": "ab" wins only where "bc" is absent.
  EXPECT_EQ(t->Encode("abab", false, false), (Ids{Id(*t, "ab"), Id(*t, "ab")}));
}

TEST(SpmTest, EqualScoresMergeLeftmostFirst) {
  Vocab v = SpmVocab({{"a", -5}, {"aa", -1}});
  v.add_space_prefix = false;
  auto t = Make(std::move(v));
  EXPECT_EQ(t->Encode("aaa", false, false), (Ids{Id(*t, "aa"), Id(*t, "a")}));
}

TEST(SpmTest, SpacePrefixEscapingAndDecode) {
  auto t = Make(SpmVocab({{kSp, -1}, {"a", -5}, {"b", -5}, {kSp + "a", -1}, {kSp + "b", -1}}));
  ASSERT_TRUE(t->add_space_prefix());
  const Ids ids = t->Encode("a b", false, false);
  EXPECT_EQ(ids, (Ids{Id(*t, kSp + "a"), Id(*t, kSp + "b")}));
  EXPECT_EQ(t->Decode(ids), "a b");  // the prefix space is dropped again
  EXPECT_EQ(t->Decode(t->Encode(" a", false, false)), " a");
}

TEST(SpmTest, ContinuationHasNoPrefixSpaceAndNoSpecials) {
  Vocab v = SpmVocab({{kSp, -1}, {"a", -5}, {"b", -5}, {kSp + "a", -1}, {kSp + "b", -1}});
  v.add_bos = true;
  auto t = Make(std::move(v));
  ASSERT_TRUE(t->add_space_prefix());
  // Encode gives "a" the prefix space; a continuation is exactly its text.
  EXPECT_EQ(t->Encode("a", false, false), Ids{Id(*t, kSp + "a")});
  EXPECT_EQ(t->EncodeContinuation("a b"), (Ids{Id(*t, "a"), Id(*t, kSp + "b")}));
  EXPECT_EQ(t->EncodeContinuation(" a"), Ids{Id(*t, kSp + "a")});
  EXPECT_EQ(t->Decode(t->EncodeContinuation("b a")), "b a");
  EXPECT_TRUE(t->EncodeContinuation("").empty());  // and no BOS
}

TEST(SpmTest, ByteFallbackAndStreaming) {
  Vocab v = SpmVocab({{"a", -1}});
  v.add_space_prefix = false;
  auto t = Make(std::move(v));
  const std::string emoji = "\xF0\x9F\xA6\x99";  // U+1F999
  const Ids ids = t->Encode("a" + emoji, false, false);
  EXPECT_EQ(ids, (Ids{Id(*t, "a"), ByteId(0xF0), ByteId(0x9F), ByteId(0xA6), ByteId(0x99)}));
  EXPECT_EQ(t->Decode(ids), "a" + emoji);

  StreamingDetokenizer stream(*t);
  EXPECT_EQ(stream.Feed(ids[0]), "a");
  EXPECT_EQ(stream.Feed(ids[1]), "");
  EXPECT_EQ(stream.Feed(ids[2]), "");
  EXPECT_EQ(stream.Feed(ids[3]), "");
  EXPECT_EQ(stream.Feed(ids[4]), emoji);
  EXPECT_EQ(stream.Flush(), "");

  // A truncated character comes out at Flush; a byte that can never be valid at once.
  stream.Reset();
  EXPECT_EQ(stream.Feed(ByteId(0xE2)), "");
  EXPECT_EQ(stream.Flush(), "\xE2");
  EXPECT_EQ(stream.Feed(ByteId(0xFF)), "\xFF");
  EXPECT_EQ(stream.Feed(ByteId(0xE2)), "");
  EXPECT_EQ(stream.Feed(Id(*t, "a")),
            "\xE2"
            "a");  // broken sequence: released as is
}

TEST(SpecialTokensTest, ControlOnlyWithParseSpecialUserDefinedAlways) {
  Vocab v = SpmVocab(
      {{"<ctl>", 0, TokenType::kControl}, {"<ud>", 0, TokenType::kUserDefined}, {"x", -1}});
  v.add_space_prefix = false;
  auto t = Make(std::move(v));
  const int32_t ctl = Id(*t, "<ctl>");
  const int32_t ud = Id(*t, "<ud>");
  const Ids plain = t->Encode("<ctl>x<ud>", false, false);
  EXPECT_EQ(plain.back(), ud);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), ctl), 0);
  EXPECT_EQ(t->Encode("<ctl>x<ud>", false, true), (Ids{ctl, Id(*t, "x"), ud}));
  // Decode renders control text unless skipped; user-defined text always.
  EXPECT_EQ(t->Decode(Ids{ctl, ud}), "<ctl><ud>");
  EXPECT_EQ(t->Decode(Ids{ctl, ud}, /*skip_special=*/true), "<ud>");
}

TEST(SpecialTokensTest, UserDefinedSpecialMarkersAreSkippedOtherUserTokensAreText) {
  Vocab v = SpmVocab({{"<start_of_image>", 0, TokenType::kUserDefined},
                      {"<|vision_pad|>", 0, TokenType::kUserDefined},
                      {"<table>", 0, TokenType::kUserDefined},
                      {"<think>", 0, TokenType::kUserDefined},
                      {"x", -1}});
  v.add_space_prefix = false;
  auto t = Make(std::move(v));
  const Ids ids = {Id(*t, "<start_of_image>"), Id(*t, "x"), Id(*t, "<|vision_pad|>"),
                   Id(*t, "<table>"), Id(*t, "<think>")};
  EXPECT_EQ(t->Decode(ids), "<start_of_image>x<|vision_pad|><table><think>");
  EXPECT_EQ(t->Decode(ids, /*skip_special=*/true), "x<table><think>");
  StreamingDetokenizer stream(*t, /*skip_special=*/true);
  std::string joined;
  for (int32_t id : ids) joined += stream.Feed(id);
  EXPECT_EQ(joined + stream.Flush(), "x<table><think>");
  EXPECT_TRUE(t->IsSpecial(Id(*t, "<start_of_image>")));
  EXPECT_FALSE(t->IsSpecial(Id(*t, "<table>")));
  // Encoding is unchanged: user-defined tokens are always matched in raw text.
  EXPECT_EQ(t->Encode("<start_of_image>x", false, false), (Ids{ids[0], ids[1]}));
}

TEST(SpecialTokensTest, SpecialMarkerShapes) {
  for (const char* yes : {"<start_of_image>", "<end_of_audio>", "<unused12>", "<|im_sep|>",
                          "<\xEF\xBD\x9C"
                          "end"
                          "\xE2\x96\x81"
                          "of"
                          "\xE2\x96\x81"
                          "sentence"
                          "\xEF\xBD\x9C>"}) {
    EXPECT_TRUE(LooksLikeSpecialMarker(yes)) << yes;
  }
  for (const char* no :
       {"<table>", "</td>", "<think>", "<tool_call>", "<start_of_ image>", "<||>", "<start_of_>",
        "start_of_image", "<|x", "\n\n", "[multimodal]", "<|\"|>", "<|--|>"}) {
    EXPECT_FALSE(LooksLikeSpecialMarker(no)) << no;
  }
}

TEST(SpecialTokensTest, LongerTokensTakePriorityOverEarlierOnes) {
  // As llama.cpp: longest special token first over the whole text, not leftmost-longest.
  Vocab v = SpmVocab(
      {{"xy", 0, TokenType::kUserDefined}, {"yzw", 0, TokenType::kUserDefined}, {"x", -1}});
  v.add_space_prefix = false;
  auto t = Make(std::move(v));
  EXPECT_EQ(t->Encode("xyzw", false, false), (Ids{Id(*t, "x"), Id(*t, "yzw")}));
  EXPECT_EQ(t->Encode("xyxy", false, false), (Ids{Id(*t, "xy"), Id(*t, "xy")}));
}

TEST(SpecialTokensTest, RejectedLongMatchFallsBackToShorterAtSamePosition) {
  // Equal lengths keep id order: "cde" (lower id) is placed before "abc", which then
  // overlaps it, so position 0 takes the shorter "ab".
  Vocab v = SpmVocab({{"cde", 0, TokenType::kUserDefined},
                      {"abc", 0, TokenType::kUserDefined},
                      {"ab", 0, TokenType::kUserDefined}});
  v.add_space_prefix = false;
  auto t = Make(std::move(v));
  EXPECT_EQ(t->Encode("abcde", false, false), (Ids{Id(*t, "ab"), Id(*t, "cde")}));
}

TEST(SpecialTokensTest, LongRunsOfRepeatedTokens) {
  std::vector<TokenSpec> runs;
  for (int n = 1; n <= 31; ++n) runs.push_back({std::string(n, '\n'), 0, TokenType::kUserDefined});
  Vocab v = SpmVocab(runs);
  v.add_space_prefix = false;
  auto t = Make(std::move(v));
  const std::string text(200000, '\n');
  const Ids ids = t->Encode(text, false, false);
  ASSERT_EQ(ids.size(), 200000u / 31 + 1);
  EXPECT_EQ(ids.front(), Id(*t, std::string(31, '\n')));
  EXPECT_EQ(ids.back(), Id(*t, std::string(200000 % 31, '\n')));
  EXPECT_EQ(t->Decode(ids), text);
}

TEST(SpecialTokensTest, SpacePrefixAfterSpecialToken) {
  auto t = Make(SpmVocab({{"<ctl>", 0, TokenType::kControl}, {kSp + "a", -1}, {"a", -2}}));
  const int32_t ctl = Id(*t, "<ctl>");
  // Each raw piece at the start or after a special token gets the prefix space.
  EXPECT_EQ(t->Encode("a<ctl>a", false, true), (Ids{Id(*t, kSp + "a"), ctl, Id(*t, kSp + "a")}));
}

TEST(SpecialTokensTest, BosEosAndEndOfGeneration) {
  Vocab v = SpmVocab({{"a", -1}, {"<end_of_turn>", 0, TokenType::kUserDefined}});
  v.add_space_prefix = false;
  v.add_eos = true;
  auto t = Make(std::move(v));
  EXPECT_EQ(t->bos_id(), 1);
  EXPECT_EQ(t->eos_id(), 2);
  EXPECT_EQ(t->Encode("a", true, false), (Ids{1, Id(*t, "a"), 2}));
  EXPECT_EQ(t->Encode("a", false, false), (Ids{Id(*t, "a")}));
  const int32_t eot = Id(*t, "<end_of_turn>");
  EXPECT_TRUE(t->IsEog(2));
  EXPECT_TRUE(t->IsEog(eot));
  EXPECT_TRUE(t->IsControl(eot));  // promoted from user-defined, as llama.cpp does
  EXPECT_EQ(t->eot_id(), eot);
  EXPECT_FALSE(t->IsEog(1));
  EXPECT_FALSE(t->FindToken("nope").has_value());
  EXPECT_EQ(t->TokenText(-1), "");
  EXPECT_EQ(t->Decode(Ids{-5, 1 << 30}), "");
}

// gpt-oss (o200k_harmony): the message structure tokens are always rendered and "<|end|>" ends
// a message, not the generation (llama.cpp's rules), so the harmony parsers see them in text
// decoded with skip_special_tokens; <|return|> and <|call|> end the generation.
TEST(SpecialTokensTest, HarmonyStructureTokensAreRenderedAndEndIsNotEog) {
  std::vector<TokenSpec> extra = {{"x", -1}};
  for (const char* text : {"<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>",
                           "<|return|>", "<|call|>"}) {
    extra.push_back({text, 0, TokenType::kControl});
  }
  Vocab v = SpmVocab(extra);
  v.add_space_prefix = false;
  auto t = Make(std::move(v));
  const std::vector<std::string> shown = {"<|start|>", "<|channel|>", "<|message|>",
                                          "<|constrain|>", "<|end|>"};
  Ids ids;
  for (const std::string& text : shown) ids.push_back(Id(*t, text));
  ids.push_back(Id(*t, "x"));
  ids.push_back(Id(*t, "<|call|>"));
  EXPECT_EQ(t->Decode(ids, /*skip_special=*/true),
            "<|start|><|channel|><|message|><|constrain|><|end|>x");
  for (const std::string& text : shown) {
    EXPECT_FALSE(t->IsSpecial(Id(*t, text))) << text;
    EXPECT_FALSE(t->IsEog(Id(*t, text))) << text;
  }
  EXPECT_TRUE(t->IsEog(Id(*t, "<|return|>")));
  EXPECT_TRUE(t->IsEog(Id(*t, "<|call|>")));
  EXPECT_TRUE(t->IsSpecial(Id(*t, "<|call|>")));
}

// A byte-level BPE vocabulary: the 256 byte symbols, then merged tokens, with merges.
Vocab BpeVocab() {
  Vocab v;
  v.model = "gpt2";
  v.pre = "gpt-2";
  for (int b = 0; b < 256; ++b) v.tokens.push_back(ByteToUnicode(static_cast<uint8_t>(b)));
  for (const char* t : {"he", "ll", "hell", "hello", "\xC4\xA0w", "or", "\xC4\xA0wor", "ld",
                        "\xC4\xA0world", "<|endoftext|>"}) {
    v.tokens.push_back(t);
  }
  v.token_types.assign(v.tokens.size(), static_cast<int32_t>(TokenType::kNormal));
  v.token_types.back() = static_cast<int32_t>(TokenType::kControl);
  v.merges = {"h e", "l l",          "he ll", "hell o",        "\xC4\xA0 w",
              "o r", "\xC4\xA0w or", "l d",   "\xC4\xA0wor ld"};
  v.eos_id = static_cast<int64_t>(v.tokens.size() - 1);
  v.bos_id = v.eos_id;
  return v;
}

TEST(BpeTest, MergesByRankAndDecodes) {
  auto t = Make(BpeVocab());
  EXPECT_EQ(t->pre_tokenizer(), "gpt2");
  EXPECT_FALSE(t->add_bos());
  const Ids ids = t->Encode("hello world", true, false);
  EXPECT_EQ(ids, (Ids{Id(*t, "hello"), Id(*t, "\xC4\xA0world")}));
  EXPECT_EQ(t->Decode(ids), "hello world");
  // Unmerged bytes stay byte symbols; any byte round-trips.
  const std::string odd = "h\xE2\x82\xAC\n\t\x01";
  EXPECT_EQ(t->Decode(t->Encode(odd, false, false)), odd);
  EXPECT_TRUE(t->IsEog(t->eos_id()));
}

TEST(BpeTest, InvalidUtf8BecomesReplacementCharacter) {
  auto t = Make(BpeVocab());
  EXPECT_EQ(t->Decode(t->Encode("a\xFF"
                                "b",
                                false, false)),
            "a\xEF\xBF\xBD"
            "b");
}

TEST(LoadErrorsTest, UnsupportedModelTypes) {
  for (const char* model : {"rwkv", "none", "plamo2"}) {
    Vocab v = SpmVocab({});
    v.model = model;
    auto t = Tokenizer::FromVocab(std::move(v));
    ASSERT_FALSE(t.ok()) << model;
    EXPECT_EQ(t.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(t.status().message().find(std::string("unsupported tokenizer type '") + model + "'"),
              std::string::npos)
        << t.status().message();
  }
}

TEST(LoadErrorsTest, BadVocabularies) {
  Vocab unknown_pre = BpeVocab();
  unknown_pre.pre = "no-such-pre";
  auto t = Tokenizer::FromVocab(std::move(unknown_pre));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("unknown pre-tokenizer type: 'no-such-pre'"),
            std::string::npos);

  Vocab no_merges = BpeVocab();
  no_merges.merges.clear();
  EXPECT_FALSE(Tokenizer::FromVocab(std::move(no_merges)).ok());

  Vocab duplicate = SpmVocab({{"a", -1}, {"a", -2}});
  t = Tokenizer::FromVocab(std::move(duplicate));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("duplicate token"), std::string::npos);

  Vocab bos_missing = BpeVocab();
  bos_missing.bos_id.reset();
  bos_missing.eos_id.reset();
  bos_missing.tokens.resize(11);  // default BPE bos id 11 is then out of range
  bos_missing.token_types.resize(11);
  bos_missing.merges = {"h e"};
  bos_missing.add_bos = true;
  t = Tokenizer::FromVocab(std::move(bos_missing));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("bos_token_id"), std::string::npos);

  Vocab empty;
  empty.model = "llama";
  EXPECT_FALSE(Tokenizer::FromVocab(std::move(empty)).ok());
}

// Found by fuzz/gguf_fuzzer.cc: a u32 token type of 4294901761 (the BPE seed GGUF with one
// value changed) was converted to int32_t, and an f64 score beyond float's range to float,
// both undefined behaviour. Both are now load errors naming the key.
TEST(LoadErrorsTest, OutOfRangeNumbersInGguf) {
  auto load = [](gguf::Value scores, gguf::Value token_types) {
    gguf::GgufWriter writer;
    writer.AddMetadata("tokenizer.ggml.model", gguf::Value::Str("llama"));
    writer.AddMetadata("tokenizer.ggml.tokens", gguf::Value::StrArr({"<unk>", "a"}));
    writer.AddMetadata("tokenizer.ggml.scores", std::move(scores));
    writer.AddMetadata("tokenizer.ggml.token_type", std::move(token_types));
    const std::vector<uint8_t> bytes = writer.Serialize();
    auto file = gguf::GgufFile::FromBuffer(bytes.data(), bytes.size());
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    return LoadVocab(**file).status();
  };
  const gguf::Value good_scores = gguf::Value::F32Arr({0.0f, -1.0f});
  const gguf::Value good_types = gguf::Value::I32Arr({2, 1});
  EXPECT_TRUE(load(good_scores, good_types).ok());

  Status status =
      load(good_scores, gguf::Value::Arr(gguf::ValueType::kUint32,
                                         {gguf::Value::U32(2), gguf::Value::U32(4294901761u)}));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("'tokenizer.ggml.token_type': a token type is outside the int32"),
            std::string::npos)
      << status.ToString();

  status = load(
      gguf::Value::Arr(gguf::ValueType::kFloat64, {gguf::Value::F64(0.0), gguf::Value::F64(1e300)}),
      good_types);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("'tokenizer.ggml.scores': a score is outside the float range"),
            std::string::npos)
      << status.ToString();
  // Infinite scores are representable as float and stay accepted.
  EXPECT_TRUE(load(gguf::Value::Arr(gguf::ValueType::kFloat64,
                                    {gguf::Value::F64(-INFINITY), gguf::Value::F64(0.0)}),
                   good_types)
                  .ok());
}

}  // namespace
}  // namespace radixlm::tokenizer
