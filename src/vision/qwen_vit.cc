#include "vision/qwen_vit.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>

#include "kernels/attention.h"
#include "kernels/layer_norm.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/quant.h"

namespace radixlm::vision {

struct QwenVisionTransformer::Layer {
  kernels::WeightMatrix wq, wk, wv, wo, up, gate, down;
  kernels::WeightMatrix wqkv;  // the fused [3 * n_embd, n_embd] (when fused)
  bool fused_qkv = false;
  bool gated = true;  // ffn_gate present
  const float* bqkv = nullptr;
  const float* bq = nullptr;  // biases: null where the file has none
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* bo = nullptr;
  const float* b_up = nullptr;
  const float* b_gate = nullptr;
  const float* b_down = nullptr;
  const float* ln1_w = nullptr;
  const float* ln1_b = nullptr;
  const float* ln2_w = nullptr;
  const float* ln2_b = nullptr;
};

namespace {

std::string LayerTensor(int64_t layer, const std::string& suffix) {
  return "v.blk." + std::to_string(layer) + "." + suffix;
}

// y[r, :] += b for n rows of width w (b may be null).
void AddRowBias(float* y, const float* b, int64_t n, int64_t w) {
  if (b == nullptr) return;
  for (int64_t r = 0; r < n; ++r) kernels::Add(y + r * w, b, y + r * w, w);
}

// ggml_rms_norm, then * w and + b (b may be null).
void RmsNormBias(const float* x, const float* w, const float* b, int64_t n, int64_t dim, float eps,
                 float* out) {
  kernels::RmsNorm(x, w, n, dim, eps, out);
  AddRowBias(out, b, n, dim);
}

// out = act(gate) * up, the gated FFN's activation (ggml_swiglu / geglu / geglu_quick).
void GatedActivation(FfnActivation act, float* gate, const float* up, int64_t n) {
  switch (act) {
    case FfnActivation::kSilu:
      kernels::SwiGlu(gate, up, gate, n);
      break;
    case FfnActivation::kGelu:
      kernels::GeGlu(gate, up, gate, n);
      break;
    case FfnActivation::kGeluQuick:
      for (int64_t i = 0; i < n; ++i)
        gate[i] = gate[i] / (1.0f + std::exp(-1.702f * gate[i])) * up[i];
      break;
  }
}

// x = act(x), the plain FFN's activation (ggml_gelu / ggml_silu / ggml_gelu_quick).
void Activation(FfnActivation act, float* x, int64_t n) {
  switch (act) {
    case FfnActivation::kSilu:
      kernels::Silu(x, x, n);
      break;
    case FfnActivation::kGelu:
      kernels::GeluTanh(x, x, n);
      break;
    case FfnActivation::kGeluQuick:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-1.702f * x[i]));
      break;
  }
}

}  // namespace

QwenVisionTransformer::~QwenVisionTransformer() = default;

StatusOr<std::unique_ptr<QwenVisionTransformer>> QwenVisionTransformer::Load(const ClipConfig& c,
                                                                             const Options& options,
                                                                             ClipWeights* w) {
  std::unique_ptr<QwenVisionTransformer> vit(new QwenVisionTransformer());
  vit->config_ = c;
  vit->options_ = options;
  if (c.head_dim % 4 != 0) {
    return Unimplemented("projector: the 2-D rope needs a head size that is a multiple of 4");
  }
  if (options.n_wa_pattern < 0) {
    return InvalidArgument("projector metadata: 'clip.vision.n_wa_pattern' < 0");
  }
  if (options.n_wa_pattern > 0 && options.window_size < 2 * c.patch_size) {
    return InvalidArgument("projector metadata: the attention window is smaller than 2 patches");
  }
  const int64_t h = c.n_embd;
  const int64_t patch_cols = 3 * c.patch_size * c.patch_size;
  for (const char* refused : {"v.class_embd", options.qwen3 ? "" : "v.patch_embd.bias"}) {
    if (*refused != '\0' && w->Find(refused) != nullptr) {
      return Unimplemented(std::string("projector: tensor '") + refused + "' is not supported");
    }
  }
  if (options.qwen3) {
    RADIXLM_RETURN_IF_ERROR(w->Vector("v.patch_embd.bias", h, true, &vit->patch_b_));
    const gguf::TensorInfo* pos = w->Find("v.position_embd.weight");
    if (pos == nullptr) {
      return InvalidArgument("projector: tensor 'v.position_embd.weight' is missing");
    }
    const int64_t n_pos = pos->shape.size() == 2 ? pos->shape[1] : 0;
    const int64_t side = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(n_pos))));
    if (pos->shape.size() != 2 || pos->shape[0] != h || n_pos <= 0 || side * side != n_pos) {
      return InvalidArgument("projector: tensor 'v.position_embd.weight' is not [" +
                             std::to_string(h) + ", side * side]");
    }
    if (!kernels::IsSupportedType(pos->type) || !kernels::IsRowSizeValid(pos->type, h)) {
      return Unimplemented("projector: tensor 'v.position_embd.weight' has an unsupported type");
    }
    const kernels::WeightMatrix table = kernels::MakeWeightMatrix(pos->type, pos->data, n_pos, h);
    std::vector<int32_t> ids(n_pos);
    std::iota(ids.begin(), ids.end(), 0);
    vit->position_.resize(n_pos * h);
    kernels::GetRows(table, ids.data(), n_pos, vit->position_.data());
    vit->pos_side_ = side;
  }
  const gguf::TensorInfo* patch = w->Find("v.patch_embd.weight");
  vit->patch_cols_ = patch ? ClipWeights::PaddedCols(patch->type, patch_cols) : patch_cols;
  RADIXLM_RETURN_IF_ERROR(
      w->Matrix("v.patch_embd.weight", patch_cols, h, &vit->patch_w0_, vit->patch_cols_));
  RADIXLM_RETURN_IF_ERROR(
      w->Matrix("v.patch_embd.weight.1", patch_cols, h, &vit->patch_w1_, vit->patch_cols_));
  RADIXLM_RETURN_IF_ERROR(w->Vector("v.pre_ln.weight", h, false, &vit->pre_ln_w_));
  RADIXLM_RETURN_IF_ERROR(w->Vector("v.pre_ln.bias", h, false, &vit->pre_ln_b_));
  RADIXLM_RETURN_IF_ERROR(w->Vector("v.post_ln.weight", h, false, &vit->post_ln_w_));
  RADIXLM_RETURN_IF_ERROR(w->Vector("v.post_ln.bias", h, false, &vit->post_ln_b_));
  const gguf::TensorInfo* down0 = w->Find(LayerTensor(0, "ffn_down.weight"));
  vit->n_ff_ = down0 ? ClipWeights::PaddedCols(down0->type, c.n_ff) : c.n_ff;
  vit->layers_.resize(c.n_layers);
  for (int64_t i = 0; i < c.n_layers; ++i) {
    Layer& l = vit->layers_[i];
    for (const char* refused :
         {"attn_q_norm.weight", "attn_k_norm.weight", "ls1.weight", "ls2.weight",
          "attn_post_norm.weight", "ffn_post_norm.weight", "ffn_gate_exps.weight"}) {
      if (w->Find(LayerTensor(i, refused)) != nullptr) {
        return Unimplemented("projector: tensor '" + LayerTensor(i, refused) +
                             "' is not supported");
      }
    }
    // (clip_graph_qwen3vl reads the fused matrix only)
    l.fused_qkv = options.qwen3 || w->Find(LayerTensor(i, "attn_qkv.weight")) != nullptr;
    if (l.fused_qkv) {
      RADIXLM_RETURN_IF_ERROR(w->Matrix(LayerTensor(i, "attn_qkv.weight"), h, 3 * h, &l.wqkv));
      RADIXLM_RETURN_IF_ERROR(w->Vector(LayerTensor(i, "attn_qkv.bias"), 3 * h, false, &l.bqkv));
    } else {
      RADIXLM_RETURN_IF_ERROR(w->Matrix(LayerTensor(i, "attn_q.weight"), h, h, &l.wq));
      RADIXLM_RETURN_IF_ERROR(w->Matrix(LayerTensor(i, "attn_k.weight"), h, h, &l.wk));
      RADIXLM_RETURN_IF_ERROR(w->Matrix(LayerTensor(i, "attn_v.weight"), h, h, &l.wv));
      RADIXLM_RETURN_IF_ERROR(w->Vector(LayerTensor(i, "attn_q.bias"), h, false, &l.bq));
      RADIXLM_RETURN_IF_ERROR(w->Vector(LayerTensor(i, "attn_k.bias"), h, false, &l.bk));
      RADIXLM_RETURN_IF_ERROR(w->Vector(LayerTensor(i, "attn_v.bias"), h, false, &l.bv));
    }
    RADIXLM_RETURN_IF_ERROR(w->Matrix(LayerTensor(i, "attn_out.weight"), h, h, &l.wo));
    RADIXLM_RETURN_IF_ERROR(w->Vector(LayerTensor(i, "attn_out.bias"), h, false, &l.bo));
    RADIXLM_RETURN_IF_ERROR(w->Vector(LayerTensor(i, "ln1.weight"), h, true, &l.ln1_w));
    RADIXLM_RETURN_IF_ERROR(w->Vector(LayerTensor(i, "ln1.bias"), h, false, &l.ln1_b));
    RADIXLM_RETURN_IF_ERROR(w->Vector(LayerTensor(i, "ln2.weight"), h, true, &l.ln2_w));
    RADIXLM_RETURN_IF_ERROR(w->Vector(LayerTensor(i, "ln2.bias"), h, false, &l.ln2_b));
    // llama.cpp swaps up and down (not the gate) when ffn_down reads n_embd values.
    const gguf::TensorInfo* down = w->Find(LayerTensor(i, "ffn_down.weight"));
    const bool swapped = down != nullptr && !down->shape.empty() && down->shape[0] == h;
    const std::string up_name = swapped ? "ffn_down" : "ffn_up";
    const std::string down_name = swapped ? "ffn_up" : "ffn_down";
    const int64_t ff = vit->n_ff_;
    RADIXLM_RETURN_IF_ERROR(
        w->Matrix(LayerTensor(i, up_name + ".weight"), h, c.n_ff, &l.up, 0, ff));
    l.gated = w->Find(LayerTensor(i, "ffn_gate.weight")) != nullptr;
    if (l.gated) {
      RADIXLM_RETURN_IF_ERROR(
          w->Matrix(LayerTensor(i, "ffn_gate.weight"), h, c.n_ff, &l.gate, 0, ff));
    }
    RADIXLM_RETURN_IF_ERROR(
        w->Matrix(LayerTensor(i, down_name + ".weight"), c.n_ff, h, &l.down, ff));
    RADIXLM_RETURN_IF_ERROR(
        w->Vector(LayerTensor(i, up_name + ".bias"), c.n_ff, false, &l.b_up, ff));
    RADIXLM_RETURN_IF_ERROR(
        w->Vector(LayerTensor(i, "ffn_gate.bias"), c.n_ff, false, &l.b_gate, ff));
    RADIXLM_RETURN_IF_ERROR(w->Vector(LayerTensor(i, down_name + ".bias"), h, false, &l.b_down));
  }
  return vit;
}

void QwenVisionTransformer::Plan(int64_t groups_x, int64_t groups_y) {
  const int64_t n_groups = groups_x * groups_y;
  order_.clear();
  window_starts_.clear();
  if (options_.n_wa_pattern > 0) {
    // clip.cpp: windows of `grid` x `grid` groups from the top left, row-major, each window's
    // groups row-major; the last row / column of windows may be smaller.
    const int64_t grid = options_.window_size / config_.patch_size / 2;
    for (int64_t y = 0; y < groups_y; y += grid) {
      for (int64_t x = 0; x < groups_x; x += grid) {
        window_starts_.push_back(static_cast<int64_t>(order_.size()) * 4);
        for (int64_t dy = 0; dy < std::min(grid, groups_y - y); ++dy) {
          for (int64_t dx = 0; dx < std::min(grid, groups_x - x); ++dx) {
            order_.push_back((y + dy) * groups_x + x + dx);
          }
        }
      }
    }
  } else {
    order_.resize(n_groups);
    std::iota(order_.begin(), order_.end(), 0);
    window_starts_.push_back(0);
  }
  window_starts_.push_back(n_groups * 4);
  // ggml_rope_multi, GGML_ROPE_TYPE_VISION: theta advances by base^(-2 / n_dims) per pair
  // (n_dims = head_dim / 2), restarting at the column for the second quarter of the pairs.
  const int64_t half = config_.head_dim / 2, quarter = config_.head_dim / 4;
  const float theta_scale = std::pow(10000.0f, -2.0f / static_cast<float>(half));
  cos_.resize(n_groups * 4 * half);
  sin_.resize(n_groups * 4 * half);
  for (int64_t i = 0; i < n_groups * 4; ++i) {
    const int64_t g = order_[i / 4], sub = i % 4;
    const float row = static_cast<float>(2 * (g / groups_x) + sub / 2);
    const float col = static_cast<float>(2 * (g % groups_x) + sub % 2);
    float theta_row = row, theta_col = col;
    for (int64_t j = 0; j < half; ++j) {
      if (j == quarter) theta_col = col;
      const float theta = j < quarter ? theta_row : theta_col;
      cos_[i * half + j] = std::cos(theta);
      sin_[i * half + j] = std::sin(theta);
      theta_row *= theta_scale;
      theta_col *= theta_scale;
    }
  }
}

void QwenVisionTransformer::Rope2d(float* rows) const {
  const int64_t d = config_.head_dim, half = d / 2, n = static_cast<int64_t>(order_.size()) * 4;
  for (int64_t i = 0; i < n; ++i) {
    const float* cs = cos_.data() + i * half;
    const float* sn = sin_.data() + i * half;
    for (int64_t head = 0; head < config_.n_heads; ++head) {
      float* x = rows + (i * config_.n_heads + head) * d;
      for (int64_t j = 0; j < half; ++j) {
        const float x0 = x[j], x1 = x[j + half];
        x[j] = x0 * cs[j] - x1 * sn[j];
        x[j + half] = x0 * sn[j] + x1 * cs[j];
      }
    }
  }
}

void QwenVisionTransformer::Norm(const float* x, const float* w, const float* b, int64_t n,
                                 float* out) const {
  if (options_.qwen3) {
    kernels::LayerNorm(x, w, b, n, config_.n_embd, config_.eps, out);
  } else {
    RmsNormBias(x, w, b, n, config_.n_embd, config_.eps, out);
  }
}

void QwenVisionTransformer::AddPositionEmbeddings(int64_t patches_x, int64_t patches_y) {
  const int64_t h = config_.n_embd, side = pos_side_;
  const int64_t groups_x = patches_x / 2;
  // ggml_interpolate (bilinear, align corners): source coordinate = i * (side - 1) / (out - 1),
  // the scale in float; a one-wide side keeps ne0 / ne00.
  auto scale = [side](int64_t out) {
    return out > 1 && side > 1 ? static_cast<float>(out - 1) / static_cast<float>(side - 1)
                               : static_cast<float>(out) / static_cast<float>(side);
  };
  const float sf_x = scale(patches_x), sf_y = scale(patches_y);
  const int64_t n = static_cast<int64_t>(order_.size()) * 4;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t g = order_[i / 4], sub = i % 4;
    const int64_t py = 2 * (g / groups_x) + sub / 2, px = 2 * (g % groups_x) + sub % 2;
    const float y = static_cast<float>(py) / sf_y, x = static_cast<float>(px) / sf_x;
    const int64_t y0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(y)), 0, side - 1);
    const int64_t y1 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(y)) + 1, 0, side - 1);
    const int64_t x0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(x)), 0, side - 1);
    const int64_t x1 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(x)) + 1, 0, side - 1);
    const float dy = std::clamp(y - static_cast<float>(y0), 0.0f, 1.0f);
    const float dx = std::clamp(x - static_cast<float>(x0), 0.0f, 1.0f);
    const float* a = position_.data() + (y0 * side + x0) * h;
    const float* b = position_.data() + (y0 * side + x1) * h;
    const float* c = position_.data() + (y1 * side + x0) * h;
    const float* d = position_.data() + (y1 * side + x1) * h;
    float* row = x_.data() + i * h;
    for (int64_t e = 0; e < h; ++e) {
      row[e] +=
          a[e] * (1 - dx) * (1 - dy) + b[e] * dx * (1 - dy) + c[e] * (1 - dx) * dy + d[e] * dx * dy;
    }
  }
}

void QwenVisionTransformer::AppendInImageOrder(std::vector<float>* out) const {
  const int64_t h = config_.n_embd, n = static_cast<int64_t>(order_.size()) * 4;
  const size_t base = out->size();
  out->resize(base + n * h);
  // The group at position i goes to row order_[i].
  for (int64_t i = 0; i < n / 4; ++i) {
    std::copy_n(x_.data() + i * 4 * h, 4 * h, out->data() + base + order_[i] * 4 * h);
  }
}

void QwenVisionTransformer::Forward(const float* pixels, int64_t width, int64_t height,
                                    std::vector<float>* out, ThreadPool* pool,
                                    std::span<const int64_t> capture_layers,
                                    std::vector<float>* captured) {
  const ClipConfig& c = config_;
  const int64_t h = c.n_embd, p = c.patch_size;
  const int64_t groups_x = width / p / 2, groups_y = height / p / 2;
  const int64_t n = groups_x * groups_y * 4;
  Plan(groups_x, groups_y);
  // im2col in the planned order: row i is patch `sub` of group order_[i / 4], its values by
  // channel, row, column (then the zero padding).
  cur_.assign(n * patch_cols_, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t g = order_[i / 4], sub = i % 4;
    const int64_t py = 2 * (g / groups_x) + sub / 2, px = 2 * (g % groups_x) + sub % 2;
    float* dst = cur_.data() + i * patch_cols_;
    for (int64_t ch = 0; ch < 3; ++ch) {
      for (int64_t ky = 0; ky < p; ++ky) {
        const float* src = pixels + (ch * height + py * p + ky) * width + px * p;
        std::copy(src, src + p, dst + (ch * p + ky) * p);
      }
    }
  }
  x_.resize(n * h);
  proj_.resize(n * h);
  const kernels::MatMulOutput patch_outs[] = {{&patch_w0_, x_.data()}, {&patch_w1_, proj_.data()}};
  kernels::MatMulMulti(patch_outs, cur_.data(), n, pool);
  kernels::Add(x_.data(), proj_.data(), x_.data(), n * h);
  AddRowBias(x_.data(), patch_b_, n, h);
  if (!position_.empty()) AddPositionEmbeddings(width / p, height / p);
  if (pre_ln_w_ != nullptr) Norm(x_.data(), pre_ln_w_, pre_ln_b_, n, x_.data());
  if (captured != nullptr) captured->clear();
  size_t next_capture = 0;
  for (size_t il = 0; il < layers_.size(); ++il) {
    const int64_t pattern = options_.n_wa_pattern;
    RunLayer(layers_[il], pattern == 0 || (static_cast<int64_t>(il) + 1) % pattern == 0, pool);
    if (next_capture < capture_layers.size() &&
        capture_layers[next_capture] == static_cast<int64_t>(il)) {
      AppendInImageOrder(captured);
      ++next_capture;
    }
  }
  if (post_ln_w_ != nullptr) Norm(x_.data(), post_ln_w_, post_ln_b_, n, x_.data());
  out->clear();
  AppendInImageOrder(out);
}

void QwenVisionTransformer::RunLayer(const Layer& l, bool full_attention, ThreadPool* pool) {
  const ClipConfig& c = config_;
  const int64_t h = c.n_embd, n = static_cast<int64_t>(order_.size()) * 4;
  cur_.resize(n * h);
  Norm(x_.data(), l.ln1_w, l.ln1_b, n, cur_.data());
  q_.resize(n * h);
  k_.resize(n * h);
  v_.resize(n * h);
  if (l.fused_qkv) {
    qkv_.resize(n * 3 * h);
    kernels::MatMul(l.wqkv, cur_.data(), n, qkv_.data(), pool);
    AddRowBias(qkv_.data(), l.bqkv, n, 3 * h);
    for (int64_t r = 0; r < n; ++r) {
      const float* row = qkv_.data() + r * 3 * h;
      std::copy_n(row, h, q_.data() + r * h);
      std::copy_n(row + h, h, k_.data() + r * h);
      std::copy_n(row + 2 * h, h, v_.data() + r * h);
    }
  } else {
    const kernels::MatMulOutput outs[] = {
        {&l.wq, q_.data()}, {&l.wk, k_.data()}, {&l.wv, v_.data()}};
    kernels::MatMulMulti(outs, cur_.data(), n, pool);
    AddRowBias(q_.data(), l.bq, n, h);
    AddRowBias(k_.data(), l.bk, n, h);
    AddRowBias(v_.data(), l.bv, n, h);
  }
  Rope2d(q_.data());
  Rope2d(k_.data());
  k_cache_.resize(n * h);
  v_cache_.resize(n * h);
  const kernels::KvLayerView kv{
      .dtype = kernels::KvDtype::kF16, .k = k_cache_.data(), .v = v_cache_.data(), .row_elems = h};
  slots_.resize(n);
  std::iota(slots_.begin(), slots_.end(), 0);
  kernels::StoreKvRows(kv, slots_.data(), n, k_.data(), v_.data());
  // One sequence per window (or one for the image): each query at its window's last position,
  // so that the causal kernel masks nothing inside the window.
  attn_.resize(n * h);
  q_pos_.resize(n);
  std::vector<kernels::AttentionSequence> seqs;
  const std::vector<int64_t> whole = {0, n};
  const std::vector<int64_t>& bounds = full_attention ? whole : window_starts_;
  seqs.reserve(bounds.size());
  for (size_t w = 0; w + 1 < bounds.size(); ++w) {
    const int64_t begin = bounds[w], len = bounds[w + 1] - begin;
    std::fill_n(q_pos_.begin() + begin, len, len - 1);
    seqs.push_back({.q = q_.data() + begin * h,
                    .q_pos = q_pos_.data() + begin,
                    .n_q = static_cast<int>(len),
                    .kv_slots = slots_.data() + begin,
                    .n_kv = static_cast<int>(len),
                    .out = attn_.data() + begin * h});
  }
  const kernels::AttentionParams params{.n_heads = static_cast<int>(c.n_heads),
                                        .n_kv_heads = static_cast<int>(c.n_heads),
                                        .head_dim = static_cast<int>(c.head_dim),
                                        .scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
  kernels::AttentionForBatch(params, kv, seqs, pool);
  kernels::MatMul(l.wo, attn_.data(), n, proj_.data(), pool);
  AddRowBias(proj_.data(), l.bo, n, h);
  kernels::Add(proj_.data(), x_.data(), x_.data(), n * h);

  Norm(x_.data(), l.ln2_w, l.ln2_b, n, cur_.data());
  // The padding rows of up and gate are 0 (and their biases), so act(0) * 0 = 0 there, and
  // act(0) = 0 without a gate (the down matrix's padding columns are 0 as well).
  up_.resize(n * n_ff_);
  if (l.gated) {
    gate_.resize(n * n_ff_);
    const kernels::MatMulOutput ffn_outs[] = {{&l.up, up_.data()}, {&l.gate, gate_.data()}};
    kernels::MatMulMulti(ffn_outs, cur_.data(), n, pool);
    AddRowBias(up_.data(), l.b_up, n, n_ff_);
    AddRowBias(gate_.data(), l.b_gate, n, n_ff_);
    GatedActivation(c.ffn, gate_.data(), up_.data(), n * n_ff_);
  } else {
    kernels::MatMul(l.up, cur_.data(), n, up_.data(), pool);
    AddRowBias(up_.data(), l.b_up, n, n_ff_);
    Activation(c.ffn, up_.data(), n * n_ff_);
  }
  kernels::MatMul(l.down, l.gated ? gate_.data() : up_.data(), n, proj_.data(), pool);
  AddRowBias(proj_.data(), l.b_down, n, h);
  kernels::Add(proj_.data(), x_.data(), x_.data(), n * h);
}

}  // namespace radixlm::vision
