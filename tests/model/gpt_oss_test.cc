// gpt-oss (model/families/gpt_oss.cc) on tiny files this test writes: what the family reads
// from the metadata, the forward pass against the plain float reference (reference_model.h:
// sinks, biases, alternating sliding / full layers with YaRN on both, top-k-then-softmax
// routing, the clamped SwiGLU), with float weights and with MXFP4 experts, a chunked prefill
// and decode against the whole prompt at once, a decoded row bit-identical alone and in a
// batch, and files the family refuses by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"
#include "kernels/quant.h"
#include "model/model.h"
#include "reference_model.h"
#include "tiny_model.h"

namespace radixlm::model {
namespace {

using gguf::GgmlType;
using gguf::GgufWriter;
using gguf::Value;

struct GptOssSpec {
  int64_t n_layers = 4;
  int64_t hidden = 64;
  int64_t n_heads = 4;
  int64_t n_kv_heads = 2;
  int64_t head_dim = 16;
  int64_t vocab = 96;
  int64_t n_experts = 4;
  int64_t n_experts_used = 2;
  int64_t expert_ffn = 64;
  int64_t sliding_window = 5;
  GgmlType matrix_type = GgmlType::kF32;  // attention and output matrices
  GgmlType expert_type = GgmlType::kF32;  // ffn_{gate,up,down}_exps
  bool write_sinks = true;
  bool pattern_array = false;  // attention.sliding_window_pattern as a per-layer array
  uint32_t seed = 7;
};

// Random values of a realistic size: weights ~ U(-s, s) with s = 1 / sqrt(fan-in).
class GptOssWriter {
 public:
  explicit GptOssWriter(const GptOssSpec& spec) : s_(spec), rng_(spec.seed) {}

  std::vector<uint8_t> Build() {
    const std::string a = "gpt-oss";
    auto u32 = [](int64_t v) { return Value::U32(static_cast<uint32_t>(v)); };
    w_.AddMetadata("general.architecture", Value::Str(a));
    w_.AddMetadata(a + ".block_count", u32(s_.n_layers));
    w_.AddMetadata(a + ".context_length", u32(4096));
    w_.AddMetadata(a + ".embedding_length", u32(s_.hidden));
    w_.AddMetadata(a + ".feed_forward_length", u32(s_.expert_ffn));
    w_.AddMetadata(a + ".expert_feed_forward_length", u32(s_.expert_ffn));
    w_.AddMetadata(a + ".attention.head_count", u32(s_.n_heads));
    w_.AddMetadata(a + ".attention.head_count_kv", u32(s_.n_kv_heads));
    w_.AddMetadata(a + ".attention.key_length", u32(s_.head_dim));
    w_.AddMetadata(a + ".attention.value_length", u32(s_.head_dim));
    w_.AddMetadata(a + ".attention.layer_norm_rms_epsilon", Value::F32(1e-5f));
    w_.AddMetadata(a + ".attention.sliding_window", u32(s_.sliding_window));
    if (s_.pattern_array) {
      std::vector<Value> pattern;
      for (int64_t i = 0; i < s_.n_layers; ++i) pattern.push_back(Value::Bool(i % 2 == 0));
      w_.AddMetadata(a + ".attention.sliding_window_pattern",
                     Value::Arr(gguf::ValueType::kBool, std::move(pattern)));
    }
    w_.AddMetadata(a + ".rope.freq_base", Value::F32(150000.0f));
    // YaRN x4 over an original context of 16: the ramp bends the pairs within a short prompt.
    w_.AddMetadata(a + ".rope.scaling.type", Value::Str("yarn"));
    w_.AddMetadata(a + ".rope.scaling.factor", Value::F32(4.0f));
    w_.AddMetadata(a + ".rope.scaling.original_context_length", u32(16));
    w_.AddMetadata(a + ".expert_count", u32(s_.n_experts));
    w_.AddMetadata(a + ".expert_used_count", u32(s_.n_experts_used));

    const int64_t h = s_.hidden, qs = s_.n_heads * s_.head_dim, kvs = s_.n_kv_heads * s_.head_dim;
    const int64_t f = s_.expert_ffn, e = s_.n_experts;
    Matrix("token_embd.weight", h, s_.vocab, s_.matrix_type, 1.0f);
    Vector("output_norm.weight", {h}, 0.8f, 1.2f);
    Matrix("output.weight", h, s_.vocab, s_.matrix_type, 1.0f / std::sqrt(float(h)));
    for (int64_t i = 0; i < s_.n_layers; ++i) {
      const std::string p = "blk." + std::to_string(i) + ".";
      Vector(p + "attn_norm.weight", {h}, 0.8f, 1.2f);
      Vector(p + "post_attention_norm.weight", {h}, 0.8f, 1.2f);
      Matrix(p + "attn_q.weight", h, qs, s_.matrix_type, 1.0f / std::sqrt(float(h)));
      Matrix(p + "attn_k.weight", h, kvs, s_.matrix_type, 1.0f / std::sqrt(float(h)));
      Matrix(p + "attn_v.weight", h, kvs, s_.matrix_type, 1.0f / std::sqrt(float(h)));
      Matrix(p + "attn_output.weight", qs, h, s_.matrix_type, 1.0f / std::sqrt(float(qs)));
      Vector(p + "attn_q.bias", {qs}, -0.2f, 0.2f);
      Vector(p + "attn_k.bias", {kvs}, -0.2f, 0.2f);
      Vector(p + "attn_v.bias", {kvs}, -0.2f, 0.2f);
      Vector(p + "attn_output.bias", {h}, -0.2f, 0.2f);
      // Sinks around the scores' size: some heads' rows mostly attend to nothing.
      if (s_.write_sinks) Vector(p + "attn_sinks.weight", {s_.n_heads}, -1.0f, 3.0f);
      Matrix(p + "ffn_gate_inp.weight", h, e, GgmlType::kF32, 2.0f / std::sqrt(float(h)));
      Vector(p + "ffn_gate_inp.bias", {e}, -0.5f, 0.5f);
      // Gate and up reach the clamps (|x| > 7) on some rows, down brings them back.
      Experts(p + "ffn_gate_exps.weight", h, f, 6.0f / std::sqrt(float(h)));
      Experts(p + "ffn_up_exps.weight", h, f, 6.0f / std::sqrt(float(h)));
      Experts(p + "ffn_down_exps.weight", f, h, 0.3f / std::sqrt(float(f)));
      Vector(p + "ffn_gate_exps.bias", {f, e}, -0.5f, 0.5f);
      Vector(p + "ffn_up_exps.bias", {f, e}, -0.5f, 0.5f);
      Vector(p + "ffn_down_exps.bias", {h, e}, -0.2f, 0.2f);
    }
    return w_.Serialize();
  }

 private:
  std::vector<float> Uniform(int64_t n, float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng_);
    return v;
  }
  void Vector(const std::string& name, std::vector<int64_t> shape, float lo, float hi) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    ASSERT_TRUE(w_.AddF32Tensor(name, shape, Uniform(n, lo, hi)).ok()) << name;
  }
  // [cols, rows * n] values of type t (n stacked matrices when n > 1).
  void Typed(const std::string& name, std::vector<int64_t> shape, int64_t cols, int64_t rows,
             GgmlType t, float scale) {
    const std::vector<float> v = Uniform(cols * rows, -scale, scale);
    std::vector<uint8_t> bytes(kernels::RowBytes(t, cols) * rows);
    for (int64_t r = 0; r < rows; ++r) {
      kernels::QuantizeRow(t, v.data() + r * cols, bytes.data() + r * kernels::RowBytes(t, cols),
                           cols);
    }
    ASSERT_TRUE(w_.AddTensor(name, t, shape, bytes).ok()) << name;
  }
  void Matrix(const std::string& name, int64_t cols, int64_t rows, GgmlType t, float scale) {
    Typed(name, {cols, rows}, cols, rows, t, scale);
  }
  void Experts(const std::string& name, int64_t cols, int64_t rows, float scale) {
    Typed(name, {cols, rows, s_.n_experts}, cols, rows * s_.n_experts, s_.expert_type, scale);
  }

  GptOssSpec s_;
  std::mt19937 rng_;
  GgufWriter w_;
};

std::vector<int32_t> Range(int32_t first, size_t n) {
  std::vector<int32_t> out(n);
  std::iota(out.begin(), out.end(), first);
  return out;
}

// The largest |got - want| relative to want's largest logit.
float RelativeError(const std::vector<float>& got, const std::vector<float>& want) {
  float scale = 1.0f, err = 0.0f;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::fabs(want[i]));
    err = std::max(err, std::fabs(got[i] - want[i]));
  }
  return err / scale;
}

TEST(GptOssConfig, ReadsTheFamilysFeatures) {
  const std::vector<uint8_t> bytes = GptOssWriter(GptOssSpec{}).Build();
  auto file = testing::ParseTinyModel(bytes);
  auto config = ModelConfig::FromGguf(*file);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const ModelConfig& c = *config;
  EXPECT_EQ(c.arch, "gpt-oss");
  EXPECT_EQ(c.rope_layout, RopeLayout::kNeox);
  EXPECT_EQ(c.n_experts, 4);
  EXPECT_EQ(c.n_experts_used, 2);
  EXPECT_EQ(c.expert_ffn_size, 64);
  EXPECT_TRUE(c.expert_softmax_after_topk);
  EXPECT_FALSE(c.expert_weights_norm);
  EXPECT_EQ(c.ffn_activation, FfnActivation::kSwigluOai);
  // Layers 0 and 2 slide (window 5), 1 and 3 see everything: llama.cpp's pattern 2.
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(c.IsSlidingLayer(i), i % 2 == 0) << i;
    const LayerAttentionConfig la = c.LayerAttention(i);
    EXPECT_EQ(la.sliding_window, i % 2 == 0 ? 5 : 0) << i;
    // YaRN on both kinds, with the same scale and magnitude.
    EXPECT_EQ(la.rope_ext_factor, 1.0f) << i;
    EXPECT_FLOAT_EQ(la.rope_freq_scale, 0.25f) << i;
    EXPECT_EQ(la.rope_attn_factor, c.LayerAttention(1).rope_attn_factor) << i;
  }
}

TEST(GptOssConfig, RefusesWhatItDoesNotRead) {
  {
    GptOssSpec spec;
    spec.write_sinks = false;
    const std::vector<uint8_t> bytes = GptOssWriter(spec).Build();
    auto model = Model::FromGguf(testing::ParseTinyModel(bytes), {.n_threads = 1});
    ASSERT_FALSE(model.ok());
    EXPECT_NE(model.status().message().find("blk.0.attn_sinks.weight"), std::string::npos)
        << model.status().ToString();
  }
  {
    GptOssSpec spec;
    spec.pattern_array = true;
    const std::vector<uint8_t> bytes = GptOssWriter(spec).Build();
    auto config = ModelConfig::FromGguf(*testing::ParseTinyModel(bytes));
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.status().message().find("gpt-oss.attention.sliding_window_pattern"),
              std::string::npos)
        << config.status().ToString();
  }
}

struct GptOssCase {
  std::string name;
  GptOssSpec spec;
  float tolerance;  // relative to the largest logit (model_forward_test.cc's reasoning)
};

void PrintTo(const GptOssCase& c, std::ostream* os) { *os << c.name; }

class GptOssForwardTest : public ::testing::TestWithParam<GptOssCase> {
 protected:
  void SetUp() override {
    bytes_ = GptOssWriter(GetParam().spec).Build();
    auto model =
        Model::FromGguf(testing::ParseTinyModel(bytes_), {.n_threads = 2, .max_batch_tokens = 64});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
  }

  std::unique_ptr<KvCache> NewCache() {
    auto cache = model_->CreateKvCache({.n_slots = 256});
    EXPECT_TRUE(cache.ok());
    return std::move(cache).value();
  }

  std::vector<int32_t> RandomTokens(size_t n) {
    std::uniform_int_distribution<int32_t> d(0, static_cast<int32_t>(GetParam().spec.vocab - 1));
    std::vector<int32_t> t(n);
    for (int32_t& x : t) x = d(rng_);
    return t;
  }

  std::vector<std::vector<float>> Run(const ForwardBatch& batch, KvCache& cache, size_t seq = 0) {
    ForwardOutput out;
    const Status st = model_->Forward(batch, cache, &out);
    EXPECT_TRUE(st.ok()) << st.ToString();
    std::vector<std::vector<float>> rows;
    if (!st.ok()) return rows;
    for (int64_t r = 0; r < out.row_count[seq]; ++r) {
      const float* p = out.Row(seq, r);
      rows.emplace_back(p, p + out.vocab_size);
    }
    return rows;
  }

  std::vector<uint8_t> bytes_;
  std::unique_ptr<Model> model_;
  std::mt19937 rng_{31};
};

// Every position of a 30-token prompt (six windows of 5, YaRN's ramp in play) against the
// reference, and the greedy token wherever the reference's top two are apart.
TEST_P(GptOssForwardTest, PrefillMatchesReference) {
  const std::vector<int32_t> tokens = RandomTokens(30);
  auto cache = NewCache();
  ForwardBatch batch;
  const std::vector<int32_t> slots = Range(0, tokens.size());
  batch.sequences.push_back({tokens, slots, {}, LogitsMode::kAll});
  const auto got = Run(batch, *cache);
  const auto want = testing::ReferenceModel(model_->gguf(), kernels::KvDtype::kF16).Forward(tokens);
  ASSERT_EQ(got.size(), want.size());
  float worst = 0.0f;
  for (size_t t = 0; t < want.size(); ++t) {
    const float err = RelativeError(got[t], want[t]);
    worst = std::max(worst, err);
    EXPECT_LE(err, GetParam().tolerance) << "position " << t;
    std::vector<float> sorted = want[t];
    std::sort(sorted.rbegin(), sorted.rend());
    if (sorted[0] - sorted[1] > 4 * GetParam().tolerance * std::max(1.0f, std::fabs(sorted[0]))) {
      EXPECT_EQ(std::max_element(got[t].begin(), got[t].end()) - got[t].begin(),
                std::max_element(want[t].begin(), want[t].end()) - want[t].begin())
          << "position " << t;
    }
  }
  std::printf("%s: worst relative logit error vs reference %.3g\n", GetParam().name.c_str(), worst);
}

// A prompt prefilled in chunks of 7 then decoded token by token (the sinks and the window over
// cached keys) gives the logits of the whole prompt at once.
TEST_P(GptOssForwardTest, ChunkedPrefillAndDecodeMatchOnePass) {
  const std::vector<int32_t> tokens = RandomTokens(24);
  auto whole_cache = NewCache();
  ForwardBatch whole;
  const std::vector<int32_t> slots = Range(0, tokens.size());
  whole.sequences.push_back({tokens, slots, {}, LogitsMode::kAll});
  const auto want = Run(whole, *whole_cache);

  auto cache = NewCache();
  std::vector<std::vector<float>> got;
  for (size_t at = 0; at < tokens.size();) {
    const size_t n = at < 14 ? std::min<size_t>(7, 14 - at) : 1;
    ForwardBatch b;
    b.sequences.push_back({std::span<const int32_t>(tokens.data() + at, n),
                           std::span<const int32_t>(slots.data() + at, n),
                           std::span<const int32_t>(slots.data(), at), LogitsMode::kAll});
    for (auto& row : Run(b, *cache)) got.push_back(std::move(row));
    at += n;
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t t = 0; t < want.size(); ++t) {
    EXPECT_LE(RelativeError(got[t], want[t]), 1e-4f) << "position " << t;
  }
}

// Batch invariance with the biases and the top-k-then-softmax routing: a decoded row alone and
// beside a 30-token prefill and another decode, bit for bit.
TEST_P(GptOssForwardTest, DecodedRowIsBitIdenticalAloneAndInABatch) {
  const std::vector<int32_t> a = RandomTokens(12), b = RandomTokens(9), fresh = RandomTokens(30);
  const std::vector<int32_t> a_slots = Range(0, 12), b_slots = Range(20, 9),
                             fresh_slots = Range(40, 30);
  auto prefill = [&](KvCache& cache) {
    for (const auto& [t, s] : {std::pair{&a, &a_slots}, std::pair{&b, &b_slots}}) {
      ForwardBatch p;
      p.sequences.push_back({std::span<const int32_t>(t->data(), t->size() - 1),
                             std::span<const int32_t>(s->data(), s->size() - 1),
                             {},
                             LogitsMode::kNone});
      Run(p, cache);
    }
  };
  auto decode = [](const std::vector<int32_t>& t, const std::vector<int32_t>& s) {
    return SequenceInput{std::span<const int32_t>(&t.back(), 1),
                         std::span<const int32_t>(&s.back(), 1),
                         std::span<const int32_t>(s.data(), s.size() - 1), LogitsMode::kLast};
  };
  auto alone_cache = NewCache();
  prefill(*alone_cache);
  ForwardBatch alone;
  alone.sequences.push_back(decode(a, a_slots));
  const auto want = Run(alone, *alone_cache);

  auto batch_cache = NewCache();
  prefill(*batch_cache);
  ForwardBatch batch;
  batch.sequences.push_back({fresh, fresh_slots, {}, LogitsMode::kAll});
  batch.sequences.push_back(decode(b, b_slots));
  batch.sequences.push_back(decode(a, a_slots));
  const auto got = Run(batch, *batch_cache, 2);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(want.size(), 1u);
  EXPECT_EQ(got[0], want[0]);
}

INSTANTIATE_TEST_SUITE_P(
    Weights, GptOssForwardTest,
    ::testing::Values(GptOssCase{"f32", GptOssSpec{}, 3e-4f},
                      // The published files' layout: MXFP4 experts, Q8_0 attention and head.
                      GptOssCase{"mxfp4_experts",
                                 GptOssSpec{.matrix_type = GgmlType::kQ8_0,
                                            .expert_type = GgmlType::kMXFP4},
                                 2e-2f}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace radixlm::model
