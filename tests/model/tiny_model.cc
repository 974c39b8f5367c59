#include "tiny_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <optional>
#include <random>

#include "gguf/gguf_writer.h"
#include "kernels/quant.h"

namespace radixlm::model::testing {

namespace {

using gguf::GgmlType;
using gguf::GgufWriter;
using gguf::Value;

class Builder {
 public:
  explicit Builder(const TinyModelSpec& spec) : spec_(spec), rng_(spec.seed) {}

  std::vector<uint8_t> Build() {
    if (spec_.arch == "gemma4") return BuildGemma4();
    if (spec_.arch == "qwen35" || spec_.arch == "qwen35moe" || spec_.arch == "qwen3next") {
      return BuildQwen35();
    }
    const std::string& a = spec_.arch;
    w_.AddMetadata("general.architecture", Value::Str(a));
    w_.AddMetadata("general.name", Value::Str("tiny-" + a));
    w_.AddMetadata(a + ".block_count", Value::U32(static_cast<uint32_t>(spec_.n_layers)));
    w_.AddMetadata(a + ".context_length", Value::U32(4096));
    w_.AddMetadata(a + ".embedding_length", Value::U32(static_cast<uint32_t>(spec_.hidden)));
    w_.AddMetadata(a + ".feed_forward_length", Value::U32(static_cast<uint32_t>(spec_.ffn)));
    w_.AddMetadata(a + ".attention.head_count", Value::U32(static_cast<uint32_t>(spec_.n_heads)));
    w_.AddMetadata(a + ".attention.head_count_kv",
                   Value::U32(static_cast<uint32_t>(spec_.n_kv_heads)));
    w_.AddMetadata(a + ".attention.key_length", Value::U32(static_cast<uint32_t>(spec_.head_dim)));
    w_.AddMetadata(a + ".attention.value_length",
                   Value::U32(static_cast<uint32_t>(spec_.head_dim)));
    w_.AddMetadata(a + ".attention.layer_norm_rms_epsilon", Value::F32(1e-6f));
    w_.AddMetadata(a + ".rope.freq_base", Value::F32(spec_.rope_base));
    if (spec_.sliding_window > 0) {
      w_.AddMetadata(a + ".attention.sliding_window",
                     Value::U32(static_cast<uint32_t>(spec_.sliding_window)));
    }
    if (spec_.n_experts > 0) {
      w_.AddMetadata(a + ".expert_count", Value::U32(static_cast<uint32_t>(spec_.n_experts)));
      w_.AddMetadata(a + ".expert_used_count",
                     Value::U32(static_cast<uint32_t>(spec_.n_experts_used)));
      if (a == "qwen3moe") {
        w_.AddMetadata(a + ".expert_feed_forward_length",
                       Value::U32(static_cast<uint32_t>(spec_.expert_ffn)));
      }
    }
    for (const auto& [key, value] : spec_.extra_metadata) w_.AddMetadata(key, value);
    if (spec_.rope_linear_factor > 0.0f) {
      w_.AddMetadata(a + ".rope.scaling.type", Value::Str("linear"));
      w_.AddMetadata(a + ".rope.scaling.factor", Value::F32(spec_.rope_linear_factor));
    }

    const int64_t h = spec_.hidden;
    const int64_t qs = spec_.n_heads * spec_.head_dim;
    const int64_t kvs = spec_.n_kv_heads * spec_.head_dim;
    // Which tensors each family's layers have (model/families/).
    const bool qk_norm =
        a == "gemma3" || a == "qwen3" || a == "qwen3vl" || a == "qwen3moe" || a == "olmo2";
    const bool qk_norm_whole_row = a == "olmo2";
    const bool pre_norms = a != "olmo2";
    const bool post_norms = a == "gemma3" || a == "gemma2" || a == "olmo2" || a == "glm4";
    const bool fused_qkv = a == "phi3";
    const bool fused_gate_up = a == "phi3" || a == "glm4";  // the gate's rows first in ffn_up
    const bool qkv_bias = a == "qwen2" || a == "qwen2vl" || a == "glm4";
    Matrix("token_embd.weight", h, spec_.vocab, 1.0f);
    if (!spec_.tied_output) Matrix("output.weight", h, spec_.vocab, 1.0f / std::sqrt(h));
    Norm("output_norm.weight", h);
    if (spec_.rope_freqs) {
      std::vector<float> f(spec_.head_dim / 2);
      for (size_t k = 0; k < f.size(); ++k) f[k] = 1.0f + static_cast<float>(k % 4);
      Vector("rope_freqs.weight", f);
    }
    if (spec_.longrope) {  // long factors grow with the pair index, short ones stay near 1
      std::vector<float> lf(spec_.head_dim / 2), sf(spec_.head_dim / 2);
      for (size_t k = 0; k < lf.size(); ++k) {
        lf[k] = 1.0f + 0.5f * static_cast<float>(k);
        sf[k] = 1.0f + 0.05f * static_cast<float>(k % 3);
      }
      Vector("rope_factors_long.weight", lf);
      Vector("rope_factors_short.weight", sf);
    }
    for (int64_t i = 0; i < spec_.n_layers; ++i) {
      const std::string p = "blk." + std::to_string(i) + ".";
      if (pre_norms) Norm(p + "attn_norm.weight", h);
      if (fused_qkv) {
        Matrix(p + "attn_qkv.weight", h, qs + 2 * kvs, 1.0f / std::sqrt(h));
      } else {
        Matrix(p + "attn_q.weight", h, qs, 1.0f / std::sqrt(h));
        Matrix(p + "attn_k.weight", h, kvs, 1.0f / std::sqrt(h));
        Matrix(p + "attn_v.weight", h, kvs, 1.0f / std::sqrt(h));
      }
      Matrix(p + "attn_output.weight", qs, h, 1.0f / std::sqrt(qs));
      if (qkv_bias) {
        Vector(p + "attn_q.bias", Random(qs, 0.2f));
        Vector(p + "attn_k.bias", Random(kvs, 0.2f));
        Vector(p + "attn_v.bias", Random(kvs, 0.2f));
      }
      if (qk_norm) {
        Norm(p + "attn_q_norm.weight", qk_norm_whole_row ? qs : spec_.head_dim);
        Norm(p + "attn_k_norm.weight", qk_norm_whole_row ? kvs : spec_.head_dim);
      }
      if (post_norms) Norm(p + "post_attention_norm.weight", h);
      if (pre_norms) Norm(p + "ffn_norm.weight", h);
      if (spec_.n_experts > 0) {
        const int64_t ef = a == "qwen3moe" ? spec_.expert_ffn : spec_.ffn;
        Matrix(p + "ffn_gate_inp.weight", h, spec_.n_experts, 1.0f / std::sqrt(h), GgmlType::kF32);
        Experts(p + "ffn_gate_exps.weight", h, ef, 1.0f / std::sqrt(h));
        Experts(p + "ffn_up_exps.weight", h, ef, 1.0f / std::sqrt(h));
        Experts(p + "ffn_down_exps.weight", ef, h, 1.0f / std::sqrt(ef));
      } else if (fused_gate_up) {
        Matrix(p + "ffn_up.weight", h, 2 * spec_.ffn, 1.0f / std::sqrt(h));
      } else {
        Matrix(p + "ffn_gate.weight", h, spec_.ffn, 1.0f / std::sqrt(h));
        Matrix(p + "ffn_up.weight", h, spec_.ffn, 1.0f / std::sqrt(h));
      }
      if (spec_.n_experts == 0) {
        Matrix(p + "ffn_down.weight", spec_.ffn, h, 1.0f / std::sqrt(spec_.ffn));
      }
      if (post_norms) Norm(p + "post_ffw_norm.weight", h);
    }
    for (const std::string& name : spec_.extra_vectors) Vector(name, Random(h, 0.2f));
    return w_.Serialize();
  }

  // Gemma 4's layers differ by kind (see TinyGemma4Spec): spec_.head_dim and n_kv_heads are the
  // global layers', the sliding ones have half the head size and twice the KV heads.
  std::vector<uint8_t> BuildGemma4() {
    const std::string a = "gemma4";
    const int64_t n_layers = spec_.n_layers;
    const int64_t h = spec_.hidden;
    const int64_t ple = 8;  // per-layer input width
    const int64_t hd_global = spec_.head_dim, hd_swa = spec_.head_dim / 2;
    const int64_t kv_global = spec_.n_kv_heads, kv_swa = 2 * spec_.n_kv_heads;
    const int64_t n_kv_layers = n_layers - 2;  // (the last two read earlier layers' K/V)
    auto sliding = [&](int64_t i) { return i != 2 && i != 4; };  // layers 2 and 4 are global
    auto u32 = [](int64_t v) { return Value::U32(static_cast<uint32_t>(v)); };
    // Q·K is not scaled: Q and K norm weights of d^-1/4 give scores of a unit's spread, as a
    // trained model's norms do.
    auto qk_scale = [](int64_t d) { return std::pow(static_cast<float>(d), -0.25f); };
    std::vector<Value> pattern, kv_heads, ffn;
    for (int64_t i = 0; i < n_layers; ++i) {
      pattern.push_back(Value::Bool(sliding(i)));
      kv_heads.push_back(u32(sliding(i) ? kv_swa : kv_global));
      ffn.push_back(u32(i < n_kv_layers ? spec_.ffn : 2 * spec_.ffn));  // double-wide MLP
    }
    w_.AddMetadata("general.architecture", Value::Str(a));
    w_.AddMetadata("general.name", Value::Str("tiny-" + a));
    w_.AddMetadata(a + ".block_count", u32(n_layers));
    w_.AddMetadata(a + ".context_length", u32(4096));
    w_.AddMetadata(a + ".embedding_length", u32(h));
    w_.AddMetadata(a + ".feed_forward_length", Value::Arr(gguf::ValueType::kUint32, ffn));
    w_.AddMetadata(a + ".attention.head_count", u32(spec_.n_heads));
    w_.AddMetadata(a + ".attention.head_count_kv", Value::Arr(gguf::ValueType::kUint32, kv_heads));
    w_.AddMetadata(a + ".attention.key_length", u32(hd_global));
    w_.AddMetadata(a + ".attention.value_length", u32(hd_global));
    w_.AddMetadata(a + ".attention.key_length_swa", u32(hd_swa));
    w_.AddMetadata(a + ".attention.value_length_swa", u32(hd_swa));
    w_.AddMetadata(a + ".rope.dimension_count", u32(hd_global));
    w_.AddMetadata(a + ".rope.dimension_count_swa", u32(hd_swa));
    w_.AddMetadata(a + ".attention.layer_norm_rms_epsilon", Value::F32(1e-6f));
    w_.AddMetadata(a + ".rope.freq_base", Value::F32(spec_.rope_base));
    w_.AddMetadata(a + ".rope.freq_base_swa", Value::F32(10000.0f));
    w_.AddMetadata(a + ".attention.sliding_window", u32(spec_.sliding_window));
    w_.AddMetadata(a + ".attention.sliding_window_pattern",
                   Value::Arr(gguf::ValueType::kBool, pattern));
    w_.AddMetadata(a + ".attention.shared_kv_layers", u32(n_layers - n_kv_layers));
    w_.AddMetadata(a + ".embedding_length_per_layer_input", u32(ple));
    w_.AddMetadata(a + ".final_logit_softcapping", Value::F32(3.0f));
    for (const auto& [key, value] : spec_.extra_metadata) w_.AddMetadata(key, value);

    Matrix("token_embd.weight", h, spec_.vocab, 1.0f / std::sqrt(h));
    Norm("output_norm.weight", h);
    // Proportional RoPE on the global layers: the first quarter of the pairs rotate.
    std::vector<float> freqs(hd_global / 2, 1e30f);
    for (int64_t k = 0; k < hd_global / 8; ++k) freqs[k] = 1.0f;
    Vector("rope_freqs.weight", freqs);
    Matrix("per_layer_token_embd.weight", ple * n_layers, spec_.vocab, 1.0f);
    Matrix("per_layer_model_proj.weight", h, ple * n_layers, 1.0f / std::sqrt(h));
    Norm("per_layer_proj_norm.weight", ple);
    for (int64_t i = 0; i < n_layers; ++i) {
      const std::string p = "blk." + std::to_string(i) + ".";
      const int64_t hd = sliding(i) ? hd_swa : hd_global;
      const int64_t qs = spec_.n_heads * hd;
      const int64_t kvs = (sliding(i) ? kv_swa : kv_global) * hd;
      const int64_t f = i < n_kv_layers ? spec_.ffn : 2 * spec_.ffn;
      Norm(p + "attn_norm.weight", h);
      Matrix(p + "attn_q.weight", h, qs, 1.0f / std::sqrt(h));
      if (i < n_kv_layers) {
        Matrix(p + "attn_k.weight", h, kvs, 1.0f / std::sqrt(h));
        if (i != 0) Matrix(p + "attn_v.weight", h, kvs, 1.0f / std::sqrt(h));  // 0: V is K
        Norm(p + "attn_k_norm.weight", hd, qk_scale(hd));
      }
      Norm(p + "attn_q_norm.weight", hd, qk_scale(hd));
      Matrix(p + "attn_output.weight", qs, h, 1.0f / std::sqrt(qs));
      Norm(p + "post_attention_norm.weight", h);
      Norm(p + "ffn_norm.weight", h);
      Matrix(p + "ffn_gate.weight", h, f, 1.0f / std::sqrt(h));
      Matrix(p + "ffn_up.weight", h, f, 1.0f / std::sqrt(h));
      Matrix(p + "ffn_down.weight", f, h, 1.0f / std::sqrt(f));
      Norm(p + "post_ffw_norm.weight", h);
      Matrix(p + "inp_gate.weight", h, ple, 1.0f / std::sqrt(h));
      Matrix(p + "proj.weight", ple, h, 1.0f / std::sqrt(ple));
      Norm(p + "post_norm.weight", h);
      Vector(p + "layer_output_scale.weight", {0.5f + 0.1f * static_cast<float>(i)});
    }
    for (const std::string& name : spec_.extra_vectors) Vector(name, Random(h, 0.2f));
    return w_.Serialize();
  }

  // Qwen 3.5 (see TinyQwen35Spec): gated DeltaNet layers and, every fourth, gated full
  // attention; spec_.head_dim / n_heads / n_kv_heads are the full layers'. qwen35moe and
  // qwen3next (TinyQwen35MoeSpec, TinyQwen3NextSpec): experts and a gated shared expert in
  // place of the dense FFN; qwen3next without RoPE sections and with ssm_ba.
  std::vector<uint8_t> BuildQwen35() {
    const std::string a = spec_.arch;
    const bool next = a == "qwen3next";
    const int64_t h = spec_.hidden;
    const int64_t hd = spec_.head_dim;
    const int64_t qs = spec_.n_heads * hd, kvs = spec_.n_kv_heads * hd;
    const int64_t taps = 4, state = 16, k_heads = 2, v_heads = 4;
    const int64_t key = k_heads * state, value = v_heads * state;
    const int64_t channels = 2 * key + value;
    const float out_scale = spec_.residual_write_scale;
    auto u32 = [](int64_t v) { return Value::U32(static_cast<uint32_t>(v)); };
    w_.AddMetadata("general.architecture", Value::Str(a));
    w_.AddMetadata("general.name", Value::Str("tiny-" + a));
    w_.AddMetadata(a + ".block_count", u32(spec_.n_layers + spec_.nextn_layers));
    if (spec_.nextn_layers > 0) {
      w_.AddMetadata(a + ".nextn_predict_layers", u32(spec_.nextn_layers));
    }
    w_.AddMetadata(a + ".context_length", u32(4096));
    w_.AddMetadata(a + ".embedding_length", u32(h));
    w_.AddMetadata(a + ".feed_forward_length", u32(spec_.ffn));
    w_.AddMetadata(a + ".attention.head_count", u32(spec_.n_heads));
    w_.AddMetadata(a + ".attention.head_count_kv", u32(spec_.n_kv_heads));
    w_.AddMetadata(a + ".attention.key_length", u32(hd));
    w_.AddMetadata(a + ".attention.value_length", u32(hd));
    w_.AddMetadata(a + ".attention.layer_norm_rms_epsilon", Value::F32(1e-6f));
    w_.AddMetadata(a + ".rope.freq_base", Value::F32(spec_.rope_base));
    w_.AddMetadata(a + ".rope.dimension_count", u32(hd / 2));  // partial: half of each head
    if (!next) {
      w_.AddMetadata(a + ".rope.dimension_sections",
                     Value::Arr(gguf::ValueType::kInt32,
                                {Value::I32(2), Value::I32(1), Value::I32(1), Value::I32(0)}));
    }
    w_.AddMetadata(a + ".full_attention_interval", u32(4));
    if (spec_.n_experts > 0) {
      w_.AddMetadata(a + ".expert_count", u32(spec_.n_experts));
      w_.AddMetadata(a + ".expert_used_count", u32(spec_.n_experts_used));
      w_.AddMetadata(a + ".expert_feed_forward_length", u32(spec_.expert_ffn));
      w_.AddMetadata(a + ".expert_shared_feed_forward_length", u32(spec_.ffn));
    }
    w_.AddMetadata(a + ".ssm.conv_kernel", u32(taps));
    w_.AddMetadata(a + ".ssm.state_size", u32(state));
    w_.AddMetadata(a + ".ssm.group_count", u32(k_heads));
    w_.AddMetadata(a + ".ssm.time_step_rank", u32(v_heads));
    w_.AddMetadata(a + ".ssm.inner_size", u32(value));
    for (const auto& [k, v] : spec_.extra_metadata) w_.AddMetadata(k, v);

    Matrix("token_embd.weight", h, spec_.vocab, 1.0f);
    Norm("output_norm.weight", h);
    if (!spec_.tied_output) Matrix("output.weight", h, spec_.vocab, 1.0f / std::sqrt(h));
    for (int64_t i = 0; i < spec_.n_layers + spec_.nextn_layers; ++i) {
      const std::string p = "blk." + std::to_string(i) + ".";
      Norm(p + "attn_norm.weight", h);
      if (i >= spec_.n_layers) NextnTensors(p);
      if ((i + 1) % 4 != 0 && i < spec_.n_layers) {
        Matrix(p + "attn_qkv.weight", h, channels, 1.0f / std::sqrt(h));
        Matrix(p + "attn_gate.weight", h, value, 1.0f / std::sqrt(h));
        std::vector<float> conv = Random(taps * channels, 0.6f);
        if (!Omitted(p + "ssm_conv1d.weight")) {
          Status st = w_.AddF32Tensor(p + "ssm_conv1d.weight", {taps, channels}, conv);
          assert(st.ok());
          (void)st;
        }
        Vector(p + "ssm_dt.bias", Random(v_heads, 1.0f));
        std::vector<float> a_log = Random(v_heads, 1.0f);
        for (float& x : a_log) x = -std::exp(x);  // -exp(A_log), as converted
        Vector(p + "ssm_a", a_log);
        if (next) {
          Matrix(p + "ssm_ba.weight", h, 2 * v_heads, 1.0f / std::sqrt(h));
        } else {
          Matrix(p + "ssm_beta.weight", h, v_heads, 1.0f / std::sqrt(h));
          Matrix(p + "ssm_alpha.weight", h, v_heads, 1.0f / std::sqrt(h));
        }
        Norm(p + "ssm_norm.weight", state);
        Matrix(p + "ssm_out.weight", value, h, out_scale / std::sqrt(value));
      } else {
        Matrix(p + "attn_q.weight", h, 2 * qs, 1.0f / std::sqrt(h));
        Matrix(p + "attn_k.weight", h, kvs, 1.0f / std::sqrt(h));
        Matrix(p + "attn_v.weight", h, kvs, 1.0f / std::sqrt(h));
        Norm(p + "attn_q_norm.weight", hd);
        Norm(p + "attn_k_norm.weight", hd);
        Matrix(p + "attn_output.weight", qs, h, out_scale / std::sqrt(qs));
      }
      Norm(p + "post_attention_norm.weight", h);
      const std::string shexp = spec_.n_experts > 0 ? "_shexp" : "";
      if (spec_.n_experts > 0) {
        const int64_t ef = spec_.expert_ffn;
        Matrix(p + "ffn_gate_inp.weight", h, spec_.n_experts, 1.0f / std::sqrt(h), GgmlType::kF32);
        Experts(p + "ffn_gate_exps.weight", h, ef, 1.0f / std::sqrt(h));
        Experts(p + "ffn_up_exps.weight", h, ef, 1.0f / std::sqrt(h));
        Experts(p + "ffn_down_exps.weight", ef, h, out_scale / std::sqrt(ef));
        Vector(p + "ffn_gate_inp_shexp.weight", Random(h, 2.0f / std::sqrt(h)));
      }
      Matrix(p + "ffn_gate" + shexp + ".weight", h, spec_.ffn, 1.0f / std::sqrt(h));
      Matrix(p + "ffn_up" + shexp + ".weight", h, spec_.ffn, 1.0f / std::sqrt(h));
      Matrix(p + "ffn_down" + shexp + ".weight", spec_.ffn, h, out_scale / std::sqrt(spec_.ffn));
    }
    for (const std::string& name : spec_.extra_vectors) Vector(name, Random(h, 0.2f));  // qwen35
    return w_.Serialize();
  }

 private:
  bool Omitted(const std::string& name) const {
    return std::find(spec_.omit_tensors.begin(), spec_.omit_tensors.end(), name) !=
           spec_.omit_tensors.end();
  }

  // A NextN layer's own tensors (TinyModelSpec::nextn_layers).
  void NextnTensors(const std::string& p) {
    const int64_t h = spec_.hidden;
    Norm(p + "nextn.enorm.weight", h);
    Norm(p + "nextn.hnorm.weight", h);
    Norm(p + "nextn.shared_head_norm.weight", h);
    if (spec_.nextn_own_head) {
      Matrix(p + "nextn.shared_head_head.weight", h, spec_.vocab, 1.0f / std::sqrt(h));
    }
    // [2 * hidden, hidden]: row j reads the normed embedding, then the normed hidden state.
    std::vector<float> eh = Random(2 * h * h, 1.0f / std::sqrt(2.0f * h));
    if (spec_.nextn_eh_identity) {
      for (int64_t j = 0; j < h; ++j) {
        for (int64_t i = 0; i < 2 * h; ++i) eh[j * 2 * h + i] *= i < h ? 0.1f : 0.05f;
        eh[j * 2 * h + j] += 1.0f;
      }
    }
    MatrixOf(p + "nextn.eh_proj.weight", 2 * h, h, eh);
  }

  std::vector<float> Random(int64_t n, float scale) {
    std::uniform_real_distribution<float> dist(-scale, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng_);
    return v;
  }

  GgmlType TypeFor(const std::string& name, int64_t cols,
                   std::optional<GgmlType> type_default = std::nullopt) const {
    GgmlType t = type_default.value_or(spec_.matrix_type);
    const std::string suffix =
        name.rfind("blk.", 0) == 0 ? name.substr(name.find('.', 4) + 1) : name;
    if (auto it = spec_.type_overrides.find(suffix); it != spec_.type_overrides.end()) {
      t = it->second;
    }
    for (GgmlType candidate : {t, GgmlType::kQ8_0, GgmlType::kF32}) {
      if (kernels::IsRowSizeValid(candidate, cols)) return candidate;
    }
    return GgmlType::kF32;
  }

  // A [cols, rows] (ggml order) matrix with uniform entries in [-scale*sqrt(3), ...] (unit
  // variance rows when scale = 1/sqrt(cols)), or [cols, rows, n] (n_experts matrices).
  // `type` (when not a type override) replaces the spec's matrix type.
  void Matrix(const std::string& name, int64_t cols, int64_t rows, float scale,
              std::optional<GgmlType> type_default = std::nullopt, int64_t n = 1) {
    MatrixOf(name, cols, rows, Random(cols * rows * n, scale * std::sqrt(3.0f)), type_default, n);
  }

  // The same with the given values ([n * rows, cols]), in the matrix type.
  void MatrixOf(const std::string& name, int64_t cols, int64_t rows, const std::vector<float>& v,
                std::optional<GgmlType> type_default = std::nullopt, int64_t n = 1) {
    if (Omitted(name)) return;
    const GgmlType type = TypeFor(name, cols, type_default);
    const size_t row_bytes = kernels::RowBytes(type, cols);
    std::vector<uint8_t> data(row_bytes * rows * n);
    for (int64_t r = 0; r < rows * n; ++r) {
      kernels::QuantizeRow(type, v.data() + r * cols, data.data() + r * row_bytes, cols);
    }
    std::vector<int64_t> shape = {cols, rows};
    if (n > 1 || name.find("_exps.") != std::string::npos) shape.push_back(n);
    Status st = w_.AddTensor(name, type, shape, std::move(data));
    assert(st.ok());
    (void)st;
  }

  // Every expert's [cols, rows] matrix, stacked: [cols, rows, n_experts].
  void Experts(const std::string& name, int64_t cols, int64_t rows, float scale) {
    Matrix(name, cols, rows, scale, std::nullopt, spec_.n_experts);
  }

  void Vector(const std::string& name, const std::vector<float>& v) {
    if (Omitted(name)) return;
    Status st = w_.AddF32Tensor(name, {static_cast<int64_t>(v.size())}, v);
    assert(st.ok());
    (void)st;
  }

  // Norm weights around 1 (as stored in GGUF, gemma's 1 + w already folded in), times scale.
  void Norm(const std::string& name, int64_t n, float scale = 1.0f) {
    std::vector<float> v = Random(n, 0.3f);
    for (float& x : v) x = (x + 1.0f) * scale;
    Vector(name, v);
  }

  const TinyModelSpec& spec_;
  std::mt19937 rng_;
  GgufWriter w_;
};

}  // namespace

TinyModelSpec TinyGemma3Spec() {
  TinyModelSpec s;
  s.arch = "gemma3";
  s.n_layers = 6;  // layer 5 is the global one
  s.hidden = 64;
  s.ffn = 128;
  s.n_heads = 4;
  s.n_kv_heads = 1;
  s.head_dim = 32;
  s.sliding_window = 4;
  s.rope_base = 1e6f;
  return s;
}

TinyModelSpec TinyQwen35Spec() {
  TinyModelSpec s;
  s.arch = "qwen35";
  s.n_layers = 5;  // linear, linear, linear, full, linear
  s.hidden = 64;
  s.ffn = 128;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.head_dim = 16;
  s.rope_base = 1e7f;
  s.tied_output = false;
  return s;
}

TinyModelSpec TinyQwen35MoeSpec() {
  TinyModelSpec s = TinyQwen35Spec();
  s.arch = "qwen35moe";
  s.ffn = 48;  // the shared expert's width
  s.n_experts = 8;
  s.n_experts_used = 3;
  s.expert_ffn = 32;
  return s;
}

TinyModelSpec TinyQwen3NextSpec() {
  TinyModelSpec s = TinyQwen35MoeSpec();
  s.arch = "qwen3next";
  return s;
}

TinyModelSpec TinyGemma4Spec() {
  TinyModelSpec s;
  s.arch = "gemma4";
  s.n_layers = 5;  // sliding, sliding, global, then a sliding and a global sharing 1's and 2's KV
  s.hidden = 64;
  s.ffn = 96;
  s.n_heads = 4;
  s.n_kv_heads = 1;  // the global layers'; the sliding ones have 2
  s.head_dim = 32;   // the global layers'; the sliding ones have 16
  s.sliding_window = 4;
  s.rope_base = 1e6f;
  return s;
}

TinyModelSpec TinyGemma2Spec() {
  TinyModelSpec s;
  s.arch = "gemma2";
  s.n_layers = 4;  // layers 0 and 2 slide, 1 and 3 are global
  s.hidden = 64;
  s.ffn = 128;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.head_dim = 32;
  s.sliding_window = 4;
  // Caps low enough that tanh bends the tiny model's scores and logits.
  s.extra_metadata = {{"gemma2.attn_logit_softcapping", gguf::Value::F32(2.0f)},
                      {"gemma2.final_logit_softcapping", gguf::Value::F32(3.0f)}};
  return s;
}

TinyModelSpec TinyGraniteSpec() {
  TinyModelSpec s;
  s.arch = "granite";
  s.n_layers = 3;
  s.extra_metadata = {{"granite.embedding_scale", gguf::Value::F32(12.0f)},
                      {"granite.residual_scale", gguf::Value::F32(0.22f)},
                      {"granite.attention.scale", gguf::Value::F32(0.125f)},
                      {"granite.logit_scale", gguf::Value::F32(8.0f)}};
  return s;
}

TinyModelSpec TinyOlmo2Spec() {
  TinyModelSpec s;
  s.arch = "olmo2";
  s.n_heads = 4;
  s.n_kv_heads = 4;  // OLMo 2 has no GQA: n_heads * head_dim == hidden
  s.head_dim = 16;
  s.tied_output = false;
  return s;
}

TinyModelSpec TinyPhi3Spec() {
  TinyModelSpec s;
  s.arch = "phi3";
  s.n_layers = 2;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.head_dim = 16;  // n_heads * head_dim == hidden, as llama.cpp's phi3 requires
  s.tied_output = false;
  s.longrope = true;
  s.extra_metadata = {{"phi3.rope.scaling.original_context_length", gguf::Value::U32(2048)},
                      {"phi3.rope.scaling.attn_factor", gguf::Value::F32(1.19f)}};
  return s;
}

TinyModelSpec TinyGlm4Spec() {
  TinyModelSpec s;
  s.arch = "glm4";
  s.n_layers = 3;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.head_dim = 16;
  s.tied_output = false;
  s.extra_metadata = {{"glm4.rope.dimension_count", gguf::Value::U32(8)}};  // half of each head
  return s;
}

TinyModelSpec TinyMistral3Spec() {
  TinyModelSpec s;
  s.arch = "mistral3";
  s.n_layers = 2;
  s.tied_output = false;
  // YaRN x4 over an original context of 8 (pairs 0 extrapolated, the rest interpolated), and
  // Q scaled by ln(floor(p / 8) + 1) * 0.5 + 1.
  s.extra_metadata = {{"mistral3.rope.scaling.type", gguf::Value::Str("yarn")},
                      {"mistral3.rope.scaling.factor", gguf::Value::F32(4.0f)},
                      {"mistral3.rope.scaling.original_context_length", gguf::Value::U32(8)},
                      {"mistral3.rope.scaling.yarn_beta_fast", gguf::Value::F32(32.0f)},
                      {"mistral3.rope.scaling.yarn_beta_slow", gguf::Value::F32(1.0f)},
                      {"mistral3.attention.temperature_scale", gguf::Value::F32(0.5f)}};
  return s;
}

TinyModelSpec TinySmolLm3Spec() {
  TinyModelSpec s;
  s.arch = "smollm3";
  s.n_layers = 5;  // layer 3 has no RoPE
  s.n_heads = 4;
  s.n_kv_heads = 1;
  s.tied_output = true;
  return s;
}

TinyModelSpec TinyQwen3MoeSpec() {
  TinyModelSpec s;
  s.arch = "qwen3moe";
  s.n_layers = 2;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.head_dim = 16;
  s.n_experts = 8;
  s.n_experts_used = 3;
  s.expert_ffn = 32;
  return s;
}

TinyModelSpec TinyMixtralSpec() {
  TinyModelSpec s;
  s.arch = "llama";
  s.n_layers = 2;
  s.tied_output = false;
  s.n_experts = 4;
  s.n_experts_used = 2;
  return s;
}

std::vector<uint8_t> BuildTinyModel(const TinyModelSpec& spec) { return Builder(spec).Build(); }

std::unique_ptr<gguf::GgufFile> ParseTinyModel(const std::vector<uint8_t>& bytes) {
  auto file = gguf::GgufFile::FromBuffer(bytes.data(), bytes.size());
  assert(file.ok());
  return std::move(file).value();
}

}  // namespace radixlm::model::testing
