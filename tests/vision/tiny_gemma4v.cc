#include "tiny_gemma4v.h"

#include <cassert>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "gguf/gguf_writer.h"
#include "kernels/fp16.h"

namespace radixlm::vision::testing {

TinyProjector MakeTinyGemma4v(const TinyGemma4vSpec& s) {
  TinyProjector p;
  p.spec.projector_type = s.projector_type;
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  gguf::GgufWriter w;
  w.AddMetadata("general.architecture", gguf::Value::Str("clip"));
  w.AddMetadata("clip.has_vision_encoder", gguf::Value::Bool(true));
  if (s.audio_tower) {
    w.AddMetadata("clip.has_audio_encoder", gguf::Value::Bool(true));
    w.AddMetadata("clip.vision.projector_type", gguf::Value::Str(s.projector_type));
    w.AddMetadata("clip.audio.projector_type", gguf::Value::Str("gemma4a"));
  } else {
    w.AddMetadata("clip.projector_type", gguf::Value::Str(s.projector_type));
  }
  if (s.use_gelu) w.AddMetadata("clip.use_gelu", gguf::Value::Bool(true));
  w.AddMetadata("clip.vision.projection_dim", gguf::Value::U32(s.projection_dim));
  w.AddMetadata("clip.vision.image_size", gguf::Value::U32(224));  // the converter's placeholder
  w.AddMetadata("clip.vision.patch_size", gguf::Value::U32(s.patch_size));
  w.AddMetadata("clip.vision.embedding_length", gguf::Value::U32(s.n_embd));
  w.AddMetadata("clip.vision.feed_forward_length", gguf::Value::U32(s.n_ff));
  w.AddMetadata("clip.vision.block_count", gguf::Value::U32(s.n_layers));
  w.AddMetadata("clip.vision.attention.head_count", gguf::Value::U32(s.n_heads));
  w.AddMetadata("clip.vision.attention.layer_norm_epsilon", gguf::Value::F32(s.eps));
  w.AddMetadata("clip.vision.image_mean", gguf::Value::F32Arr({s.mean[0], s.mean[1], s.mean[2]}));
  w.AddMetadata("clip.vision.image_std", gguf::Value::F32Arr({s.std[0], s.std[1], s.std[2]}));
  if (s.merge > 0) {
    w.AddMetadata("clip.vision.projector.scale_factor", gguf::Value::U32(s.merge));
  }
  auto add = [&](const std::string& name, std::vector<int64_t> shape, float scale, float offset,
                 gguf::GgmlType type) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> v(n);
    for (float& x : v) x = offset + scale * normal(rng);
    for (const std::string& omit : s.omit_tensors) {
      if (omit == name) return;
    }
    if (type == gguf::GgmlType::kF16) {
      std::vector<uint8_t> bytes(n * 2);
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = kernels::F32ToF16(v[i]);
        v[i] = kernels::F16ToF32(h);
        std::memcpy(bytes.data() + 2 * i, &h, 2);
      }
      if (!w.AddTensor(name, type, shape, std::move(bytes)).ok()) throw std::runtime_error(name);
    } else if (!w.AddF32Tensor(name, shape, v).ok()) {
      throw std::runtime_error(name);
    }
    p.tensors.emplace_back(name, std::move(v));
  };
  // Clamp scalars: inputs to +-(1.2 .. 1.8), outputs to +-(1.5 .. 2.5), so that some values of
  // every linear are clipped.
  auto clamps = [&](const std::string& base) {
    if (!s.clamps) return;
    add(base + ".input_min", {1}, 0.1f, -1.5f, gguf::GgmlType::kF32);
    add(base + ".input_max", {1}, 0.1f, 1.5f, gguf::GgmlType::kF32);
    add(base + ".output_min", {1}, 0.2f, -2.0f, gguf::GgmlType::kF32);
    add(base + ".output_max", {1}, 0.2f, 2.0f, gguf::GgmlType::kF32);
  };
  const int64_t h = s.n_embd, ps = s.patch_size, hd = h / s.n_heads;
  const float wscale = 1.0f / std::sqrt(static_cast<float>(h));
  const auto f32 = gguf::GgmlType::kF32;
  add("v.patch_embd.weight", {ps, ps, 3, h}, 0.2f, 0.0f, f32);
  add("v.position_embd.weight", {h, s.positions, 2}, 0.3f, 0.0f, f32);
  for (int64_t i = 0; i < s.n_layers; ++i) {
    const std::string b = "v.blk." + std::to_string(i) + ".";
    for (const char* name : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
      add(b + name + ".weight", {h, h}, wscale, 0.0f, s.matrix_type);
      clamps(b + name);
    }
    add(b + "attn_q_norm.weight", {hd}, 0.1f, 1.0f, f32);
    add(b + "attn_k_norm.weight", {hd}, 0.1f, 1.0f, f32);
    add(b + "ln1.weight", {h}, 0.1f, 1.0f, f32);
    add(b + "ln2.weight", {h}, 0.1f, 1.0f, f32);
    add(b + "attn_post_norm.weight", {h}, 0.1f, 1.0f, f32);
    add(b + "ffn_post_norm.weight", {h}, 0.1f, 1.0f, f32);
    add(b + "ffn_up.weight", {h, s.n_ff}, wscale, 0.0f, s.matrix_type);
    clamps(b + "ffn_up");
    add(b + "ffn_gate.weight", {h, s.n_ff}, wscale, 0.0f, s.matrix_type);
    clamps(b + "ffn_gate");
    add(b + "ffn_down.weight", {s.n_ff, h}, 1.0f / std::sqrt(float(s.n_ff)), 0.0f, s.matrix_type);
    clamps(b + "ffn_down");
    if (s.out_scale) add(b + "out_scale.weight", {1}, 0.1f, 0.8f, f32);
  }
  if (s.standardize) {
    add("v.std_bias", {h}, 0.3f, 0.0f, f32);
    add("v.std_scale", {h}, 0.1f, 1.0f, f32);
  }
  add("mm.input_projection.weight", {h, s.projection_dim}, wscale, 0.0f, s.matrix_type);
  clamps("mm.input_projection");
  for (const std::string& name : s.extra_tensors) add(name, {h}, 0.0f, 1.0f, f32);
  p.gguf = w.Serialize();
  return p;
}

namespace gemma4v_ref {

// Rows of width dim: x / sqrt(mean(x^2) + eps) * w (w empty: no weight).
void RmsNormRef(std::vector<float>& x, int64_t dim, const std::vector<float>& w, float eps) {
  for (size_t r = 0; r * dim < x.size(); ++r) {
    float* row = x.data() + r * dim;
    double ss = 0;
    for (int64_t i = 0; i < dim; ++i) ss += double(row[i]) * row[i];
    const double inv = 1.0 / std::sqrt(ss / dim + eps);
    for (int64_t i = 0; i < dim; ++i) row[i] = float(row[i] * inv * (w.empty() ? 1.0f : w[i]));
  }
}

bool Has(const TinyProjector& p, const std::string& name) {
  for (const auto& [n, v] : p.tensors) {
    if (n == name) return true;
  }
  return false;
}

// Gemma4ClippableLinear: y[n, rows] = clamp(clamp(x, in) W^T, out), W stored [rows][cols].
std::vector<float> Linear(const TinyProjector& p, const std::string& base,
                          const std::vector<float>& x, int64_t cols, int64_t rows) {
  auto scalar = [&](const char* suffix, float fallback) {
    return Has(p, base + suffix) ? p.Get(base + suffix)[0] : fallback;
  };
  const float in_lo = scalar(".input_min", -FLT_MAX), in_hi = scalar(".input_max", FLT_MAX);
  const float out_lo = scalar(".output_min", -FLT_MAX), out_hi = scalar(".output_max", FLT_MAX);
  const std::vector<float>& w = p.Get(base + ".weight");
  const int64_t n = static_cast<int64_t>(x.size()) / cols;
  std::vector<float> y(n * rows);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double acc = 0;
      for (int64_t c = 0; c < cols; ++c) {
        acc += double(std::clamp(x[t * cols + c], in_lo, in_hi)) * w[r * cols + c];
      }
      y[t * rows + r] = std::clamp(float(acc), out_lo, out_hi);
    }
  }
  return y;
}

}  // namespace gemma4v_ref

std::vector<float> ReferenceGemma4v(const TinyProjector& p, const TinyGemma4vSpec& s,
                                    const Image& img) {
  using gemma4v_ref::Linear;
  using gemma4v_ref::RmsNormRef;
  const int64_t h = s.n_embd, ps = s.patch_size, hd = h / s.n_heads;
  const int64_t k = s.merge > 0 ? s.merge : 3;
  const int64_t px = img.width / ps, py = img.height / ps, n = px * py;
  assert(px % k == 0 && py % k == 0);
  // Patches row-major, each patch's values by channel, row, column, scaled to [-1, 1].
  std::vector<float> patches(n * 3 * ps * ps);
  for (int64_t y = 0; y < py; ++y)
    for (int64_t x = 0; x < px; ++x)
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t ky = 0; ky < ps; ++ky)
          for (int64_t kx = 0; kx < ps; ++kx) {
            const uint8_t u = img.rgb[((y * ps + ky) * img.width + x * ps + kx) * 3 + c];
            patches[(y * px + x) * 3 * ps * ps + (c * ps + ky) * ps + kx] =
                2.0f * ((u / 255.0f - s.mean[c]) / s.std[c]) - 1.0f;
          }
  std::vector<float> x = Linear(p, "v.patch_embd", patches, 3 * ps * ps, h);
  const std::vector<float>& table = p.Get("v.position_embd.weight");
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t e = 0; e < h; ++e) {
      x[i * h + e] += table[(i % px) * h + e] + table[(s.positions + i / px) * h + e];
    }
  }
  // 2-D rope: in each head, dims [0, hd/2) turn by the column and [hd/2, hd) by the row; pair
  // (j, j + hd/4) of a half by pos * 100^(-4j / hd).
  auto rope = [&](std::vector<float>& t) {
    for (int64_t i = 0; i < n; ++i) {
      const double pos[2] = {double(i % px), double(i / px)};
      for (int64_t head = 0; head < s.n_heads; ++head) {
        for (int half = 0; half < 2; ++half) {
          float* v = t.data() + i * h + head * hd + half * hd / 2;
          for (int64_t j = 0; j < hd / 4; ++j) {
            const double theta = pos[half] * std::pow(100.0, -4.0 * j / hd);
            const double a = v[j], b = v[j + hd / 4];
            v[j] = float(a * std::cos(theta) - b * std::sin(theta));
            v[j + hd / 4] = float(a * std::sin(theta) + b * std::cos(theta));
          }
        }
      }
    }
  };
  for (int64_t l = 0; l < s.n_layers; ++l) {
    const std::string b = "v.blk." + std::to_string(l) + ".";
    std::vector<float> cur = x;
    RmsNormRef(cur, h, p.Get(b + "ln1.weight"), s.eps);
    auto q = Linear(p, b + "attn_q", cur, h, h);
    auto kk = Linear(p, b + "attn_k", cur, h, h);
    auto v = Linear(p, b + "attn_v", cur, h, h);
    RmsNormRef(q, hd, p.Get(b + "attn_q_norm.weight"), s.eps);
    RmsNormRef(kk, hd, p.Get(b + "attn_k_norm.weight"), s.eps);
    RmsNormRef(v, hd, {}, s.eps);
    rope(q);
    rope(kk);
    std::vector<float> attn(n * h);
    for (int64_t head = 0; head < s.n_heads; ++head) {
      for (int64_t i = 0; i < n; ++i) {
        std::vector<double> sc(n);
        double mx = -1e300;
        for (int64_t j = 0; j < n; ++j) {
          double d = 0;
          for (int64_t e = 0; e < hd; ++e)
            d += double(q[i * h + head * hd + e]) * kk[j * h + head * hd + e];
          sc[j] = d;  // unscaled: Gemma 4's q / k norms replace 1 / sqrt(head size)
          mx = std::max(mx, d);
        }
        double sum = 0;
        for (double& e : sc) sum += (e = std::exp(e - mx));
        for (int64_t e = 0; e < hd; ++e) {
          double o = 0;
          for (int64_t j = 0; j < n; ++j) o += sc[j] * v[j * h + head * hd + e];
          attn[i * h + head * hd + e] = float(o / sum);
        }
      }
    }
    auto o = Linear(p, b + "attn_out", attn, h, h);
    RmsNormRef(o, h, p.Get(b + "attn_post_norm.weight"), s.eps);
    for (int64_t i = 0; i < n * h; ++i) x[i] += o[i];
    cur = x;
    RmsNormRef(cur, h, p.Get(b + "ln2.weight"), s.eps);
    auto up = Linear(p, b + "ffn_up", cur, h, s.n_ff);
    auto gate = Linear(p, b + "ffn_gate", cur, h, s.n_ff);
    for (size_t i = 0; i < up.size(); ++i) {
      const double g = gate[i];
      const double act =
          s.use_gelu ? 0.5 * g * (1 + std::tanh(std::sqrt(2 / M_PI) * (g + 0.044715 * g * g * g)))
                     : g / (1.0 + std::exp(-1.702 * g));
      up[i] = float(act * up[i]);
    }
    auto down = Linear(p, b + "ffn_down", up, s.n_ff, h);
    RmsNormRef(down, h, p.Get(b + "ffn_post_norm.weight"), s.eps);
    for (int64_t i = 0; i < n * h; ++i) x[i] += down[i];
    if (s.out_scale) {
      for (float& e : x) e *= p.Get(b + "out_scale.weight")[0];
    }
  }
  // k x k average pool, tokens row-major, * sqrt(n_embd); standardise; RMS norm; projection.
  const int64_t ox = px / k, oy = py / k;
  std::vector<float> tokens(ox * oy * h, 0.0f);
  for (int64_t t = 0; t < ox * oy; ++t) {
    for (int64_t e = 0; e < h; ++e) {
      double acc = 0;
      for (int64_t dy = 0; dy < k; ++dy)
        for (int64_t dx = 0; dx < k; ++dx)
          acc += x[(((t / ox) * k + dy) * px + (t % ox) * k + dx) * h + e];
      double v = acc / double(k * k) * std::sqrt(double(h));
      if (s.standardize) v = (v - p.Get("v.std_bias")[e]) * p.Get("v.std_scale")[e];
      tokens[t * h + e] = float(v);
    }
  }
  RmsNormRef(tokens, h, {}, s.eps);
  return Linear(p, "mm.input_projection", tokens, h, s.projection_dim);
}

}  // namespace radixlm::vision::testing
