// Hybrid models (qwen35: gated DeltaNet layers and gated full attention; qwen35moe and
// qwen3next: the same with experts and a gated shared expert, qwen3next with its fused ssm_ba
// and grouped value heads) against the plain float reference (hybrid_reference.h), and the
// properties of their per-sequence state: a prompt prefilled at once, in chunks or token by
// token gives the same logits; sequences batched together each get what they get alone; a
// batch that misuses state slots is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "hybrid_reference.h"
#include "model/model.h"
#include "tiny_model.h"

namespace radixlm::model {
namespace {

using testing::BuildTinyModel;
using testing::ParseTinyModel;
using testing::TinyQwen35MoeSpec;
using testing::TinyQwen35Spec;
using testing::TinyQwen3NextSpec;

testing::TinyModelSpec HybridSpec(const std::string& arch) {
  if (arch == "qwen35moe") return TinyQwen35MoeSpec();
  if (arch == "qwen3next") return TinyQwen3NextSpec();
  return TinyQwen35Spec();
}

class HybridForwardTest : public ::testing::TestWithParam<const char*> {
 protected:
  static constexpr int64_t kSlots = 512;
  static constexpr int64_t kStates = 8;

  void SetUp() override {
    bytes_ = BuildTinyModel(HybridSpec(GetParam()));
    auto model = Model::FromGguf(ParseTinyModel(bytes_), {.n_threads = 2, .max_batch_tokens = 96});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
  }

  std::unique_ptr<KvCache> NewCache() {
    auto cache = model_->CreateKvCache({.n_slots = kSlots, .n_state_slots = kStates});
    EXPECT_TRUE(cache.ok()) << cache.status().ToString();
    return std::move(cache).value();
  }

  std::vector<int32_t> RandomTokens(size_t n) {
    std::uniform_int_distribution<int32_t> dist(0, static_cast<int32_t>(TinyQwen35Spec().vocab - 1));
    std::vector<int32_t> t(n);
    for (int32_t& x : t) x = dist(rng_);
    return t;
  }

  static std::vector<int32_t> Range(int32_t first, size_t n) {
    std::vector<int32_t> out(n);
    std::iota(out.begin(), out.end(), first);
    return out;
  }

  // Runs tokens [begin, end) of a sequence whose KV slots are slots[0..] and whose state is
  // `state`, asking for every row's logits.
  std::vector<std::vector<float>> Step(KvCache& cache, const std::vector<int32_t>& tokens,
                                       const std::vector<int32_t>& slots, size_t begin, size_t end,
                                       int32_t state) {
    ForwardBatch batch;
    SequenceInput seq;
    seq.tokens = std::span<const int32_t>(tokens).subspan(begin, end - begin);
    seq.new_slots = std::span<const int32_t>(slots).subspan(begin, end - begin);
    seq.prefix_slots = std::span<const int32_t>(slots).first(begin);
    seq.logits = LogitsMode::kAll;
    seq.state_slot = state;
    batch.sequences.push_back(seq);
    return Rows(batch, cache)[0];
  }

  // Each sequence's logits rows.
  std::vector<std::vector<std::vector<float>>> Rows(const ForwardBatch& batch, KvCache& cache) {
    ForwardOutput out;
    const Status st = model_->Forward(batch, cache, &out);
    EXPECT_TRUE(st.ok()) << st.ToString();
    std::vector<std::vector<std::vector<float>>> rows(batch.sequences.size());
    if (!st.ok()) return rows;
    for (size_t s = 0; s < batch.sequences.size(); ++s) {
      for (int64_t r = 0; r < out.row_count[s]; ++r) {
        const float* p = out.Row(s, r);
        rows[s].emplace_back(p, p + out.vocab_size);
      }
    }
    return rows;
  }

  std::vector<uint8_t> bytes_;
  std::unique_ptr<Model> model_;
  std::mt19937 rng_{7};
};

TEST_P(HybridForwardTest, ConfigHasLinearAndFullLayers) {
  const ModelConfig& c = model_->config();
  EXPECT_EQ(c.arch, GetParam());
  ASSERT_EQ(c.linear_layers.size(), 5u);
  EXPECT_EQ(c.linear_layers, (std::vector<uint8_t>{1, 1, 1, 0, 1}));
  EXPECT_EQ(c.LayerKvSize(0), 0);  // linear layers keep no K/V
  EXPECT_EQ(c.LayerKvSize(3), 2 * 16);
  EXPECT_EQ(c.LinearConvChannels(), 2 * 2 * 16 + 4 * 16);
  EXPECT_EQ(c.rope_dims, 8);
  auto cache = NewCache();
  ASSERT_NE(cache->recurrent(), nullptr);
  EXPECT_EQ(cache->recurrent()->n_slots(), kStates);
  // Only the full-attention layer stores K/V: 2 (K, V) * 32 values * 2 bytes per token.
  EXPECT_EQ(cache->token_bytes(), 2 * 32 * 2);
}

TEST_P(HybridForwardTest, PrefillMatchesTheFloatReference) {
  const testing::HybridReference reference(*ParseTinyModel(bytes_));
  const std::vector<int32_t> tokens = RandomTokens(40);
  const auto expected = reference.Forward(tokens);
  auto cache = NewCache();
  const auto got = Step(*cache, tokens, Range(0, tokens.size()), 0, tokens.size(), 0);
  ASSERT_EQ(got.size(), tokens.size());
  double worst = 0.0, scale = 0.0;
  for (size_t t = 0; t < tokens.size(); ++t) {
    for (size_t v = 0; v < got[t].size(); ++v) {
      worst = std::max(worst, std::abs(static_cast<double>(got[t][v]) - expected[t][v]));
      scale = std::max(scale, std::abs(static_cast<double>(expected[t][v])));
    }
  }
  EXPECT_GT(scale, 0.5);  // logits of a useful spread
  EXPECT_LT(worst, 2e-4 * scale) << "worst |logit difference| " << worst << " of " << scale;
}

TEST_P(HybridForwardTest, PrefillChunksAndTokenByTokenDecodeAgree) {
  const std::vector<int32_t> tokens = RandomTokens(30);
  const std::vector<int32_t> slots = Range(0, tokens.size());
  auto whole_cache = NewCache();
  const auto whole = Step(*whole_cache, tokens, slots, 0, tokens.size(), 0);

  auto chunk_cache = NewCache();
  std::vector<std::vector<float>> chunked;
  for (size_t b = 0; b < tokens.size(); b += 7) {
    const auto rows = Step(*chunk_cache, tokens, slots, b, std::min(tokens.size(), b + 7), 3);
    chunked.insert(chunked.end(), rows.begin(), rows.end());
  }
  auto decode_cache = NewCache();
  std::vector<std::vector<float>> decoded;
  for (size_t t = 0; t < tokens.size(); ++t) {
    decoded.push_back(Step(*decode_cache, tokens, slots, t, t + 1, 5)[0]);
  }
  ASSERT_EQ(chunked.size(), whole.size());
  ASSERT_EQ(decoded.size(), whole.size());
  for (size_t t = 0; t < whole.size(); ++t) {
    EXPECT_EQ(chunked[t], whole[t]) << "position " << t;
    EXPECT_EQ(decoded[t], whole[t]) << "position " << t;
  }
}

TEST_P(HybridForwardTest, SequencesBatchedGetWhatTheyGetAlone) {
  // Three sequences prefilled alone, then decoded one step alone; then the same with all three
  // prefilled in one batch and decoded in one batch (with a fourth sequence's fresh prefill).
  const std::vector<size_t> lengths = {9, 17, 4};
  std::vector<std::vector<int32_t>> tokens, slots;
  int32_t next = 0;
  for (size_t n : lengths) {
    tokens.push_back(RandomTokens(n + 1));
    slots.push_back(Range(next, n + 1));
    next += static_cast<int32_t>(n + 1);
  }
  const std::vector<int32_t> other = RandomTokens(12);
  const std::vector<int32_t> other_slots = Range(next, other.size());

  auto alone_cache = NewCache();
  std::vector<std::vector<float>> alone_prefill, alone_decode;
  for (size_t i = 0; i < lengths.size(); ++i) {
    const auto state = static_cast<int32_t>(i);
    alone_prefill.push_back(Step(*alone_cache, tokens[i], slots[i], 0, lengths[i], state).back());
    alone_decode.push_back(
        Step(*alone_cache, tokens[i], slots[i], lengths[i], lengths[i] + 1, state)[0]);
  }

  auto batch_cache = NewCache();
  auto sequence = [&](size_t i, size_t begin, size_t end, int32_t state) {
    SequenceInput seq;
    seq.tokens = std::span<const int32_t>(tokens[i]).subspan(begin, end - begin);
    seq.new_slots = std::span<const int32_t>(slots[i]).subspan(begin, end - begin);
    seq.prefix_slots = std::span<const int32_t>(slots[i]).first(begin);
    seq.state_slot = state;
    return seq;
  };
  ForwardBatch prefill;
  for (size_t i = 0; i < lengths.size(); ++i) {
    prefill.sequences.push_back(sequence(i, 0, lengths[i], static_cast<int32_t>(6 - i)));
  }
  const auto prefilled = Rows(prefill, *batch_cache);
  ForwardBatch decode;
  for (size_t i = 0; i < lengths.size(); ++i) {
    decode.sequences.push_back(
        sequence(i, lengths[i], lengths[i] + 1, static_cast<int32_t>(6 - i)));
  }
  SequenceInput fresh;
  fresh.tokens = other;
  fresh.new_slots = other_slots;
  fresh.state_slot = 7;
  decode.sequences.push_back(fresh);
  const auto decoded = Rows(decode, *batch_cache);
  for (size_t i = 0; i < lengths.size(); ++i) {
    ASSERT_EQ(prefilled[i].size(), 1u);
    EXPECT_EQ(prefilled[i][0], alone_prefill[i]) << "sequence " << i;
    EXPECT_EQ(decoded[i][0], alone_decode[i]) << "sequence " << i;
  }
}

TEST_P(HybridForwardTest, AStateSlotStartsOverAtPositionZero) {
  // A slot used by one sequence, then by another from position 0: the second gets exactly
  // what it gets in a fresh cache.
  const std::vector<int32_t> first = RandomTokens(15), second = RandomTokens(10);
  auto cache = NewCache();
  Step(*cache, first, Range(0, first.size()), 0, first.size(), 2);
  const auto reused = Step(*cache, second, Range(100, second.size()), 0, second.size(), 2);
  auto fresh_cache = NewCache();
  const auto fresh = Step(*fresh_cache, second, Range(100, second.size()), 0, second.size(), 4);
  EXPECT_EQ(reused, fresh);
}

TEST_P(HybridForwardTest, MisusedStateSlotsAreRefused) {
  const std::vector<int32_t> tokens = RandomTokens(4);
  const std::vector<int32_t> a = Range(0, 4), b = Range(10, 4);
  auto cache = NewCache();
  ForwardOutput out;
  ForwardBatch shared;
  SequenceInput s0;
  s0.tokens = tokens;
  s0.new_slots = a;
  s0.state_slot = 1;
  SequenceInput s1 = s0;
  s1.new_slots = b;
  shared.sequences = {s0, s1};
  Status st = model_->Forward(shared, *cache, &out);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("state_slot 1 is used by another sequence"), std::string::npos)
      << st.ToString();

  ForwardBatch outside;
  s0.state_slot = static_cast<int32_t>(kStates);
  outside.sequences = {s0};
  st = model_->Forward(outside, *cache, &out);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("outside [0, 8)"), std::string::npos) << st.ToString();

  ForwardBatch tree;
  s0.state_slot = 0;
  const std::vector<int32_t> depth = {0, 1, 1, 2};
  const std::vector<uint64_t> mask = {1, 3, 5, 11};
  s0.tree_depth = depth;
  s0.tree_mask = mask;
  tree.sequences = {s0};
  st = model_->Forward(tree, *cache, &out);
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented) << st.ToString();
}

INSTANTIATE_TEST_SUITE_P(Archs, HybridForwardTest,
                         ::testing::Values("qwen35", "qwen35moe", "qwen3next"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

TEST(HybridConfigTest, TheMoeVariantsReadTheirExpertsAndLayout) {
  for (const char* arch : {"qwen35moe", "qwen3next"}) {
    const auto bytes = BuildTinyModel(HybridSpec(arch));
    const auto config = ModelConfig::FromGguf(*ParseTinyModel(bytes));
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    const ModelConfig& c = *config;
    EXPECT_EQ(c.arch, arch);
    EXPECT_EQ(c.n_experts, 8);
    EXPECT_EQ(c.n_experts_used, 3);
    EXPECT_EQ(c.expert_ffn_size, 32);
    EXPECT_EQ(c.shared_expert_ffn_size, 48);
    EXPECT_EQ(c.linear_layers, (std::vector<uint8_t>{1, 1, 1, 0, 1}));
    EXPECT_EQ(c.ssm_grouped_heads, std::string(arch) == "qwen3next");
    EXPECT_EQ(c.rope_layout, RopeLayout::kNeox);
    EXPECT_TRUE(c.attn_output_gate);
    // (blk.0.attn_qkv is the linear layer's input projection, not a fused Q/K/V.)
    EXPECT_FALSE(c.fused_qkv);
    EXPECT_EQ(c.DebugString().find("fused_qkv"), std::string::npos) << c.DebugString();
    // Each expert's three matrices count among all parameters, 3 of 8 among the active ones.
    const int64_t per_expert = 3 * 64 * 32;
    EXPECT_EQ(c.TotalParameters() - c.ActiveParameters(), 5 * 5 * per_expert);  // 5 layers
  }
}

TEST(HybridConfigTest, Qwen35WithExpertsIsRefusedByName) {
  testing::TinyModelSpec spec = TinyQwen35MoeSpec();
  spec.arch = "qwen35";
  const auto bytes = BuildTinyModel(spec);
  const auto config = ModelConfig::FromGguf(*ParseTinyModel(bytes));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(config.status().message().find("'qwen35.expert_count'"), std::string::npos)
      << config.status().ToString();
}

TEST(HybridConfigTest, AMissingSharedExpertGateIsNamed) {
  testing::TinyModelSpec spec = TinyQwen3NextSpec();
  spec.omit_tensors = {"blk.2.ffn_gate_inp_shexp.weight"};
  const auto bytes = BuildTinyModel(spec);
  const auto model = Model::FromGguf(ParseTinyModel(bytes));
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("missing tensor 'blk.2.ffn_gate_inp_shexp.weight'"),
            std::string::npos)
      << model.status().ToString();
}

TEST(HybridConfigTest, Qwen3NextsLegacyFusedInputProjectionIsRefusedByName) {
  testing::TinyModelSpec spec = TinyQwen3NextSpec();
  spec.extra_vectors = {"blk.0.ssm_in.weight"};
  const auto bytes = BuildTinyModel(spec);
  const auto config = ModelConfig::FromGguf(*ParseTinyModel(bytes));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(config.status().message().find("'blk.0.ssm_in.weight'"), std::string::npos)
      << config.status().ToString();
}

// Per-expert and per-matrix weight scales (llama.cpp multiplies a product by them) are not
// read: a file with one is refused naming it, whatever the family, not run without it.
TEST(HybridConfigTest, AnUnreadWeightScaleIsRefusedByName) {
  for (const char* name : {"blk.2.ffn_up_exps.scale", "blk.0.ssm_out.scale"}) {
    testing::TinyModelSpec spec = TinyQwen3NextSpec();
    spec.extra_vectors = {name};
    const auto bytes = BuildTinyModel(spec);
    const auto model = Model::FromGguf(ParseTinyModel(bytes));
    ASSERT_FALSE(model.ok()) << name;
    EXPECT_EQ(model.status().code(), StatusCode::kUnimplemented) << name;
    EXPECT_NE(model.status().message().find(std::string("'") + name + "'"), std::string::npos)
        << model.status().ToString();
  }
  EXPECT_TRUE(Model::FromGguf(ParseTinyModel(BuildTinyModel(TinyQwen3NextSpec()))).ok());
}

TEST(HybridConfigTest, AMissingLinearLayerTensorIsNamed) {
  testing::TinyModelSpec spec = TinyQwen35Spec();
  spec.omit_tensors = {"blk.1.ssm_a"};
  const auto bytes = BuildTinyModel(spec);
  const auto model = Model::FromGguf(ParseTinyModel(bytes));
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("missing tensor 'blk.1.ssm_a'"), std::string::npos)
      << model.status().ToString();
}

TEST(HybridConfigTest, AFusedQkvOnAFullAttentionLayerIsRefusedByName) {
  testing::TinyModelSpec spec = TinyQwen35Spec();
  spec.extra_vectors = {"blk.3.attn_qkv.weight"};
  const auto bytes = BuildTinyModel(spec);
  const auto config = ModelConfig::FromGguf(*ParseTinyModel(bytes));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(config.status().message().find("'blk.3.attn_qkv.weight'"), std::string::npos)
      << config.status().ToString();
}

}  // namespace
}  // namespace radixlm::model
