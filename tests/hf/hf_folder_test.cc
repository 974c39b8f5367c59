// Hugging Face folders: a folder written from a tiny GGUF's weights (undoing the converter's
// renames, Q/K permutation and gemma's norm + 1) gives the GGUF's logits; the tokenizer,
// template and special tokens are read; quantization at load uses the converter's Q8_0; every
// missing or unknown piece is refused naming it.
#include "hf/hf_folder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "hf/hf_weights.h"
#include "hf/reference_quant.h"
#include "hf_test_util.h"
#include "kernels/fp16.h"
#include "model/model.h"
#include "tiny_model.h"
#include "tokenizer/tokenizer.h"

namespace radixlm::hf {
namespace {

using model::testing::BuildTinyModel;
using model::testing::ParseTinyModel;
using model::testing::TinyModelSpec;

// Next-token logits after each of `tokens` (one prefill, every row).
std::vector<float> AllLogits(std::unique_ptr<gguf::GgufFile> file,
                             const std::vector<int32_t>& tokens) {
  model::ModelOptions options;
  options.n_threads = 2;
  options.max_batch_tokens = 64;
  auto m = model::Model::FromGguf(std::move(file), options);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return {};
  auto cache = (*m)->CreateKvCache({.n_slots = 64, .dtype = kernels::KvDtype::kF16});
  EXPECT_TRUE(cache.ok());
  std::vector<int32_t> slots(tokens.size());
  std::iota(slots.begin(), slots.end(), 0);
  model::ForwardBatch batch;
  batch.sequences.push_back({tokens, slots, {}, model::LogitsMode::kAll});
  model::ForwardOutput out;
  const Status st = (*m)->Forward(batch, **cache, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return std::vector<float>(out.logits.begin(),
                            out.logits.begin() + out.row_count[0] * out.vocab_size);
}

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    worst = std::max(worst, std::fabs(a[i] - b[i]));
  }
  return worst;
}

const std::vector<int32_t> kTokens = {3, 17, 42, 99, 5, 64, 8, 23, 77, 1, 50, 12};

struct FolderCase {
  const char* name;
  TinyModelSpec spec;
  const char* hf_arch;
  const char* dtype;
  float tolerance;  // of the logits, absolute (they are O(1))
};

class HfFolderLogitsTest : public ::testing::TestWithParam<FolderCase> {};

TEST_P(HfFolderLogitsTest, MatchesTheGgufOfTheSameWeights) {
  const FolderCase& c = GetParam();
  const std::vector<uint8_t> bytes = BuildTinyModel(c.spec);
  std::unique_ptr<gguf::GgufFile> g = ParseTinyModel(bytes);
  const std::string dir = testing::FreshDir(c.name);
  testing::WriteFolderFromGguf(*g, c.hf_arch, dir, c.dtype);
  auto folder = OpenHfFolder(dir, {});
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  ASSERT_GE(folder->report.size(), 4u);
  EXPECT_NE(folder->report[0].find(c.hf_arch), std::string::npos) << folder->report[0];
  EXPECT_NE(folder->report[1].find(c.dtype), std::string::npos) << folder->report[1];
  // Matrices stay in the mapped file's type.
  const gguf::TensorInfo* up = folder->file->FindTensor("blk.0.ffn_up.weight");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->type,
            std::string(c.dtype) == "BF16" ? gguf::GgmlType::kBF16 : gguf::GgmlType::kF32);
  const std::vector<float> want = AllLogits(ParseTinyModel(bytes), kTokens);
  const std::vector<float> got = AllLogits(std::move(folder->file), kTokens);
  ASSERT_FALSE(want.empty());
  EXPECT_LE(MaxAbsDiff(want, got), c.tolerance);
}

TinyModelSpec WithArch(TinyModelSpec s, const char* arch) {
  s.arch = arch;
  return s;
}

TinyModelSpec Bf16Llama() {
  TinyModelSpec s;
  s.matrix_type = gguf::GgmlType::kBF16;
  s.tied_output = false;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Families, HfFolderLogitsTest,
    ::testing::Values(
        // Same floats, same math: identical logits.
        FolderCase{"llama_f32", TinyModelSpec{}, "LlamaForCausalLM", "F32", 0.0f},
        FolderCase{"mistral_bf16", Bf16Llama(), "MistralForCausalLM", "BF16", 0.0f},
        FolderCase{"qwen2_f32", WithArch({}, "qwen2"), "Qwen2ForCausalLM", "F32", 0.0f},
        FolderCase{"qwen3_f32", WithArch({}, "qwen3"), "Qwen3ForCausalLM", "F32", 0.0f},
        // Gemma's norms go through w - 1 + 1 in float: a rounding of each norm weight.
        FolderCase{"gemma3_f32", model::testing::TinyGemma3Spec(), "Gemma3ForCausalLM", "F32",
                   1e-4f}),
    [](const ::testing::TestParamInfo<FolderCase>& info) { return std::string(info.param.name); });

TEST(HfFolderTest, TokenizerTemplateAndSpecialTokensAreRead) {
  const std::vector<uint8_t> bytes = BuildTinyModel({});
  const std::string dir = testing::FreshDir("tokenizer");
  testing::WriteFolderFromGguf(*ParseTinyModel(bytes), "LlamaForCausalLM", dir);
  auto folder = OpenHfFolder(dir, {});
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  const gguf::GgufFile& f = *folder->file;
  EXPECT_EQ(*f.GetString("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(*f.GetString("tokenizer.ggml.pre"), "gpt-2");
  EXPECT_EQ(*f.GetInt("tokenizer.ggml.eos_token_id"), 99);
  EXPECT_FALSE(*f.GetBool("tokenizer.ggml.add_bos_token"));
  EXPECT_NE(f.GetString("tokenizer.chat_template")->find("add_generation_prompt"),
            std::string::npos);
  EXPECT_EQ(folder->report[3], "chat template: tokenizer_config.json");
  auto tok = tokenizer::Tokenizer::FromGguf(f);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  // "ab" and "cd" are merges; the rest single characters.
  EXPECT_EQ((*tok)->Encode("abcdz!", /*add_special=*/true, /*parse_special=*/false),
            (std::vector<int32_t>{94, 95, 'z' - 33, 0}));
}

TEST(HfFolderTest, ConverterQ8_0RoundsHalfAwayFromZero) {
  // amax 127 -> d = 1, id = 1: 2.5 -> 3 and -0.5 -> -1 (ggml's roundf), where round-half-even
  // would give 2 and 0.
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;
  x[1] = 2.5f;
  x[2] = -0.5f;
  x[3] = 1.49f;
  uint8_t block[34];
  QuantizeRowQ8_0Reference(x.data(), block, 32);
  uint16_t d;
  std::memcpy(&d, block, 2);
  EXPECT_EQ(kernels::F16ToF32(d), 1.0f);
  EXPECT_EQ(static_cast<int8_t>(block[2]), 127);
  EXPECT_EQ(static_cast<int8_t>(block[3]), 3);
  EXPECT_EQ(static_cast<int8_t>(block[4]), -1);
  EXPECT_EQ(static_cast<int8_t>(block[5]), 1);
  EXPECT_EQ(static_cast<int8_t>(block[6]), 0);
}

TEST(HfFolderTest, QuantizationAtLoad) {
  const std::vector<uint8_t> bytes = BuildTinyModel({});
  const std::string dir = testing::FreshDir("quantized");
  testing::WriteFolderFromGguf(*ParseTinyModel(bytes), "LlamaForCausalLM", dir);
  const std::vector<float> f32 = AllLogits(ParseTinyModel(bytes), kTokens);
  for (const char* q : {"q8_0", "q6_k"}) {
    auto folder = OpenHfFolder(dir, {.quantization = q});
    ASSERT_TRUE(folder.ok()) << folder.status().ToString();
    const gguf::TensorInfo* wq = folder->file->FindTensor("blk.1.attn_q.weight");
    ASSERT_NE(wq, nullptr);
    // Rows of 64 do not fill a 256-wide K-quant block: Q8_0, as the converter falls back.
    EXPECT_EQ(wq->type, gguf::GgmlType::kQ8_0) << q;
    EXPECT_EQ(folder->file->FindTensor("blk.1.attn_norm.weight")->type, gguf::GgmlType::kF32);
    EXPECT_NE(folder->report[1].find(std::string("quantized to ") + q), std::string::npos);
    const std::vector<float> got = AllLogits(std::move(folder->file), kTokens);
    float scale = 0;
    for (float v : f32) scale = std::max(scale, std::fabs(v));
    // 8-bit weights move logits by a few tenths of a percent of their range; a wrong layout
    // (a row or block out of place) by tens of percent.
    EXPECT_LT(MaxAbsDiff(f32, got), 0.02f * scale) << q << " (largest logit " << scale << ")";
  }
  auto bad = OpenHfFolder(dir, {.quantization = "q3_k"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--quantization"), std::string::npos);
}

TEST(HfFolderTest, Llama3RopeScalingBecomesFrequencyFactors) {
  const std::vector<uint8_t> bytes = BuildTinyModel({});
  const std::string dir = testing::FreshDir("llama3_rope");
  testing::WriteFolderFromGguf(*ParseTinyModel(bytes), "LlamaForCausalLM", dir);
  std::ifstream in(dir + "/config.json");
  nlohmann::json config = nlohmann::json::parse(in);
  config["rope_scaling"] = {{"rope_type", "llama3"},
                            {"factor", 8.0},
                            {"low_freq_factor", 1.0},
                            {"high_freq_factor", 4.0},
                            {"original_max_position_embeddings", 8192}};
  testing::WriteText(dir + "/config.json", config.dump());
  auto folder = OpenHfFolder(dir, {});
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  const gguf::TensorInfo* f = folder->file->FindTensor("rope_freqs.weight");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->shape, (std::vector<int64_t>{8}));  // head_dim 16 / 2
  const auto* v = reinterpret_cast<const float*>(f->data);
  // Wavelength 2 pi (< 8192 / 4) keeps its frequency; 2 pi 10000^(14/16) (> 8192) is / 8.
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[7], 8.0f);
  for (int i = 1; i < 8; ++i) EXPECT_GE(v[i], v[i - 1]);
  auto m = model::Model::FromGguf(std::move(folder->file), {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
}

class HfFolderErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = BuildTinyModel({});
    dir_ = testing::FreshDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    testing::WriteFolderFromGguf(*ParseTinyModel(bytes_), "LlamaForCausalLM", dir_);
  }
  std::string Error() {
    auto folder = OpenHfFolder(dir_, {});
    if (!folder.ok()) return folder.status().message();
    auto m = model::Model::FromGguf(std::move(folder->file), {});
    return m.ok() ? "" : m.status().message();
  }
  nlohmann::json Config() {
    std::ifstream in(dir_ + "/config.json");
    return nlohmann::json::parse(in);
  }
  std::vector<uint8_t> bytes_;
  std::string dir_;
};

TEST_F(HfFolderErrorTest, MissingConfig) {
  std::filesystem::remove(dir_ + "/config.json");
  const std::string m = Error();
  EXPECT_NE(m.find("config.json"), std::string::npos) << m;
}

TEST_F(HfFolderErrorTest, UnknownArchitecture) {
  nlohmann::json c = Config();
  c["architectures"] = {"FalconForCausalLM"};
  testing::WriteText(dir_ + "/config.json", c.dump());
  const std::string m = Error();
  EXPECT_NE(m.find("FalconForCausalLM"), std::string::npos) << m;
  EXPECT_NE(m.find("LlamaForCausalLM"), std::string::npos) << m;  // the supported ones
}

TEST_F(HfFolderErrorTest, MissingConfigField) {
  nlohmann::json c = Config();
  c.erase("hidden_size");
  testing::WriteText(dir_ + "/config.json", c.dump());
  const std::string m = Error();
  EXPECT_NE(m.find("\"hidden_size\""), std::string::npos) << m;
}

TEST_F(HfFolderErrorTest, MissingTensor) {
  // Rewrite the weights without one layer's up projection.
  auto ckpt = Checkpoint::Open(dir_);
  ASSERT_TRUE(ckpt.ok());
  std::vector<testing::StEntry> entries;
  for (const StTensor* t : (*ckpt)->tensors()) {
    if (t->name == "model.layers.1.mlp.up_proj.weight") continue;
    entries.push_back(
        {t->name, "F32", t->shape, std::vector<uint8_t>(t->data, t->data + t->size_bytes)});
  }
  ckpt->reset();
  testing::WriteFile(dir_ + "/model.safetensors", testing::SafetensorsBytes(entries));
  const std::string m = Error();
  EXPECT_NE(m.find("blk.1.ffn_up.weight"), std::string::npos) << m;
}

TEST_F(HfFolderErrorTest, UnmappedTensor) {
  testing::WriteFile(
      dir_ + "/model.safetensors",
      testing::SafetensorsBytes({{"model.vision_tower.w", "F32", {1}, {0, 0, 0, 0}}}));
  const std::string m = Error();
  EXPECT_NE(m.find("model.vision_tower.w"), std::string::npos) << m;
}

TEST_F(HfFolderErrorTest, BadSafetensorsHeader) {
  std::vector<uint8_t> st =
      testing::SafetensorsBytes({{"model.norm.weight", "F32", {64}, std::vector<uint8_t>(256)}});
  st.resize(st.size() - 8);  // the data now ends before the tensor does
  testing::WriteFile(dir_ + "/model.safetensors", st);
  const std::string m = Error();
  EXPECT_NE(m.find("model.safetensors"), std::string::npos) << m;
  EXPECT_NE(m.find("model.norm.weight"), std::string::npos) << m;
}

TEST_F(HfFolderErrorTest, MissingOrUnknownTokenizer) {
  std::filesystem::remove(dir_ + "/tokenizer.json");
  std::string m = Error();
  EXPECT_NE(m.find("tokenizer.json"), std::string::npos) << m;
  nlohmann::json tok = testing::TinyTokenizerJson(100);
  tok["model"]["type"] = "WordLevel";
  testing::WriteText(dir_ + "/tokenizer.json", tok.dump());
  m = Error();
  EXPECT_NE(m.find("WordLevel"), std::string::npos) << m;
  tok = testing::TinyTokenizerJson(100);
  tok["pre_tokenizer"] = {{"type", "Whitespace"}};
  testing::WriteText(dir_ + "/tokenizer.json", tok.dump());
  m = Error();
  EXPECT_NE(m.find("pre_tokenizer"), std::string::npos) << m;
}

}  // namespace
}  // namespace radixlm::hf
