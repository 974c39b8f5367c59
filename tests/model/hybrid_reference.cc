#include "hybrid_reference.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>
#include <utility>

#include "kernels/fp16.h"
#include "kernels/quant.h"

namespace radixlm::model::testing {

// A namespace of its own: the test sources share unity-build translation units.
namespace hybrid_reference {
namespace {

std::vector<float> TensorFloats(const gguf::GgufFile& file, const std::string& name) {
  const gguf::TensorInfo* t = file.FindTensor(name);
  assert(t != nullptr && t->type == gguf::GgmlType::kF32);
  int64_t n = 1;
  for (int64_t d : t->shape) n *= d;
  const auto* p = reinterpret_cast<const float*>(t->data);
  return std::vector<float>(p, p + n);
}

double GatedSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double GatedSilu(double x) { return x * GatedSigmoid(x); }
float HalfRounded(float x) { return kernels::F16ToF32(kernels::F32ToF16(x)); }

}  // namespace
}  // namespace hybrid_reference

using hybrid_reference::GatedSigmoid;
using hybrid_reference::GatedSilu;
using hybrid_reference::HalfRounded;
using hybrid_reference::TensorFloats;

HybridReference::HybridReference(const gguf::GgufFile& file) {
  auto config = ModelConfig::FromGguf(file);
  assert(config.ok());
  config_ = std::move(config).value();
  auto matrix = [&](const std::string& name) {
    const gguf::TensorInfo* t = file.FindTensor(name);
    assert(t != nullptr && t->shape.size() == 2);
    Matrix m;
    m.cols = t->shape[0];
    m.rows = t->shape[1];
    m.w = TensorFloats(file, name);
    return m;
  };
  token_embd_ = matrix("token_embd.weight");
  output_ = file.FindTensor("output.weight") != nullptr ? matrix("output.weight") : token_embd_;
  output_norm_ = TensorFloats(file, "output_norm.weight");
  for (int64_t i = 0; i < config_.n_layers; ++i) {
    layers_.push_back(LoadLayer(file, i, config_.IsLinearLayer(i)));
  }
  if (config_.nextn_layers > 0) LoadNextn(file);
}

HybridReference::Layer HybridReference::LoadLayer(const gguf::GgufFile& file, int64_t i,
                                                  bool linear) const {
  auto matrix = [&](const std::string& name) {
    const gguf::TensorInfo* t = file.FindTensor(name);
    assert(t != nullptr && t->shape.size() == 2);
    Matrix m;
    m.cols = t->shape[0];
    m.rows = t->shape[1];
    m.w = TensorFloats(file, name);
    return m;
  };
  const std::string p = "blk." + std::to_string(i) + ".";
  Layer l;
  l.attn_norm = TensorFloats(file, p + "attn_norm.weight");
  l.post_attn_norm = TensorFloats(file, p + "post_attention_norm.weight");
  const std::string shexp = config_.n_experts > 0 ? "_shexp" : "";
  l.gate = matrix(p + "ffn_gate" + shexp + ".weight");
  l.up = matrix(p + "ffn_up" + shexp + ".weight");
  l.down = matrix(p + "ffn_down" + shexp + ".weight");
  if (config_.n_experts > 0) {
    l.router = matrix(p + "ffn_gate_inp.weight");
    l.shexp_gate = TensorFloats(file, p + "ffn_gate_inp_shexp.weight");
    for (const auto& [name, out] :
         {std::pair{"ffn_gate_exps", &l.exp_gate}, std::pair{"ffn_up_exps", &l.exp_up},
          std::pair{"ffn_down_exps", &l.exp_down}}) {
      const gguf::TensorInfo* t = file.FindTensor(p + name + ".weight");
      assert(t != nullptr && t->shape.size() == 3);
      const std::vector<float> all = TensorFloats(file, p + name + ".weight");
      const int64_t size = t->shape[0] * t->shape[1];
      for (int64_t e = 0; e < t->shape[2]; ++e) {
        Matrix m;
        m.cols = t->shape[0];
        m.rows = t->shape[1];
        m.w.assign(all.begin() + e * size, all.begin() + (e + 1) * size);
        out->push_back(std::move(m));
      }
    }
  }
  if (linear) {
    l.qkv = matrix(p + "attn_qkv.weight");
    l.z = matrix(p + "attn_gate.weight");
    if (file.FindTensor(p + "ssm_ba.weight") != nullptr) {
      // qwen3next: per key head, its value heads' beta rows then their alpha rows.
      const Matrix ba = matrix(p + "ssm_ba.weight");
      const int64_t group = config_.ssm_n_v_heads / config_.ssm_n_k_heads;
      l.beta.cols = l.alpha.cols = ba.cols;
      l.beta.rows = l.alpha.rows = ba.rows / 2;
      for (int64_t head = 0; head < ba.rows / 2; ++head) {
        const int64_t base = (head / group) * 2 * group + head % group;
        l.beta.w.insert(l.beta.w.end(), ba.w.begin() + base * ba.cols,
                        ba.w.begin() + (base + 1) * ba.cols);
        l.alpha.w.insert(l.alpha.w.end(), ba.w.begin() + (base + group) * ba.cols,
                         ba.w.begin() + (base + group + 1) * ba.cols);
      }
    } else {
      l.beta = matrix(p + "ssm_beta.weight");
      l.alpha = matrix(p + "ssm_alpha.weight");
    }
    l.out = matrix(p + "ssm_out.weight");
    l.conv = TensorFloats(file, p + "ssm_conv1d.weight");
    l.dt = TensorFloats(file, p + "ssm_dt.bias");
    l.a = TensorFloats(file, p + "ssm_a");
    l.ssm_norm = TensorFloats(file, p + "ssm_norm.weight");
  } else {
    l.wq = matrix(p + "attn_q.weight");
    l.wk = matrix(p + "attn_k.weight");
    l.wv = matrix(p + "attn_v.weight");
    l.wo = matrix(p + "attn_output.weight");
    l.q_norm = TensorFloats(file, p + "attn_q_norm.weight");
    l.k_norm = TensorFloats(file, p + "attn_k_norm.weight");
  }
  return l;
}

std::vector<float> HybridReference::MatVec(const Matrix& m, const std::vector<float>& x) const {
  assert(static_cast<int64_t>(x.size()) == m.cols);
  std::vector<float> y(m.rows);
  for (int64_t r = 0; r < m.rows; ++r) {
    double sum = 0.0;
    for (int64_t c = 0; c < m.cols; ++c) sum += static_cast<double>(m.w[r * m.cols + c]) * x[c];
    y[r] = static_cast<float>(sum);
  }
  return y;
}

std::vector<float> HybridReference::RmsNorm(const float* x, int64_t n,
                                            const std::vector<float>& w) const {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const double scale = 1.0 / std::sqrt(sum / static_cast<double>(n) + config_.rms_norm_eps);
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(x[i] * scale * w[i]);
  return out;
}

std::vector<std::vector<float>> HybridReference::Linear(
    const Layer& l, const std::vector<std::vector<float>>& xn) const {
  const ModelConfig& c = config_;
  const int64_t n = static_cast<int64_t>(xn.size());
  const int64_t channels = c.LinearConvChannels();
  const int64_t taps = c.ssm_conv_kernel;
  const int64_t sd = c.ssm_state_size;
  const int64_t n_v = c.ssm_n_v_heads;
  const int64_t n_k = c.ssm_n_k_heads;
  const int64_t key = n_k * sd;
  std::vector<std::vector<float>> mixed(n);
  for (int64_t t = 0; t < n; ++t) mixed[t] = MatVec(l.qkv, xn[t]);
  // state[h][j][i]: value j, key i.
  std::vector<double> state(n_v * sd * sd, 0.0);
  std::vector<std::vector<float>> out(n);
  for (int64_t t = 0; t < n; ++t) {
    // Causal convolution over this token and the taps - 1 before it (zeros before the first).
    std::vector<double> conv(channels);
    for (int64_t ch = 0; ch < channels; ++ch) {
      double sum = 0.0;
      for (int64_t i = 0; i < taps; ++i) {
        const int64_t src = t - (taps - 1) + i;
        if (src >= 0) sum += static_cast<double>(l.conv[ch * taps + i]) * mixed[src][ch];
      }
      conv[ch] = GatedSilu(sum);
    }
    // L2-normalised Q and K heads.
    for (int64_t head = 0; head < 2 * n_k; ++head) {
      double sum = 0.0;
      for (int64_t i = 0; i < sd; ++i) sum += conv[head * sd + i] * conv[head * sd + i];
      const double inv = 1.0 / std::sqrt(sum + c.rms_norm_eps);
      for (int64_t i = 0; i < sd; ++i) conv[head * sd + i] *= inv;
    }
    const std::vector<float> beta = MatVec(l.beta, xn[t]);
    const std::vector<float> alpha = MatVec(l.alpha, xn[t]);
    const std::vector<float> z = MatVec(l.z, xn[t]);
    std::vector<float> core(n_v * sd);
    for (int64_t h = 0; h < n_v; ++h) {
      // qwen3next repeats each Q/K head for its group of value heads; qwen35's converter
      // tiles the value heads instead.
      const int64_t kh = c.arch == "qwen3next" ? h / (n_v / n_k) : h % n_k;
      const double* q = conv.data() + kh * sd;
      const double* k = conv.data() + key + kh * sd;
      const double* v = conv.data() + 2 * key + h * sd;
      const double b = GatedSigmoid(beta[h]);
      const double pre = static_cast<double>(alpha[h]) + l.dt[h];
      const double softplus = pre > 20.0 ? pre : std::log1p(std::exp(pre));
      const double decay = std::exp(softplus * l.a[h]);
      double* m = state.data() + h * sd * sd;
      for (int64_t e = 0; e < sd * sd; ++e) m[e] *= decay;
      // M += (beta (v - M k)) kᵀ: all of M k first, from the decayed M.
      std::vector<double> delta(sd);
      for (int64_t j = 0; j < sd; ++j) {
        double mk = 0.0;
        for (int64_t i = 0; i < sd; ++i) mk += m[j * sd + i] * k[i];
        delta[j] = b * (v[j] - mk);
      }
      for (int64_t j = 0; j < sd; ++j) {
        for (int64_t i = 0; i < sd; ++i) m[j * sd + i] += delta[j] * k[i];
      }
      std::vector<float> o(sd);
      for (int64_t j = 0; j < sd; ++j) {
        double sum = 0.0;
        for (int64_t i = 0; i < sd; ++i) sum += m[j * sd + i] * q[i];
        o[j] = static_cast<float>(sum / std::sqrt(static_cast<double>(sd)));
      }
      const std::vector<float> normed = RmsNorm(o.data(), sd, l.ssm_norm);
      for (int64_t j = 0; j < sd; ++j) {
        core[h * sd + j] = static_cast<float>(normed[j] * GatedSilu(z[h * sd + j]));
      }
    }
    out[t] = MatVec(l.out, core);
  }
  return out;
}

std::vector<std::vector<float>> HybridReference::Attention(
    const Layer& l, const std::vector<std::vector<float>>& xn) const {
  const ModelConfig& c = config_;
  const int64_t n = static_cast<int64_t>(xn.size());
  const int64_t d = c.head_dim;
  const int64_t group = c.n_heads / c.n_kv_heads;
  const int64_t half = c.rope_dims / 2;
  auto rope = [&](float* head, int64_t pos) {
    for (int64_t i = 0; i < half; ++i) {
      const double theta = static_cast<double>(pos) *
                           std::pow(static_cast<double>(c.rope_base), -2.0 * i / c.rope_dims);
      const double x0 = head[i], x1 = head[i + half];
      head[i] = static_cast<float>(x0 * std::cos(theta) - x1 * std::sin(theta));
      head[i + half] = static_cast<float>(x0 * std::sin(theta) + x1 * std::cos(theta));
    }
  };
  std::vector<std::vector<float>> q(n), gate(n), k(n), v(n);
  for (int64_t t = 0; t < n; ++t) {
    const std::vector<float> qg = MatVec(l.wq, xn[t]);
    k[t] = MatVec(l.wk, xn[t]);
    v[t] = MatVec(l.wv, xn[t]);
    for (int64_t h = 0; h < c.n_heads; ++h) {
      std::vector<float> qh = RmsNorm(qg.data() + h * 2 * d, d, l.q_norm);
      rope(qh.data(), t);
      q[t].insert(q[t].end(), qh.begin(), qh.end());
      gate[t].insert(gate[t].end(), qg.begin() + h * 2 * d + d, qg.begin() + (h + 1) * 2 * d);
    }
    for (int64_t h = 0; h < c.n_kv_heads; ++h) {
      std::vector<float> kh = RmsNorm(k[t].data() + h * d, d, l.k_norm);
      rope(kh.data(), t);
      std::copy(kh.begin(), kh.end(), k[t].begin() + h * d);
    }
    for (float& e : k[t]) e = HalfRounded(e);
    for (float& e : v[t]) e = HalfRounded(e);
  }
  std::vector<std::vector<float>> out(n);
  for (int64_t t = 0; t < n; ++t) {
    std::vector<float> attn(c.n_heads * d);
    for (int64_t h = 0; h < c.n_heads; ++h) {
      const int64_t kvh = h / group;
      std::vector<double> scores(t + 1);
      double max_s = -INFINITY;
      for (int64_t j = 0; j <= t; ++j) {
        double dot = 0.0;
        for (int64_t e = 0; e < d; ++e) dot += double{q[t][h * d + e]} * k[j][kvh * d + e];
        scores[j] = dot * c.attention_scale;
        max_s = std::max(max_s, scores[j]);
      }
      double total = 0.0;
      for (double& s : scores) total += (s = std::exp(s - max_s));
      for (int64_t e = 0; e < d; ++e) {
        double sum = 0.0;
        for (int64_t j = 0; j <= t; ++j) sum += scores[j] * v[j][kvh * d + e];
        attn[h * d + e] = static_cast<float>(sum / total * GatedSigmoid(gate[t][h * d + e]));
      }
    }
    out[t] = MatVec(l.wo, attn);
  }
  return out;
}

std::vector<float> HybridReference::Ffn(const Layer& l, const std::vector<float>& fn) const {
  auto swiglu = [&](const Matrix& gate, const Matrix& up, const Matrix& down) {
    std::vector<float> g = MatVec(gate, fn);
    const std::vector<float> u = MatVec(up, fn);
    for (size_t e = 0; e < g.size(); ++e) g[e] = static_cast<float>(GatedSilu(g[e]) * u[e]);
    return MatVec(down, g);
  };
  std::vector<float> out = swiglu(l.gate, l.up, l.down);
  if (l.router.rows == 0) return out;
  // The shared expert scaled by its gate, plus the experts: softmax over all of the router's
  // logits, the top n_experts_used, their probabilities renormalized to sum to 1.
  double dot = 0.0;
  for (size_t e = 0; e < fn.size(); ++e) dot += static_cast<double>(fn[e]) * l.shexp_gate[e];
  for (float& v : out) v = static_cast<float>(v * GatedSigmoid(dot));
  const std::vector<float> logits = MatVec(l.router, fn);
  std::vector<double> prob(logits.size());
  const double max_l = *std::max_element(logits.begin(), logits.end());
  double total = 0.0;
  for (size_t e = 0; e < logits.size(); ++e) total += (prob[e] = std::exp(logits[e] - max_l));
  for (double& p : prob) p /= total;
  std::vector<int64_t> order(prob.size());
  for (size_t e = 0; e < order.size(); ++e) order[e] = static_cast<int64_t>(e);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return prob[a] > prob[b]; });
  double chosen = 0.0;
  for (int64_t i = 0; i < config_.n_experts_used; ++i) chosen += prob[order[i]];
  for (int64_t i = 0; i < config_.n_experts_used; ++i) {
    const int64_t e = order[i];
    const std::vector<float> y = swiglu(l.exp_gate[e], l.exp_up[e], l.exp_down[e]);
    for (size_t j = 0; j < out.size(); ++j) out[j] += static_cast<float>(prob[e] / chosen * y[j]);
  }
  return out;
}

std::vector<std::vector<float>> HybridReference::Forward(
    const std::vector<int32_t>& tokens, std::vector<std::vector<float>>* hidden) const {
  const ModelConfig& c = config_;
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t h = c.hidden_size;
  std::vector<std::vector<float>> x(n);
  for (int64_t t = 0; t < n; ++t) {
    x[t].assign(token_embd_.w.begin() + tokens[t] * h, token_embd_.w.begin() + (tokens[t] + 1) * h);
  }
  for (int64_t li = 0; li < c.n_layers; ++li) {
    const Layer& l = layers_[li];
    std::vector<std::vector<float>> xn(n);
    for (int64_t t = 0; t < n; ++t) xn[t] = RmsNorm(x[t].data(), h, l.attn_norm);
    const auto mixed = c.IsLinearLayer(li) ? Linear(l, xn) : Attention(l, xn);
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t e = 0; e < h; ++e) x[t][e] += mixed[t][e];
      const std::vector<float> fn = RmsNorm(x[t].data(), h, l.post_attn_norm);
      const std::vector<float> down = Ffn(l, fn);
      for (int64_t e = 0; e < h; ++e) x[t][e] += down[e];
    }
  }
  std::vector<std::vector<float>> logits(n);
  if (hidden != nullptr) hidden->resize(n);
  for (int64_t t = 0; t < n; ++t) {
    const std::vector<float> normed = RmsNorm(x[t].data(), h, output_norm_);
    logits[t] = MatVec(output_, normed);
    if (hidden != nullptr) (*hidden)[t] = normed;
  }
  return logits;
}

}  // namespace radixlm::model::testing
