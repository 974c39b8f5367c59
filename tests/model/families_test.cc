// The model-family registry and what each family reads from its metadata and requires of its
// tensors. (Their forward passes are checked against the reference in model_forward_test.cc.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "model/families/family.h"
#include "model/model.h"
#include "model/tensor_names.h"
#include "tiny_model.h"

namespace radixlm::model {
namespace {

using testing::BuildTinyModel;
using testing::ParseTinyModel;
using testing::TinyGemma2Spec;
using testing::TinyGemma4Spec;
using testing::TinyGlm4Spec;
using testing::TinyGraniteSpec;
using testing::TinyMistral3Spec;
using testing::TinyMixtralSpec;
using testing::TinyModelSpec;
using testing::TinyOlmo2Spec;
using testing::TinyPhi3Spec;
using testing::TinyQwen3MoeSpec;
using testing::TinySmolLm3Spec;

StatusOr<ModelConfig> ConfigOf(const TinyModelSpec& spec) {
  const auto bytes = BuildTinyModel(spec);
  return ModelConfig::FromGguf(*ParseTinyModel(bytes));
}

Status LoadStatus(const TinyModelSpec& spec) {
  const auto bytes = BuildTinyModel(spec);
  return Model::FromGguf(ParseTinyModel(bytes)).status();
}

TEST(ModelFamilyRegistryTest, EveryFamilyIsFoundByItsArchitectures) {
  for (const char* arch :
       {"deepseek2", "gemma2",    "gemma3",   "gemma4",    "glm4",    "gpt-oss",    "granite",
        "llama",     "mistral3",  "olmo2",    "phi3",      "qwen2",   "qwen2vl",    "qwen3",
        "qwen35",    "qwen35moe", "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe", "smollm3"}) {
    const ModelFamily* family = FindModelFamily(arch);
    ASSERT_NE(family, nullptr) << arch;
    EXPECT_EQ(family->name, arch);
  }
  ASSERT_NE(FindModelFamily("mistral4"), nullptr);  // deepseek2's graph under another name
  EXPECT_EQ(FindModelFamily("mistral4")->name, "deepseek2");
  EXPECT_EQ(FindModelFamily("mamba"), nullptr);
  EXPECT_EQ(FindModelFamily(""), nullptr);
  EXPECT_EQ(SupportedArchitectures(),
            "deepseek2, gemma2, gemma3, gemma4, glm4, gpt-oss, granite, llama, mistral3, "
            "mistral4, olmo2, phi3, qwen2, qwen2vl, qwen3, qwen35, qwen35moe, qwen3moe, qwen3next, "
            "qwen3vl, qwen3vlmoe, smollm3");
}

TEST(ModelFamilyRegistryTest, UnknownArchitectureNamesItAndTheSupportedOnes) {
  TinyModelSpec spec;
  spec.arch = "mamba2";
  auto c = ConfigOf(spec);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(c.status().message(),
            "unsupported model architecture 'mamba2' (general.architecture); supported: "
            "deepseek2, gemma2, gemma3, gemma4, glm4, gpt-oss, granite, llama, mistral3, "
            "mistral4, olmo2, phi3, qwen2, qwen2vl, qwen3, qwen35, qwen35moe, qwen3moe, qwen3next, "
            "qwen3vl, qwen3vlmoe, smollm3");
}

TEST(ModelFamilyRegistryTest, ConfigNamesTheFamily) {
  for (const TinyModelSpec& spec :
       {TinyGemma2Spec(), TinyGemma4Spec(), TinyGlm4Spec(), TinyGraniteSpec(), TinyMistral3Spec(),
        TinyOlmo2Spec(), TinyPhi3Spec(), TinySmolLm3Spec()}) {
    auto c = ConfigOf(spec);
    ASSERT_TRUE(c.ok()) << spec.arch << ": " << c.status().ToString();
    EXPECT_EQ(c->arch, spec.arch);
    EXPECT_NE(c->DebugString().find(spec.arch + ":"), std::string::npos);
  }
}

TEST(Gemma2FamilyTest, AlternatingWindowsSoftCapsAndGemmaScaling) {
  TinyModelSpec spec = TinyGemma2Spec();
  spec.rope_linear_factor = 2.0f;
  auto c = ConfigOf(spec);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->rope_layout, RopeLayout::kNeox);
  EXPECT_FLOAT_EQ(c->attn_logit_softcap, 2.0f);
  EXPECT_FLOAT_EQ(c->final_logit_softcap, 3.0f);
  EXPECT_TRUE(c->post_norms);
  EXPECT_FALSE(c->qk_norm);
  EXPECT_TRUE(c->scale_query);
  EXPECT_FLOAT_EQ(c->embedding_scale, std::sqrt(64.0f));
  EXPECT_EQ(c->ffn_activation, FfnActivation::kGeluTanh);
  for (int64_t i = 0; i < 4; ++i) {
    const LayerAttentionConfig la = c->LayerAttention(i);
    EXPECT_EQ(la.sliding_window, i % 2 == 0 ? 4 : 0) << "layer " << i;
    // Unlike gemma3, both kinds of layers use the file's RoPE base and scaling.
    EXPECT_FLOAT_EQ(la.rope_base, 10000.0f) << "layer " << i;
    EXPECT_FLOAT_EQ(la.rope_freq_scale, 0.5f) << "layer " << i;
  }
}

TEST(Gemma2FamilyTest, SoftCapsDefaultToGemma2s) {
  TinyModelSpec spec = TinyGemma2Spec();
  spec.extra_metadata.clear();
  auto c = ConfigOf(spec);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FLOAT_EQ(c->attn_logit_softcap, 50.0f);
  EXPECT_FLOAT_EQ(c->final_logit_softcap, 30.0f);
}

TEST(Gemma4FamilyTest, LayerKindsSharedKvAndPerLayerInputs) {
  auto c = ConfigOf(TinyGemma4Spec());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->rope_layout, RopeLayout::kNeox);
  EXPECT_TRUE(c->qk_norm);
  EXPECT_TRUE(c->v_norm);
  EXPECT_TRUE(c->post_norms);
  EXPECT_FLOAT_EQ(c->attention_scale, 1.0f);
  EXPECT_FLOAT_EQ(c->embedding_scale, 8.0f);
  EXPECT_FLOAT_EQ(c->final_logit_softcap, 3.0f);
  EXPECT_EQ(c->per_layer_input_size, 8);
  EXPECT_EQ(c->n_kv_layers, 3);
  EXPECT_TRUE(c->has_rope_freq_factors);
  // Layers 0, 1, 3 slide (head 16, 2 KV heads, base 1e4); 2 and 4 are global (head 32, one KV
  // head, base 1e6, the proportional factors); 3 and 4 read 1's and 2's K/V.
  const int64_t kv_layer[] = {0, 1, 2, 1, 2};
  for (int64_t i = 0; i < 5; ++i) {
    const bool sliding = i != 2 && i != 4;
    const LayerAttentionConfig la = c->LayerAttention(i);
    EXPECT_EQ(la.sliding_window, sliding ? 4 : 0) << "layer " << i;
    EXPECT_EQ(la.head_dim, sliding ? 16 : 32) << "layer " << i;
    EXPECT_EQ(la.rope_dims, sliding ? 16 : 32) << "layer " << i;
    EXPECT_EQ(la.n_kv_heads, sliding ? 2 : 1) << "layer " << i;
    EXPECT_FLOAT_EQ(la.rope_base, sliding ? 10000.0f : 1e6f) << "layer " << i;
    EXPECT_EQ(la.use_rope_freq_factors, !sliding) << "layer " << i;
    EXPECT_EQ(la.kv_layer, kv_layer[i]) << "layer " << i;
    EXPECT_EQ(c->LayerFfnSize(i), i < 3 ? 96 : 192) << "layer " << i;
    const LayerTensorNeeds& n = c->layer_tensors[i];
    EXPECT_EQ(n[LayerTensor::kAttnK], i < 3 ? TensorNeed::kRequired : TensorNeed::kAbsent);
    EXPECT_EQ(n[LayerTensor::kPerLayerInpGate], TensorNeed::kRequired);
    EXPECT_EQ(n[LayerTensor::kLayerOutScale], TensorNeed::kOptional);
  }
  EXPECT_EQ(LayerTensorShape(*c, LayerTensor::kAttnQ, 0).dims[1], 4 * 16);
  EXPECT_EQ(LayerTensorShape(*c, LayerTensor::kAttnQ, 2).dims[1], 4 * 32);
  EXPECT_EQ(LayerTensorShape(*c, LayerTensor::kAttnK, 1).dims[1], 2 * 16);
  EXPECT_EQ(LayerTensorShape(*c, LayerTensor::kFfnDown, 4).dims[0], 192);
  EXPECT_TRUE(LoadStatus(TinyGemma4Spec()).ok());
}

TEST(Gemma4FamilyTest, KvCacheHoldsOnlyTheLayersThatWriteKv) {
  const auto bytes = BuildTinyModel(TinyGemma4Spec());
  auto model = Model::FromGguf(ParseTinyModel(bytes));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto cache = (*model)->CreateKvCache({.n_slots = 8});
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  // K and V rows of layers 0, 1 (2 heads of 16) and 2 (1 head of 32), F16.
  EXPECT_EQ((*cache)->token_bytes(), 3 * 2 * 32 * 2);
  EXPECT_FALSE((*cache)->HasOwnKv(3));
  EXPECT_EQ((*cache)->Layer(3).k, (*cache)->Layer(1).k);
  EXPECT_EQ((*cache)->Layer(4).k, (*cache)->Layer(2).k);
}

// (The mixture-of-experts model itself: gemma4_moe_test.cc.)
TEST(Gemma4FamilyTest, RefusesIncompleteExpertsAndMissingKeys) {
  TinyModelSpec spec = TinyGemma4Spec();
  spec.extra_metadata = {{"gemma4.expert_count", gguf::Value::U32(8)},
                         {"gemma4.expert_used_count", gguf::Value::U32(2)}};
  Status st = ConfigOf(spec).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("gemma4.expert_feed_forward_length"), std::string::npos)
      << st.message();
  // Expert scales of the gate and up (NVFP4 conversions) are not read: refused by name.
  spec.extra_metadata.push_back({"gemma4.expert_feed_forward_length", gguf::Value::U32(32)});
  spec.extra_vectors = {"blk.0.ffn_up_exps.scale"};
  st = ConfigOf(spec).status();
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_NE(st.message().find("blk.0.ffn_up_exps.scale"), std::string::npos) << st.message();

  spec = TinyGemma4Spec();
  spec.extra_vectors = {"blk.1.ffn_gate_inp.weight"};
  st = ConfigOf(spec).status();
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_NE(st.message().find("blk.1.ffn_gate_inp.weight"), std::string::npos) << st.message();

  spec = TinyGemma4Spec();
  spec.omit_tensors = {"blk.2.proj.weight"};
  st = LoadStatus(spec);
  EXPECT_NE(st.message().find("blk.2.proj.weight"), std::string::npos) << st.message();
}

TEST(ModelFamilyRegistryTest, AnUnreadWeightScaleIsRefusedByName) {
  TinyModelSpec spec;
  spec.extra_vectors = {"blk.1.ffn_down.scale"};
  const Status st = LoadStatus(spec);
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_NE(st.message().find("'blk.1.ffn_down.scale'"), std::string::npos) << st.message();
  EXPECT_TRUE(LoadStatus(TinyModelSpec()).ok());
}

TEST(GraniteFamilyTest, ReadsItsFourMultipliers) {
  auto c = ConfigOf(TinyGraniteSpec());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->rope_layout, RopeLayout::kNormal);
  EXPECT_TRUE(c->scale_embeddings);
  EXPECT_FLOAT_EQ(c->embedding_scale, 12.0f);
  EXPECT_FLOAT_EQ(c->residual_scale, 0.22f);
  EXPECT_FLOAT_EQ(c->attention_scale, 0.125f);
  EXPECT_FLOAT_EQ(c->output_scale, 1.0f / 8.0f);
  EXPECT_TRUE(c->LayerAttention(0).use_rope);
}

TEST(GraniteFamilyTest, LogitScaleIsRequired) {
  TinyModelSpec spec = TinyGraniteSpec();
  std::erase_if(spec.extra_metadata,
                [](const auto& kv) { return kv.first == "granite.logit_scale"; });
  auto c = ConfigOf(spec);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("'granite.logit_scale'"), std::string::npos)
      << c.status().message();
}

TEST(GraniteFamilyTest, RopeOffWhenNotFinetuned) {
  TinyModelSpec spec = TinyGraniteSpec();
  spec.extra_metadata.push_back({"granite.rope.scaling.finetuned", gguf::Value::Bool(false)});
  auto c = ConfigOf(spec);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  for (int64_t i = 0; i < c->n_layers; ++i) EXPECT_FALSE(c->LayerAttention(i).use_rope);
}

TEST(GraniteFamilyTest, BiasesTheBlocksLackAreRefusedByName) {
  TinyModelSpec spec = TinyGraniteSpec();
  spec.extra_vectors = {"blk.2.attn_output.bias"};
  auto c = ConfigOf(spec);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(c.status().message().find("'blk.2.attn_output.bias'"), std::string::npos)
      << c.status().message();
}

TEST(Olmo2FamilyTest, PostNormsOnlyAndWholeRowQkNorms) {
  auto c = ConfigOf(TinyOlmo2Spec());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->pre_norms);
  EXPECT_TRUE(c->post_norms);
  EXPECT_TRUE(c->qk_norm);
  EXPECT_FALSE(c->qk_norm_per_head);
  EXPECT_EQ(c->sliding_window, 0);
  ASSERT_EQ(c->layer_tensors.size(), 2u);
  const LayerTensorNeeds& needs = c->layer_tensors[1];
  EXPECT_EQ(needs[LayerTensor::kAttnNorm], TensorNeed::kAbsent);
  EXPECT_EQ(needs[LayerTensor::kFfnNorm], TensorNeed::kAbsent);
  EXPECT_EQ(needs[LayerTensor::kPostAttnNorm], TensorNeed::kRequired);
  EXPECT_EQ(needs[LayerTensor::kAttnQNorm], TensorNeed::kRequired);
  EXPECT_EQ(LayerTensorShape(*c, LayerTensor::kAttnQNorm).dims[0], c->q_size());
  EXPECT_EQ(LayerTensorShape(*c, LayerTensor::kAttnKNorm).dims[0], c->kv_size());
}

TEST(Olmo2FamilyTest, WindowedLayoutSlidesThreeLayersInFour) {
  TinyModelSpec spec = TinyOlmo2Spec();
  spec.n_layers = 8;
  spec.sliding_window = 16;
  spec.rope_linear_factor = 4.0f;
  auto c = ConfigOf(spec);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  for (int64_t i = 0; i < 8; ++i) {
    const bool global = i == 3 || i == 7;
    const LayerAttentionConfig la = c->LayerAttention(i);
    EXPECT_EQ(la.sliding_window, global ? 0 : 16) << "layer " << i;
    EXPECT_FLOAT_EQ(la.rope_freq_scale, global ? 0.25f : 1.0f) << "layer " << i;
  }
}

TEST(Olmo2FamilyTest, MissingNormIsNamed) {
  for (const char* missing : {"blk.1.attn_q_norm.weight", "blk.0.post_ffw_norm.weight"}) {
    TinyModelSpec spec = TinyOlmo2Spec();
    spec.omit_tensors = {missing};
    const Status st = LoadStatus(spec);
    ASSERT_FALSE(st.ok()) << missing;
    EXPECT_NE(st.message().find(std::string("'") + missing + "'"), std::string::npos)
        << st.message();
  }
}

TEST(Phi3FamilyTest, FusedProjectionsAndLongRope) {
  auto c = ConfigOf(TinyPhi3Spec());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->fused_qkv);
  EXPECT_TRUE(c->fused_gate_up);
  EXPECT_TRUE(c->scale_query);
  EXPECT_EQ(c->rope_layout, RopeLayout::kNeox);
  EXPECT_EQ(c->rope_original_context, 2048);
  EXPECT_FLOAT_EQ(c->rope_attn_factor, 1.19f);
  EXPECT_TRUE(c->LayerAttention(1).use_rope_freq_factors);
  const LayerTensorNeeds& needs = c->layer_tensors[0];
  EXPECT_EQ(needs[LayerTensor::kAttnQkv], TensorNeed::kRequired);
  EXPECT_EQ(needs[LayerTensor::kAttnQ], TensorNeed::kAbsent);
  EXPECT_EQ(needs[LayerTensor::kFfnGate], TensorNeed::kAbsent);
  EXPECT_EQ(LayerTensorShape(*c, LayerTensor::kFfnUp).dims[1], 2 * c->ffn_size);
  EXPECT_EQ(LayerTensorShape(*c, LayerTensor::kAttnQkv).dims[1], c->q_size() + 2 * c->kv_size());
}

TEST(Phi3FamilyTest, FusedMatricesAreViewsOfTheirRows) {
  const auto bytes = BuildTinyModel(TinyPhi3Spec());
  auto m = Model::FromGguf(ParseTinyModel(bytes));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const ModelConfig& c = (*m)->config();
  const LayerWeights& l = (*m)->weights().layers[1];
  EXPECT_EQ(l.wq.rows, c.q_size());
  EXPECT_EQ(l.wk.rows, c.kv_size());
  EXPECT_EQ(l.wv.rows, c.kv_size());
  EXPECT_EQ(l.gate.rows, c.ffn_size);
  EXPECT_EQ(l.up.rows, c.ffn_size);
  EXPECT_EQ(l.wqkv.data, nullptr);
  // The views tile the fused tensors in order.
  EXPECT_EQ(static_cast<const uint8_t*>(l.wk.data),
            static_cast<const uint8_t*>(l.wq.data) + c.q_size() * l.wq.row_bytes);
  EXPECT_EQ(static_cast<const uint8_t*>(l.wv.data),
            static_cast<const uint8_t*>(l.wk.data) + c.kv_size() * l.wk.row_bytes);
  EXPECT_EQ(static_cast<const uint8_t*>(l.up.data),
            static_cast<const uint8_t*>(l.gate.data) + c.ffn_size * l.gate.row_bytes);
}

TEST(Phi3FamilyTest, MissingFusedTensorIsNamed) {
  TinyModelSpec spec = TinyPhi3Spec();
  spec.omit_tensors = {"blk.1.attn_qkv.weight"};
  const Status st = LoadStatus(spec);
  ASSERT_FALSE(st.ok());
  // Without it the file has separate projections for layer 0 only: named as missing.
  EXPECT_NE(st.message().find("'blk.1.attn_qkv.weight'"), std::string::npos) << st.message();
}

TEST(ModelFamilyTest, PartialRotaryEmbeddingWithNeoxLayoutIsRefusedByName) {
  TinyModelSpec spec;
  spec.arch = "qwen3";
  spec.extra_metadata = {{"qwen3.rope.dimension_count", gguf::Value::U32(8)}};
  auto c = ConfigOf(spec);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(c.status().message().find("'qwen3.rope.dimension_count'"), std::string::npos)
      << c.status().message();
  spec.extra_metadata = {{"qwen3.rope.dimension_count", gguf::Value::U32(17)}};
  EXPECT_EQ(ConfigOf(spec).status().code(), StatusCode::kInvalidArgument);  // odd
}

TEST(ModelFamilyTest, MultiTokenPredictionLayersAreLeftOut) {
  TinyModelSpec spec;
  spec.n_layers = 3;
  spec.extra_metadata = {{"llama.nextn_predict_layers", gguf::Value::U32(1)}};
  auto c = ConfigOf(spec);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->n_layers, 2);
  EXPECT_EQ(c->layer_tensors.size(), 2u);
}

TEST(ModelFamilyTest, QkvBiasesAreReadWhereTheFileHasThem) {
  TinyModelSpec spec;  // llama: no qkv_bias flag, the biases optional
  spec.extra_vectors = {"blk.0.attn_q.bias"};
  spec.hidden = 64;
  spec.n_heads = 4;
  spec.head_dim = 16;  // q_size == hidden: the [hidden] extra vector fits attn_q.bias
  const auto bytes = BuildTinyModel(spec);
  auto m = Model::FromGguf(ParseTinyModel(bytes));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_NE((*m)->weights().layers[0].bq, nullptr);
  EXPECT_EQ((*m)->weights().layers[0].bk, nullptr);
  EXPECT_EQ((*m)->weights().layers[1].bq, nullptr);
}

TEST(Glm4FamilyTest, SandwichNormsFusedGateUpPartialRotary) {
  auto c = ConfigOf(TinyGlm4Spec());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->pre_norms);
  EXPECT_TRUE(c->post_norms);
  EXPECT_TRUE(c->fused_gate_up);
  EXPECT_FALSE(c->fused_qkv);
  EXPECT_EQ(c->rope_layout, RopeLayout::kNormal);
  EXPECT_EQ(c->rope_dims, 8);
  EXPECT_EQ(c->head_dim, 16);
  EXPECT_EQ(c->layer_tensors[2][LayerTensor::kAttnQBias], TensorNeed::kOptional);
}

TEST(Mistral3FamilyTest, YarnAndAttentionTemperature) {
  auto c = ConfigOf(TinyMistral3Spec());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->rope_yarn);
  EXPECT_FLOAT_EQ(c->rope_freq_scale, 0.25f);
  EXPECT_EQ(c->rope_yarn_original_context, 8);
  EXPECT_FLOAT_EQ(c->attn_temperature_scale, 0.5f);
  EXPECT_EQ(c->attn_temperature_floor, 8);
  const LayerAttentionConfig la = c->LayerAttention(1);
  EXPECT_FLOAT_EQ(la.rope_ext_factor, 1.0f);
  // llama.cpp's magnitude: (0.1 ln 4 + 1) / (1 + 0.1 ln 4), before ggml's rope multiplies it
  // by 1 + 0.1 ln 4 again.
  EXPECT_NEAR(la.rope_attn_factor, 1.0f, 1e-6f);
}

TEST(ModelFamilyTest, UnknownRopeScalingIsRefusedByName) {
  TinyModelSpec spec;
  spec.extra_metadata = {{"llama.rope.scaling.type", gguf::Value::Str("longrope2")},
                         {"llama.rope.scaling.factor", gguf::Value::F32(4.0f)}};
  auto c = ConfigOf(spec);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(c.status().message().find("'longrope2'"), std::string::npos) << c.status().message();
}

TEST(Glm4FamilyTest, MultimodalRopeIsRefusedByName) {
  TinyModelSpec spec = TinyGlm4Spec();
  spec.extra_metadata.push_back(
      {"glm4.rope.dimension_sections", gguf::Value::I32Arr({8, 12, 12, 0})});
  auto c = ConfigOf(spec);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("'glm4.rope.dimension_sections'"), std::string::npos)
      << c.status().message();
}

TEST(SmolLm3FamilyTest, EveryFourthLayerHasNoRope) {
  TinyModelSpec spec = TinySmolLm3Spec();
  spec.n_layers = 9;
  auto c = ConfigOf(spec);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->rope_layout, RopeLayout::kNormal);
  for (int64_t i = 0; i < 9; ++i) {
    EXPECT_EQ(c->LayerAttention(i).use_rope, i != 3 && i != 7) << "layer " << i;
  }
}

TEST(ModelFamilyTest, EachFamilyNamesAMissingRequiredTensor) {
  for (const TinyModelSpec& base :
       {TinyGemma2Spec(), TinyGraniteSpec(), TinyOlmo2Spec(), TinySmolLm3Spec()}) {
    for (const char* missing : {"blk.1.attn_k.weight", "blk.0.ffn_up.weight"}) {
      TinyModelSpec spec = base;
      spec.omit_tensors = {missing};
      const Status st = LoadStatus(spec);
      ASSERT_FALSE(st.ok()) << base.arch << " without " << missing;
      EXPECT_NE(st.message().find(std::string("'") + missing + "'"), std::string::npos)
          << st.message();
    }
  }
}

TEST(Qwen3MoeFamilyTest, QkNormsNeoxRopeAndExperts) {
  auto c = ConfigOf(TinyQwen3MoeSpec());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->arch, "qwen3moe");
  EXPECT_EQ(c->rope_layout, RopeLayout::kNeox);
  EXPECT_TRUE(c->qk_norm);
  EXPECT_EQ(c->n_experts, 8);
  EXPECT_EQ(c->n_experts_used, 3);
  EXPECT_EQ(c->expert_ffn_size, 32);  // expert_feed_forward_length, not feed_forward_length
  EXPECT_TRUE(c->expert_weights_norm);
  EXPECT_FLOAT_EQ(c->expert_weights_scale, 1.0f);
  const LayerTensorNeeds& needs = c->layer_tensors[1];
  for (LayerTensor t : {LayerTensor::kFfnGate, LayerTensor::kFfnUp, LayerTensor::kFfnDown}) {
    EXPECT_EQ(needs[t], TensorNeed::kAbsent);
  }
  for (LayerTensor t : {LayerTensor::kFfnGateInp, LayerTensor::kFfnGateExps,
                        LayerTensor::kFfnUpExps, LayerTensor::kFfnDownExps}) {
    EXPECT_EQ(needs[t], TensorNeed::kRequired);
  }
  const ExpectedShape down = LayerTensorShape(*c, LayerTensor::kFfnDownExps, 1);
  ASSERT_EQ(down.n_dims, 3);
  EXPECT_EQ(down.dims[0], 32);
  EXPECT_EQ(down.dims[1], c->hidden_size);
  EXPECT_EQ(down.dims[2], 8);
  EXPECT_NE(c->DebugString().find("experts=3/8"), std::string::npos) << c->DebugString();
  // Parameters: every expert in the total, three of eight per token in the active count.
  const int64_t expert = 3 * 32 * c->hidden_size;
  EXPECT_EQ(c->TotalParameters() - c->ActiveParameters(), c->n_layers * 5 * expert);
}

TEST(Qwen3MoeFamilyTest, ExpertCountsAreRequiredAndChecked) {
  TinyModelSpec spec = TinyQwen3MoeSpec();
  spec.n_experts = 0;  // no expert_count key
  auto c = ConfigOf(spec);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("'qwen3moe.expert_count'"), std::string::npos)
      << c.status().message();
  spec = TinyQwen3MoeSpec();
  spec.n_experts_used = 9;  // more than the 8 experts
  auto too_many = ConfigOf(spec);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("'qwen3moe.expert_used_count'"), std::string::npos)
      << too_many.status().message();
}

TEST(Qwen3MoeFamilyTest, ExpertsAreViewsOfTheStackedTensors) {
  const auto bytes = BuildTinyModel(TinyQwen3MoeSpec());
  auto m = Model::FromGguf(ParseTinyModel(bytes));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const LayerWeights& l = (*m)->weights().layers[1];
  ASSERT_EQ(l.gate_exps.size(), 8u);
  ASSERT_EQ(l.down_exps.size(), 8u);
  EXPECT_EQ(l.gate_inp.rows, 8);
  EXPECT_EQ(l.up_exps[3].rows, 32);
  EXPECT_EQ(l.down_exps[3].rows, (*m)->config().hidden_size);
  EXPECT_EQ(l.down_exps[3].cols, 32);
  for (size_t e = 1; e < 8; ++e) {
    EXPECT_EQ(static_cast<const uint8_t*>(l.up_exps[e].data),
              static_cast<const uint8_t*>(l.up_exps[e - 1].data) + 32 * l.up_exps[0].row_bytes);
  }
  EXPECT_EQ(l.gate.data, nullptr);  // no dense FFN
}

TEST(Qwen3MoeFamilyTest, MissingExpertTensorIsNamed) {
  for (const char* missing : {"blk.1.ffn_gate_inp.weight", "blk.0.ffn_down_exps.weight"}) {
    TinyModelSpec spec = TinyQwen3MoeSpec();
    spec.omit_tensors = {missing};
    const Status st = LoadStatus(spec);
    ASSERT_FALSE(st.ok()) << missing;
    EXPECT_NE(st.message().find(std::string("'") + missing + "'"), std::string::npos)
        << st.message();
  }
}

TEST(LlamaFamilyTest, ExpertCountMakesMixtralTheExpertsFfnWide) {
  auto c = ConfigOf(TinyMixtralSpec());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->arch, "llama");
  EXPECT_EQ(c->rope_layout, RopeLayout::kNormal);
  EXPECT_EQ(c->n_experts, 4);
  EXPECT_EQ(c->n_experts_used, 2);
  EXPECT_EQ(c->expert_ffn_size, c->ffn_size);
  EXPECT_EQ(c->layer_tensors[0][LayerTensor::kFfnUpExps], TensorNeed::kRequired);
  // Without llama.expert_count: the dense llama.
  auto dense = ConfigOf(TinyModelSpec());
  ASSERT_TRUE(dense.ok());
  EXPECT_EQ(dense->n_experts, 0);
  EXPECT_EQ(dense->layer_tensors[0][LayerTensor::kFfnGateInp], TensorNeed::kAbsent);
  EXPECT_EQ(dense->ActiveParameters(), dense->TotalParameters());
}

// gpt-oss is read (tests/model/gpt_oss_test.cc); a file without its keys names the first.
TEST(ModelFamilyRegistryTest, GptOssWithoutItsKeysNamesTheKey) {
  TinyModelSpec spec;
  spec.arch = "gpt-oss";
  auto c = ConfigOf(spec);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("'gpt-oss.attention.sliding_window'"), std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace radixlm::model
