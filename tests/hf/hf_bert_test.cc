// Hugging Face BertModel and NomicBertModel folders (config.json, model.safetensors,
// tokenizer.json with a WordPiece model, sentence-transformers' modules.json + 1_Pooling) made
// from tests/model/testdata/tiny_bert.gguf and tiny_nomic_bert.gguf by undoing what llama.cpp's
// converter does: read back, each must be its GGUF again (every tensor's values, the tokenizer's
// ids on the golden texts, the pooling type), and the encoder must give bit-identical hidden
// states from either.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gguf/gguf_file.h"
#include "hf/hf_folder.h"
#include "hf_test_util.h"
#include "model/encoder/encoder_model.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace radixlm::hf {
namespace {

namespace fs = std::filesystem;
using testing::StEntry;

const char* const kPhantom = "\xE2\x96\x81";

// GGUF -> BertModel tensor names (the converter's map, reversed).
std::string HfName(const std::string& gguf) {
  static const std::map<std::string, std::string> kTop = {
      {"token_embd", "embeddings.word_embeddings"},
      {"position_embd", "embeddings.position_embeddings"},
      {"token_types", "embeddings.token_type_embeddings"},
      {"token_embd_norm", "embeddings.LayerNorm"}};
  static const std::map<std::string, std::string> kLayer = {
      {"attn_q", "attention.self.query"},
      {"attn_k", "attention.self.key"},
      {"attn_v", "attention.self.value"},
      {"attn_output", "attention.output.dense"},
      {"attn_output_norm", "attention.output.LayerNorm"},
      {"ffn_up", "intermediate.dense"},
      {"ffn_down", "output.dense"},
      {"layer_output_norm", "output.LayerNorm"}};
  const size_t dot = gguf.rfind('.');
  const std::string stem = gguf.substr(0, dot), kind = gguf.substr(dot);
  if (stem.starts_with("blk.")) {
    const size_t d2 = stem.find('.', 4);
    return "encoder.layer." + stem.substr(4, d2 - 4) + "." + kLayer.at(stem.substr(d2 + 1)) + kind;
  }
  return kTop.at(stem) + kind;
}

// GGUF -> NomicBertModel tensor names (gguf-py's tensor_mapping.py for nomic-bert, reversed).
std::string NomicHfName(const std::string& gguf) {
  static const std::map<std::string, std::string> kTop = {
      {"token_embd", "embeddings.word_embeddings"},
      {"token_types", "embeddings.token_type_embeddings"},
      {"token_embd_norm", "emb_ln"}};
  static const std::map<std::string, std::string> kLayer = {
      {"attn_qkv", "attn.Wqkv"},     {"attn_output", "attn.out_proj"},
      {"attn_output_norm", "norm1"}, {"ffn_up", "mlp.fc11"},
      {"ffn_gate", "mlp.fc12"},      {"ffn_down", "mlp.fc2"},
      {"layer_output_norm", "norm2"}};
  const size_t dot = gguf.rfind('.');
  const std::string stem = gguf.substr(0, dot), kind = gguf.substr(dot);
  if (stem.starts_with("blk.")) {
    const size_t d2 = stem.find('.', 4);
    return "encoder.layers." + stem.substr(4, d2 - 4) + "." + kLayer.at(stem.substr(d2 + 1)) + kind;
  }
  return kTop.at(stem) + kind;
}

// config.json of a BertModel with the tiny GGUF's shape.
nlohmann::json BertConfig(const gguf::GgufFile& g) {
  auto u = [&](const char* key) { return *g.GetInt(std::string("bert.") + key); };
  return {{"architectures", {"BertModel"}},
          {"model_type", "bert"},
          {"hidden_size", u("embedding_length")},
          {"num_hidden_layers", u("block_count")},
          {"num_attention_heads", u("attention.head_count")},
          {"intermediate_size", u("feed_forward_length")},
          {"max_position_embeddings", u("context_length")},
          {"type_vocab_size", 2},
          {"layer_norm_eps", 1e-12},
          {"hidden_act", "gelu"},
          {"position_embedding_type", "absolute"},
          {"torch_dtype", "float32"}};
}

// config.json of nomic-embed-text-v1.5 with the tiny GGUF's shape.
nlohmann::json NomicConfig(const gguf::GgufFile& g) {
  auto u = [&](const char* key) { return *g.GetInt(std::string("nomic-bert.") + key); };
  return {{"architectures", {"NomicBertModel"}},
          {"model_type", "nomic_bert"},
          {"activation_function", "swiglu"},
          {"causal", false},
          {"prenorm", false},
          {"qkv_proj_bias", false},
          {"mlp_fc1_bias", false},
          {"mlp_fc2_bias", false},
          {"rotary_emb_fraction", 1.0},
          {"rotary_emb_interleaved", false},
          {"rotary_emb_scale_base", nullptr},
          {"rotary_scaling_factor", nullptr},
          {"rotary_emb_base", *g.GetFloat("nomic-bert.rope.freq_base")},
          {"n_embd", u("embedding_length")},
          {"n_layer", u("block_count")},
          {"n_head", u("attention.head_count")},
          {"n_inner", u("feed_forward_length")},
          {"n_positions", 8192},
          {"max_trained_positions", 2048},
          {"type_vocab_size", 2},
          {"layer_norm_epsilon", 1e-12},
          {"torch_dtype", "float32"}};
}

// `g` is tiny_bert.gguf (a BertModel folder) or tiny_nomic_bert.gguf (a NomicBertModel one).
std::string WriteBertFolder(const gguf::GgufFile& g) {
  const bool nomic = *g.GetString("general.architecture") == "nomic-bert";
  const std::string dir = testing::FreshDir(nomic ? "nomic_bert" : "bert");
  nlohmann::json config = nomic ? NomicConfig(g) : BertConfig(g);
  const tokenizer::Vocab v = *tokenizer::LoadVocab(g);
  const std::vector<std::string>& tokens = v.tokens;
  const std::vector<int32_t>& types = v.token_types;
  config["vocab_size"] = tokens.size();
  testing::WriteText(dir + "/config.json", config.dump());
  testing::WriteText(
      dir + "/modules.json",
      R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                         {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])");
  fs::create_directories(dir + "/1_Pooling");
  testing::WriteText(dir + "/1_Pooling/config.json",
                     nlohmann::json{{"word_embedding_dimension", 32},
                                    {"pooling_mode_cls_token", !nomic},
                                    {"pooling_mode_mean_tokens", nomic}}
                         .dump());
  // tokenizer.json as the tokenizers package writes a BERT WordPiece one.
  nlohmann::json vocab = nlohmann::json::object(), added = nlohmann::json::array();
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string t = tokens[i];
    if (types[i] == 3) {
      added.push_back({{"id", i}, {"content", t}, {"special", true}, {"normalized", false}});
    } else {
      t = t.starts_with(kPhantom) ? t.substr(3) : "##" + t;
    }
    vocab[t] = i;
  }
  nlohmann::json tok = {{"version", "1.0"},
                        {"added_tokens", added},
                        {"normalizer",
                         {{"type", "BertNormalizer"},
                          {"clean_text", true},
                          {"handle_chinese_chars", true},
                          {"strip_accents", nullptr},
                          {"lowercase", true}}},
                        {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
                        {"model",
                         {{"type", "WordPiece"},
                          {"unk_token", "[UNK]"},
                          {"continuing_subword_prefix", "##"},
                          {"max_input_chars_per_word", 100},
                          {"vocab", vocab}}}};
  testing::WriteText(dir + "/tokenizer.json", tok.dump());
  testing::WriteText(dir + "/tokenizer_config.json",
                     R"({"unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]",
                         "sep_token": "[SEP]", "mask_token": "[MASK]", "do_lower_case": true})");
  std::vector<StEntry> entries;
  for (const gguf::TensorInfo& t : g.tensors()) {
    std::vector<int64_t> shape(t.shape.rbegin(), t.shape.rend());  // ggml order reversed
    entries.push_back({nomic ? NomicHfName(t.name) : HfName(t.name), "F32", shape,
                       std::vector<uint8_t>(t.data, t.data + t.size_bytes)});
  }
  if (!nomic) {
    entries.push_back({"pooler.dense.bias", "F32", {32}, std::vector<uint8_t>(32 * 4, 0)});
    entries.push_back({"embeddings.position_ids", "I64", {1, 64}, std::vector<uint8_t>(64 * 8, 0)});
  }
  testing::WriteFile(dir + "/model.safetensors", testing::SafetensorsBytes(entries));
  return dir;
}

// The folder written from testdata/<gguf_name> reads back as that GGUF; `pooling` is the
// pooling type its 1_Pooling/config.json gives.
void ExpectFolderReadsBackAsGguf(const std::string& gguf_name, int64_t pooling) {
  const std::string path = std::string(RADIXLM_SOURCE_DIR) + "/tests/model/testdata/" + gguf_name;
  auto g = gguf::GgufFile::Open(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const std::string arch = *(*g)->GetString("general.architecture");
  const std::string dir = WriteBertFolder(**g);
  auto folder = OpenHfFolder(dir, {});
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  const gguf::GgufFile& f = *folder->file;
  EXPECT_EQ(*f.GetString("general.architecture"), arch);
  EXPECT_EQ(*f.GetInt(arch + ".pooling_type"), pooling);  // from 1_Pooling/config.json
  for (const char* key :
       {".block_count", ".embedding_length", ".feed_forward_length", ".attention.head_count"}) {
    EXPECT_EQ(*f.GetInt(arch + key), *(*g)->GetInt(arch + key)) << key;
  }
  if (arch == "nomic-bert") {
    EXPECT_EQ(*f.GetFloat("nomic-bert.rope.freq_base"),
              *(*g)->GetFloat("nomic-bert.rope.freq_base"));
    EXPECT_EQ(*f.GetInt("nomic-bert.context_length"), 2048);  // the converter's rule for v1.5
  }
  for (const gguf::TensorInfo& t : (*g)->tensors()) {
    const gguf::TensorInfo* got = f.FindTensor(t.name);
    ASSERT_NE(got, nullptr) << t.name;
    EXPECT_EQ(got->shape, t.shape) << t.name;
    ASSERT_EQ(got->size_bytes, t.size_bytes) << t.name;
    EXPECT_EQ(std::memcmp(got->data, t.data, t.size_bytes), 0) << t.name;
  }
  EXPECT_EQ(f.tensors().size(), (*g)->tensors().size());  // the pooler and position_ids dropped

  auto tok_gguf = tokenizer::Tokenizer::FromGguf(**g);
  auto tok_hf = tokenizer::Tokenizer::FromGguf(f);
  ASSERT_TRUE(tok_gguf.ok() && tok_hf.ok()) << tok_hf.status().ToString();
  const std::vector<std::string> texts = {"Hello world", "café CAFÉ naïve résumé",
                                          "It's a dog's life; they're here.", "[MASK] 3.14159"};
  std::vector<std::vector<int32_t>> ids;
  for (const std::string& t : texts) {
    ids.push_back((*tok_hf)->Encode(t, true, true));
    EXPECT_EQ(ids.back(), (*tok_gguf)->Encode(t, true, true)) << t;
  }

  std::vector<std::span<const int32_t>> seqs(ids.begin(), ids.end());
  auto from_gguf = model::EncoderModel::FromGguf(std::move(*g), {.n_threads = 1});
  auto from_hf = model::EncoderModel::FromGguf(std::move(folder->file), {.n_threads = 1});
  ASSERT_TRUE(from_gguf.ok() && from_hf.ok()) << from_hf.status().ToString();
  std::vector<float> a, b;
  ASSERT_TRUE((*from_gguf)->Forward(seqs, &a).ok());
  ASSERT_TRUE((*from_hf)->Forward(seqs, &b).ok());
  EXPECT_EQ(a, b);
}

TEST(HfBertTest, FolderReadsBackAsTheConvertersGguf) {
  ExpectFolderReadsBackAsGguf("tiny_bert.gguf", 2);  // CLS
}

TEST(HfBertTest, NomicBertFolderReadsBackAsTheConvertersGguf) {
  ExpectFolderReadsBackAsGguf("tiny_nomic_bert.gguf", 1);  // mean
}

TEST(HfBertTest, NomicBertWithBiasesOrMoeIsRefusedByName) {
  const std::string path =
      std::string(RADIXLM_SOURCE_DIR) + "/tests/model/testdata/tiny_nomic_bert.gguf";
  auto g = gguf::GgufFile::Open(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const std::string dir = WriteBertFolder(**g);
  const nlohmann::json base = NomicConfig(**g);
  for (const auto& [key, value, named] :
       std::vector<std::tuple<std::string, nlohmann::json, std::string>>{
           {"qkv_proj_bias", true, "qkv_proj_bias"},
           {"activation_function", "gelu", "activation_function"},
           {"moe_every_n_layers", 2, "nomic-bert-moe"}}) {
    nlohmann::json config = base;
    config["vocab_size"] = 10;
    config[key] = value;
    testing::WriteText(dir + "/config.json", config.dump());
    auto folder = OpenHfFolder(dir, {});
    ASSERT_FALSE(folder.ok()) << key;
    EXPECT_NE(folder.status().message().find(named), std::string::npos)
        << folder.status().message();
  }
}

// An XLMRobertaModel folder (bge-m3, multilingual-e5) is BertModel's graph with RoBERTa's
// numbering of positions from pad_token_id + 1: the rows before are skipped as the converter
// drops them, the context shrinks by as many, a "roberta." prefix and the masked-LM head are
// dropped, and the encoder's hidden states equal the GGUF's.
TEST(HfBertTest, XlmRobertaFolderSkipsThePositionsBeforePaddingIdx) {
  const std::string path = std::string(RADIXLM_SOURCE_DIR) + "/tests/model/testdata/tiny_bert.gguf";
  auto g = gguf::GgufFile::Open(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const std::string dir = WriteBertFolder(**g);
  const int64_t context = *(*g)->GetInt("bert.context_length");
  const int64_t pad = 1;  // XLM-RoBERTa's <pad>
  nlohmann::json config = BertConfig(**g);
  config["architectures"] = {"XLMRobertaModel"};
  config["model_type"] = "xlm-roberta";
  config["pad_token_id"] = pad;
  config["max_position_embeddings"] = context + pad + 1;
  config["vocab_size"] = tokenizer::LoadVocab(**g)->tokens.size();
  testing::WriteText(dir + "/config.json", config.dump());
  std::vector<StEntry> entries;
  for (const gguf::TensorInfo& t : (*g)->tensors()) {
    std::vector<int64_t> shape(t.shape.rbegin(), t.shape.rend());
    std::vector<uint8_t> bytes(t.data, t.data + t.size_bytes);
    if (t.name == "position_embd.weight") {  // pad + 1 rows no position reads, first
      const size_t row = t.size_bytes / static_cast<size_t>(shape[0]);
      bytes.insert(bytes.begin(), static_cast<size_t>(pad + 1) * row, uint8_t{0x7f});
      shape[0] += pad + 1;
    }
    entries.push_back({"roberta." + HfName(t.name), "F32", shape, std::move(bytes)});
  }
  entries.push_back({"lm_head.bias", "F32", {4}, std::vector<uint8_t>(16, 0)});
  testing::WriteFile(dir + "/model.safetensors", testing::SafetensorsBytes(entries));

  auto folder = OpenHfFolder(dir, {});
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  const gguf::GgufFile& f = *folder->file;
  EXPECT_EQ(*f.GetString("general.architecture"), "bert");
  EXPECT_EQ(*f.GetInt("bert.context_length"), context);
  EXPECT_EQ(*f.GetInt("tokenizer.ggml.token_type_count"), 2);
  for (const gguf::TensorInfo& t : (*g)->tensors()) {
    const gguf::TensorInfo* got = f.FindTensor(t.name);
    ASSERT_NE(got, nullptr) << t.name;
    EXPECT_EQ(got->shape, t.shape) << t.name;
    ASSERT_EQ(got->size_bytes, t.size_bytes) << t.name;
    EXPECT_EQ(std::memcmp(got->data, t.data, t.size_bytes), 0) << t.name;
  }
  EXPECT_EQ(f.tensors().size(), (*g)->tensors().size());  // lm_head dropped
  const std::vector<int32_t> ids = {2, 7, 8, 9, 3};
  std::vector<std::span<const int32_t>> seqs = {ids};
  auto from_gguf = model::EncoderModel::FromGguf(std::move(*g), {.n_threads = 1});
  auto from_hf = model::EncoderModel::FromGguf(std::move(folder->file), {.n_threads = 1});
  ASSERT_TRUE(from_gguf.ok() && from_hf.ok()) << from_hf.status().ToString();
  std::vector<float> a, b;
  ASSERT_TRUE((*from_gguf)->Forward(seqs, &a).ok());
  ASSERT_TRUE((*from_hf)->Forward(seqs, &b).ok());
  EXPECT_EQ(a, b);

  config["pad_token_id"] = context + 5;  // no position left
  testing::WriteText(dir + "/config.json", config.dump());
  auto refused = OpenHfFolder(dir, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("pad_token_id"), std::string::npos)
      << refused.status().message();
}

TEST(HfBertTest, UnknownPositionEmbeddingIsRefusedByName) {
  const std::string dir = testing::FreshDir("bert_relative");
  testing::WriteText(dir + "/config.json",
                     R"({"architectures": ["BertModel"], "hidden_size": 32,
                         "num_hidden_layers": 1, "num_attention_heads": 4,
                         "intermediate_size": 64, "max_position_embeddings": 64,
                         "vocab_size": 10, "position_embedding_type": "relative_key"})");
  auto folder = OpenHfFolder(dir, {});
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.status().message().find("relative_key"), std::string::npos)
      << folder.status().message();
}

}  // namespace
}  // namespace radixlm::hf
