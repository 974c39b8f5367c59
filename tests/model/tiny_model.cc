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
    const bool qk_norm = a == "gemma3" || a == "qwen3" || a == "qwen3moe" || a == "olmo2";
    const bool qk_norm_whole_row = a == "olmo2";
    const bool pre_norms = a != "olmo2";
    const bool post_norms = a == "gemma3" || a == "gemma2" || a == "olmo2" || a == "glm4";
    const bool fused_qkv = a == "phi3";
    const bool fused_gate_up = a == "phi3" || a == "glm4";  // the gate's rows first in ffn_up
    const bool qkv_bias = a == "qwen2" || a == "glm4";
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

 private:
  bool Omitted(const std::string& name) const {
    return std::find(spec_.omit_tensors.begin(), spec_.omit_tensors.end(), name) !=
           spec_.omit_tensors.end();
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
    std::vector<float> v = Random(cols * rows * n, scale * std::sqrt(3.0f));
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

  // Norm weights around 1 (as stored in GGUF, gemma's 1 + w already folded in).
  void Norm(const std::string& name, int64_t n) {
    std::vector<float> v = Random(n, 0.3f);
    for (float& x : v) x += 1.0f;
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
