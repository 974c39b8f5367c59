#include "tiny_qwen25vl.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "gguf/gguf_writer.h"
#include "kernels/fp16.h"

namespace radixlm::vision::testing {

TinyProjector MakeTinyQwen25Vl(const TinyQwenSpec& s) {
  TinyProjector p;
  p.spec.projector_type = s.projector_type;
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  gguf::GgufWriter w;
  w.AddMetadata("general.architecture", gguf::Value::Str("clip"));
  w.AddMetadata("clip.has_vision_encoder", gguf::Value::Bool(true));
  w.AddMetadata("clip.projector_type", gguf::Value::Str(s.projector_type));
  w.AddMetadata("clip.use_silu", gguf::Value::Bool(true));
  w.AddMetadata("clip.vision.projection_dim", gguf::Value::U32(s.projection_dim));
  w.AddMetadata("clip.vision.image_size", gguf::Value::U32(560));
  w.AddMetadata("clip.vision.patch_size", gguf::Value::U32(s.patch_size));
  w.AddMetadata("clip.vision.embedding_length", gguf::Value::U32(s.n_embd));
  w.AddMetadata("clip.vision.feed_forward_length", gguf::Value::U32(s.n_ff));
  w.AddMetadata("clip.vision.block_count", gguf::Value::U32(s.n_layers));
  w.AddMetadata("clip.vision.attention.head_count", gguf::Value::U32(s.n_heads));
  w.AddMetadata("clip.vision.attention.layer_norm_epsilon", gguf::Value::F32(s.eps));
  w.AddMetadata("clip.vision.image_mean", gguf::Value::F32Arr({s.mean[0], s.mean[1], s.mean[2]}));
  w.AddMetadata("clip.vision.image_std", gguf::Value::F32Arr({s.std[0], s.std[1], s.std[2]}));
  if (s.n_wa_pattern >= 0) {
    w.AddMetadata("clip.vision.n_wa_pattern", gguf::Value::U32(s.n_wa_pattern));
  }
  if (s.window_size > 0) {
    w.AddMetadata("clip.vision.window_size", gguf::Value::U32(s.window_size));
  }
  if (s.spatial_merge > 0) {
    w.AddMetadata("clip.vision.spatial_merge_size", gguf::Value::U32(s.spatial_merge));
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
  const int64_t h = s.n_embd, ps = s.patch_size, m = 4 * h;
  const float wscale = 1.0f / std::sqrt(static_cast<float>(h));
  const auto f32 = gguf::GgmlType::kF32;
  add("v.patch_embd.weight", {ps, ps, 3, h}, 0.2f, 0.0f, f32);
  add("v.patch_embd.weight.1", {ps, ps, 3, h}, 0.2f, 0.0f, f32);
  for (int64_t i = 0; i < s.n_layers; ++i) {
    const std::string b = "v.blk." + std::to_string(i) + ".";
    for (const char* name : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
      add(b + name + ".weight", {h, h}, wscale, 0.0f, s.matrix_type);
      add(b + name + ".bias", {h}, 0.1f, 0.0f, f32);
    }
    add(b + "ln1.weight", {h}, 0.1f, 1.0f, f32);
    add(b + "ln2.weight", {h}, 0.1f, 1.0f, f32);
    add(b + "ffn_up.weight", {h, s.n_ff}, wscale, 0.0f, s.matrix_type);
    add(b + "ffn_up.bias", {s.n_ff}, 0.1f, 0.0f, f32);
    add(b + "ffn_gate.weight", {h, s.n_ff}, wscale, 0.0f, s.matrix_type);
    add(b + "ffn_gate.bias", {s.n_ff}, 0.1f, 0.0f, f32);
    add(b + "ffn_down.weight", {s.n_ff, h}, 1.0f / std::sqrt(float(s.n_ff)), 0.0f, s.matrix_type);
    add(b + "ffn_down.bias", {h}, 0.1f, 0.0f, f32);
  }
  add("v.post_ln.weight", {h}, 0.1f, 1.0f, f32);
  add("mm.0.weight", {m, m}, 1.0f / std::sqrt(float(m)), 0.0f, s.matrix_type);
  add("mm.0.bias", {m}, 0.1f, 0.0f, f32);
  add("mm.2.weight", {m, s.projection_dim}, 1.0f / std::sqrt(float(m)), 0.0f, s.matrix_type);
  add("mm.2.bias", {s.projection_dim}, 0.1f, 0.0f, f32);
  for (const std::string& name : s.extra_tensors) add(name, {h}, 0.0f, 1.0f, f32);
  p.gguf = w.Serialize();
  return p;
}

namespace {

void RmsNormRef(std::vector<float>& x, int64_t n, int64_t h, const std::vector<float>& w,
                float eps) {
  for (int64_t r = 0; r < n; ++r) {
    float* row = x.data() + r * h;
    double ss = 0;
    for (int64_t i = 0; i < h; ++i) ss += double(row[i]) * row[i];
    const double inv = 1.0 / std::sqrt(ss / h + eps);
    for (int64_t i = 0; i < h; ++i) row[i] = float(row[i] * inv * w[i]);
  }
}

// y[n, rows] = x[n, cols] W^T + b, W stored [rows][cols].
std::vector<float> Linear(const std::vector<float>& x, int64_t n, int64_t cols,
                          const std::vector<float>& w, int64_t rows, const std::vector<float>& b) {
  std::vector<float> y(n * rows);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double acc = b.empty() ? 0.0 : b[r];
      for (int64_t c = 0; c < cols; ++c) acc += double(x[t * cols + c]) * w[r * cols + c];
      y[t * rows + r] = float(acc);
    }
  }
  return y;
}

}  // namespace

std::vector<float> ReferenceQwen25Vl(const TinyProjector& p, const TinyQwenSpec& s,
                                     const Image& img) {
  const int64_t h = s.n_embd, ps = s.patch_size, hd = h / s.n_heads;
  const int64_t px = img.width / ps, py = img.height / ps, n = px * py;
  assert(px % 2 == 0 && py % 2 == 0);
  const int64_t grid = (s.window_size > 0 ? s.window_size : 112) / ps / 2;
  // Patches row-major, each patch's values by channel, row, column.
  std::vector<float> patches(n * 3 * ps * ps);
  for (int64_t y = 0; y < py; ++y)
    for (int64_t x = 0; x < px; ++x)
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t ky = 0; ky < ps; ++ky)
          for (int64_t kx = 0; kx < ps; ++kx) {
            const uint8_t u = img.rgb[((y * ps + ky) * img.width + x * ps + kx) * 3 + c];
            patches[(y * px + x) * 3 * ps * ps + (c * ps + ky) * ps + kx] =
                (u / 255.0f - s.mean[c]) / s.std[c];
          }
  std::vector<float> x = Linear(patches, n, 3 * ps * ps, p.Get("v.patch_embd.weight"), h, {});
  const std::vector<float> x1 =
      Linear(patches, n, 3 * ps * ps, p.Get("v.patch_embd.weight.1"), h, {});
  for (int64_t i = 0; i < n * h; ++i) x[i] += x1[i];
  // 2-D rope: pair (e, e + hd/2) of a head turns by row * 10000^(-4e/hd) for e < hd/4 and by
  // column * 10000^(-4(e - hd/4)/hd) above.
  auto rope = [&](std::vector<float>& t) {
    for (int64_t i = 0; i < n; ++i) {
      const double row = double(i / px), col = double(i % px);
      for (int64_t head = 0; head < s.n_heads; ++head) {
        float* v = t.data() + i * h + head * hd;
        for (int64_t e = 0; e < hd / 2; ++e) {
          const double theta = e < hd / 4 ? row * std::pow(10000.0, -4.0 * e / hd)
                                          : col * std::pow(10000.0, -4.0 * (e - hd / 4) / hd);
          const double a = v[e], b = v[e + hd / 2];
          v[e] = float(a * std::cos(theta) - b * std::sin(theta));
          v[e + hd / 2] = float(a * std::sin(theta) + b * std::cos(theta));
        }
      }
    }
  };
  auto window = [&](int64_t i) { return (i / px / 2 / grid) * 1000000 + (i % px / 2 / grid); };
  for (int64_t l = 0; l < s.n_layers; ++l) {
    const std::string b = "v.blk." + std::to_string(l) + ".";
    const bool full = s.n_wa_pattern <= 0 || (l + 1) % s.n_wa_pattern == 0;
    std::vector<float> cur = x;
    RmsNormRef(cur, n, h, p.Get(b + "ln1.weight"), s.eps);
    auto q = Linear(cur, n, h, p.Get(b + "attn_q.weight"), h, p.Get(b + "attn_q.bias"));
    auto k = Linear(cur, n, h, p.Get(b + "attn_k.weight"), h, p.Get(b + "attn_k.bias"));
    auto v = Linear(cur, n, h, p.Get(b + "attn_v.weight"), h, p.Get(b + "attn_v.bias"));
    rope(q);
    rope(k);
    std::vector<float> attn(n * h);
    for (int64_t head = 0; head < s.n_heads; ++head) {
      for (int64_t i = 0; i < n; ++i) {
        std::vector<double> sc(n, 0.0);
        double mx = -1e300;
        for (int64_t j = 0; j < n; ++j) {
          if (!full && window(i) != window(j)) continue;
          double d = 0;
          for (int64_t e = 0; e < hd; ++e)
            d += double(q[i * h + head * hd + e]) * k[j * h + head * hd + e];
          sc[j] = d / std::sqrt(double(hd));
          mx = std::max(mx, sc[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < n; ++j) {
          sc[j] = (!full && window(i) != window(j)) ? 0.0 : std::exp(sc[j] - mx);
          sum += sc[j];
        }
        for (int64_t e = 0; e < hd; ++e) {
          double o = 0;
          for (int64_t j = 0; j < n; ++j) o += sc[j] * v[j * h + head * hd + e];
          attn[i * h + head * hd + e] = float(o / sum);
        }
      }
    }
    auto o = Linear(attn, n, h, p.Get(b + "attn_out.weight"), h, p.Get(b + "attn_out.bias"));
    for (int64_t i = 0; i < n * h; ++i) x[i] += o[i];
    cur = x;
    RmsNormRef(cur, n, h, p.Get(b + "ln2.weight"), s.eps);
    auto up = Linear(cur, n, h, p.Get(b + "ffn_up.weight"), s.n_ff, p.Get(b + "ffn_up.bias"));
    auto gate = Linear(cur, n, h, p.Get(b + "ffn_gate.weight"), s.n_ff, p.Get(b + "ffn_gate.bias"));
    for (size_t i = 0; i < up.size(); ++i) {
      const double g = gate[i];
      up[i] = float(g / (1.0 + std::exp(-g)) * up[i]);
    }
    auto down = Linear(up, n, s.n_ff, p.Get(b + "ffn_down.weight"), h, p.Get(b + "ffn_down.bias"));
    for (int64_t i = 0; i < n * h; ++i) x[i] += down[i];
  }
  RmsNormRef(x, n, h, p.Get("v.post_ln.weight"), s.eps);
  // Merger: the 2x2 group's patches (top left, top right, bottom left, bottom right) as one row.
  const int64_t gx = px / 2, gy = py / 2, nt = gx * gy, m = 4 * h;
  std::vector<float> merged(nt * m);
  for (int64_t t = 0; t < nt; ++t) {
    const int64_t y = 2 * (t / gx), xx = 2 * (t % gx);
    const int64_t src[4] = {y * px + xx, y * px + xx + 1, (y + 1) * px + xx, (y + 1) * px + xx + 1};
    for (int q = 0; q < 4; ++q)
      std::copy_n(x.data() + src[q] * h, h, merged.data() + t * m + q * h);
  }
  auto hidden = Linear(merged, nt, m, p.Get("mm.0.weight"), m, p.Get("mm.0.bias"));
  for (float& u : hidden) {
    const double t = u;
    u = float(0.5 * t * (1 + std::tanh(std::sqrt(2 / M_PI) * (t + 0.044715 * t * t * t))));
  }
  return Linear(hidden, nt, m, p.Get("mm.2.weight"), s.projection_dim, p.Get("mm.2.bias"));
}

}  // namespace radixlm::vision::testing
