// EncoderModel (bert, nomic-bert) on tiny GGUFs the test writes with random F32 weights,
// against a plain float reference forward written from llama.cpp's src/models/bert.cpp graph;
// a row's hidden state does not depend on its batch (bit-exact); bad inputs are refused.
#include "model/encoder/encoder_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/model_config.h"

namespace radixlm::model {
namespace {

using gguf::Value;

struct TinyEncoder {
  std::string arch = "bert";
  int64_t hidden = 32, ffn = 48, heads = 4, layers = 2, vocab = 40, context = 16;
  float eps = 1e-12f;
  float rope_base = 1000.0f;
};

// Every tensor of the file by name, as floats ([rows, cols] row-major, as ggml stores them).
struct Weights {
  std::map<std::string, std::vector<float>> t;
  const std::vector<float>& operator[](const std::string& n) const { return t.at(n); }
};

std::vector<uint8_t> WriteTinyEncoder(const TinyEncoder& s, uint32_t seed, Weights* weights) {
  gguf::GgufWriter w;
  const std::string a = s.arch;
  w.AddMetadata("general.architecture", Value::Str(a));
  w.AddMetadata(a + ".block_count", Value::U32(static_cast<uint32_t>(s.layers)));
  w.AddMetadata(a + ".context_length", Value::U32(static_cast<uint32_t>(s.context)));
  w.AddMetadata(a + ".embedding_length", Value::U32(static_cast<uint32_t>(s.hidden)));
  w.AddMetadata(a + ".feed_forward_length", Value::U32(static_cast<uint32_t>(s.ffn)));
  w.AddMetadata(a + ".attention.head_count", Value::U32(static_cast<uint32_t>(s.heads)));
  w.AddMetadata(a + ".attention.layer_norm_epsilon", Value::F32(s.eps));
  w.AddMetadata(a + ".attention.causal", Value::Bool(false));
  w.AddMetadata(a + ".pooling_type", Value::U32(a == "bert" ? 2 : 1));
  if (a == "nomic-bert") w.AddMetadata(a + ".rope.freq_base", Value::F32(s.rope_base));
  w.AddMetadata("tokenizer.ggml.token_type_count", Value::U32(2));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto add = [&](const std::string& name, int64_t cols, int64_t rows, float scale, float mean) {
    std::vector<float> v(cols * rows);
    for (float& x : v) x = mean + scale * normal(rng);
    std::vector<int64_t> shape = {cols};
    if (rows > 1) shape.push_back(rows);  // matrices; vectors (norms, biases) are 1-D
    EXPECT_TRUE(w.AddF32Tensor(name, shape, v).ok()) << name;
    weights->t[name] = std::move(v);
  };
  const int64_t h = s.hidden;
  const float ws = 1.0f / std::sqrt(static_cast<float>(h));
  add("token_embd.weight", h, s.vocab, 1.0f, 0.0f);
  add("token_types.weight", h, 2, 0.5f, 0.0f);
  if (a == "bert") add("position_embd.weight", h, s.context, 0.5f, 0.0f);
  add("token_embd_norm.weight", h, 1, 0.1f, 1.0f);
  add("token_embd_norm.bias", h, 1, 0.1f, 0.0f);
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    if (a == "bert") {
      for (const char* m : {"attn_q", "attn_k", "attn_v"}) {
        add(b + m + ".weight", h, h, ws, 0.0f);
        add(b + m + ".bias", h, 1, 0.1f, 0.0f);
      }
      add(b + "attn_output.bias", h, 1, 0.1f, 0.0f);
      add(b + "ffn_up.bias", s.ffn, 1, 0.1f, 0.0f);
      add(b + "ffn_down.bias", h, 1, 0.1f, 0.0f);
    } else {
      add(b + "attn_qkv.weight", h, 3 * h, ws, 0.0f);
      add(b + "ffn_gate.weight", h, s.ffn, ws, 0.0f);
    }
    add(b + "attn_output.weight", h, h, ws, 0.0f);
    add(b + "attn_output_norm.weight", h, 1, 0.1f, 1.0f);
    add(b + "attn_output_norm.bias", h, 1, 0.1f, 0.0f);
    add(b + "ffn_up.weight", h, s.ffn, ws, 0.0f);
    add(b + "ffn_down.weight", s.ffn, h, 1.0f / std::sqrt(static_cast<float>(s.ffn)), 0.0f);
    add(b + "layer_output_norm.weight", h, 1, 0.1f, 1.0f);
    add(b + "layer_output_norm.bias", h, 1, 0.1f, 0.0f);
  }
  return w.Serialize();
}

// ---- the float reference (double accumulation, exact GELU and softmax) ----

using Mat = std::vector<float>;  // [n, width] row-major

Mat Linear(const Mat& x, int64_t n, int64_t in, const std::vector<float>& w, int64_t out,
           const std::vector<float>* b) {
  Mat y(n * out);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t o = 0; o < out; ++o) {
      double acc = b != nullptr ? (*b)[o] : 0.0;
      for (int64_t i = 0; i < in; ++i) acc += double(w[o * in + i]) * x[t * in + i];
      y[t * out + o] = static_cast<float>(acc);
    }
  }
  return y;
}

void RefLayerNorm(Mat& x, int64_t n, int64_t h, const std::vector<float>& w,
                  const std::vector<float>& b, float eps) {
  for (int64_t t = 0; t < n; ++t) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < h; ++i) mean += x[t * h + i];
    mean /= h;
    for (int64_t i = 0; i < h; ++i) var += (x[t * h + i] - mean) * (x[t * h + i] - mean);
    var /= h;
    for (int64_t i = 0; i < h; ++i) {
      x[t * h + i] = static_cast<float>((x[t * h + i] - mean) / std::sqrt(var + eps) * w[i] + b[i]);
    }
  }
}

void RefNeoxRope(Mat& x, int64_t n, int64_t heads, int64_t d, float base) {
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t hd = 0; hd < heads; ++hd) {
      float* r = x.data() + t * heads * d + hd * d;
      for (int64_t k = 0; k < d / 2; ++k) {
        const double theta = t * std::pow(double(base), -2.0 * k / d);
        const double a = r[k], c = r[k + d / 2];
        r[k] = static_cast<float>(a * std::cos(theta) - c * std::sin(theta));
        r[k + d / 2] = static_cast<float>(a * std::sin(theta) + c * std::cos(theta));
      }
    }
  }
}

Mat ReferenceForward(const TinyEncoder& s, const Weights& w, const std::vector<int32_t>& ids) {
  const int64_t n = static_cast<int64_t>(ids.size()), h = s.hidden, d = h / s.heads;
  const bool nomic = s.arch == "nomic-bert";
  Mat x(n * h);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; i < h; ++i) {
      x[t * h + i] = w["token_embd.weight"][ids[t] * h + i] + w["token_types.weight"][i] +
                     (nomic ? 0.0f : w["position_embd.weight"][t * h + i]);
    }
  }
  RefLayerNorm(x, n, h, w["token_embd_norm.weight"], w["token_embd_norm.bias"], s.eps);
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    auto bias = [&](const std::string& name) { return nomic ? nullptr : &w[b + name]; };
    Mat q, k, v;
    if (nomic) {
      const Mat qkv = Linear(x, n, h, w[b + "attn_qkv.weight"], 3 * h, nullptr);
      q.resize(n * h), k.resize(n * h), v.resize(n * h);
      for (int64_t t = 0; t < n; ++t) {
        for (int64_t i = 0; i < h; ++i) {
          q[t * h + i] = qkv[t * 3 * h + i];
          k[t * h + i] = qkv[t * 3 * h + h + i];
          v[t * h + i] = qkv[t * 3 * h + 2 * h + i];
        }
      }
      RefNeoxRope(q, n, s.heads, d, s.rope_base);
      RefNeoxRope(k, n, s.heads, d, s.rope_base);
    } else {
      q = Linear(x, n, h, w[b + "attn_q.weight"], h, bias("attn_q.bias"));
      k = Linear(x, n, h, w[b + "attn_k.weight"], h, bias("attn_k.bias"));
      v = Linear(x, n, h, w[b + "attn_v.weight"], h, bias("attn_v.bias"));
    }
    Mat att(n * h, 0.0f);
    for (int64_t hd = 0; hd < s.heads; ++hd) {
      for (int64_t i = 0; i < n; ++i) {  // every query sees every key: no mask
        std::vector<double> sc(n);
        double mx = -1e30;
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < d; ++e)
            dot += double(q[i * h + hd * d + e]) * k[j * h + hd * d + e];
          sc[j] = dot / std::sqrt(double(d));
          mx = std::max(mx, sc[j]);
        }
        double sum = 0;
        for (double& e : sc) sum += (e = std::exp(e - mx));
        for (int64_t e = 0; e < d; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < n; ++j) acc += sc[j] / sum * v[j * h + hd * d + e];
          att[i * h + hd * d + e] = static_cast<float>(acc);
        }
      }
    }
    Mat o = Linear(att, n, h, w[b + "attn_output.weight"], h, bias("attn_output.bias"));
    for (int64_t i = 0; i < n * h; ++i) x[i] += o[i];
    RefLayerNorm(x, n, h, w[b + "attn_output_norm.weight"], w[b + "attn_output_norm.bias"], s.eps);
    Mat up = Linear(x, n, h, w[b + "ffn_up.weight"], s.ffn, bias("ffn_up.bias"));
    if (nomic) {
      const Mat gate = Linear(x, n, h, w[b + "ffn_gate.weight"], s.ffn, nullptr);
      for (size_t i = 0; i < up.size(); ++i) up[i] *= gate[i] / (1.0f + std::exp(-gate[i]));
    } else {
      for (float& u : up) {
        u = 0.5f * u * (1.0f + std::tanh(0.7978845608f * (u + 0.044715f * u * u * u)));
      }
    }
    Mat down = Linear(up, n, s.ffn, w[b + "ffn_down.weight"], h, bias("ffn_down.bias"));
    for (int64_t i = 0; i < n * h; ++i) x[i] += down[i];
    RefLayerNorm(x, n, h, w[b + "layer_output_norm.weight"], w[b + "layer_output_norm.bias"],
                 s.eps);
  }
  return x;
}

std::unique_ptr<EncoderModel> Load(const std::vector<uint8_t>& bytes, std::vector<uint8_t>* keep) {
  *keep = bytes;
  auto file = gguf::GgufFile::FromBuffer(keep->data(), keep->size());
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  auto model = EncoderModel::FromGguf(std::move(*file), {.n_threads = 2});
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(*model) : nullptr;
}

class EncoderModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EncoderModelTest, MatchesFloatReference) {
  TinyEncoder spec{.arch = GetParam()};
  Weights w;
  std::vector<uint8_t> bytes;
  auto model = Load(WriteTinyEncoder(spec, 7, &w), &bytes);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->config().vocab_size, spec.vocab);
  EXPECT_EQ(model->config().pooling_type, spec.arch == "bert" ? 2 : 1);
  const std::vector<int32_t> ids = {1, 17, 3, 39, 22, 5, 8, 2, 11};
  const std::vector<std::span<const int32_t>> seqs = {ids};
  std::vector<float> got;
  ASSERT_TRUE(model->Forward(seqs, &got).ok());
  const Mat want = ReferenceForward(spec, w, ids);
  ASSERT_EQ(got.size(), want.size());
  double max_err = 0;
  for (size_t i = 0; i < got.size(); ++i)
    max_err = std::max(max_err, double(std::abs(got[i] - want[i])));
  // K/V are rounded to F16 and GELU goes through ggml's F16 table: small, not zero.
  EXPECT_LT(max_err, 3e-2) << spec.arch;
  EXPECT_GT(max_err, 0.0);
}

TEST_P(EncoderModelTest, RowsDoNotDependOnTheBatch) {
  TinyEncoder spec{.arch = GetParam()};
  Weights w;
  std::vector<uint8_t> bytes;
  auto model = Load(WriteTinyEncoder(spec, 11, &w), &bytes);
  ASSERT_NE(model, nullptr);
  const std::vector<int32_t> a = {1, 4, 9, 2}, b = {1, 30, 31, 32, 33, 34, 35, 2}, c = {1, 2};
  std::vector<float> alone, batched;
  ASSERT_TRUE(model->Forward(std::vector<std::span<const int32_t>>{b}, &alone).ok());
  ASSERT_TRUE(model->Forward(std::vector<std::span<const int32_t>>{a, b, c}, &batched).ok());
  const int64_t h = spec.hidden;
  ASSERT_EQ(batched.size(), static_cast<size_t>((a.size() + b.size() + c.size()) * h));
  const std::vector<float> b_rows(batched.begin() + a.size() * h,
                                  batched.begin() + (a.size() + b.size()) * h);
  EXPECT_EQ(b_rows, alone);  // bit for bit
  // Bidirectional: changing the last token changes the first token's state.
  std::vector<int32_t> b2 = b;
  b2.back() = 3;
  std::vector<float> changed;
  ASSERT_TRUE(model->Forward(std::vector<std::span<const int32_t>>{b2}, &changed).ok());
  EXPECT_NE(std::vector<float>(changed.begin(), changed.begin() + h),
            std::vector<float>(alone.begin(), alone.begin() + h));
}

TEST_P(EncoderModelTest, RefusesBadInputs) {
  TinyEncoder spec{.arch = GetParam()};
  Weights w;
  std::vector<uint8_t> bytes;
  auto model = Load(WriteTinyEncoder(spec, 3, &w), &bytes);
  ASSERT_NE(model, nullptr);
  std::vector<float> out;
  const std::vector<int32_t> too_long(spec.context + 1, 1);
  Status s = model->Forward(std::vector<std::span<const int32_t>>{too_long}, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("context of 16"), std::string::npos) << s.message();
  const std::vector<int32_t> bad_id = {1, 40};
  EXPECT_FALSE(model->Forward(std::vector<std::span<const int32_t>>{bad_id}, &out).ok());
}

INSTANTIATE_TEST_SUITE_P(Archs, EncoderModelTest, ::testing::Values("bert", "nomic-bert"),
                         [](const auto& info) {
                           return info.param == "bert" ? std::string("bert") : "nomic_bert";
                         });

TEST(EncoderModelLoadTest, ArchitectureNames) {
  EXPECT_TRUE(IsEncoderArchitecture("bert"));
  EXPECT_TRUE(IsEncoderArchitecture("nomic-bert"));
  EXPECT_FALSE(IsEncoderArchitecture("llama"));
}

TEST(EncoderModelLoadTest, TheDecoderConfigSendsAnEncoderToServeIsEmbedding) {
  Weights w;
  std::vector<uint8_t> bytes = WriteTinyEncoder(TinyEncoder{}, 1, &w);
  auto file = gguf::GgufFile::FromBuffer(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok());
  auto config = ModelConfig::FromGguf(**file);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(config.status().message().find("--is-embedding"), std::string::npos)
      << config.status().message();
}

}  // namespace
}  // namespace radixlm::model
