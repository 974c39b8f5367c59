#include "vision/vit.h"

#include <cmath>
#include <numeric>

#include "kernels/layer_norm.h"
#include "kernels/quant.h"
#include "kernels/ops.h"

namespace radixlm::vision {

struct VisionTransformer::Layer {
  kernels::WeightMatrix wq, wk, wv, wo, up, down;
  const float* bq = nullptr;  // biases: null where the file has none
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* bo = nullptr;
  const float* b_up = nullptr;
  const float* b_down = nullptr;
  const float* ln1_w = nullptr;
  const float* ln1_b = nullptr;
  const float* ln2_w = nullptr;
  const float* ln2_b = nullptr;
  int64_t n_ff = 0;  // the FFN width as the matrices hold it: padded to the GEMM's 32 columns
};

namespace {

std::string Blk(int64_t layer, const char* suffix) {
  return "v.blk." + std::to_string(layer) + "." + suffix;
}

// y[r, :] += b for n rows of width w (b may be null).
void AddBias(float* y, const float* b, int64_t n, int64_t w) {
  if (b == nullptr) return;
  for (int64_t r = 0; r < n; ++r) kernels::Add(y + r * w, b, y + r * w, w);
}

// x * sigmoid(1.702 x), llama.cpp's gelu_quick.
void GeluQuick(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-1.702f * x[i]));
}

}  // namespace

VisionTransformer::~VisionTransformer() = default;

StatusOr<std::unique_ptr<VisionTransformer>> VisionTransformer::Load(const ClipConfig& c,
                                                                     ClipWeights* w) {
  std::unique_ptr<VisionTransformer> vit(new VisionTransformer());
  vit->config_ = c;
  if (c.image_size % c.patch_size != 0) {
    return InvalidArgument("projector metadata: image_size is not a multiple of patch_size");
  }
  vit->side_ = c.image_size / c.patch_size;
  const int64_t h = c.n_embd;
  const int64_t patch_cols = 3 * c.patch_size * c.patch_size;
  const gguf::TensorInfo* patch = w->Find("v.patch_embd.weight");
  vit->patch_cols_ = patch ? ClipWeights::PaddedCols(patch->type, patch_cols) : patch_cols;
  RADIXLM_RETURN_IF_ERROR(
      w->Matrix("v.patch_embd.weight", patch_cols, h, &vit->patch_w_, vit->patch_cols_));
  RADIXLM_RETURN_IF_ERROR(w->Vector("v.patch_embd.bias", h, false, &vit->patch_b_));
  if (w->Find("v.class_embd") != nullptr) {
    return Unimplemented("projector: a class embedding (v.class_embd) is not supported");
  }
  const gguf::TensorInfo* pos = w->Find("v.position_embd.weight");
  if (pos == nullptr || pos->shape.size() != 2 || pos->shape[0] != h ||
      pos->shape[1] != vit->n_patches()) {
    return InvalidArgument("projector: tensor 'v.position_embd.weight' is missing or not [" +
                           std::to_string(h) + ", " + std::to_string(vit->n_patches()) + "]");
  }
  if (!kernels::IsRowSizeValid(pos->type, h)) {
    return Unimplemented("projector: tensor 'v.position_embd.weight' has an unsupported type");
  }
  vit->position_ = kernels::MakeWeightMatrix(pos->type, pos->data, vit->n_patches(), h);
  RADIXLM_RETURN_IF_ERROR(w->Vector("v.pre_ln.weight", h, false, &vit->pre_ln_w_));
  RADIXLM_RETURN_IF_ERROR(
      w->Vector("v.pre_ln.bias", h, vit->pre_ln_w_ != nullptr, &vit->pre_ln_b_));
  RADIXLM_RETURN_IF_ERROR(w->Vector("v.post_ln.weight", h, false, &vit->post_ln_w_));
  RADIXLM_RETURN_IF_ERROR(
      w->Vector("v.post_ln.bias", h, vit->post_ln_w_ != nullptr, &vit->post_ln_b_));
  vit->layers_.resize(c.n_layers);
  for (int64_t i = 0; i < c.n_layers; ++i) {
    Layer& l = vit->layers_[i];
    for (const char* refused :
         {"attn_qkv.weight", "attn_q_norm.weight", "attn_k_norm.weight", "ls1.weight", "ls2.weight",
          "ffn_gate.weight", "attn_post_norm.weight", "ffn_post_norm.weight"}) {
      if (w->Find(Blk(i, refused)) != nullptr) {
        return Unimplemented("projector: tensor '" + Blk(i, refused) + "' is not supported");
      }
    }
    RADIXLM_RETURN_IF_ERROR(w->Matrix(Blk(i, "attn_q.weight"), h, h, &l.wq));
    RADIXLM_RETURN_IF_ERROR(w->Matrix(Blk(i, "attn_k.weight"), h, h, &l.wk));
    RADIXLM_RETURN_IF_ERROR(w->Matrix(Blk(i, "attn_v.weight"), h, h, &l.wv));
    RADIXLM_RETURN_IF_ERROR(w->Matrix(Blk(i, "attn_out.weight"), h, h, &l.wo));
    RADIXLM_RETURN_IF_ERROR(w->Vector(Blk(i, "attn_q.bias"), h, false, &l.bq));
    RADIXLM_RETURN_IF_ERROR(w->Vector(Blk(i, "attn_k.bias"), h, false, &l.bk));
    RADIXLM_RETURN_IF_ERROR(w->Vector(Blk(i, "attn_v.bias"), h, false, &l.bv));
    RADIXLM_RETURN_IF_ERROR(w->Vector(Blk(i, "attn_out.bias"), h, false, &l.bo));
    RADIXLM_RETURN_IF_ERROR(w->Vector(Blk(i, "ln1.weight"), h, true, &l.ln1_w));
    RADIXLM_RETURN_IF_ERROR(w->Vector(Blk(i, "ln1.bias"), h, true, &l.ln1_b));
    RADIXLM_RETURN_IF_ERROR(w->Vector(Blk(i, "ln2.weight"), h, true, &l.ln2_w));
    RADIXLM_RETURN_IF_ERROR(w->Vector(Blk(i, "ln2.bias"), h, true, &l.ln2_b));
    // llama.cpp swaps up and down when ffn_down reads n_embd values (legacy names).
    const gguf::TensorInfo* down = w->Find(Blk(i, "ffn_down.weight"));
    const bool swapped = down != nullptr && !down->shape.empty() && down->shape[0] == h;
    const char* up_name = swapped ? "ffn_down" : "ffn_up";
    const char* down_name = swapped ? "ffn_up" : "ffn_down";
    const std::string down_weight = Blk(i, (std::string(down_name) + ".weight").c_str());
    const gguf::TensorInfo* down_t = w->Find(down_weight);
    l.n_ff = down_t ? ClipWeights::PaddedCols(down_t->type, c.n_ff) : c.n_ff;
    RADIXLM_RETURN_IF_ERROR(
        w->Matrix(Blk(i, (std::string(up_name) + ".weight").c_str()), h, c.n_ff, &l.up, 0, l.n_ff));
    RADIXLM_RETURN_IF_ERROR(w->Matrix(down_weight, c.n_ff, h, &l.down, l.n_ff));
    RADIXLM_RETURN_IF_ERROR(w->Vector(Blk(i, (std::string(up_name) + ".bias").c_str()), c.n_ff,
                                      false, &l.b_up, l.n_ff));
    RADIXLM_RETURN_IF_ERROR(
        w->Vector(Blk(i, (std::string(down_name) + ".bias").c_str()), h, false, &l.b_down));
  }
  return vit;
}

void VisionTransformer::Forward(const float* pixels, std::vector<float>* out, ThreadPool* pool) {
  const ClipConfig& c = config_;
  const int64_t h = c.n_embd, n = n_patches(), p = c.patch_size, size = c.image_size;
  const int64_t patch_cols = patch_cols_;
  // im2col: patch (py, px) -> its values by channel, row, column (then the zero padding).
  cur_.assign(n * patch_cols, 0.0f);
  for (int64_t py = 0; py < side_; ++py) {
    for (int64_t px = 0; px < side_; ++px) {
      float* dst = cur_.data() + (py * side_ + px) * patch_cols;
      for (int64_t ch = 0; ch < 3; ++ch) {
        for (int64_t ky = 0; ky < p; ++ky) {
          const float* src = pixels + (ch * size + py * p + ky) * size + px * p;
          std::copy(src, src + p, dst + (ch * p + ky) * p);
        }
      }
    }
  }
  x_.resize(n * h);
  kernels::MatMul(patch_w_, cur_.data(), n, x_.data(), pool);
  AddBias(x_.data(), patch_b_, n, h);
  std::vector<int32_t>& ids = slots_;
  ids.resize(n);
  std::iota(ids.begin(), ids.end(), 0);
  proj_.resize(n * h);
  kernels::GetRows(position_, ids.data(), n, proj_.data());
  kernels::Add(x_.data(), proj_.data(), x_.data(), n * h);
  if (pre_ln_w_ != nullptr)
    kernels::LayerNorm(x_.data(), pre_ln_w_, pre_ln_b_, n, h, c.eps, x_.data());
  for (const Layer& layer : layers_) RunLayer(layer, pool);
  if (post_ln_w_ != nullptr) {
    kernels::LayerNorm(x_.data(), post_ln_w_, post_ln_b_, n, h, c.eps, x_.data());
  }
  out->assign(x_.begin(), x_.end());
}

void VisionTransformer::RunLayer(const Layer& l, ThreadPool* pool) {
  const ClipConfig& c = config_;
  const int64_t h = c.n_embd, n = n_patches();
  cur_.resize(n * h);
  kernels::LayerNorm(x_.data(), l.ln1_w, l.ln1_b, n, h, c.eps, cur_.data());
  q_.resize(n * h);
  k_.resize(n * h);
  v_.resize(n * h);
  const kernels::MatMulOutput outs[] = {{&l.wq, q_.data()}, {&l.wk, k_.data()}, {&l.wv, v_.data()}};
  kernels::MatMulMulti(outs, cur_.data(), n, pool);
  AddBias(q_.data(), l.bq, n, h);
  AddBias(k_.data(), l.bk, n, h);
  AddBias(v_.data(), l.bv, n, h);
  // Every patch sees every patch: K / V as F16 rows, each query placed at the last position so
  // that the causal kernel masks nothing.
  k_cache_.resize(n * h);
  v_cache_.resize(n * h);
  const kernels::KvLayerView kv{
      .dtype = kernels::KvDtype::kF16, .k = k_cache_.data(), .v = v_cache_.data(), .row_elems = h};
  slots_.resize(n);
  std::iota(slots_.begin(), slots_.end(), 0);
  kernels::StoreKvRows(kv, slots_.data(), n, k_.data(), v_.data());
  q_pos_.assign(n, n - 1);
  attn_.resize(n * h);
  const kernels::AttentionSequence seq{.q = q_.data(),
                                       .q_pos = q_pos_.data(),
                                       .n_q = static_cast<int>(n),
                                       .kv_slots = slots_.data(),
                                       .n_kv = static_cast<int>(n),
                                       .out = attn_.data()};
  const kernels::AttentionParams params{.n_heads = static_cast<int>(c.n_heads),
                                        .n_kv_heads = static_cast<int>(c.n_heads),
                                        .head_dim = static_cast<int>(c.head_dim),
                                        .scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
  kernels::AttentionForBatch(params, kv, std::span(&seq, 1), pool);
  proj_.resize(n * h);
  kernels::MatMul(l.wo, attn_.data(), n, proj_.data(), pool);
  AddBias(proj_.data(), l.bo, n, h);
  kernels::Add(proj_.data(), x_.data(), x_.data(), n * h);

  kernels::LayerNorm(x_.data(), l.ln2_w, l.ln2_b, n, h, c.eps, cur_.data());
  // The padding columns are 0 (zero rows, zero bias) and stay 0 through each activation.
  up_.resize(n * l.n_ff);
  kernels::MatMul(l.up, cur_.data(), n, up_.data(), pool);
  AddBias(up_.data(), l.b_up, n, l.n_ff);
  switch (c.ffn) {
    case FfnActivation::kGelu:
      kernels::GeluTanh(up_.data(), up_.data(), n * l.n_ff);
      break;
    case FfnActivation::kGeluQuick:
      GeluQuick(up_.data(), n * l.n_ff);
      break;
    case FfnActivation::kSilu:
      kernels::Silu(up_.data(), up_.data(), n * l.n_ff);
      break;
  }
  kernels::MatMul(l.down, up_.data(), n, proj_.data(), pool);
  AddBias(proj_.data(), l.b_down, n, h);
  kernels::Add(proj_.data(), x_.data(), x_.data(), n * h);
}

}  // namespace radixlm::vision
