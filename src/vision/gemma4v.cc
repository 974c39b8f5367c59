// gemma4v: Gemma 4's vision tower as llama.cpp runs it (PROJECTOR_TYPE_GEMMA4V:
// tools/mtmd/models/gemma4v.cpp on clip.cpp's build_vit; preprocessing:
// mtmd_image_preprocessor_dyn_size):
//   1. dynamic resolution: the size SizePreservingRatio gives (sides multiples of
//      patch * n_merge, between 70 and 1120 tokens' worth of pixels: llama.cpp's limits for this
//      type), then resize to fit it keeping the aspect ratio (Pillow bicubic), centred on black
//   2. per channel (v / 255 - image_mean) / image_std, then * 2 - 1
//   3. patch embedding without bias, plus the x and y position tables
//      (v.position_embd.weight [n_embd, positions, 2]: row x of the first, row y of the second)
//   4. per layer, RMS norms throughout (no biases in Gemma 4's files; read when present):
//        h = RMSNorm_1(x);  q, k, v = linear(h)
//        q, k: per-head RMS norm with attn_q_norm / attn_k_norm (over the whole row when the
//              weight has n_embd values), then the 2-D NeoX rope below
//        v:    per-head RMS norm without weight
//        x = x + attn_post_norm(O(softmax(q k^T) v))       scale 1.0, bidirectional
//        h = RMSNorm_2(x)
//        x = x + ffn_post_norm(down(act(gate(h)) * up(h)))  act: gelu_quick unless use_gelu /
//                                                           use_silu; no gate: act(up(h));
//                                                           gelu_quick on F16-rounded values
//                                                           to an F16 result, as ggml's table
//        x = x * out_scale                                  when the file has it
//      The rope: head dims [0, d/2) turn by the patch's column, [d/2, d) by its row, each half
//      NeoX-paired (j, j + d/4) with theta = pos * 100^(-4j / d) (llama.cpp's rope_theta 100).
//   5. average pool over n_merge x n_merge patches (clip.vision.projector.scale_factor,
//      default 3), tokens row-major, then * sqrt(n_embd)
//   6. (x - v.std_bias) * v.std_scale when the file has both
//   7. RMS norm without weight, then mm.input_projection.weight ([n_embd, n_text] in ggml
//      order: applied as stored)
// Every linear (q, k, v, out, up, gate, down, the input projection) is Gemma4ClippableLinear:
// its input and output clamped to NAME.input_min / input_max / output_min / output_max where the
// file has those scalars. K and V are rounded to F16 (llama.cpp's flash attention, its CPU
// default). Refused by name: fused QKV, layer scales ls1 / ls2, MoE FFNs, attention sinks.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numeric>
#include <span>

#include "kernels/attention.h"
#include "kernels/fp16.h"
#include "kernels/ops.h"
#include "kernels/quant.h"
#include "util/mutex.h"
#include "util/thread_pool.h"
#include "vision/clip_weights.h"
#include "vision/image_resize.h"
#include "vision/projector_types.h"

namespace radixlm::vision::internal {
namespace {
namespace gemma4v {  // names of its own: the vision sources build as one unit

constexpr int64_t kDefaultMerge = 3;  // Gemma 4's pooling_kernel_size
constexpr int64_t kMinTokens = 70;    // llama.cpp: set_limit_image_tokens(70, 1120)
constexpr int64_t kMaxTokens = 1120;
constexpr float kRopeTheta = 100.0f;

// Gemma4ClippableLinear: y = clamp(W clamp(x, in_min, in_max), out_min, out_max) + b.
struct Linear {
  kernels::WeightMatrix w;
  const float* bias = nullptr;
  float in_min = -FLT_MAX, in_max = FLT_MAX, out_min = -FLT_MAX, out_max = FLT_MAX;
  bool clamp_in = false, clamp_out = false;
};

struct Layer {
  Linear q, k, v, o, up, gate, down;
  bool has_gate = false;
  const float* ln1_w = nullptr;  // norms: null where the file has none
  const float* ln1_b = nullptr;
  const float* ln2_w = nullptr;
  const float* ln2_b = nullptr;
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  bool qk_norm_per_head = true;  // weights of head_dim values (else n_embd: the whole row)
  const float* attn_post_norm = nullptr;
  const float* ffn_post_norm = nullptr;
  const float* out_scale = nullptr;
  int64_t out_scale_n = 0;  // 1 (a scalar) or n_embd
};

std::string LayerTensor(int64_t layer, const std::string& suffix) {
  return "v.blk." + std::to_string(layer) + "." + suffix;
}

// y[r, :] += b for n rows of width w (b may be null).
void AddRowBias(float* y, const float* b, int64_t n, int64_t w) {
  if (b == nullptr) return;
  for (int64_t r = 0; r < n; ++r) kernels::Add(y + r * w, b, y + r * w, w);
}

// ggml_rms_norm, then * w and + b (each may be null).
void RmsNormRows(float* x, const float* w, const float* b, int64_t n, int64_t dim, float eps) {
  kernels::RmsNorm(x, w, n, dim, eps, x);
  AddRowBias(x, b, n, dim);
}

void Clamp(float* x, int64_t n, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::max(std::min(x[i], hi), lo);  // ggml_clamp
}

// out = act(gate) * up (ggml_geglu_quick / geglu / swiglu split), or act(up) without a gate.
void Activation(FfnActivation act, float* gate, float* up, int64_t n, bool gated) {
  float* x = gated ? gate : up;
  switch (act) {
    case FfnActivation::kSilu:
      if (gated) {
        kernels::SwiGlu(gate, up, up, n);
      } else {
        kernels::Silu(up, up, n);
      }
      return;
    case FfnActivation::kGelu:
      if (gated) {
        kernels::GeGlu(gate, up, up, n);
      } else {
        kernels::GeluTanh(up, up, n);
      }
      return;
    case FfnActivation::kGeluQuick:
      // ggml's CPU gelu_quick: a table over F16 inputs of F16 results (GGML_GELU_QUICK_FP16).
      for (int64_t i = 0; i < n; ++i) {
        const float h = kernels::F16ToF32(kernels::F32ToF16(x[i]));
        const float g =
            kernels::F16ToF32(kernels::F32ToF16(h * (1.0f / (1.0f + std::exp(-1.702f * h)))));
        up[i] = gated ? g * up[i] : g;
      }
      return;
  }
}

class Gemma4vProjector final : public Projector {
 public:
  static StatusOr<std::unique_ptr<Projector>> Make(std::unique_ptr<gguf::GgufFile> file,
                                                   const ClipConfig& config,
                                                   const Options& options) {
    std::unique_ptr<Gemma4vProjector> p(new Gemma4vProjector(std::move(file), config));
    RADIXLM_RETURN_IF_ERROR(p->LoadWeights());
    p->pool_ = std::make_unique<ThreadPool>(options.n_threads);
    p->weights_.Pack(p->pool_.get());
    return std::unique_ptr<Projector>(std::move(p));
  }

  std::string_view type() const override { return "gemma4v"; }
  int64_t n_embd() const override { return n_out_; }
  int64_t TokensFor(const Image& image) const override {
    if (image.width <= 0 || image.height <= 0) return 0;
    const ImageSize s = InputSize(image);
    return (s.width / align()) * (s.height / align());
  }
  ImagePromptFormat prompt_format() const override {
    // mtmd_decode_use_non_causal: causal for E2B and E4B (text widths 1536 and 2560) only.
    return {.begin = "<|image>",
            .end = "<image|>",
            .non_causal_span = n_out_ != 1536 && n_out_ != 2560};
  }
  int64_t weights_bytes() const override { return weights_.resident_bytes(); }

  Status Encode(const Image& image, std::vector<float>* out) override {
    if (image.width <= 0 || image.height <= 0 ||
        image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3) {
      return InvalidArgument("the image has no pixels or its RGB buffer is not width x height x 3");
    }
    const ImageSize size = InputSize(image);
    const int64_t cols = size.width / config_.patch_size, rows = size.height / config_.patch_size;
    if (cols > positions_ || rows > positions_) {
      return InvalidArgument("the image is " + std::to_string(cols) + " x " + std::to_string(rows) +
                             " patches; the projector's position tables "
                             "hold " +
                             std::to_string(positions_));
    }
    MutexLock lock(&mutex_);
    const Image fitted = ResizeToFit(image, size.width, size.height, ResizeFilter::kBicubic);
    const int64_t plane = int64_t{size.width} * size.height;
    pixels_.resize(3 * plane);
    for (int64_t i = 0; i < plane; ++i) {
      for (int ch = 0; ch < 3; ++ch) {
        const float v = static_cast<float>(fitted.rgb[i * 3 + ch]) / 255.0f;
        pixels_[ch * plane + i] =
            (v - config_.image_mean[ch]) / config_.image_std[ch] * 2.0f - 1.0f;
      }
    }
    Embed(size.width, size.height);
    for (const Layer& layer : layers_) RunLayer(layer);
    if (post_ln_w_ != nullptr) RmsNormRows(x_.data(), post_ln_w_, post_ln_b_, n_, h(), eps());
    Pool(cols, rows);
    const int64_t n_tokens = (cols / merge_) * (rows / merge_);
    if (std_bias_ != nullptr) {
      for (int64_t t = 0; t < n_tokens; ++t) {
        float* row = tokens_.data() + t * h();
        for (int64_t d = 0; d < h(); ++d) row[d] = (row[d] - std_bias_[d]) * std_scale_[d];
      }
    }
    RmsNormRows(tokens_.data(), nullptr, nullptr, n_tokens, h(), eps());
    out->resize(n_tokens * n_out_);
    RunLinear(proj_, tokens_.data(), n_tokens, h(), n_out_, out->data());
    return Status::Ok();
  }

 private:
  Gemma4vProjector(std::unique_ptr<gguf::GgufFile> file, const ClipConfig& config)
      : file_(std::move(file)), config_(config), weights_(file_.get()) {}

  int64_t h() const { return config_.n_embd; }
  float eps() const { return config_.eps; }
  int align() const { return static_cast<int>(config_.patch_size * merge_); }
  ImageSize InputSize(const Image& image) const {
    const int64_t token_pixels = int64_t{align()} * align();
    return SizePreservingRatio(image.width, image.height, align(), kMinTokens * token_pixels,
                               kMaxTokens * token_pixels);
  }

  // A linear's matrix ([cols, rows] in the file, rows padded to padded_rows), its optional bias
  // and its clamp scalars.
  Status LoadLinear(const std::string& base, int64_t cols, int64_t rows, Linear* l,
                    int64_t padded_cols = 0, int64_t padded_rows = 0) {
    RADIXLM_RETURN_IF_ERROR(
        weights_.Matrix(base + ".weight", cols, rows, &l->w, padded_cols, padded_rows));
    RADIXLM_RETURN_IF_ERROR(weights_.Vector(base + ".bias", rows, false, &l->bias, padded_rows));
    const std::pair<const char*, float*> scalars[] = {{".input_min", &l->in_min},
                                                      {".input_max", &l->in_max},
                                                      {".output_min", &l->out_min},
                                                      {".output_max", &l->out_max}};
    for (const auto& [suffix, value] : scalars) {
      const float* v = nullptr;
      RADIXLM_RETURN_IF_ERROR(weights_.Vector(base + suffix, 1, false, &v));
      if (v != nullptr) *value = *v;
    }
    l->clamp_in = l->in_min != -FLT_MAX || l->in_max != FLT_MAX;
    l->clamp_out = l->out_min != -FLT_MAX || l->out_max != FLT_MAX;
    return Status::Ok();
  }

  // out [n, out_cols] = linear(x [n, in_cols]).
  void RunLinear(const Linear& l, const float* x, int64_t n, int64_t in_cols, int64_t out_cols,
                 float* out) REQUIRES(mutex_) {
    if (l.clamp_in) {
      clamped_.assign(x, x + n * in_cols);
      Clamp(clamped_.data(), n * in_cols, l.in_min, l.in_max);
      x = clamped_.data();
    }
    kernels::MatMul(l.w, x, n, out, pool_.get());
    if (l.clamp_out) Clamp(out, n * out_cols, l.out_min, l.out_max);
    AddRowBias(out, l.bias, n, out_cols);
  }

  Status LoadWeights() {
    const ClipConfig& c = config_;
    ClipWeights& w = weights_;
    merge_ = c.scale_factor > 0 ? c.scale_factor : kDefaultMerge;
    if (c.head_dim % 4 != 0) {
      return Unimplemented("projector: the 2-D rope needs a head size that is a multiple of 4");
    }
    const int64_t patch_cols = 3 * c.patch_size * c.patch_size;
    const gguf::TensorInfo* patch = w.Find("v.patch_embd.weight");
    patch_cols_ = patch ? ClipWeights::PaddedCols(patch->type, patch_cols) : patch_cols;
    RADIXLM_RETURN_IF_ERROR(
        w.Matrix("v.patch_embd.weight", patch_cols, h(), &patch_w_, patch_cols_));
    const gguf::TensorInfo* pos = w.Find("v.position_embd.weight");
    if (pos == nullptr || pos->shape.size() != 3 || pos->shape[0] != h() || pos->shape[2] != 2) {
      return InvalidArgument("projector: tensor 'v.position_embd.weight' is missing or not [" +
                             std::to_string(h()) + ", positions, 2]");
    }
    if (!kernels::IsSupportedType(pos->type) || !kernels::IsRowSizeValid(pos->type, h())) {
      return Unimplemented("projector: tensor 'v.position_embd.weight' has an unsupported type");
    }
    positions_ = pos->shape[1];
    position_ = kernels::MakeWeightMatrix(pos->type, pos->data, 2 * positions_, h());
    RADIXLM_RETURN_IF_ERROR(w.Vector("v.pre_ln.weight", h(), false, &pre_ln_w_));
    RADIXLM_RETURN_IF_ERROR(w.Vector("v.pre_ln.bias", h(), false, &pre_ln_b_));
    RADIXLM_RETURN_IF_ERROR(w.Vector("v.post_ln.weight", h(), false, &post_ln_w_));
    RADIXLM_RETURN_IF_ERROR(w.Vector("v.post_ln.bias", h(), false, &post_ln_b_));
    const gguf::TensorInfo* down0 = w.Find(LayerTensor(0, "ffn_down.weight"));
    n_ff_ = down0 ? ClipWeights::PaddedCols(down0->type, c.n_ff) : c.n_ff;
    layers_.resize(c.n_layers);
    for (int64_t i = 0; i < c.n_layers; ++i) {
      RADIXLM_RETURN_IF_ERROR(LoadLayer(i, &layers_[i]));
    }
    RADIXLM_RETURN_IF_ERROR(w.Vector("v.std_bias", h(), false, &std_bias_));
    RADIXLM_RETURN_IF_ERROR(w.Vector("v.std_scale", h(), false, &std_scale_));
    if ((std_bias_ == nullptr) != (std_scale_ == nullptr)) std_bias_ = std_scale_ = nullptr;
    const gguf::TensorInfo* proj = w.Find("mm.input_projection.weight");
    if (proj == nullptr || proj->shape.size() != 2 || proj->shape[0] != h()) {
      return InvalidArgument("projector: tensor 'mm.input_projection.weight' is missing or not [" +
                             std::to_string(h()) + ", n_text]");
    }
    n_out_ = proj->shape[1];
    if (n_out_ != c.projection_dim) {
      return InvalidArgument(
          "projector: 'mm.input_projection.weight' gives " + std::to_string(n_out_) +
          " outputs but clip.vision.projection_dim is " + std::to_string(c.projection_dim));
    }
    return LoadLinear("mm.input_projection", h(), n_out_, &proj_);
  }

  Status LoadLayer(int64_t i, Layer* l) {
    ClipWeights& w = weights_;
    const int64_t hd = config_.head_dim;
    for (const char* refused :
         {"attn_qkv.weight", "ls1.weight", "ls2.weight", "ffn_gate_exps.weight", "attn_sinks"}) {
      if (w.Find(LayerTensor(i, refused)) != nullptr) {
        return Unimplemented("projector: tensor '" + LayerTensor(i, refused) +
                             "' is not supported for gemma4v");
      }
    }
    RADIXLM_RETURN_IF_ERROR(LoadLinear(LayerTensor(i, "attn_q"), h(), h(), &l->q));
    RADIXLM_RETURN_IF_ERROR(LoadLinear(LayerTensor(i, "attn_k"), h(), h(), &l->k));
    RADIXLM_RETURN_IF_ERROR(LoadLinear(LayerTensor(i, "attn_v"), h(), h(), &l->v));
    RADIXLM_RETURN_IF_ERROR(LoadLinear(LayerTensor(i, "attn_out"), h(), h(), &l->o));
    RADIXLM_RETURN_IF_ERROR(w.Vector(LayerTensor(i, "ln1.weight"), h(), false, &l->ln1_w));
    RADIXLM_RETURN_IF_ERROR(w.Vector(LayerTensor(i, "ln1.bias"), h(), false, &l->ln1_b));
    RADIXLM_RETURN_IF_ERROR(w.Vector(LayerTensor(i, "ln2.weight"), h(), false, &l->ln2_w));
    RADIXLM_RETURN_IF_ERROR(w.Vector(LayerTensor(i, "ln2.bias"), h(), false, &l->ln2_b));
    for (auto [name, dst] : {std::pair{"attn_q_norm.weight", &l->q_norm},
                             std::pair{"attn_k_norm.weight", &l->k_norm}}) {
      const gguf::TensorInfo* t = w.Find(LayerTensor(i, name));
      if (t == nullptr) continue;
      const bool per_head = t->num_elements() == hd;
      if (!per_head) l->qk_norm_per_head = false;
      RADIXLM_RETURN_IF_ERROR(w.Vector(LayerTensor(i, name), per_head ? hd : h(), true, dst));
    }
    if (l->q_norm != nullptr && l->k_norm != nullptr &&
        w.Find(LayerTensor(i, "attn_q_norm.weight"))->num_elements() !=
            w.Find(LayerTensor(i, "attn_k_norm.weight"))->num_elements()) {
      return Unimplemented("projector: layer " + std::to_string(i) +
                           " normalises q and k over different widths");
    }
    RADIXLM_RETURN_IF_ERROR(
        w.Vector(LayerTensor(i, "attn_post_norm.weight"), h(), false, &l->attn_post_norm));
    RADIXLM_RETURN_IF_ERROR(
        w.Vector(LayerTensor(i, "ffn_post_norm.weight"), h(), false, &l->ffn_post_norm));
    if (const gguf::TensorInfo* s = w.Find(LayerTensor(i, "out_scale.weight"))) {
      l->out_scale_n = s->num_elements() == 1 ? 1 : h();
      RADIXLM_RETURN_IF_ERROR(
          w.Vector(LayerTensor(i, "out_scale.weight"), l->out_scale_n, true, &l->out_scale));
    }
    RADIXLM_RETURN_IF_ERROR(
        LoadLinear(LayerTensor(i, "ffn_up"), h(), config_.n_ff, &l->up, 0, n_ff_));
    l->has_gate = w.Find(LayerTensor(i, "ffn_gate.weight")) != nullptr;
    if (l->has_gate) {
      RADIXLM_RETURN_IF_ERROR(
          LoadLinear(LayerTensor(i, "ffn_gate"), h(), config_.n_ff, &l->gate, 0, n_ff_));
    }
    return LoadLinear(LayerTensor(i, "ffn_down"), config_.n_ff, h(), &l->down, n_ff_);
  }

  // x_ [n, n_embd] = patch embedding + position rows; the rope tables for the grid.
  void Embed(int64_t width, int64_t height) REQUIRES(mutex_) {
    const int64_t p = config_.patch_size, cols = width / p, rows = height / p;
    n_ = cols * rows;
    // im2col: patch (py, px) -> its values by channel, row, column (then the zero padding).
    cur_.assign(n_ * patch_cols_, 0.0f);
    for (int64_t py = 0; py < rows; ++py) {
      for (int64_t px = 0; px < cols; ++px) {
        float* dst = cur_.data() + (py * cols + px) * patch_cols_;
        for (int64_t ch = 0; ch < 3; ++ch) {
          for (int64_t ky = 0; ky < p; ++ky) {
            const float* src = pixels_.data() + (ch * height + py * p + ky) * width + px * p;
            std::copy(src, src + p, dst + (ch * p + ky) * p);
          }
        }
      }
    }
    x_.resize(n_ * h());
    kernels::MatMul(patch_w_, cur_.data(), n_, x_.data(), pool_.get());
    ids_.resize(n_);
    proj_out_.resize(n_ * h());
    for (int64_t i = 0; i < n_; ++i) ids_[i] = static_cast<int32_t>(i % cols);
    kernels::GetRows(position_, ids_.data(), n_, proj_out_.data());
    kernels::Add(x_.data(), proj_out_.data(), x_.data(), n_ * h());
    for (int64_t i = 0; i < n_; ++i) ids_[i] = static_cast<int32_t>(positions_ + i / cols);
    kernels::GetRows(position_, ids_.data(), n_, proj_out_.data());
    kernels::Add(x_.data(), proj_out_.data(), x_.data(), n_ * h());
    if (pre_ln_w_ != nullptr) RmsNormRows(x_.data(), pre_ln_w_, pre_ln_b_, n_, h(), eps());
    // ggml_rope_ext, NeoX, n_dims = head_dim / 2 per half: theta = pos * base^(-2j / n_dims),
    // advanced by repeated multiplication in float (ggml_rope_cache_init).
    const int64_t quarter = config_.head_dim / 4;
    const float theta_scale =
        std::pow(kRopeTheta, -2.0f / static_cast<float>(config_.head_dim / 2));
    cos_.resize(n_ * 2 * quarter);
    sin_.resize(n_ * 2 * quarter);
    for (int64_t i = 0; i < n_; ++i) {
      const float pos[2] = {static_cast<float>(i % cols), static_cast<float>(i / cols)};
      for (int half = 0; half < 2; ++half) {
        float theta = pos[half];
        for (int64_t j = 0; j < quarter; ++j) {
          cos_[(i * 2 + half) * quarter + j] = std::cos(theta);
          sin_[(i * 2 + half) * quarter + j] = std::sin(theta);
          theta *= theta_scale;
        }
      }
    }
  }

  void Rope(float* rows) const REQUIRES(mutex_) {
    const int64_t d = config_.head_dim, quarter = d / 4;
    for (int64_t i = 0; i < n_; ++i) {
      for (int64_t head = 0; head < config_.n_heads; ++head) {
        for (int half = 0; half < 2; ++half) {
          const float* cs = cos_.data() + (i * 2 + half) * quarter;
          const float* sn = sin_.data() + (i * 2 + half) * quarter;
          float* x = rows + i * h() + head * d + half * (d / 2);
          for (int64_t j = 0; j < quarter; ++j) {
            const float x0 = x[j], x1 = x[j + quarter];
            x[j] = x0 * cs[j] - x1 * sn[j];
            x[j + quarter] = x0 * sn[j] + x1 * cs[j];
          }
        }
      }
    }
  }

  void RunLayer(const Layer& l) REQUIRES(mutex_) {
    const int64_t n = n_, d = config_.head_dim, heads = config_.n_heads;
    cur_.assign(x_.begin(), x_.end());
    RmsNormRows(cur_.data(), l.ln1_w, l.ln1_b, n, h(), eps());
    q_.resize(n * h());
    k_.resize(n * h());
    v_.resize(n * h());
    if (!l.q.clamp_in && !l.k.clamp_in && !l.v.clamp_in && !l.q.clamp_out && !l.k.clamp_out &&
        !l.v.clamp_out) {
      const kernels::MatMulOutput outs[] = {
          {&l.q.w, q_.data()}, {&l.k.w, k_.data()}, {&l.v.w, v_.data()}};
      kernels::MatMulMulti(outs, cur_.data(), n, pool_.get());
      AddRowBias(q_.data(), l.q.bias, n, h());
      AddRowBias(k_.data(), l.k.bias, n, h());
      AddRowBias(v_.data(), l.v.bias, n, h());
    } else {
      RunLinear(l.q, cur_.data(), n, h(), h(), q_.data());
      RunLinear(l.k, cur_.data(), n, h(), h(), k_.data());
      RunLinear(l.v, cur_.data(), n, h(), h(), v_.data());
    }
    const int64_t norm_rows = l.qk_norm_per_head ? n * heads : n;
    const int64_t norm_dim = l.qk_norm_per_head ? d : h();
    if (l.q_norm != nullptr) RmsNormRows(q_.data(), l.q_norm, nullptr, norm_rows, norm_dim, eps());
    if (l.k_norm != nullptr) RmsNormRows(k_.data(), l.k_norm, nullptr, norm_rows, norm_dim, eps());
    Rope(q_.data());
    Rope(k_.data());
    RmsNormRows(v_.data(), nullptr, nullptr, n * heads, d, eps());
    // Every patch sees every patch: K / V as F16 rows, each query placed at the last position so
    // that the causal kernel masks nothing.
    k_cache_.resize(n * h());
    v_cache_.resize(n * h());
    const kernels::KvLayerView kv{.dtype = kernels::KvDtype::kF16,
                                  .k = k_cache_.data(),
                                  .v = v_cache_.data(),
                                  .row_elems = h()};
    slots_.resize(n);
    std::iota(slots_.begin(), slots_.end(), 0);
    kernels::StoreKvRows(kv, slots_.data(), n, k_.data(), v_.data());
    q_pos_.assign(n, n - 1);
    attn_.resize(n * h());
    const kernels::AttentionSequence seq{.q = q_.data(),
                                         .q_pos = q_pos_.data(),
                                         .n_q = static_cast<int>(n),
                                         .kv_slots = slots_.data(),
                                         .n_kv = static_cast<int>(n),
                                         .out = attn_.data()};
    const kernels::AttentionParams params{.n_heads = static_cast<int>(heads),
                                          .n_kv_heads = static_cast<int>(heads),
                                          .head_dim = static_cast<int>(d),
                                          .scale = 1.0f};  // llama.cpp: kq_scale = 1.0f
    kernels::AttentionForBatch(params, kv, std::span(&seq, 1), pool_.get());
    proj_out_.resize(n * h());
    RunLinear(l.o, attn_.data(), n, h(), h(), proj_out_.data());
    if (l.attn_post_norm != nullptr) {
      RmsNormRows(proj_out_.data(), l.attn_post_norm, nullptr, n, h(), eps());
    }
    kernels::Add(proj_out_.data(), x_.data(), x_.data(), n * h());

    cur_.assign(x_.begin(), x_.end());
    RmsNormRows(cur_.data(), l.ln2_w, l.ln2_b, n, h(), eps());
    // The padding rows of up and gate are 0 (and their biases), so act(0) * 0 = 0 there and the
    // down matrix's zero columns read them.
    up_.resize(n * n_ff_);
    RunLinear(l.up, cur_.data(), n, h(), n_ff_, up_.data());
    if (l.has_gate) {
      gate_.resize(n * n_ff_);
      RunLinear(l.gate, cur_.data(), n, h(), n_ff_, gate_.data());
    }
    Activation(config_.ffn, gate_.data(), up_.data(), n * n_ff_, l.has_gate);
    RunLinear(l.down, up_.data(), n, n_ff_, h(), proj_out_.data());
    if (l.ffn_post_norm != nullptr) {
      RmsNormRows(proj_out_.data(), l.ffn_post_norm, nullptr, n, h(), eps());
    }
    kernels::Add(proj_out_.data(), x_.data(), x_.data(), n * h());
    if (l.out_scale != nullptr) {
      for (int64_t r = 0; r < n; ++r) {
        float* row = x_.data() + r * h();
        if (l.out_scale_n == 1) {
          kernels::Scale(row, l.out_scale[0], row, h());
        } else {
          kernels::Mul(row, l.out_scale, row, h());
        }
      }
    }
  }

  // x_ [rows * cols patches] -> tokens_ [(rows / k) * (cols / k), n_embd] (ggml_pool_2d, AVG:
  // float sums in row, then column order, then / k^2), then * sqrt(n_embd).
  void Pool(int64_t cols, int64_t rows) REQUIRES(mutex_) {
    const int64_t k = merge_, out_x = cols / k, out_y = rows / k;
    tokens_.assign(out_x * out_y * h(), 0.0f);
    const float area = static_cast<float>(k * k);
    const float scale = std::sqrt(static_cast<float>(h()));
    for (int64_t oy = 0; oy < out_y; ++oy) {
      for (int64_t ox = 0; ox < out_x; ++ox) {
        float* dst = tokens_.data() + (oy * out_x + ox) * h();
        for (int64_t ky = 0; ky < k; ++ky) {
          for (int64_t kx = 0; kx < k; ++kx) {
            const float* src = x_.data() + ((oy * k + ky) * cols + ox * k + kx) * h();
            for (int64_t d = 0; d < h(); ++d) dst[d] += src[d];
          }
        }
        for (int64_t d = 0; d < h(); ++d) dst[d] = dst[d] / area * scale;
      }
    }
  }

  std::unique_ptr<gguf::GgufFile> file_;
  ClipConfig config_;
  ClipWeights weights_;
  std::unique_ptr<ThreadPool> pool_;
  int64_t merge_ = kDefaultMerge;
  int64_t patch_cols_ = 0;  // 3 * p * p, padded to the GEMM's 32 columns
  int64_t n_ff_ = 0;        // the FFN width as the matrices hold it (padded to 32)
  int64_t positions_ = 0;   // rows of each position table
  int64_t n_out_ = 0;
  kernels::WeightMatrix patch_w_, position_;
  const float* pre_ln_w_ = nullptr;
  const float* pre_ln_b_ = nullptr;
  const float* post_ln_w_ = nullptr;
  const float* post_ln_b_ = nullptr;
  const float* std_bias_ = nullptr;
  const float* std_scale_ = nullptr;
  std::vector<Layer> layers_;
  Linear proj_;

  Mutex mutex_;                       // Encode: one image at a time (the scratch below)
  int64_t n_ GUARDED_BY(mutex_) = 0;  // patches of the image being encoded
  std::vector<float> pixels_ GUARDED_BY(mutex_);
  std::vector<float> x_ GUARDED_BY(mutex_);
  std::vector<float> cur_ GUARDED_BY(mutex_);
  std::vector<float> q_ GUARDED_BY(mutex_);
  std::vector<float> k_ GUARDED_BY(mutex_);
  std::vector<float> v_ GUARDED_BY(mutex_);
  std::vector<float> attn_ GUARDED_BY(mutex_);
  std::vector<float> proj_out_ GUARDED_BY(mutex_);
  std::vector<float> up_ GUARDED_BY(mutex_);
  std::vector<float> gate_ GUARDED_BY(mutex_);
  std::vector<float> clamped_ GUARDED_BY(mutex_);
  std::vector<float> tokens_ GUARDED_BY(mutex_);
  std::vector<float> cos_ GUARDED_BY(mutex_);  // [n, 2 halves, head_dim / 4]
  std::vector<float> sin_ GUARDED_BY(mutex_);
  std::vector<uint16_t> k_cache_ GUARDED_BY(mutex_);
  std::vector<uint16_t> v_cache_ GUARDED_BY(mutex_);
  std::vector<int64_t> q_pos_ GUARDED_BY(mutex_);
  std::vector<int32_t> slots_ GUARDED_BY(mutex_);
  std::vector<int32_t> ids_ GUARDED_BY(mutex_);
};

}  // namespace gemma4v
}  // namespace

StatusOr<std::unique_ptr<Projector>> MakeGemma4vProjector(std::unique_ptr<gguf::GgufFile> file,
                                                          const ClipConfig& config,
                                                          const Projector::Options& options) {
  return gemma4v::Gemma4vProjector::Make(std::move(file), config, options);
}

}  // namespace radixlm::vision::internal
