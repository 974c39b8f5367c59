#include "deepseek2_reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "gguf/gguf_writer.h"
#include "kernels/quant.h"

namespace radixlm::model::testing {

// A namespace of its own: the model tests share one unity-build translation unit.
namespace deepseek2_reference {
namespace {

using gguf::GgmlType;
using gguf::Value;

constexpr float kEps = 1e-6f;
constexpr float kRopeBase = 10000.0f;
constexpr int64_t kOriginalContext = 16;

class Writer {
 public:
  explicit Writer(const DeepSeek2Spec& spec) : s_(spec), rng_(spec.seed) {}

  std::vector<uint8_t> Build() {
    const std::string a = s_.arch;
    auto u32 = [](int64_t v) { return Value::U32(static_cast<uint32_t>(v)); };
    const int64_t h = s_.hidden, heads = s_.n_heads, r = s_.kv_rank, p = s_.rope;
    const int64_t key = s_.nope + p;
    w_.AddMetadata("general.architecture", Value::Str(a));
    w_.AddMetadata(a + ".block_count", u32(s_.n_layers));
    w_.AddMetadata(a + ".context_length", u32(4096));
    w_.AddMetadata(a + ".embedding_length", u32(h));
    w_.AddMetadata(a + ".feed_forward_length", u32(s_.dense_ffn));
    w_.AddMetadata(a + ".attention.head_count", u32(heads));
    w_.AddMetadata(a + ".attention.head_count_kv", u32(1));
    w_.AddMetadata(a + ".attention.key_length", u32(r + p));
    w_.AddMetadata(a + ".attention.value_length", u32(r));
    w_.AddMetadata(a + ".attention.key_length_mla", u32(key));
    w_.AddMetadata(a + ".attention.value_length_mla", u32(s_.value_dim));
    w_.AddMetadata(a + ".attention.kv_lora_rank", u32(r));
    if (s_.q_rank > 0) w_.AddMetadata(a + ".attention.q_lora_rank", u32(s_.q_rank));
    w_.AddMetadata(a + ".attention.layer_norm_rms_epsilon", Value::F32(kEps));
    w_.AddMetadata(a + ".rope.dimension_count", u32(p));
    w_.AddMetadata(a + ".rope.freq_base", Value::F32(kRopeBase));
    w_.AddMetadata(a + ".rope.scaling.type", Value::Str("yarn"));
    w_.AddMetadata(a + ".rope.scaling.factor", Value::F32(s_.yarn_factor));
    w_.AddMetadata(a + ".rope.scaling.original_context_length", u32(kOriginalContext));
    w_.AddMetadata(a + ".rope.scaling.yarn_log_multiplier", Value::F32(0.1f * s_.mscale_all_dim));
    w_.AddMetadata(a + ".leading_dense_block_count", u32(s_.n_dense_layers));
    w_.AddMetadata(a + ".expert_feed_forward_length", u32(s_.expert_ffn));
    w_.AddMetadata(a + ".expert_count", u32(s_.n_experts));
    w_.AddMetadata(a + ".expert_used_count", u32(s_.n_experts_used));
    w_.AddMetadata(a + ".expert_shared_count", u32(s_.n_shared));
    if (s_.weights_scale != 1.0f) {
      w_.AddMetadata(a + ".expert_weights_scale", Value::F32(s_.weights_scale));
    }
    if (s_.weights_norm) w_.AddMetadata(a + ".expert_weights_norm", Value::Bool(true));
    if (s_.gating != 0) w_.AddMetadata(a + ".expert_gating_func", u32(s_.gating));
    if (s_.temperature_scale != 0.0f) {
      w_.AddMetadata(a + ".attention.temperature_scale", Value::F32(s_.temperature_scale));
      w_.AddMetadata(a + ".attention.temperature_length", u32(s_.temperature_length));
    }
    if (s_.n_groups > 0) {
      w_.AddMetadata(a + ".expert_group_count", u32(s_.n_groups));
      w_.AddMetadata(a + ".expert_group_used_count", u32(s_.n_groups_used));
    }

    const GgmlType t = s_.matrix_type;
    const float sh = 1.0f / std::sqrt(float(h));
    Matrix("token_embd.weight", h, s_.vocab, t, 1.0f);
    Vector("output_norm.weight", {h}, 0.8f, 1.2f);
    Matrix("output.weight", h, s_.vocab, t, sh);
    for (int64_t i = 0; i < s_.n_layers; ++i) {
      const std::string b = "blk." + std::to_string(i) + ".";
      Vector(b + "attn_norm.weight", {h}, 0.8f, 1.2f);
      if (s_.q_rank > 0) {
        Matrix(b + "attn_q_a.weight", h, s_.q_rank, t, sh);
        Vector(b + "attn_q_a_norm.weight", {s_.q_rank}, 0.8f, 1.2f);
        Matrix(b + "attn_q_b.weight", s_.q_rank, heads * key, t,
               1.0f / std::sqrt(float(s_.q_rank)));
      } else {
        Matrix(b + "attn_q.weight", h, heads * key, t, sh);
      }
      Matrix(b + "attn_kv_a_mqa.weight", h, r + p, t, sh);
      Vector(b + "attn_kv_a_norm.weight", {r}, 0.8f, 1.2f);
      const float sr = 1.0f / std::sqrt(float(r));
      if (s_.fused_kv_b) {
        Matrix(b + "attn_kv_b.weight", r, heads * (s_.nope + s_.value_dim), t, sr);
      } else {
        // Scores of a useful size: q_nope · k_nope over nope values of ~1.
        Typed(b + "attn_k_b.weight", {s_.nope, r, heads}, s_.nope, r * heads, t,
              2.0f / std::sqrt(float(s_.nope)));
        Typed(b + "attn_v_b.weight", {r, s_.value_dim, heads}, r, s_.value_dim * heads, t, sr);
      }
      Matrix(b + "attn_output.weight", heads * s_.value_dim, h, t,
             1.0f / std::sqrt(float(heads * s_.value_dim)));
      Vector(b + "ffn_norm.weight", {h}, 0.8f, 1.2f);
      if (i < s_.n_dense_layers) {
        Matrix(b + "ffn_gate.weight", h, s_.dense_ffn, t, sh);
        Matrix(b + "ffn_up.weight", h, s_.dense_ffn, t, sh);
        Matrix(b + "ffn_down.weight", s_.dense_ffn, h, t, 1.0f / std::sqrt(float(s_.dense_ffn)));
        continue;
      }
      const int64_t f = s_.expert_ffn, e = s_.n_experts;
      Matrix(b + "ffn_gate_inp.weight", h, e, GgmlType::kF32, 2.0f * sh);
      if (s_.probs_bias) Vector(b + "exp_probs_b.bias", {e}, -0.1f, 0.1f);
      if (s_.fused_gate_up) {
        Typed(b + "ffn_gate_up_exps.weight", {h, 2 * f, e}, h, 2 * f * e, t, 2.0f * sh);
      } else {
        Typed(b + "ffn_gate_exps.weight", {h, f, e}, h, f * e, t, 2.0f * sh);
        Typed(b + "ffn_up_exps.weight", {h, f, e}, h, f * e, t, 2.0f * sh);
      }
      Typed(b + "ffn_down_exps.weight", {f, h, e}, f, h * e, t, 1.0f / std::sqrt(float(f)));
      if (s_.n_shared > 0) {
        const int64_t sf = f * s_.n_shared;
        Matrix(b + "ffn_gate_shexp.weight", h, sf, t, 2.0f * sh);
        Matrix(b + "ffn_up_shexp.weight", h, sf, t, 2.0f * sh);
        Matrix(b + "ffn_down_shexp.weight", sf, h, t, 1.0f / std::sqrt(float(sf)));
      }
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

  DeepSeek2Spec s_;
  std::mt19937 rng_;
  gguf::GgufWriter w_;
};

using Vec = std::vector<double>;

// A tensor dequantized to double, row-major over its ggml rows.
Vec Load(const gguf::GgufFile& file, const std::string& name) {
  const gguf::TensorInfo* t = file.FindTensor(name);
  EXPECT_NE(t, nullptr) << name;
  if (t == nullptr) return {};
  const int64_t cols = t->row_size(), rows = t->num_rows();
  std::vector<float> row(cols);
  Vec out;
  out.reserve(cols * rows);
  for (int64_t r = 0; r < rows; ++r) {
    kernels::DequantizeRow(t->type, t->data + r * kernels::RowBytes(t->type, cols), row.data(),
                           cols);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

// y = W x, W: [rows, cols] (offset: the first element of W in w).
Vec MatVec(const Vec& w, const Vec& x, int64_t rows, int64_t offset = 0) {
  const auto cols = static_cast<int64_t>(x.size());
  Vec y(rows, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (int64_t c = 0; c < cols; ++c) s += w[offset + r * cols + c] * x[c];
    y[r] = s;
  }
  return y;
}

Vec RmsNorm(const Vec& x, const Vec& weight) {
  double ss = 0.0;
  for (double v : x) ss += v * v;
  const double inv = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + kEps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * weight[i];
  return y;
}

double Silu(double x) { return x / (1.0 + std::exp(-x)); }

// ggml's YaRN RoPE on pairs (x[2i], x[2i+1]) of x[0, n) at `pos`, magnitude 1 (DeepSeek's
// rule cancels YaRN's mscale in the rotation).
void Rope(double* x, int64_t n, int64_t pos, float factor) {
  auto corr_dim = [&](double n_rot) {
    return n * std::log(kOriginalContext / (n_rot * 2 * M_PI)) / (2 * std::log(kRopeBase));
  };
  const double low = std::max(0.0, std::floor(corr_dim(32.0)));
  const double high = std::min(static_cast<double>(n - 1), std::ceil(corr_dim(1.0)));
  for (int64_t i = 0; i < n / 2; ++i) {
    const double extrap = pos * std::pow(kRopeBase, -2.0 * i / n);
    const double interp = extrap / factor;
    const double y = (i - low) / std::max(0.001, high - low);
    const double mix = 1.0 - std::clamp(y, 0.0, 1.0);
    const double theta = interp * (1 - mix) + extrap * mix;
    const double x0 = x[2 * i], x1 = x[2 * i + 1];
    x[2 * i] = x0 * std::cos(theta) - x1 * std::sin(theta);
    x[2 * i + 1] = x0 * std::sin(theta) + x1 * std::cos(theta);
  }
}

// down(silu(gate x) * up x), the matrices at the given offsets (experts stacked).
Vec GatedFfn(const Vec& gate, const Vec& up, const Vec& down, const Vec& x, int64_t f,
             int64_t hidden, int64_t offset_gate, int64_t offset_up, int64_t offset_out) {
  const Vec g = MatVec(gate, x, f, offset_gate), u = MatVec(up, x, f, offset_up);
  Vec a(f);
  for (int64_t i = 0; i < f; ++i) a[i] = Silu(g[i]) * u[i];
  return MatVec(down, a, hidden, offset_out);
}

// The n best of scores (ties: the lower index).
std::vector<int64_t> Best(const Vec& scores, int64_t n) {
  std::vector<int64_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  order.resize(n);
  return order;
}

Vec Moe(const gguf::GgufFile& file, const DeepSeek2Spec& s, const std::string& b, const Vec& x) {
  const int64_t e = s.n_experts, f = s.expert_ffn, h = s.hidden;
  const Vec logits = MatVec(Load(file, b + "ffn_gate_inp.weight"), x, e);
  Vec probs(e);
  if (s.gating == 2) {
    for (int64_t i = 0; i < e; ++i) probs[i] = 1.0 / (1.0 + std::exp(-logits[i]));
  } else {
    const double mx = *std::max_element(logits.begin(), logits.end());
    double z = 0.0;
    for (int64_t i = 0; i < e; ++i) z += (probs[i] = std::exp(logits[i] - mx));
    for (double& v : probs) v /= z;
  }
  Vec select = probs;
  if (s.probs_bias) {
    const Vec bias = Load(file, b + "exp_probs_b.bias");
    for (int64_t i = 0; i < e; ++i) select[i] += bias[i];
  }
  if (s.n_groups > 1) {
    const int64_t per = e / s.n_groups;
    Vec group_score(s.n_groups);
    for (int64_t g = 0; g < s.n_groups; ++g) {
      const Vec in(select.begin() + g * per, select.begin() + (g + 1) * per);
      const std::vector<int64_t> top = Best(in, 2);
      group_score[g] = in[top[0]] + in[top[1]];
    }
    const std::vector<int64_t> kept = Best(group_score, s.n_groups_used);
    for (int64_t g = 0; g < s.n_groups; ++g) {
      if (std::find(kept.begin(), kept.end(), g) != kept.end()) continue;
      for (int64_t i = g * per; i < (g + 1) * per; ++i) select[i] = -INFINITY;
    }
  }
  const std::vector<int64_t> chosen = Best(select, s.n_experts_used);
  Vec weights;
  double total = 0.0;
  for (int64_t i : chosen) total += probs[i];
  for (int64_t i : chosen) {
    double wgt = probs[i];
    if (s.weights_norm) wgt /= total;
    weights.push_back(wgt * s.weights_scale);
  }
  // Expert e's gate rows and up rows: apart, or the halves of its block of the fused tensor.
  const bool fused = s.fused_gate_up;
  const Vec gate = Load(file, b + (fused ? "ffn_gate_up_exps.weight" : "ffn_gate_exps.weight"));
  const Vec up = fused ? gate : Load(file, b + "ffn_up_exps.weight");
  const Vec down = Load(file, b + "ffn_down_exps.weight");
  const int64_t stride = fused ? 2 * f * h : f * h;
  const int64_t up_offset = fused ? f * h : 0;
  Vec out(h, 0.0);
  for (size_t j = 0; j < chosen.size(); ++j) {
    const Vec y = GatedFfn(gate, up, down, x, f, h, chosen[j] * stride,
                           chosen[j] * stride + up_offset, chosen[j] * h * f);
    for (int64_t i = 0; i < h; ++i) out[i] += weights[j] * y[i];
  }
  if (s.n_shared > 0) {
    const Vec y =
        GatedFfn(Load(file, b + "ffn_gate_shexp.weight"), Load(file, b + "ffn_up_shexp.weight"),
                 Load(file, b + "ffn_down_shexp.weight"), x, f * s.n_shared, h, 0, 0, 0);
    for (int64_t i = 0; i < h; ++i) out[i] += y[i];
  }
  return out;
}

std::vector<std::vector<float>> Forward(const gguf::GgufFile& file, const DeepSeek2Spec& s,
                                        const std::vector<int32_t>& tokens) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t h = s.hidden, heads = s.n_heads, r = s.kv_rank, p = s.rope, nope = s.nope;
  const int64_t key = nope + p, vd = s.value_dim;
  const double mscale = 1.0 + 0.1 * s.mscale_all_dim * std::log(s.yarn_factor);
  const double scale = mscale * mscale / std::sqrt(static_cast<double>(key));

  const Vec embd = Load(file, "token_embd.weight");
  std::vector<Vec> x(n);
  for (int64_t t = 0; t < n; ++t) {
    x[t].assign(embd.begin() + tokens[t] * h, embd.begin() + (tokens[t] + 1) * h);
  }
  for (int64_t layer = 0; layer < s.n_layers; ++layer) {
    const std::string b = "blk." + std::to_string(layer) + ".";
    const Vec attn_norm = Load(file, b + "attn_norm.weight");
    const Vec kv_a = Load(file, b + "attn_kv_a_mqa.weight");
    const Vec kv_norm = Load(file, b + "attn_kv_a_norm.weight");
    const Vec k_b = Load(file, b + "attn_k_b.weight"), v_b = Load(file, b + "attn_v_b.weight");
    const Vec wo = Load(file, b + "attn_output.weight");
    // Every token's expanded keys and values per head: k [n][heads][key], v [n][heads][vd].
    std::vector<Vec> q(n), k(n), v(n);
    for (int64_t t = 0; t < n; ++t) {
      const Vec xn = RmsNorm(x[t], attn_norm);
      if (s.q_rank > 0) {
        const Vec qa = RmsNorm(MatVec(Load(file, b + "attn_q_a.weight"), xn, s.q_rank),
                               Load(file, b + "attn_q_a_norm.weight"));
        q[t] = MatVec(Load(file, b + "attn_q_b.weight"), qa, heads * key);
      } else {
        q[t] = MatVec(Load(file, b + "attn_q.weight"), xn, heads * key);
      }
      const Vec ckv = MatVec(kv_a, xn, r + p);
      const Vec latent = RmsNorm(Vec(ckv.begin(), ckv.begin() + r), kv_norm);
      Vec k_pe(ckv.begin() + r, ckv.end());
      Rope(k_pe.data(), p, t, s.yarn_factor);
      k[t].assign(heads * key, 0.0);
      v[t].assign(heads * vd, 0.0);
      for (int64_t hh = 0; hh < heads; ++hh) {
        Rope(q[t].data() + hh * key + nope, p, t, s.yarn_factor);
        // k_nope = attn_k_b[h]ᵀ latent (attn_k_b[h]: [r rows, nope cols]).
        for (int64_t j = 0; j < nope; ++j) {
          double sum = 0.0;
          for (int64_t i = 0; i < r; ++i) sum += k_b[(hh * r + i) * nope + j] * latent[i];
          k[t][hh * key + j] = sum;
        }
        std::copy(k_pe.begin(), k_pe.end(), k[t].begin() + hh * key + nope);
        const Vec vh = MatVec(v_b, latent, vd, hh * vd * r);
        std::copy(vh.begin(), vh.end(), v[t].begin() + hh * vd);
      }
    }
    for (int64_t t = 0; t < n; ++t) {
      // Llama 4's temperature multiplies Q, so every score of the query.
      const double temperature =
          s.temperature_scale == 0.0f
              ? 1.0
              : std::log(std::floor(static_cast<double>(t) / s.temperature_length) + 1.0) *
                        s.temperature_scale +
                    1.0;
      Vec o(heads * vd, 0.0);
      for (int64_t hh = 0; hh < heads; ++hh) {
        Vec scores(t + 1);
        for (int64_t j = 0; j <= t; ++j) {
          double dot = 0.0;
          for (int64_t d = 0; d < key; ++d) dot += q[t][hh * key + d] * k[j][hh * key + d];
          scores[j] = dot * scale * temperature;
        }
        const double mx = *std::max_element(scores.begin(), scores.end());
        double z = 0.0;
        for (double& sc : scores) z += (sc = std::exp(sc - mx));
        for (int64_t j = 0; j <= t; ++j) {
          for (int64_t d = 0; d < vd; ++d) o[hh * vd + d] += scores[j] / z * v[j][hh * vd + d];
        }
      }
      const Vec proj = MatVec(wo, o, h);
      for (int64_t i = 0; i < h; ++i) x[t][i] += proj[i];
    }
    const Vec ffn_norm = Load(file, b + "ffn_norm.weight");
    for (int64_t t = 0; t < n; ++t) {
      const Vec xn = RmsNorm(x[t], ffn_norm);
      const Vec y =
          layer < s.n_dense_layers
              ? GatedFfn(Load(file, b + "ffn_gate.weight"), Load(file, b + "ffn_up.weight"),
                         Load(file, b + "ffn_down.weight"), xn, s.dense_ffn, h, 0, 0, 0)
              : Moe(file, s, b, xn);
      for (int64_t i = 0; i < h; ++i) x[t][i] += y[i];
    }
  }
  const Vec out_norm = Load(file, "output_norm.weight");
  const Vec out_w = Load(file, "output.weight");
  std::vector<std::vector<float>> logits;
  for (int64_t t = 0; t < n; ++t) {
    const Vec y = MatVec(out_w, RmsNorm(x[t], out_norm), s.vocab);
    logits.emplace_back(y.begin(), y.end());
  }
  return logits;
}

}  // namespace
}  // namespace deepseek2_reference

std::vector<uint8_t> BuildDeepSeek2(const DeepSeek2Spec& spec) {
  return deepseek2_reference::Writer(spec).Build();
}

std::vector<std::vector<float>> DeepSeek2ReferenceForward(const gguf::GgufFile& file,
                                                          const DeepSeek2Spec& spec,
                                                          const std::vector<int32_t>& tokens) {
  return deepseek2_reference::Forward(file, spec, tokens);
}

}  // namespace radixlm::model::testing
