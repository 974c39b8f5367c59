// SentencePiece vocabularies of Hugging Face folders: the tokenizer.model protobuf reader
// (fields, defaults, every malformed input refused naming the file and the problem), the SPM
// metadata llama.cpp's converter writes from tokenizer.model (types, scores, added tokens,
// padding, add_space_prefix), and SentencePiece-style BPE tokenizer.json files (scores from
// the merges' order, <0xNN> byte tokens, how spaces are escaped; unknown shapes refused).
// Tokenization itself against the `tokenizers` package and llama.cpp: tests/e2e/
// test_hf_gemma_folder.py.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "hf/hf_tokenizer.h"
#include "hf/sentencepiece_model.h"
#include "hf_test_util.h"
#include "tokenizer/tokenizer.h"

namespace radixlm::hf {
namespace {

constexpr const char* kSp = "\xe2\x96\x81";  // U+2581

// A protobuf writer of the few wire forms a ModelProto uses.
class Proto {
 public:
  Proto& Varint(uint32_t field, uint64_t v) {
    Key(field, 0);
    Raw(v);
    return *this;
  }
  Proto& Float(uint32_t field, float f) {
    Key(field, 5);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<char>(u >> (8 * i)));
    return *this;
  }
  Proto& Bytes(uint32_t field, const std::string& s) {
    Key(field, 2);
    Raw(s.size());
    bytes_ += s;
    return *this;
  }
  Proto& Message(uint32_t field, const Proto& m) { return Bytes(field, m.bytes_); }
  const std::string& bytes() const { return bytes_; }

 private:
  void Key(uint32_t field, uint32_t wire) { Raw(uint64_t{field} << 3 | wire); }
  void Raw(uint64_t v) {
    do {
      bytes_.push_back(static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
      v >>= 7;
    } while (v != 0);
  }
  std::string bytes_;
};

Proto Piece(const std::string& text, float score, int type = 1) {
  Proto p;
  p.Bytes(1, text).Float(2, score);
  if (type != 1) p.Varint(3, type);
  return p;
}

// <unk> <s> </s>, the 256 byte pieces, then "a", "b", "ab", "\u2581a", a user-defined
// "\u2581\u2581" and an unused piece.
std::string TinyModel(int model_type = 2, bool add_dummy_prefix = false) {
  Proto m;
  m.Message(1, Piece("<unk>", 0, 2)).Message(1, Piece("<s>", 0, 3)).Message(1, Piece("</s>", 0, 3));
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    m.Message(1, Piece(name, 0, 6));
  }
  m.Message(1, Piece("a", -1)).Message(1, Piece("b", -2)).Message(1, Piece("ab", -3));
  m.Message(1, Piece(std::string(kSp) + "a", -4));
  m.Message(1, Piece(std::string(kSp) + kSp, 0, 4)).Message(1, Piece("<unused0>", 0, 5));
  Proto trainer;
  trainer.Varint(3, model_type).Varint(35, 1).Varint(40, 0).Varint(41, 1).Varint(42, 2);
  trainer.Varint(43, static_cast<uint64_t>(int64_t{-1}));  // a 10-byte varint
  m.Message(2, trainer);
  Proto normalizer;
  normalizer.Bytes(1, "identity").Varint(3, add_dummy_prefix).Varint(4, 0);
  m.Message(3, normalizer);
  m.Varint(99, 7);  // an unknown field: skipped
  return m.bytes();
}

const gguf::Value* Meta(const HfTokenizer& t, const std::string& key) {
  for (const auto& [k, v] : t.metadata) {
    if (k == key) return &v;
  }
  return nullptr;
}

TEST(SentencePieceModelTest, ReadsPiecesAndSpecs) {
  auto m = ParseSentencePieceModel(TinyModel(), "tokenizer.model");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->pieces.size(), 3u + 256 + 6);
  EXPECT_EQ(m->pieces[0].text, "<unk>");
  EXPECT_EQ(m->pieces[0].type, 2);
  EXPECT_EQ(m->pieces[3 + 0x41].text, "<0x41>");
  EXPECT_EQ(m->pieces[3 + 0x41].type, 6);
  EXPECT_EQ(m->pieces[259].text, "a");
  EXPECT_EQ(m->pieces[259].type, 1);  // absent: NORMAL
  EXPECT_FLOAT_EQ(m->pieces[261].score, -3.0f);
  EXPECT_EQ(m->model_type, 2);
  EXPECT_TRUE(m->byte_fallback);
  EXPECT_EQ(m->pad_id, -1);
  EXPECT_EQ(m->normalizer_name, "identity");
  EXPECT_FALSE(m->add_dummy_prefix);
  EXPECT_FALSE(m->remove_extra_whitespaces);
  EXPECT_TRUE(m->escape_whitespaces);  // absent: the .proto's default
}

TEST(SentencePieceModelTest, DefaultsAreTheProtosOnes) {
  Proto m;
  m.Message(1, Piece("x", 0));
  auto parsed = ParseSentencePieceModel(m.bytes(), "t.model");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->model_type, 1);  // UNIGRAM
  EXPECT_TRUE(parsed->add_dummy_prefix);
  EXPECT_TRUE(parsed->remove_extra_whitespaces);
  EXPECT_EQ(parsed->unk_id, 0);
  EXPECT_EQ(parsed->bos_id, 1);
  EXPECT_EQ(parsed->eos_id, 2);
}

TEST(SentencePieceModelTest, MalformedFilesAreRefusedNamingTheProblem) {
  const std::string good = TinyModel();
  auto error = [](const std::string& bytes) {
    auto m = ParseSentencePieceModel(bytes, "dir/tokenizer.model");
    EXPECT_FALSE(m.ok());
    const std::string msg = m.ok() ? "" : m.status().message();
    EXPECT_NE(msg.find("dir/tokenizer.model"), std::string::npos) << msg;
    return msg;
  };
  EXPECT_NE(error(good.substr(0, good.size() - 1)).find("truncated varint"), std::string::npos);
  EXPECT_NE(error(good.substr(0, 20)).find("runs past the end"), std::string::npos);
  EXPECT_NE(error(std::string("\x0b", 1)).find("wire type 3"), std::string::npos);
  EXPECT_NE(error(Proto().Message(1, Piece("x", 0, 9)).bytes()).find("type 9"), std::string::npos);
  EXPECT_NE(error(Proto().Message(1, Proto().Float(2, 1)).bytes()).find("no piece text"),
            std::string::npos);
  EXPECT_NE(error(Proto().Varint(99, 1).bytes()).find("no pieces"), std::string::npos);
  EXPECT_NE(error(Proto().Message(1, Piece("x", 0)).Message(1, Piece("x", 0)).bytes())
                .find("'x' appears twice"),
            std::string::npos);
  EXPECT_NE(error(Proto().Varint(1, 5).bytes()).find("field 1 is not a message"),
            std::string::npos);
}

class SentencePieceFolderTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshDir("spm"); }
  StatusOr<HfTokenizer> Read(const nlohmann::json& config = nlohmann::json::object()) {
    return ReadHfTokenizer(dir_, config);
  }
  std::string dir_;
};

TEST_F(SentencePieceFolderTest, TokenizerModelAloneAsTheConverterWritesIt) {
  testing::WriteText(dir_ + "/tokenizer.model", TinyModel());
  // added_tokens_decoder: <s> special, the user-defined piece not (written back with spaces),
  // a new token past the pieces.
  nlohmann::json decoder = {{"1", {{"content", "<s>"}, {"special", true}}},
                            {"263", {{"content", std::string(kSp) + kSp}, {"special", false}}},
                            {"266", {{"content", "<extra>"}, {"special", false}}}};
  testing::WriteText(dir_ + "/tokenizer_config.json",
                     nlohmann::json({{"added_tokens_decoder", decoder}}).dump());
  auto t = Read({{"vocab_size", 268}});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->source, "tokenizer.model (no tokenizer.json)");
  EXPECT_EQ(t->kind, "SentencePiece BPE (265 pieces, byte fallback, no space prefix)");
  EXPECT_EQ(Meta(*t, "tokenizer.ggml.model")->AsString(), "llama");
  EXPECT_FALSE(Meta(*t, "tokenizer.ggml.add_space_prefix")->AsBool());
  const auto& tokens = Meta(*t, "tokenizer.ggml.tokens")->AsArray().items;
  const auto& scores = Meta(*t, "tokenizer.ggml.scores")->AsArray().items;
  const auto& types = Meta(*t, "tokenizer.ggml.token_type")->AsArray().items;
  ASSERT_EQ(tokens.size(), 268u);
  EXPECT_EQ(types[0].AsInt(), 2);         // UNKNOWN
  EXPECT_EQ(types[1].AsInt(), 3);         // CONTROL
  EXPECT_EQ(types[3 + 0x41].AsInt(), 6);  // BYTE
  EXPECT_EQ(types[261].AsInt(), 1);
  EXPECT_FLOAT_EQ(scores[261].AsFloat(), -3.0f);
  EXPECT_EQ(tokens[263].AsString(), "  ");  // USER_DEFINED, its U+2581 as spaces
  EXPECT_EQ(types[263].AsInt(), 4);
  EXPECT_FLOAT_EQ(scores[263].AsFloat(), -1000.0f);
  EXPECT_EQ(types[264].AsInt(), 5);  // UNUSED
  EXPECT_EQ(tokens[266].AsString(), "<extra>");
  EXPECT_EQ(types[266].AsInt(), 4);
  EXPECT_EQ(tokens[267].AsString(), "[PAD267]");
  EXPECT_EQ(types[267].AsInt(), 5);
  EXPECT_FLOAT_EQ(scores[267].AsFloat(), -10000.0f);
  // Special ids from trainer_spec when nothing else names them; pad -1 is none.
  EXPECT_EQ(Meta(*t, "tokenizer.ggml.unknown_token_id")->AsInt(), 0);
  EXPECT_EQ(Meta(*t, "tokenizer.ggml.bos_token_id")->AsInt(), 1);
  EXPECT_EQ(Meta(*t, "tokenizer.ggml.eos_token_id")->AsInt(), 2);
  EXPECT_EQ(Meta(*t, "tokenizer.ggml.padding_token_id"), nullptr);
}

TEST_F(SentencePieceFolderTest, UserDefinedPiecesAreNormalWithoutAddedTokens) {
  testing::WriteText(dir_ + "/tokenizer.model", TinyModel(2, /*add_dummy_prefix=*/true));
  auto t = Read();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const auto& types = Meta(*t, "tokenizer.ggml.token_type")->AsArray().items;
  EXPECT_EQ(types.size(), 265u);
  EXPECT_EQ(types[263].AsInt(), 1);  // the converter's IsUnknown/IsControl/IsUnused/IsByte only
  EXPECT_TRUE(Meta(*t, "tokenizer.ggml.add_space_prefix")->AsBool());
}

TEST_F(SentencePieceFolderTest, UnigramModelIsRefused) {
  testing::WriteText(dir_ + "/tokenizer.model", TinyModel(/*model_type=*/1));
  auto t = Read();
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("Unigram SentencePiece model"), std::string::npos)
      << t.status().ToString();
  EXPECT_NE(t.status().message().find("tokenizer.model"), std::string::npos);
}

// A SentencePiece-style BPE tokenizer.json (Gemma's shape): <unk>, <0x00>..<0xFF>, a, b, ab,
// "\u2581a", "\u2581ab", merges "a b" then "\u2581 a" then "\u2581a b" (so "\u2581" too).
nlohmann::json SpmTokenizerJson() {
  nlohmann::json vocab = {{"<unk>", 0}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    vocab[name] = b + 1;
  }
  const std::string sp = kSp;
  vocab["a"] = 257;
  vocab["b"] = 258;
  vocab["ab"] = 259;
  vocab[sp] = 260;
  vocab[sp + "a"] = 261;
  vocab[sp + "ab"] = 262;
  vocab[sp + sp] = 263;
  nlohmann::json tok;
  tok["normalizer"] = {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", sp}};
  tok["pre_tokenizer"] = {{"type", "Split"},
                          {"pattern", {{"String", " "}}},
                          {"behavior", "MergedWithPrevious"},
                          {"invert", false}};
  tok["model"] = {{"type", "BPE"},
                  {"vocab", vocab},
                  {"merges", {{sp, sp}, "a b", {sp, "a"}, {sp + "a", "b"}}},
                  {"byte_fallback", true},
                  {"unk_token", "<unk>"}};
  tok["added_tokens"] = {{{"id", 0}, {"content", "<unk>"}, {"special", true}},
                         {{"id", 263}, {"content", sp + sp}, {"special", false}}};
  return tok;
}

TEST_F(SentencePieceFolderTest, TokenizerJsonScoresFollowTheMerges) {
  testing::WriteText(dir_ + "/tokenizer.json", SpmTokenizerJson().dump());
  testing::WriteText(dir_ + "/tokenizer.model", TinyModel());  // present, not used
  auto t = Read();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->source, "tokenizer.json (preferred to tokenizer.model)");
  EXPECT_EQ(t->kind,
            "SentencePiece-style BPE (byte fallback, 264 tokens, 4 merges as scores, no space "
            "prefix)");
  EXPECT_EQ(Meta(*t, "tokenizer.ggml.model")->AsString(), "llama");
  EXPECT_FALSE(Meta(*t, "tokenizer.ggml.add_space_prefix")->AsBool());
  const auto& tokens = Meta(*t, "tokenizer.ggml.tokens")->AsArray().items;
  const auto& scores = Meta(*t, "tokenizer.ggml.scores")->AsArray().items;
  const auto& types = Meta(*t, "tokenizer.ggml.token_type")->AsArray().items;
  EXPECT_EQ(types[0].AsInt(), 3);     // special added token
  EXPECT_EQ(types[0x42].AsInt(), 6);  // <0x41>
  EXPECT_EQ(types[257].AsInt(), 1);
  EXPECT_EQ(tokens[263].AsString(), std::string(kSp) + kSp);  // kept as tokenizers matches it
  EXPECT_EQ(types[263].AsInt(), 4);
  EXPECT_FLOAT_EQ(scores[263].AsFloat(), 0.0f);  // merge 0
  EXPECT_FLOAT_EQ(scores[259].AsFloat(), -1.0f);
  EXPECT_FLOAT_EQ(scores[261].AsFloat(), -2.0f);
  EXPECT_FLOAT_EQ(scores[262].AsFloat(), -3.0f);
  EXPECT_FLOAT_EQ(scores[257].AsFloat(), -1e9f);  // no merge makes "a"
}

TEST_F(SentencePieceFolderTest, SpacePrefixFromPrependOrMetaspace) {
  nlohmann::json tok = SpmTokenizerJson();
  const std::string sp = kSp;
  tok["normalizer"] = {{"type", "Sequence"},
                       {"normalizers",
                        {{{"type", "Prepend"}, {"prepend", sp}},
                         {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", sp}}}}};
  tok["pre_tokenizer"] = nullptr;
  testing::WriteText(dir_ + "/tokenizer.json", tok.dump());
  auto t = Read();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(Meta(*t, "tokenizer.ggml.add_space_prefix")->AsBool());

  tok["normalizer"] = nullptr;
  for (const char* scheme : {"first", "always", "never"}) {
    tok["pre_tokenizer"] = {
        {"type", "Metaspace"}, {"replacement", sp}, {"prepend_scheme", scheme}, {"split", false}};
    testing::WriteText(dir_ + "/tokenizer.json", tok.dump());
    t = Read();
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(Meta(*t, "tokenizer.ggml.add_space_prefix")->AsBool(), std::string(scheme) != "never")
        << scheme;
    const gguf::Value* rule = Meta(*t, "tokenizer.hf.metaspace_prepend_scheme");
    if (std::string(scheme) == "never") {
      EXPECT_EQ(rule, nullptr);
    } else {
      ASSERT_NE(rule, nullptr);
      EXPECT_EQ(rule->AsString(), scheme);
    }
  }
}

// The ids of `text` (special tokens parsed, no BOS) under the tokenizer the folder's
// tokenizer.json becomes.
std::vector<int32_t> EncodeWith(const std::string& dir, const std::string& text) {
  auto t = ReadHfTokenizer(dir, nlohmann::json::object());
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return {};
  auto file = gguf::GgufFile::FromParts(dir, t->metadata, {}, nullptr);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (!file.ok()) return {};
  auto tok = tokenizer::Tokenizer::FromGguf(**file);
  EXPECT_TRUE(tok.ok()) << tok.status().ToString();
  if (!tok.ok()) return {};
  return (*tok)->Encode(text, /*add_special=*/false, /*parse_special=*/true);
}

// A user-defined "\u2581\u2581" of a tokenizer.json (kept so for matching) decodes to spaces, as
// the tokenizers package's Replace decoder gives them.
TEST_F(SentencePieceFolderTest, UserDefinedEscapedSpacesDecodeToSpaces) {
  testing::WriteText(dir_ + "/tokenizer.json", SpmTokenizerJson().dump());
  auto t = ReadHfTokenizer(dir_, nlohmann::json::object());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto file = gguf::GgufFile::FromParts(dir_, t->metadata, {}, nullptr);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tok = tokenizer::Tokenizer::FromGguf(**file);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const std::vector<int32_t> ids = {257, 263, 258};  // a, "\u2581\u2581", b
  EXPECT_EQ((*tok)->Decode(ids), "a  b");
}

// Where the prefix space goes: Prepend (llama.cpp's rule) before every piece at the start or
// after an added token, even one that starts with a space; Metaspace (tokenizers' rule) not
// before a piece that starts with a space, and with "first" only at the start of the text.
TEST_F(SentencePieceFolderTest, PrefixSpaceRules) {
  nlohmann::json tok = SpmTokenizerJson();
  const std::string sp = kSp;
  tok["normalizer"] = {{"type", "Sequence"},
                       {"normalizers",
                        {{{"type", "Prepend"}, {"prepend", sp}},
                         {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", sp}}}}};
  tok["pre_tokenizer"] = nullptr;
  testing::WriteText(dir_ + "/tokenizer.json", tok.dump());
  EXPECT_EQ(EncodeWith(dir_, "ab"), std::vector<int32_t>({262}));  // "\u2581ab"
  EXPECT_NE(EncodeWith(dir_, " ab"), EncodeWith(dir_, "ab"));
  EXPECT_EQ(EncodeWith(dir_, "<unk>ab"), std::vector<int32_t>({0, 262}));

  tok["normalizer"] = nullptr;
  for (const char* scheme : {"always", "first"}) {
    tok["pre_tokenizer"] = {
        {"type", "Metaspace"}, {"replacement", sp}, {"prepend_scheme", scheme}, {"split", false}};
    testing::WriteText(dir_ + "/tokenizer.json", tok.dump());
    EXPECT_EQ(EncodeWith(dir_, "ab"), std::vector<int32_t>({262})) << scheme;
    EXPECT_EQ(EncodeWith(dir_, " ab"), EncodeWith(dir_, "ab")) << scheme;
    const std::vector<int32_t> after_special = std::string(scheme) == "always"
                                                   ? std::vector<int32_t>{0, 262}
                                                   : std::vector<int32_t>{0, 259};
    EXPECT_EQ(EncodeWith(dir_, "<unk>ab"), after_special) << scheme;
  }
}

TEST_F(SentencePieceFolderTest, UnknownShapesAreRefusedByName) {
  auto refused = [this](const nlohmann::json& tok) {
    testing::WriteText(dir_ + "/tokenizer.json", tok.dump());
    auto t = Read();
    EXPECT_FALSE(t.ok());
    return t.ok() ? std::string() : t.status().message();
  };
  nlohmann::json tok = SpmTokenizerJson();
  tok["normalizer"] = {{"type", "Lowercase"}};  // the Unicode normal forms are taken
  EXPECT_NE(refused(tok).find("Lowercase"), std::string::npos);
  tok = SpmTokenizerJson();
  tok["normalizer"] = nullptr;
  tok["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", kSp}, {"split", true}};
  EXPECT_NE(refused(tok).find("Metaspace"), std::string::npos);
  tok["pre_tokenizer"] = nullptr;
  EXPECT_NE(refused(tok).find("not replaced"), std::string::npos);
  tok = SpmTokenizerJson();
  tok["model"]["merges"].push_back("b b");
  EXPECT_NE(refused(tok).find("'bb', which is not in the vocabulary"), std::string::npos);
  tok = SpmTokenizerJson();
  tok["model"]["type"] = "Unigram";  // with a BPE's vocab object, not Unigram's [piece, score]s
  EXPECT_NE(refused(tok).find("Unigram model.vocab is not a non-empty list"), std::string::npos);
}

}  // namespace
}  // namespace radixlm::hf
