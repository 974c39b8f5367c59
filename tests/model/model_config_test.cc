#include "model/model_config.h"

#include <gtest/gtest.h>

#include <cmath>

#include "gguf/gguf_writer.h"
#include "model/model.h"
#include "model/tensor_names.h"
#include "tiny_model.h"

namespace radixlm::model {
namespace {

using testing::BuildTinyModel;
using testing::ParseTinyModel;
using testing::TinyModelSpec;

TEST(ModelConfigTest, Gemma3SlidingPatternAndRope) {
  TinyModelSpec spec;
  spec.arch = "gemma3";
  spec.n_layers = 18;
  spec.sliding_window = 512;
  spec.rope_base = 1e6f;
  spec.n_kv_heads = 1;
  const auto bytes = BuildTinyModel(spec);
  auto file = ParseTinyModel(bytes);
  auto c = ModelConfig::FromGguf(*file);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->arch, "gemma3");
  EXPECT_EQ(c->n_layers, 18);
  EXPECT_EQ(c->rope_layout, RopeLayout::kNeox);
  EXPECT_TRUE(c->qk_norm);
  EXPECT_TRUE(c->post_norms);
  EXPECT_TRUE(c->scale_embeddings);
  EXPECT_EQ(c->ffn_activation, FfnActivation::kGeluTanh);
  EXPECT_FLOAT_EQ(c->attention_scale, 1.0f / std::sqrt(16.0f));
  for (int64_t i = 0; i < 18; ++i) {
    const bool global = i == 5 || i == 11 || i == 17;
    EXPECT_EQ(c->IsSlidingLayer(i), !global) << "layer " << i;
    const LayerAttentionConfig la = c->LayerAttention(i);
    EXPECT_EQ(la.sliding_window, global ? 0 : 512) << "layer " << i;
    EXPECT_FLOAT_EQ(la.rope_base, global ? 1e6f : 1e4f) << "layer " << i;
  }
}

TEST(ModelConfigTest, Gemma3LinearRopeScalingOnlyOnGlobalLayers) {
  TinyModelSpec spec;
  spec.arch = "gemma3";
  spec.n_layers = 6;
  spec.sliding_window = 4;
  spec.rope_linear_factor = 8.0f;
  const auto bytes = BuildTinyModel(spec);
  auto c = ModelConfig::FromGguf(*ParseTinyModel(bytes));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FLOAT_EQ(c->LayerAttention(0).rope_freq_scale, 1.0f);
  EXPECT_FLOAT_EQ(c->LayerAttention(5).rope_freq_scale, 0.125f);
}

TEST(ModelConfigTest, PerArchitectureFlags) {
  struct Expect {
    const char* arch;
    RopeLayout layout;
    bool bias, qk_norm;
  };
  for (const Expect& e : {Expect{"llama", RopeLayout::kNormal, false, false},
                          Expect{"qwen2", RopeLayout::kNeox, true, false},
                          Expect{"qwen3", RopeLayout::kNeox, false, true}}) {
    TinyModelSpec spec;
    spec.arch = e.arch;
    const auto bytes = BuildTinyModel(spec);
    auto c = ModelConfig::FromGguf(*ParseTinyModel(bytes));
    ASSERT_TRUE(c.ok()) << e.arch << ": " << c.status().ToString();
    EXPECT_EQ(c->rope_layout, e.layout) << e.arch;
    EXPECT_EQ(c->qkv_bias, e.bias) << e.arch;
    EXPECT_EQ(c->qk_norm, e.qk_norm) << e.arch;
    EXPECT_FALSE(c->post_norms) << e.arch;
    EXPECT_EQ(c->ffn_activation, FfnActivation::kSilu) << e.arch;
    EXPECT_EQ(c->sliding_window, 0) << e.arch;
    EXPECT_EQ(c->vocab_size, 100) << e.arch;
    EXPECT_EQ(c->n_kv_heads, 2) << e.arch;
    EXPECT_EQ(c->head_dim, 16) << e.arch;
  }
}

TEST(ModelConfigTest, UnknownArchitectureIsAClearError) {
  TinyModelSpec spec;
  spec.arch = "mamba";
  const auto bytes = BuildTinyModel(spec);
  auto m = Model::FromGguf(ParseTinyModel(bytes));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(m.status().message().find("'mamba'"), std::string::npos) << m.status().message();
}

TEST(ModelConfigTest, MissingArchitectureKey) {
  gguf::GgufWriter w;
  w.AddMetadata("general.name", gguf::Value::Str("nothing"));
  const auto bytes = w.Serialize();
  auto file = ParseTinyModel(bytes);
  auto c = ModelConfig::FromGguf(*file);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("general.architecture"), std::string::npos);
}

TEST(ModelConfigTest, MissingMetadataKeyIsNamed) {
  gguf::GgufWriter w;
  w.AddMetadata("general.architecture", gguf::Value::Str("llama"));
  w.AddMetadata("llama.block_count", gguf::Value::U32(2));
  const auto bytes = w.Serialize();
  auto c = ModelConfig::FromGguf(*ParseTinyModel(bytes));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("llama.embedding_length"), std::string::npos)
      << c.status().message();
}

TEST(ModelWeightsTest, MissingTensorIsNamed) {
  for (const char* arch : {"llama", "qwen2", "qwen3", "gemma3"}) {
    for (const char* missing : {"blk.1.attn_q.weight", "blk.0.ffn_down.weight",
                                "output_norm.weight", "token_embd.weight"}) {
      TinyModelSpec spec;
      spec.arch = arch;
      spec.n_layers = 2;
      spec.sliding_window = 4;
      spec.omit_tensors = {missing};
      const auto bytes = BuildTinyModel(spec);
      auto m = Model::FromGguf(ParseTinyModel(bytes));
      ASSERT_FALSE(m.ok()) << arch << " without " << missing;
      EXPECT_NE(m.status().message().find(std::string("'") + missing + "'"), std::string::npos)
          << m.status().message();
    }
  }
}

TEST(ModelWeightsTest, ArchitectureSpecificTensorsAreRequired) {
  struct Case {
    const char* arch;
    const char* tensor;
  };
  for (const Case& c :
       {Case{"qwen2", "blk.0.attn_k.bias"}, Case{"qwen3", "blk.1.attn_q_norm.weight"},
        Case{"gemma3", "blk.0.post_ffw_norm.weight"}, Case{"gemma3", "blk.1.attn_k_norm.weight"}}) {
    TinyModelSpec spec;
    spec.arch = c.arch;
    spec.sliding_window = 4;
    spec.omit_tensors = {c.tensor};
    const auto bytes = BuildTinyModel(spec);
    auto m = Model::FromGguf(ParseTinyModel(bytes));
    ASSERT_FALSE(m.ok()) << c.arch << " without " << c.tensor;
    EXPECT_NE(m.status().message().find(c.tensor), std::string::npos) << m.status().message();
  }
}

TEST(ModelWeightsTest, TiedOutputUsesTokenEmbedding) {
  TinyModelSpec spec;
  spec.tied_output = true;
  const auto bytes = BuildTinyModel(spec);
  auto m = Model::FromGguf(ParseTinyModel(bytes));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE((*m)->weights().tied_output);
  EXPECT_EQ((*m)->weights().output.data, (*m)->weights().token_embd.data);

  spec.tied_output = false;
  const auto bytes2 = BuildTinyModel(spec);
  auto m2 = Model::FromGguf(ParseTinyModel(bytes2));
  ASSERT_TRUE(m2.ok()) << m2.status().ToString();
  EXPECT_FALSE((*m2)->weights().tied_output);
  EXPECT_NE((*m2)->weights().output.data, (*m2)->weights().token_embd.data);
}

TEST(ModelWeightsTest, WrongShapeIsNamed) {
  TinyModelSpec spec;
  spec.arch = "llama";
  const auto bytes = BuildTinyModel(spec);
  auto file = ParseTinyModel(bytes);
  auto c = ModelConfig::FromGguf(*file);
  ASSERT_TRUE(c.ok());
  ModelConfig wrong = *c;
  wrong.ffn_size = 96;  // the file's FFN tensors have 128
  auto w = ModelWeights::Load(*file, wrong);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("blk.0.ffn_gate.weight"), std::string::npos)
      << w.status().message();
}

TEST(TensorNamesTest, Names) {
  EXPECT_EQ(LayerTensorName(3, LayerTensor::kAttnQ), "blk.3.attn_q.weight");
  EXPECT_EQ(LayerTensorName(0, LayerTensor::kAttnVBias), "blk.0.attn_v.bias");
  EXPECT_EQ(LayerTensorName(17, LayerTensor::kPostFfnNorm), "blk.17.post_ffw_norm.weight");
}

}  // namespace
}  // namespace radixlm::model
