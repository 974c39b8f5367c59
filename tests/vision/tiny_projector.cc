#include "tiny_projector.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "gguf/gguf_writer.h"
#include "kernels/fp16.h"

namespace radixlm::vision::testing {

const std::vector<float>& TinyProjector::Get(const std::string& name) const {
  for (const auto& [n, v] : tensors) {
    if (n == name) return v;
  }
  throw std::runtime_error("no tensor " + name);
}

TinyProjector MakeTinyProjector(const TinyProjectorSpec& s) {
  TinyProjector p;
  p.spec = s;
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  gguf::GgufWriter w;
  w.AddMetadata("general.architecture", gguf::Value::Str("clip"));
  w.AddMetadata("clip.has_vision_encoder", gguf::Value::Bool(true));
  w.AddMetadata("clip.projector_type", gguf::Value::Str(s.projector_type));
  w.AddMetadata("clip.use_gelu", gguf::Value::Bool(true));
  w.AddMetadata("clip.vision.projection_dim", gguf::Value::U32(s.projection_dim));
  w.AddMetadata("clip.vision.image_size", gguf::Value::U32(s.image_size));
  w.AddMetadata("clip.vision.patch_size", gguf::Value::U32(s.patch_size));
  w.AddMetadata("clip.vision.embedding_length", gguf::Value::U32(s.n_embd));
  w.AddMetadata("clip.vision.feed_forward_length", gguf::Value::U32(s.n_ff));
  w.AddMetadata("clip.vision.block_count", gguf::Value::U32(s.n_layers));
  w.AddMetadata("clip.vision.attention.head_count", gguf::Value::U32(s.n_heads));
  w.AddMetadata("clip.vision.attention.layer_norm_epsilon", gguf::Value::F32(s.eps));
  w.AddMetadata("clip.vision.image_mean", gguf::Value::F32Arr({0.5f, 0.5f, 0.5f}));
  w.AddMetadata("clip.vision.image_std", gguf::Value::F32Arr({0.5f, 0.5f, 0.5f}));
  if (s.scale_factor > 0) {
    w.AddMetadata("clip.vision.projector.scale_factor", gguf::Value::U32(s.scale_factor));
  }
  const bool idefics3 = s.projector_type == "idefics3";
  if (idefics3 && s.preproc_image_size > 0) {
    w.AddMetadata("clip.vision.preproc_image_size", gguf::Value::U32(s.preproc_image_size));
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
  const int64_t h = s.n_embd, ps = s.patch_size, side = s.image_size / s.patch_size;
  const float wscale = 1.0f / std::sqrt(static_cast<float>(h));
  const auto f32 = gguf::GgmlType::kF32;
  add("v.patch_embd.weight", {ps, ps, 3, h}, 0.3f, 0.0f, f32);
  add("v.patch_embd.bias", {h}, 0.1f, 0.0f, f32);
  add("v.position_embd.weight", {h, side * side}, 0.5f, 0.0f, f32);
  for (int64_t i = 0; i < s.n_layers; ++i) {
    const std::string b = "v.blk." + std::to_string(i) + ".";
    for (const char* m : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
      add(b + m + ".weight", {h, h}, wscale, 0.0f, s.matrix_type);
      add(b + m + ".bias", {h}, 0.1f, 0.0f, f32);
    }
    add(b + "ln1.weight", {h}, 0.1f, 1.0f, f32);
    add(b + "ln1.bias", {h}, 0.1f, 0.0f, f32);
    add(b + "ln2.weight", {h}, 0.1f, 1.0f, f32);
    add(b + "ln2.bias", {h}, 0.1f, 0.0f, f32);
    add(b + "ffn_up.weight", {h, s.n_ff}, wscale, 0.0f, s.matrix_type);
    add(b + "ffn_up.bias", {s.n_ff}, 0.1f, 0.0f, f32);
    add(b + "ffn_down.weight", {s.n_ff, h}, 1.0f / std::sqrt(float(s.n_ff)), 0.0f, s.matrix_type);
    add(b + "ffn_down.bias", {h}, 0.1f, 0.0f, f32);
  }
  add("v.post_ln.weight", {h}, 0.1f, 1.0f, f32);
  add("v.post_ln.bias", {h}, 0.1f, 0.0f, f32);
  if (idefics3) {
    const int64_t k = s.scale_factor > 0 ? s.scale_factor : 2;  // the file may leave it out
    const int64_t merged = h * k * k;
    add("mm.model.fc.weight", {merged, s.projection_dim}, 1.0f / std::sqrt(float(merged)), 0.0f,
        s.matrix_type);
  } else {
    add("mm.soft_emb_norm.weight", {h}, 0.1f, 1.0f, f32);
    add("mm.input_projection.weight", {s.projection_dim, h}, wscale, 0.0f,
        s.matrix_type == f32 ? f32 : gguf::GgmlType::kF16);
  }
  p.gguf = w.Serialize();
  return p;
}

namespace {

void LayerNormRef(std::vector<float>& x, int64_t n, int64_t h, const std::vector<float>& w,
                  const std::vector<float>& b, float eps) {
  for (int64_t r = 0; r < n; ++r) {
    float* row = x.data() + r * h;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < h; ++i) mean += row[i];
    mean /= h;
    for (int64_t i = 0; i < h; ++i) var += (row[i] - mean) * (row[i] - mean);
    var /= h;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < h; ++i) row[i] = float((row[i] - mean) * inv * w[i] + b[i]);
  }
}

// y[n, rows] = x[n, cols] W^T + b, W stored [rows][cols].
std::vector<float> Linear(const std::vector<float>& x, int64_t n, int64_t cols,
                          const std::vector<float>& w, int64_t rows, const std::vector<float>* b) {
  std::vector<float> y(n * rows);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double acc = b ? (*b)[r] : 0.0;
      for (int64_t c = 0; c < cols; ++c) acc += double(x[t * cols + c]) * w[r * cols + c];
      y[t * rows + r] = float(acc);
    }
  }
  return y;
}

// The ViT: [side * side, n_embd] after the post-layernorm.
std::vector<float> ReferenceVit(const TinyProjector& p, const Image& img) {
  const TinyProjectorSpec& s = p.spec;
  const int64_t h = s.n_embd, ps = s.patch_size, size = s.image_size, side = size / ps;
  const int64_t n = side * side, hd = h / s.n_heads;
  assert(img.width == size && img.height == size);
  // Patches: channel, row, column order.
  std::vector<float> patches(n * 3 * ps * ps);
  for (int64_t py = 0; py < side; ++py)
    for (int64_t px = 0; px < side; ++px)
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t ky = 0; ky < ps; ++ky)
          for (int64_t kx = 0; kx < ps; ++kx) {
            const uint8_t u = img.rgb[((py * ps + ky) * size + px * ps + kx) * 3 + c];
            patches[(py * side + px) * 3 * ps * ps + (c * ps + ky) * ps + kx] =
                (u / 255.0f - 0.5f) / 0.5f;
          }
  std::vector<float> x =
      Linear(patches, n, 3 * ps * ps, p.Get("v.patch_embd.weight"), h, &p.Get("v.patch_embd.bias"));
  const std::vector<float>& pos = p.Get("v.position_embd.weight");
  for (int64_t i = 0; i < n * h; ++i) x[i] += pos[i];
  for (int64_t l = 0; l < s.n_layers; ++l) {
    const std::string b = "v.blk." + std::to_string(l) + ".";
    std::vector<float> cur = x;
    LayerNormRef(cur, n, h, p.Get(b + "ln1.weight"), p.Get(b + "ln1.bias"), s.eps);
    auto q = Linear(cur, n, h, p.Get(b + "attn_q.weight"), h, &p.Get(b + "attn_q.bias"));
    auto k = Linear(cur, n, h, p.Get(b + "attn_k.weight"), h, &p.Get(b + "attn_k.bias"));
    auto v = Linear(cur, n, h, p.Get(b + "attn_v.weight"), h, &p.Get(b + "attn_v.bias"));
    std::vector<float> attn(n * h);
    for (int64_t hh = 0; hh < s.n_heads; ++hh) {
      for (int64_t i = 0; i < n; ++i) {
        std::vector<double> sc(n);
        double mx = -1e300;
        for (int64_t j = 0; j < n; ++j) {
          double d = 0;
          for (int64_t e = 0; e < hd; ++e)
            d += double(q[i * h + hh * hd + e]) * k[j * h + hh * hd + e];
          sc[j] = d / std::sqrt(double(hd));
          mx = std::max(mx, sc[j]);
        }
        double sum = 0;
        for (double& z : sc) sum += (z = std::exp(z - mx));
        for (int64_t e = 0; e < hd; ++e) {
          double o = 0;
          for (int64_t j = 0; j < n; ++j) o += sc[j] * v[j * h + hh * hd + e];
          attn[i * h + hh * hd + e] = float(o / sum);
        }
      }
    }
    auto o = Linear(attn, n, h, p.Get(b + "attn_out.weight"), h, &p.Get(b + "attn_out.bias"));
    for (int64_t i = 0; i < n * h; ++i) x[i] += o[i];
    cur = x;
    LayerNormRef(cur, n, h, p.Get(b + "ln2.weight"), p.Get(b + "ln2.bias"), s.eps);
    auto up = Linear(cur, n, h, p.Get(b + "ffn_up.weight"), s.n_ff, &p.Get(b + "ffn_up.bias"));
    for (float& u : up) {
      const double t = u;
      u = float(0.5 * t * (1 + std::tanh(std::sqrt(2 / M_PI) * (t + 0.044715 * t * t * t))));
    }
    auto down = Linear(up, n, s.n_ff, p.Get(b + "ffn_down.weight"), h, &p.Get(b + "ffn_down.bias"));
    for (int64_t i = 0; i < n * h; ++i) x[i] += down[i];
  }
  LayerNormRef(x, n, h, p.Get("v.post_ln.weight"), p.Get("v.post_ln.bias"), s.eps);
  return x;
}

}  // namespace

std::vector<float> ReferenceGemma3(const TinyProjector& p, const Image& img) {
  const TinyProjectorSpec& s = p.spec;
  const int64_t h = s.n_embd, side = s.image_size / s.patch_size;
  const std::vector<float> x = ReferenceVit(p, img);
  const int64_t k = s.scale_factor > 0 ? s.scale_factor : 4, ts = side / k, nt = ts * ts;
  std::vector<float> tok(nt * h, 0.0f);
  for (int64_t oy = 0; oy < ts; ++oy)
    for (int64_t ox = 0; ox < ts; ++ox)
      for (int64_t d = 0; d < h; ++d) {
        double acc = 0;
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx) acc += x[((oy * k + ky) * side + ox * k + kx) * h + d];
        tok[(oy * ts + ox) * h + d] = float(acc / (k * k));
      }
  const std::vector<float>& nw = p.Get("mm.soft_emb_norm.weight");
  for (int64_t t = 0; t < nt; ++t) {
    double ss = 0;
    for (int64_t d = 0; d < h; ++d) ss += double(tok[t * h + d]) * tok[t * h + d];
    const double inv = 1.0 / std::sqrt(ss / h + s.eps);
    for (int64_t d = 0; d < h; ++d) tok[t * h + d] = float(tok[t * h + d] * inv * nw[d]);
  }
  // The file's projection is [projection_dim (contiguous), h]: out[j] = sum_d P[d][j] tok[d].
  const std::vector<float>& proj = p.Get("mm.input_projection.weight");
  std::vector<float> out(nt * s.projection_dim);
  for (int64_t t = 0; t < nt; ++t)
    for (int64_t j = 0; j < s.projection_dim; ++j) {
      double acc = 0;
      for (int64_t d = 0; d < h; ++d)
        acc += double(proj[d * s.projection_dim + j]) * tok[t * h + d];
      out[t * s.projection_dim + j] = float(acc);
    }
  return out;
}

std::vector<float> ReferenceIdefics3Tile(const TinyProjector& p, const Image& img) {
  const TinyProjectorSpec& s = p.spec;
  const int64_t h = s.n_embd, side = s.image_size / s.patch_size, k = s.scale_factor;
  const int64_t ts = side / k, nt = ts * ts, merged = h * k * k;
  const std::vector<float> x = ReferenceVit(p, img);
  // Token (ty, tx): patches (ty * k + dy, tx * k + dx) side by side, dy outer, dx inner.
  std::vector<float> tok(nt * merged);
  for (int64_t ty = 0; ty < ts; ++ty)
    for (int64_t tx = 0; tx < ts; ++tx)
      for (int64_t dy = 0; dy < k; ++dy)
        for (int64_t dx = 0; dx < k; ++dx)
          for (int64_t d = 0; d < h; ++d)
            tok[(ty * ts + tx) * merged + (dy * k + dx) * h + d] =
                x[((ty * k + dy) * side + tx * k + dx) * h + d];
  return Linear(tok, nt, merged, p.Get("mm.model.fc.weight"), s.projection_dim, nullptr);
}

Image TestPicture(int width, int height, uint32_t seed) {
  Image img{.width = width, .height = height, .rgb = {}};
  img.rgb.resize(size_t(width) * height * 3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c) {
        uint32_t hsh = (x * 73856093u) ^ (y * 19349663u) ^ (c * 83492791u) ^ (seed * 2654435761u);
        hsh ^= hsh >> 13;
        const int base = (c == 0   ? x * 255 / std::max(1, width - 1)
                          : c == 1 ? y * 255 / std::max(1, height - 1)
                                   : (x + y) * 255 / std::max(1, width + height - 2));
        img.rgb[(size_t(y) * width + x) * 3 + c] =
            static_cast<uint8_t>(std::clamp(base + int(hsh % 17) - 8, 0, 255));
      }
  return img;
}

}  // namespace radixlm::vision::testing
