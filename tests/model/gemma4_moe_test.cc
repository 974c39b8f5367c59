// Gemma 4's mixture of experts (model/families/gemma4.cc, ModelConfig::moe_dense_branch) on the
// tiny file llama.cpp's logits were taken from (tests/model/testdata/llama_cpp/gemma4moe.gguf,
// written by tests/model/llama_cpp/synth_family.py gemma4moe --shape tiny; its agreement with
// llama.cpp is llama_cpp_reference_test.cc's): what the family reads, the fused
// ffn_gate_up_exps as views of its halves, and batch invariance (a row's logits bit-identical
// alone and in a batch, and whether a prompt is prefilled at once or in chunks).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/tensor_names.h"

namespace radixlm::model {
namespace {

const std::string kFile =
    std::string(RADIXLM_SOURCE_DIR) + "/tests/model/testdata/llama_cpp/gemma4moe.gguf";

class Gemma4MoeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = Model::Load(kFile, {.n_threads = 2, .max_batch_tokens = 96});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
  }

  std::unique_ptr<KvCache> NewCache() {
    auto cache = model_->CreateKvCache({.n_slots = 256});
    EXPECT_TRUE(cache.ok());
    return std::move(cache).value();
  }

  std::vector<int32_t> RandomTokens(size_t n) {
    std::uniform_int_distribution<int32_t> dist(
        0, static_cast<int32_t>(model_->config().vocab_size - 1));
    std::vector<int32_t> t(n);
    for (int32_t& x : t) x = dist(rng_);
    return t;
  }

  static std::vector<int32_t> Range(int32_t first, size_t n) {
    std::vector<int32_t> out(n);
    std::iota(out.begin(), out.end(), first);
    return out;
  }

  // Runs `batch`; returns each sequence's logits rows.
  std::vector<std::vector<std::vector<float>>> Run(const ForwardBatch& batch, KvCache& cache) {
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

  std::unique_ptr<Model> model_;
  std::mt19937 rng_{7};
};

TEST_F(Gemma4MoeTest, ReadsExpertsBesideTheDenseFfn) {
  const ModelConfig& c = model_->config();
  EXPECT_EQ(c.arch, "gemma4");
  EXPECT_EQ(c.n_experts, 4);
  EXPECT_EQ(c.n_experts_used, 2);
  EXPECT_EQ(c.expert_ffn_size, 32);
  EXPECT_TRUE(c.moe_dense_branch);
  EXPECT_TRUE(c.expert_weights_norm);
  EXPECT_EQ(c.expert_gating, ModelConfig::ExpertGating::kSoftmax);
  // Layer 3 has no router: a dense layer. The others run the dense FFN and the experts.
  for (int64_t i = 0; i < c.n_layers; ++i) {
    const LayerTensorNeeds& n = c.layer_tensors[i];
    const LayerWeights& l = model_->weights().layers[i];
    EXPECT_NE(l.gate.data, nullptr) << "layer " << i;
    EXPECT_NE(l.down.data, nullptr) << "layer " << i;
    if (i == 3) {
      EXPECT_EQ(n[LayerTensor::kFfnGateInp], TensorNeed::kAbsent);
      EXPECT_TRUE(l.gate_exps.empty());
      EXPECT_EQ(l.ffn_pre_norm_2, nullptr);
      continue;
    }
    EXPECT_EQ(n[LayerTensor::kFfnGateInp], TensorNeed::kRequired) << "layer " << i;
    ASSERT_EQ(l.gate_exps.size(), 4u) << "layer " << i;
    ASSERT_EQ(l.up_exps.size(), 4u) << "layer " << i;
    EXPECT_NE(l.gate_inp_scale, nullptr) << "layer " << i;
    EXPECT_NE(l.ffn_pre_norm_2, nullptr) << "layer " << i;
    EXPECT_NE(l.ffn_post_norm_1, nullptr) << "layer " << i;
    EXPECT_NE(l.ffn_post_norm_2, nullptr) << "layer " << i;
    EXPECT_NE(l.down_exps_scale, nullptr) << "layer " << i;
  }
  // Active parameters: every dense weight, 2 of the 4 experts.
  EXPECT_LT(c.ActiveParameters(), c.TotalParameters());
}

TEST_F(Gemma4MoeTest, FusedGateUpExpertsAreViewsOfTheirHalves) {
  // Layers 0 and 2 have ffn_gate_up_exps (per expert: 32 gate rows, then 32 up rows); 1 and 4
  // the separate tensors.
  for (int64_t i : {0, 1, 2, 4}) {
    const LayerWeights& l = model_->weights().layers[i];
    const bool fused = i == 0 || i == 2;
    EXPECT_EQ(l.gate_up_exps.empty(), !fused) << "layer " << i;
    const std::string name =
        LayerTensorName(i, fused ? LayerTensor::kFfnGateUpExps : LayerTensor::kFfnGateExps);
    const gguf::TensorInfo* t = model_->gguf().FindTensor(name);
    ASSERT_NE(t, nullptr) << name;
    const auto* base = static_cast<const uint8_t*>(t->data);
    for (int64_t e = 0; e < 4; ++e) {
      const kernels::WeightMatrix& g = l.gate_exps[e];
      const kernels::WeightMatrix& u = l.up_exps[e];
      EXPECT_EQ(g.rows, 32);
      EXPECT_EQ(g.cols, 32);
      const int64_t expert_rows = fused ? 64 : 32;
      EXPECT_EQ(static_cast<const uint8_t*>(g.data), base + e * expert_rows * g.row_bytes);
      if (fused) {
        EXPECT_EQ(static_cast<const uint8_t*>(u.data), base + (e * 64 + 32) * u.row_bytes);
      }
    }
  }
}

TEST_F(Gemma4MoeTest, DecodedRowIsBitIdenticalAloneAndInABatch) {
  // Three sequences with cached prompts; sequence 0's next token decoded alone, then in a batch
  // with the others' decodes and a 40-token prefill (its experts' GEMMs then hold many rows).
  const std::vector<size_t> prompt = {9, 14, 21};
  std::vector<std::vector<int32_t>> tokens;
  for (size_t n : prompt) tokens.push_back(RandomTokens(n + 1));
  const auto fresh = RandomTokens(40);
  std::vector<std::vector<int32_t>> prefix_slots, next_slot;
  int32_t slot = 0;
  for (size_t n : prompt) {
    prefix_slots.push_back(Range(slot, n));
    slot += static_cast<int32_t>(n);
    next_slot.push_back({slot++});
  }
  const std::vector<int32_t> fresh_slots = Range(slot, fresh.size());
  auto prefill_all = [&](KvCache& cache) {
    for (size_t i = 0; i < prompt.size(); ++i) {
      ForwardBatch b;
      b.sequences.push_back({std::span<const int32_t>(tokens[i].data(), prompt[i]),
                             prefix_slots[i],
                             {},
                             LogitsMode::kNone});
      Run(b, cache);
    }
  };
  auto alone_cache = NewCache();
  prefill_all(*alone_cache);
  ForwardBatch alone;
  alone.sequences.push_back({std::span<const int32_t>(tokens[0].data() + prompt[0], 1),
                             next_slot[0], prefix_slots[0], LogitsMode::kLast});
  const auto want = Run(alone, *alone_cache);

  auto batch_cache = NewCache();
  prefill_all(*batch_cache);
  ForwardBatch batch;
  batch.sequences.push_back({fresh, fresh_slots, {}, LogitsMode::kAll});
  for (size_t i = prompt.size(); i-- > 0;) {  // sequence 0 last
    batch.sequences.push_back({std::span<const int32_t>(tokens[i].data() + prompt[i], 1),
                               next_slot[i], prefix_slots[i], LogitsMode::kLast});
  }
  const auto got = Run(batch, *batch_cache);
  ASSERT_EQ(got.size(), 4u);
  ASSERT_EQ(got.back().size(), 1u);
  ASSERT_EQ(want[0].size(), 1u);
  EXPECT_EQ(got.back()[0], want[0][0]);
}

TEST_F(Gemma4MoeTest, PrefillRowsAreBitIdenticalInOneCallOrInChunks) {
  const auto tokens = RandomTokens(45);
  const auto slots = Range(0, tokens.size());
  auto one_cache = NewCache();
  ForwardBatch one;
  one.sequences.push_back({tokens, slots, {}, LogitsMode::kAll});
  const auto want = Run(one, *one_cache);
  ASSERT_EQ(want[0].size(), tokens.size());

  auto chunk_cache = NewCache();
  for (size_t begin = 0; begin < tokens.size(); begin += 7) {
    const size_t len = std::min<size_t>(7, tokens.size() - begin);
    ForwardBatch chunk;
    chunk.sequences.push_back({std::span<const int32_t>(tokens.data() + begin, len),
                               std::span<const int32_t>(slots.data() + begin, len),
                               std::span<const int32_t>(slots.data(), begin), LogitsMode::kAll});
    const auto got = Run(chunk, *chunk_cache);
    ASSERT_EQ(got[0].size(), len);
    for (size_t i = 0; i < len; ++i) {
      EXPECT_EQ(got[0][i], want[0][begin + i]) << "position " << begin + i;
    }
  }
}

}  // namespace
}  // namespace radixlm::model
