#include "reference_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

#include "kernels/dot.h"
#include "kernels/fp16.h"
#include "kernels/packed_weights.h"
#include "kernels/quant.h"
#include "model/tensor_names.h"

namespace radixlm::model::testing {

namespace {

// GELU as ggml's CPU backend (and so radixlm) evaluates it: input and output rounded to F16.
double Gelu(double x) {
  if (x <= -10.0) return 0.0;
  if (x >= 10.0) return x;
  const double xh = kernels::F16ToF32(kernels::F32ToF16(static_cast<float>(x)));
  const double g =
      0.5 * xh * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (xh + 0.044715 * xh * xh * xh)));
  return kernels::F16ToF32(kernels::F32ToF16(static_cast<float>(g)));
}
double Silu(double x) { return x / (1.0 + std::exp(-x)); }
// gpt-oss's clamped SwiGLU (llama.cpp's swiglu_oai: alpha 1.702, limit 7).
double SwigluOai(double gate, double up) {
  const double g = std::min(gate, 7.0);
  return g / (1.0 + std::exp(-1.702 * g)) * (std::clamp(up, -7.0, 7.0) + 1.0);
}

// Every value of a tensor of any shape, in order ([n] rows of a 2-D bias: row r at r * cols).
std::vector<float> LoadFlat(const gguf::GgufFile& file, const std::string& name) {
  const gguf::TensorInfo* t = file.FindTensor(name);
  assert(t != nullptr);
  std::vector<float> v(t->num_elements());
  const int64_t cols = t->row_size();
  const size_t row_bytes = kernels::RowBytes(t->type, cols);
  for (int64_t r = 0; r < t->num_rows(); ++r) {
    kernels::DequantizeRow(t->type, t->data + r * row_bytes, v.data() + r * cols, cols);
  }
  return v;
}

// The [n][cols] rows of a 2-D tensor [cols, n] (per-expert biases).
std::vector<std::vector<float>> LoadRows(const gguf::GgufFile& file, const std::string& name) {
  const std::vector<float> flat = LoadFlat(file, name);
  const int64_t cols = file.FindTensor(name)->row_size();
  std::vector<std::vector<float>> rows;
  for (size_t at = 0; at < flat.size(); at += cols) {
    rows.emplace_back(flat.begin() + at, flat.begin() + at + cols);
  }
  return rows;
}

std::string LayerName(int64_t layer, const char* suffix) {
  return "blk." + std::to_string(layer) + "." + suffix;
}

}  // namespace

ReferenceModel::ReferenceModel(const gguf::GgufFile& file, kernels::KvDtype kv_dtype,
                               ReferenceOptions options)
    : kv_dtype_(kv_dtype), options_(options) {
  auto config = ModelConfig::FromGguf(file);
  assert(config.ok());
  config_ = *config;
  token_embd_ = LoadMatrix(file, "token_embd.weight");
  output_ = file.FindTensor("output.weight") ? LoadMatrix(file, "output.weight") : token_embd_;
  output_norm_ = LoadVector(file, "output_norm.weight");
  if (file.FindTensor("rope_freqs.weight")) rope_freqs_ = LoadVector(file, "rope_freqs.weight");
  if (config_.rope_original_context > 0) {  // LongRoPE, at the model's default context
    rope_freqs_ = LoadVector(file, config_.context_length > config_.rope_original_context
                                       ? "rope_factors_long.weight"
                                       : "rope_factors_short.weight");
  }
  if (config_.per_layer_input_size > 0) {
    per_layer_token_embd_ = LoadMatrix(file, "per_layer_token_embd.weight");
    per_layer_model_proj_ = LoadMatrix(file, "per_layer_model_proj.weight");
    per_layer_proj_norm_ = LoadVector(file, "per_layer_proj_norm.weight");
  }
  for (int64_t i = 0; i < config_.n_layers; ++i) {
    const int64_t qs = config_.LayerQSize(i);
    const int64_t kvs = config_.LayerKvSize(i);
    // The tensors the family gives this layer (those it marks optional are read if present).
    const LayerTensorNeeds& needs = config_.layer_tensors[i];
    auto vector = [&](LayerTensor t) {
      const std::string name = LayerTensorName(i, t);
      if (needs[t] == TensorNeed::kAbsent || file.FindTensor(name) == nullptr) {
        return std::vector<float>();
      }
      return LoadVector(file, name);
    };
    Layer l;
    l.attn_norm = vector(LayerTensor::kAttnNorm);
    if (config_.fused_qkv) {  // Q, K, V: consecutive row ranges of one matrix
      const Matrix qkv = LoadMatrix(file, LayerName(i, "attn_qkv.weight"));
      l.wq = RowRange(qkv, 0, qs);
      l.wk = RowRange(qkv, qs, kvs);
      l.wv = RowRange(qkv, qs + kvs, kvs);
    } else {
      l.wq = LoadMatrix(file, LayerName(i, "attn_q.weight"));
      // (gemma4: none in a layer reading another's K/V; without attn_v, V is K's projection)
      if (needs[LayerTensor::kAttnK] != TensorNeed::kAbsent) {
        l.wk = LoadMatrix(file, LayerName(i, "attn_k.weight"));
        l.wv = file.FindTensor(LayerName(i, "attn_v.weight"))
                   ? LoadMatrix(file, LayerName(i, "attn_v.weight"))
                   : l.wk;
      }
    }
    l.wo = LoadMatrix(file, LayerName(i, "attn_output.weight"));
    l.bq = vector(LayerTensor::kAttnQBias);
    l.bk = vector(LayerTensor::kAttnKBias);
    l.bv = vector(LayerTensor::kAttnVBias);
    if (const std::vector<float> bqkv = vector(LayerTensor::kAttnQkvBias); !bqkv.empty()) {
      const auto q_end = bqkv.begin() + qs;
      l.bq.assign(bqkv.begin(), q_end);
      l.bk.assign(q_end, q_end + kvs);
      l.bv.assign(q_end + kvs, bqkv.end());
    }
    l.q_norm = vector(LayerTensor::kAttnQNorm);
    l.k_norm = vector(LayerTensor::kAttnKNorm);
    l.post_attn_norm = vector(LayerTensor::kPostAttnNorm);
    l.post_ffn_norm = vector(LayerTensor::kPostFfnNorm);
    l.ffn_norm = vector(LayerTensor::kFfnNorm);
    if (config_.per_layer_input_size > 0) {
      l.per_layer_inp_gate = LoadMatrix(file, LayerTensorName(i, LayerTensor::kPerLayerInpGate));
      l.per_layer_proj = LoadMatrix(file, LayerTensorName(i, LayerTensor::kPerLayerProj));
      l.per_layer_post_norm = vector(LayerTensor::kPerLayerPostNorm);
    }
    l.out_scale = vector(LayerTensor::kLayerOutScale);
    if (config_.post_attn_norm_is_ffn_norm) {  // (gpt-oss: no ffn_norm of its own)
      l.ffn_norm = std::move(l.post_attn_norm);
      l.post_attn_norm.clear();
    }
    l.bo = vector(LayerTensor::kAttnOutputBias);
    l.sinks = vector(LayerTensor::kAttnSinks);
    l.router_b = vector(LayerTensor::kFfnGateInpBias);
    auto rows = [&](LayerTensor t) {
      const std::string name = LayerTensorName(i, t);
      if (needs[t] == TensorNeed::kAbsent || file.FindTensor(name) == nullptr) {
        return std::vector<std::vector<float>>();
      }
      return LoadRows(file, name);
    };
    l.gate_exps_b = rows(LayerTensor::kFfnGateExpsBias);
    l.up_exps_b = rows(LayerTensor::kFfnUpExpsBias);
    l.down_exps_b = rows(LayerTensor::kFfnDownExpsBias);
    if (config_.n_experts > 0) {
      l.router = LoadMatrix(file, LayerName(i, "ffn_gate_inp.weight"));
      l.gate_exps = LoadExperts(file, LayerName(i, "ffn_gate_exps.weight"));
      l.up_exps = LoadExperts(file, LayerName(i, "ffn_up_exps.weight"));
      l.down_exps = LoadExperts(file, LayerName(i, "ffn_down_exps.weight"));
      layers_.push_back(std::move(l));
      continue;
    }
    if (config_.fused_gate_up) {  // the gate's rows, then the up's
      const Matrix gate_up = LoadMatrix(file, LayerName(i, "ffn_up.weight"));
      const int64_t ffn = config_.LayerFfnSize(i);
      l.gate = RowRange(gate_up, 0, ffn);
      l.up = RowRange(gate_up, ffn, ffn);
    } else {
      l.gate = LoadMatrix(file, LayerName(i, "ffn_gate.weight"));
      l.up = LoadMatrix(file, LayerName(i, "ffn_up.weight"));
    }
    l.down = LoadMatrix(file, LayerName(i, "ffn_down.weight"));
    layers_.push_back(std::move(l));
  }
}

ReferenceModel::Matrix ReferenceModel::LoadMatrix(const gguf::GgufFile& file,
                                                  const std::string& name) const {
  const gguf::TensorInfo* t = file.FindTensor(name);
  assert(t != nullptr && t->shape.size() == 2);
  Matrix m;
  m.type = t->type;
  m.cols = t->shape[0];
  m.rows = t->shape[1];
  m.w.resize(m.rows * m.cols);
  const size_t row_bytes = kernels::RowBytes(t->type, m.cols);
  for (int64_t r = 0; r < m.rows; ++r) {
    kernels::DequantizeRow(t->type, t->data + r * row_bytes, m.w.data() + r * m.cols, m.cols);
  }
  return m;
}

std::vector<ReferenceModel::Matrix> ReferenceModel::LoadExperts(const gguf::GgufFile& file,
                                                                const std::string& name) const {
  const gguf::TensorInfo* t = file.FindTensor(name);
  assert(t != nullptr && t->shape.size() == 3);
  const int64_t cols = t->shape[0], rows = t->shape[1];
  const size_t row_bytes = kernels::RowBytes(t->type, cols);
  std::vector<Matrix> out(t->shape[2]);
  for (size_t e = 0; e < out.size(); ++e) {
    Matrix& m = out[e];
    m.type = t->type;
    m.cols = cols;
    m.rows = rows;
    m.w.resize(rows * cols);
    for (int64_t r = 0; r < rows; ++r) {
      kernels::DequantizeRow(t->type, t->data + (e * rows + r) * row_bytes, m.w.data() + r * cols,
                             cols);
    }
  }
  return out;
}

ReferenceModel::Matrix ReferenceModel::RowRange(const Matrix& m, int64_t first, int64_t rows) {
  Matrix out;
  out.type = m.type;
  out.rows = rows;
  out.cols = m.cols;
  out.w.assign(m.w.begin() + first * m.cols, m.w.begin() + (first + rows) * m.cols);
  return out;
}

std::vector<float> ReferenceModel::LoadVector(const gguf::GgufFile& file,
                                              const std::string& name) const {
  const gguf::TensorInfo* t = file.FindTensor(name);
  assert(t != nullptr && t->shape.size() == 1);
  std::vector<float> v(t->shape[0]);
  kernels::DequantizeRow(t->type, t->data, v.data(), t->shape[0]);
  return v;
}

std::vector<float> ReferenceModel::MatVec(const Matrix& m, const std::vector<float>& x_in) const {
  assert(static_cast<int64_t>(x_in.size()) == m.cols);
  // Round the input through the activation format the kernels dot this weight type with.
  std::vector<float> x = x_in;
  const gguf::GgmlType act = kernels::ActivationType(m.type);
  if (act != gguf::GgmlType::kF32 && options_.round_activations) {
    std::vector<uint8_t> q(kernels::RowBytes(act, m.cols));
    kernels::QuantizeRow(act, x_in.data(), q.data(), m.cols);
    kernels::DequantizeRow(act, q.data(), x.data(), m.cols);
  }
  // BF16 weights packed for the BF16 GEMM take bf16 activations (kernels/packed_weights.h).
  if (m.type == gguf::GgmlType::kBF16 && options_.round_activations && m.cols % 32 == 0 &&
      kernels::PackedGemmAvailable() &&
      kernels::ActiveBf16GemmPath() != kernels::Bf16GemmPath::kNone) {
    for (float& v : x) v = kernels::Bf16ToF32(kernels::F32ToBf16(v));
  }
  std::vector<float> y(m.rows);
  for (int64_t r = 0; r < m.rows; ++r) {
    double acc = 0.0;
    for (int64_t c = 0; c < m.cols; ++c) acc += double{m.w[r * m.cols + c]} * x[c];
    y[r] = static_cast<float>(acc);
  }
  return y;
}

std::vector<float> ReferenceModel::RmsNorm(const std::vector<float>& x,
                                           const std::vector<float>& w) const {
  if (w.empty()) return x;  // a block without this norm
  double ss = 0.0;
  for (float v : x) ss += double{v} * v;
  const double inv = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + config_.rms_norm_eps);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<float>(x[i] * inv * w[i]);
  return y;
}

std::vector<float> ReferenceModel::RmsNormUnweighted(const std::vector<float>& x) const {
  return RmsNorm(x, std::vector<float>(x.size(), 1.0f));
}

std::vector<std::vector<float>> ReferenceModel::PerLayerInputs(
    const std::vector<int32_t>& tokens, const std::vector<std::vector<float>>& x) const {
  const int64_t p = config_.per_layer_input_size;
  const int64_t all = p * config_.n_layers;
  std::vector<std::vector<float>> out;
  for (size_t t = 0; t < tokens.size(); ++t) {
    // (norm(embedding · model_projᵀ / sqrt(hidden)) + token row * sqrt(P)) / sqrt(2), per
    // layer's P values.
    std::vector<float> proj = MatVec(per_layer_model_proj_, x[t]);
    for (float& e : proj) e /= std::sqrt(static_cast<float>(config_.hidden_size));
    std::vector<float> in(all);
    for (int64_t l = 0; l < config_.n_layers; ++l) {
      const std::vector<float> part =
          RmsNorm(std::vector<float>(proj.begin() + l * p, proj.begin() + (l + 1) * p),
                  per_layer_proj_norm_);
      for (int64_t i = 0; i < p; ++i) {
        const float token =
            per_layer_token_embd_.w[tokens[t] * all + l * p + i] * std::sqrt(static_cast<float>(p));
        in[l * p + i] = static_cast<float>((double{part[i]} + token) / std::sqrt(2.0));
      }
    }
    out.push_back(std::move(in));
  }
  return out;
}

void ReferenceModel::Rope(float* head, int64_t t, bool sliding, int64_t rope_dims) const {
  const int64_t d = rope_dims;  // the first rope_dims values rotate, the rest stay
  const double base = sliding ? config_.rope_base_local : config_.rope_base;
  const double scale = sliding ? config_.rope_freq_scale_local : config_.rope_freq_scale;
  const bool yarn = config_.rope_yarn && (!sliding || config_.rope_yarn_sliding);
  // YaRN (the paper's ramp over ggml's correction range; magnitude as llama.cpp scales it).
  double low = 0.0, high = 0.0, m = config_.rope_attn_factor;
  if (yarn) {
    auto corr_dim = [&](double beta) {
      return d * std::log(config_.rope_yarn_original_context / (beta * 2 * M_PI)) /
             (2 * std::log(base));
    };
    low = std::max(0.0, std::floor(corr_dim(config_.rope_yarn_beta_fast)));
    high = std::min(d - 1.0, std::ceil(corr_dim(config_.rope_yarn_beta_slow)));
    const double factor = 1.0 / scale;
    auto mscale = [&](double mul) {
      return factor <= 1.0 ? 1.0 : 0.1 * mul * std::log(factor) + 1;
    };
    m = (config_.rope_yarn_log_mul != 0.0f ? mscale(1.0) / mscale(config_.rope_yarn_log_mul)
                                           : mscale(1.0)) *
        config_.rope_attn_factor;
  }
  const auto& sections = config_.mrope_sections;
  const int64_t n_sectors = sections[0] + sections[1] + sections[2];
  const int64_t n_interleaved = n_sectors + config_.mrope_section_e;
  for (int64_t k = 0; k < d / 2; ++k) {
    int64_t pos = t;
    if (config_.mrope_interleaved) {  // t, h, w pair by pair; past a section's share: 0
      const int64_t sector = k % n_interleaved;
      int section = 3;
      for (int s = 0; s < 3; ++s) {
        if (sector % 3 == s && sector < 3 * sections[s]) section = s;
      }
      pos = section == 3 ? 0 : rope_positions_.empty() ? t : rope_positions_.at(t)[section];
    } else if (!rope_positions_.empty()) {  // the pair's section: t, h or w
      const int64_t sector = k % n_sectors;
      const int section = sector < sections[0] ? 0 : sector < sections[0] + sections[1] ? 1 : 2;
      pos = rope_positions_.at(t)[section];
    }
    double extrap = pos * std::pow(base, -2.0 * k / d);
    if (!sliding && !rope_freqs_.empty()) extrap /= rope_freqs_[k];
    double theta = extrap * scale;
    if (yarn) {
      const double mix = 1.0 - std::clamp((k - low) / std::max(0.001, high - low), 0.0, 1.0);
      theta = theta * (1.0 - mix) + extrap * mix;
    }
    const int64_t ia = config_.rope_layout == RopeLayout::kNeox ? k : 2 * k;
    const int64_t ib = config_.rope_layout == RopeLayout::kNeox ? k + d / 2 : 2 * k + 1;
    const double a = head[ia];
    const double b = head[ib];
    head[ia] = static_cast<float>((a * std::cos(theta) - b * std::sin(theta)) * m);
    head[ib] = static_cast<float>((a * std::sin(theta) + b * std::cos(theta)) * m);
  }
}

float ReferenceModel::RoundKv(float x) const {
  if (!options_.round_kv) return x;
  switch (kv_dtype_) {
    case kernels::KvDtype::kBF16:
      return kernels::Bf16ToF32(kernels::F32ToBf16(x));
    case kernels::KvDtype::kFp8E5M2:
      return kernels::E5M2ToF32(kernels::F32ToE5M2(x));
    case kernels::KvDtype::kF16:
      break;
  }
  return kernels::F16ToF32(kernels::F32ToF16(x));
}

float ReferenceModel::RoundQuery(float x) const {
  if (options_.f16_attention_accumulator) return kernels::F16ToF32(kernels::F32ToF16(x));
  if (!options_.round_kv || kv_dtype_ != kernels::KvDtype::kBF16) return x;
  return kernels::Bf16ToF32(kernels::F32ToBf16(x));
}

void ReferenceModel::F16AccumulatorAttention(const std::vector<double>& scores,
                                             const std::vector<int64_t>& keys,
                                             const std::vector<std::vector<float>>& v,
                                             int64_t kv_head, int64_t d, float* out) const {
  auto f16 = [](float x) { return kernels::F16ToF32(kernels::F32ToF16(x)); };
  std::vector<float> acc(d, 0.0f);
  float sum = 0.0f;
  float max_s = -INFINITY;
  for (size_t i = 0; i < keys.size(); ++i) {
    const float s = static_cast<float>(scores[i]);
    float old_scale = 1.0f;  // the running output's factor when s is a new maximum
    float weight = 1.0f;     // exp(s - max) of this key
    if (s > max_s) {
      old_scale = std::exp(max_s - s);
      max_s = s;
      for (float& e : acc) e = f16(e * old_scale);
    } else {
      weight = std::exp(s - max_s);
    }
    const float* vj = v[keys[i]].data() + kv_head * d;
    for (int64_t e = 0; e < d; ++e) acc[e] = f16(std::fma(vj[e], weight, acc[e]));
    sum = sum * old_scale + weight;
  }
  for (int64_t e = 0; e < d; ++e) out[e] = acc[e] * (1.0f / sum);
}

std::vector<float> ReferenceModel::GatedFfn(const Matrix& gate, const Matrix& up,
                                            const Matrix& down, const std::vector<float>& xn,
                                            const std::vector<float>& gate_b,
                                            const std::vector<float>& up_b,
                                            const std::vector<float>& down_b) const {
  std::vector<float> g = MatVec(gate, xn);
  std::vector<float> u = MatVec(up, xn);
  for (size_t i = 0; i < gate_b.size(); ++i) g[i] += gate_b[i];
  for (size_t i = 0; i < up_b.size(); ++i) u[i] += up_b[i];
  for (size_t i = 0; i < g.size(); ++i) {
    switch (config_.ffn_activation) {
      case FfnActivation::kGeluTanh:
        g[i] = static_cast<float>(Gelu(g[i]) * u[i]);
        break;
      case FfnActivation::kSwigluOai:
        g[i] = static_cast<float>(SwigluOai(g[i], u[i]));
        break;
      case FfnActivation::kSilu:
        g[i] = static_cast<float>(Silu(g[i]) * u[i]);
        break;
    }
  }
  std::vector<float> y = MatVec(down, g);
  for (size_t i = 0; i < down_b.size(); ++i) y[i] += down_b[i];
  return y;
}

std::vector<float> ReferenceModel::Ffn(const Layer& l, const std::vector<float>& xn) const {
  if (l.gate_exps.empty()) return GatedFfn(l.gate, l.up, l.down, xn);
  if (config_.expert_softmax_after_topk) {
    // gpt-oss: the top logits (router bias added) choose; the softmax of those alone weighs.
    std::vector<float> logits = MatVec(l.router, xn);
    for (size_t e = 0; e < l.router_b.size(); ++e) logits[e] += l.router_b[e];
    std::vector<int> order(logits.size());
    for (size_t e = 0; e < order.size(); ++e) order[e] = static_cast<int>(e);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return logits[a] > logits[b]; });
    order.resize(config_.n_experts_used);
    double z = 0.0;
    for (int e : order) z += std::exp(double{logits[e]} - logits[order[0]]);
    auto bias = [](const std::vector<std::vector<float>>& b, int e) {
      return b.empty() ? std::vector<float>() : b[e];
    };
    std::vector<double> out(config_.hidden_size, 0.0);
    for (int e : order) {
      const double weight = std::exp(double{logits[e]} - logits[order[0]]) / z;
      const std::vector<float> y =
          GatedFfn(l.gate_exps[e], l.up_exps[e], l.down_exps[e], xn, bias(l.gate_exps_b, e),
                   bias(l.up_exps_b, e), bias(l.down_exps_b, e));
      for (size_t i = 0; i < out.size(); ++i) out[i] += weight * y[i];
    }
    return std::vector<float>(out.begin(), out.end());
  }
  // Softmax over the router's logits, the n_experts_used most probable experts, their
  // probabilities renormalized to sum 1 (llama.cpp's build_moe_ffn with softmax gating).
  const std::vector<float> logits = MatVec(l.router, xn);
  std::vector<double> p(logits.size());
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (size_t e = 0; e < p.size(); ++e) sum += (p[e] = std::exp(logits[e] - max));
  for (double& v : p) v /= sum;
  std::vector<int> order(p.size());
  for (size_t e = 0; e < order.size(); ++e) order[e] = static_cast<int>(e);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
  order.resize(config_.n_experts_used);
  double chosen_sum = 0.0;
  for (int e : order) chosen_sum += p[e];
  std::vector<double> out(config_.hidden_size, 0.0);
  for (int e : order) {
    double weight = p[e] * config_.expert_weights_scale;
    if (config_.expert_weights_norm) weight /= chosen_sum;
    const std::vector<float> y = GatedFfn(l.gate_exps[e], l.up_exps[e], l.down_exps[e], xn);
    for (size_t i = 0; i < out.size(); ++i) out[i] += weight * y[i];
  }
  return std::vector<float>(out.begin(), out.end());
}

std::vector<std::vector<float>> ReferenceModel::Forward(
    const std::vector<int32_t>& tokens, const std::vector<ReferenceEmbeddingSpan>& spans) const {
  const ModelConfig& c = config_;
  std::vector<std::vector<float>> logits = ForwardHidden(tokens, spans);
  for (std::vector<float>& row : logits) {
    row = MatVec(output_, row);
    for (float& z : row) {
      z *= c.output_scale;
      if (c.final_logit_softcap > 0.0f) {
        z = static_cast<float>(c.final_logit_softcap *
                               std::tanh(double{z} / c.final_logit_softcap));
      }
    }
  }
  return logits;
}

std::vector<std::vector<float>> ReferenceModel::ForwardHidden(
    const std::vector<int32_t>& tokens, const std::vector<ReferenceEmbeddingSpan>& spans) const {
  const ModelConfig& c = config_;
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t h = c.hidden_size;

  // Residual stream per token.
  std::vector<std::vector<float>> x(n, std::vector<float>(h));
  std::vector<int64_t> last_key(n);  // the last key each token sees
  std::vector<bool> given(n, false);
  for (int64_t t = 0; t < n; ++t) last_key[t] = t;
  for (const ReferenceEmbeddingSpan& span : spans) {
    const auto len = static_cast<int64_t>(span.rows.size());
    for (int64_t i = 0; i < len; ++i) {
      x[span.begin + i].assign(span.rows[i].begin(), span.rows[i].begin() + h);
      given[span.begin + i] = true;
      if (span.bidirectional) last_key[span.begin + i] = span.begin + len - 1;
    }
  }
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; !given[t] && i < h; ++i) {
      x[t][i] = token_embd_.w[tokens[t] * h + i];
      if (c.scale_embeddings) x[t][i] *= c.embedding_scale;
    }
  }
  const int64_t ple = c.per_layer_input_size;
  const std::vector<std::vector<float>> per_layer =
      ple > 0 ? PerLayerInputs(tokens, x) : std::vector<std::vector<float>>();
  // Each layer's K and V per token, kept for the layers that read another's (gemma4).
  std::vector<std::vector<std::vector<float>>> layer_k(c.n_layers), layer_v(c.n_layers);

  for (int64_t li = 0; li < c.n_layers; ++li) {
    const Layer& l = layers_[li];
    const bool sliding = c.IsSlidingLayer(li);
    const LayerAttentionConfig la = c.LayerAttention(li);
    const int64_t d = la.head_dim;
    const int64_t n_kv_heads = la.n_kv_heads;
    const int64_t group = c.n_heads / n_kv_heads;
    const bool own_kv = la.kv_layer == li;
    const int64_t window = sliding ? c.sliding_window : 0;
    const bool rope = c.no_rope_layer_interval <= 0 || (li + 1) % c.no_rope_layer_interval != 0;

    std::vector<std::vector<float>> q(n), k(n), v(n);
    for (int64_t t = 0; t < n; ++t) {
      const std::vector<float> xn = RmsNorm(x[t], l.attn_norm);
      q[t] = MatVec(l.wq, xn);
      if (own_kv) {
        k[t] = MatVec(l.wk, xn);
        v[t] = MatVec(l.wv, xn);
      }
      for (size_t i = 0; i < l.bq.size(); ++i) q[t][i] += l.bq[i];
      for (size_t i = 0; i < l.bk.size(); ++i) k[t][i] += l.bk[i];
      for (size_t i = 0; i < l.bv.size(); ++i) v[t][i] += l.bv[i];
      if (c.qk_norm && !c.qk_norm_per_head) {  // over the whole projection
        q[t] = RmsNorm(q[t], l.q_norm);
        k[t] = RmsNorm(k[t], l.k_norm);
      }
      for (int64_t head = 0; head < c.n_heads; ++head) {
        float* qh = q[t].data() + head * d;
        if (c.qk_norm && c.qk_norm_per_head) {
          std::vector<float> tmp = RmsNorm(std::vector<float>(qh, qh + d), l.q_norm);
          std::copy(tmp.begin(), tmp.end(), qh);
        }
        if (rope) Rope(qh, t, sliding, la.rope_dims);
        if (c.attn_temperature_scale > 0.0f) {  // llama 4's attention temperature
          const double temp =
              std::log(std::floor((t + c.attn_temperature_offset) / c.attn_temperature_floor) +
                       1.0) *
                  c.attn_temperature_scale +
              1.0;
          for (int64_t e = 0; e < d; ++e) qh[e] = static_cast<float>(qh[e] * temp);
        }
      }
      for (int64_t head = 0; own_kv && head < n_kv_heads; ++head) {
        float* kh = k[t].data() + head * d;
        if (c.qk_norm && c.qk_norm_per_head) {
          std::vector<float> tmp = RmsNorm(std::vector<float>(kh, kh + d), l.k_norm);
          std::copy(tmp.begin(), tmp.end(), kh);
        }
        if (c.v_norm) {
          float* vh = v[t].data() + head * d;
          std::vector<float> tmp = RmsNormUnweighted(std::vector<float>(vh, vh + d));
          std::copy(tmp.begin(), tmp.end(), vh);
        }
        if (rope) Rope(kh, t, sliding, la.rope_dims);
      }
      for (float& e : k[t]) e = RoundKv(e);
      for (float& e : v[t]) e = RoundKv(e);
    }

    if (own_kv) {
      layer_k[li] = std::move(k);
      layer_v[li] = std::move(v);
    }
    const std::vector<std::vector<float>>& keys_of = layer_k[la.kv_layer];
    const std::vector<std::vector<float>>& values_of = layer_v[la.kv_layer];
    for (int64_t t = 0; t < n; ++t) {
      std::vector<float> attn(c.n_heads * d, 0.0f);
      for (int64_t head = 0; head < c.n_heads; ++head) {
        const int64_t kvh = head / group;
        // As the kernels (kernels/attention.h) do: Q (scaled first when the graph scales Q)
        // stays float but with a BF16 cache (RoundQuery); probabilities stay exact.
        const float q_scale = c.scale_query ? c.attention_scale : 1.0f;
        const double s_scale = c.scale_query ? 1.0 : c.attention_scale;
        std::vector<float> qh(d);
        for (int64_t e = 0; e < d; ++e) qh[e] = RoundQuery(q[t][head * d + e] * q_scale);
        std::vector<double> scores;
        std::vector<int64_t> keys;
        for (int64_t j = 0; j <= last_key[t]; ++j) {
          if (window > 0 && t - j >= window) continue;
          double s = 0.0;
          for (int64_t e = 0; e < d; ++e) s += double{qh[e]} * keys_of[j][kvh * d + e];
          s *= s_scale;
          if (c.attn_logit_softcap > 0.0f) {
            s = c.attn_logit_softcap * std::tanh(s / c.attn_logit_softcap);
          }
          scores.push_back(s);
          keys.push_back(j);
        }
        if (options_.f16_attention_accumulator) {
          F16AccumulatorAttention(scores, keys, values_of, kvh, d, attn.data() + head * d);
          continue;
        }
        double max_s = scores[0];
        for (double s : scores) max_s = std::max(max_s, s);
        double sum = 0.0;
        if (!l.sinks.empty()) {  // gpt-oss: a logit of the head's own with no value
          max_s = std::max(max_s, double{l.sinks[head]});
          sum += std::exp(l.sinks[head] - max_s);
        }
        for (double& s : scores) sum += (s = std::exp(s - max_s));
        for (size_t i = 0; i < keys.size(); ++i) {
          const double p = scores[i] / sum;
          for (int64_t e = 0; e < d; ++e) {
            attn[head * d + e] += static_cast<float>(p * values_of[keys[i]][kvh * d + e]);
          }
        }
      }
      std::vector<float> o = MatVec(l.wo, attn);
      for (size_t i = 0; i < l.bo.size(); ++i) o[i] += l.bo[i];
      o = RmsNorm(o, l.post_attn_norm);
      for (int64_t i = 0; i < h; ++i) x[t][i] += o[i] * c.residual_scale;

      const std::vector<float> f = RmsNorm(Ffn(l, RmsNorm(x[t], l.ffn_norm)), l.post_ffn_norm);
      for (int64_t i = 0; i < h; ++i) x[t][i] += f[i] * c.residual_scale;

      if (ple > 0) {  // x += post_norm(proj(gelu(inp_gate(x)) * this layer's input))
        std::vector<float> g = MatVec(l.per_layer_inp_gate, x[t]);
        for (int64_t i = 0; i < ple; ++i) {
          g[i] = static_cast<float>(Gelu(g[i]) * per_layer[t][li * ple + i]);
        }
        const std::vector<float> pr = RmsNorm(MatVec(l.per_layer_proj, g), l.per_layer_post_norm);
        for (int64_t i = 0; i < h; ++i) x[t][i] += pr[i];
      }
      if (!l.out_scale.empty()) {
        for (float& e : x[t]) e *= l.out_scale[0];
      }
    }
    if (li < c.n_deepstack_layers) {  // qwen3vl: the span rows' slice li + 1
      for (const ReferenceEmbeddingSpan& span : spans) {
        for (size_t i = 0; i < span.rows.size(); ++i) {
          for (int64_t e = 0; e < h; ++e) x[span.begin + i][e] += span.rows[i][(li + 1) * h + e];
        }
      }
    }
  }

  std::vector<std::vector<float>> hidden(n);
  for (int64_t t = 0; t < n; ++t) hidden[t] = RmsNorm(x[t], output_norm_);
  return hidden;
}

}  // namespace radixlm::model::testing
