// qwen2.5vl_merger and qwen3vl_merger: Qwen2.5-VL's and Qwen3-VL's vision towers as llama.cpp
// runs them (PROJECTOR_TYPE_QWEN25VL: tools/mtmd/models/qwen2vl.cpp; PROJECTOR_TYPE_QWEN3VL:
// models/qwen3vl.cpp; clip.cpp's inputs for them; preprocessing for both:
// mtmd_image_preprocessor_dyn_size):
//   1. dynamic resolution: the size SizePreservingRatio gives (sides multiples of
//      patch * 2, between 8 and 4096 tokens' worth of pixels: llama.cpp's limits for Qwen-VL,
//      which ignores the file's image_min_pixels / image_max_pixels for this type), then resize
//      to fit it keeping the aspect ratio (Pillow bicubic), centred on black (PAD_CEIL)
//   2. per channel (v / 255 - image_mean) / image_std
//   3. the ViT (qwen_vit.h): [h/p * w/p patches, n_embd], each 2x2 group's rows contiguous
//   4. the patch merger: each group's 4 rows as one row of 4 * n_embd, then
//      mm.2(gelu(mm.0(row))) (ggml's tanh GELU): (h / 2p) * (w / 2p) tokens, row-major
// qwen2.5vl_merger: clip.vision.n_wa_pattern is required (as llama.cpp requires it for this
// type); the window is clip.vision.window_size when the file has it, else llama.cpp's 112 pixels
// (which llama.cpp uses for this type whatever the file says; Qwen2.5-VL's own is 112).
// qwen3vl_merger: every layer attends fully; LayerNorms, a fused attn_qkv, a patch bias and
// learned position embeddings (qwen_vit.h); v.post_ln is the merger's norm. Deepstack: after
// each layer il that has v.deepstack.<il>.* tensors, that layer's output is merged as the final
// merger merges it, 2x2 groups as rows of 4 * n_embd, then
//   fc2(gelu(fc1(LayerNorm(row, v.deepstack.<il>.norm))))    (each linear with its bias)
// and each token's row is [merger output, deepstack outputs by layer], n_text * (1 + deepstack
// layers) wide (llama.cpp's ggml_concat along the features; the language model adds slice k + 1
// to its hidden state after its layer k).
#include <algorithm>

#include "kernels/layer_norm.h"
#include "kernels/ops.h"
#include "util/mutex.h"
#include "util/thread_pool.h"
#include "vision/image_resize.h"
#include "vision/projector_types.h"
#include "vision/qwen_vit.h"

namespace radixlm::vision::internal {
namespace {

constexpr int64_t kMerge = 2;      // llama.cpp's graph merges 2x2 patches, whatever the file says
constexpr int64_t kMinTokens = 8;  // llama.cpp: set_limit_image_tokens(8, 4096)
constexpr int64_t kMaxTokens = 4096;
constexpr int64_t kDefaultWindow = 112;

// A merger: [LayerNorm(norm)], fc2(gelu(fc1(row) + b1)) + b2 over rows of 4 * n_embd.
struct Merger {
  const float* norm_w = nullptr;  // deepstack only
  const float* norm_b = nullptr;
  kernels::WeightMatrix fc1, fc2;
  const float* b1 = nullptr;
  const float* b2 = nullptr;
};

class QwenVlProjector final : public Projector {
 public:
  static StatusOr<std::unique_ptr<Projector>> Make(std::unique_ptr<gguf::GgufFile> file,
                                                   const ClipConfig& config, const Options& options,
                                                   bool qwen3) {
    std::unique_ptr<QwenVlProjector> p(new QwenVlProjector(std::move(file), config, qwen3));
    const gguf::GgufFile& f = *p->file_;
    RADIXLM_ASSIGN_OR_RETURN(const int64_t merge,
                             f.GetIntOr("clip.vision.spatial_merge_size", kMerge));
    if (merge != kMerge) {
      return Unimplemented("projector: spatial_merge_size " + std::to_string(merge) +
                           " (only 2 is supported)");
    }
    QwenVisionTransformer::Options vit_options;
    ClipWeights& w = p->weights_;
    if (qwen3) {
      // clip_graph_qwen3vl: no windows, whatever the file says (the patch bias and position
      // embeddings it asserts, the ViT requires).
      vit_options.qwen3 = true;
    } else {
      auto pattern = f.GetInt("clip.vision.n_wa_pattern");
      if (!pattern.ok()) {
        return InvalidArgument("projector metadata: " + pattern.status().message() +
                               " ('clip.vision.n_wa_pattern')");
      }
      vit_options.n_wa_pattern = *pattern;
      RADIXLM_ASSIGN_OR_RETURN(vit_options.window_size,
                               f.GetIntOr("clip.vision.window_size", kDefaultWindow));
      for (int64_t il = 0; il < config.n_layers; ++il) {
        if (w.Find("v.deepstack." + std::to_string(il) + ".fc1.weight") != nullptr) {
          return Unimplemented(
              "projector: deepstack layers in a qwen2.5vl_merger file (only qwen3vl_merger has "
              "them)");
        }
      }
    }
    RADIXLM_ASSIGN_OR_RETURN(p->vit_, QwenVisionTransformer::Load(config, vit_options, &w));
    const int64_t merged = config.n_embd * kMerge * kMerge;
    const gguf::TensorInfo* mm2 = w.Find("mm.2.weight");
    if (mm2 == nullptr || mm2->shape.size() != 2 || mm2->shape[0] != merged) {
      return InvalidArgument("projector: tensor 'mm.2.weight' is missing or not [" +
                             std::to_string(merged) + ", n_text]");
    }
    p->n_out_ = mm2->shape[1];
    if (p->n_out_ != config.projection_dim) {
      return InvalidArgument("projector: 'mm.2.weight' gives " + std::to_string(p->n_out_) +
                             " outputs but clip.vision.projection_dim is " +
                             std::to_string(config.projection_dim));
    }
    RADIXLM_RETURN_IF_ERROR(w.Matrix("mm.0.weight", merged, merged, &p->merger_.fc1));
    RADIXLM_RETURN_IF_ERROR(w.Vector("mm.0.bias", merged, false, &p->merger_.b1));
    RADIXLM_RETURN_IF_ERROR(w.Matrix("mm.2.weight", merged, p->n_out_, &p->merger_.fc2));
    RADIXLM_RETURN_IF_ERROR(w.Vector("mm.2.bias", p->n_out_, false, &p->merger_.b2));
    if (qwen3) {
      // clip.cpp reads every deepstack tensor as optional; a layer has deepstack with fc1.
      p->deepstack_.reserve(config.n_layers);
      for (int64_t il = 0; il < config.n_layers; ++il) {
        const std::string base = "v.deepstack." + std::to_string(il) + ".";
        if (w.Find(base + "fc1.weight") == nullptr) continue;
        Merger& m = p->deepstack_.emplace_back();
        p->deepstack_layers_.push_back(il);
        RADIXLM_RETURN_IF_ERROR(w.Vector(base + "norm.weight", merged, true, &m.norm_w));
        RADIXLM_RETURN_IF_ERROR(w.Vector(base + "norm.bias", merged, false, &m.norm_b));
        RADIXLM_RETURN_IF_ERROR(w.Matrix(base + "fc1.weight", merged, merged, &m.fc1));
        RADIXLM_RETURN_IF_ERROR(w.Vector(base + "fc1.bias", merged, false, &m.b1));
        RADIXLM_RETURN_IF_ERROR(w.Matrix(base + "fc2.weight", merged, p->n_out_, &m.fc2));
        RADIXLM_RETURN_IF_ERROR(w.Vector(base + "fc2.bias", p->n_out_, false, &m.b2));
      }
    }
    p->pool_ = std::make_unique<ThreadPool>(options.n_threads);
    w.Pack(p->pool_.get());
    return std::unique_ptr<Projector>(std::move(p));
  }

  std::string_view type() const override { return qwen3_ ? "qwen3vl_merger" : "qwen2.5vl_merger"; }
  // clip_n_mmproj_embd: the merger's width times (1 + deepstack layers).
  int64_t n_embd() const override { return n_out_ * (1 + static_cast<int64_t>(deepstack_.size())); }
  int64_t n_deepstack() const override { return static_cast<int64_t>(deepstack_.size()); }
  int64_t TokensFor(const Image& image) const override {
    if (image.width <= 0 || image.height <= 0) return 0;
    const ImageSize s = InputSize(image);
    return (s.width / align()) * (s.height / align());
  }
  TokenGrid GridFor(const Image& image) const override {  // (clip_n_output_tokens_x / _y)
    if (image.width <= 0 || image.height <= 0) return {};
    const ImageSize s = InputSize(image);
    return {.rows = s.height / align(), .cols = s.width / align()};
  }
  ImagePromptFormat prompt_format() const override {
    return {.begin = "<|vision_start|>",
            .end = "<|vision_end|>",
            .pad = "<|image_pad|>",
            .non_causal_span = false};
  }
  int64_t weights_bytes() const override { return weights_.resident_bytes(); }

  Status Encode(const Image& image, std::vector<float>* out) override {
    if (image.width <= 0 || image.height <= 0 ||
        image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3) {
      return InvalidArgument("the image has no pixels or its RGB buffer is not width x height x 3");
    }
    MutexLock lock(&mutex_);
    const ImageSize size = InputSize(image);
    const Image fitted = ResizeToFit(image, size.width, size.height, ResizeFilter::kBicubic);
    const int64_t plane = int64_t{size.width} * size.height;
    pixels_.resize(3 * plane);
    for (int64_t i = 0; i < plane; ++i) {
      for (int ch = 0; ch < 3; ++ch) {
        const float v = static_cast<float>(fitted.rgb[i * 3 + ch]) / 255.0f;
        pixels_[ch * plane + i] = (v - config_.image_mean[ch]) / config_.image_std[ch];
      }
    }
    vit_->Forward(pixels_.data(), size.width, size.height, &patches_, pool_.get(),
                  deepstack_layers_, &captured_);
    // Each group's 4 rows are contiguous: a merger reads them as one row of 4 * n_embd.
    const int64_t n_tokens = plane / (align() * align());
    const int64_t n_parts = 1 + static_cast<int64_t>(deepstack_.size());
    const int64_t row = n_out_ * n_parts;
    out->resize(n_tokens * row);
    RunMerger(merger_, patches_.data(), n_tokens, out->data(), row);
    const int64_t captured_size = n_tokens * config_.n_embd * kMerge * kMerge;
    for (size_t d = 0; d < deepstack_.size(); ++d) {
      RunMerger(deepstack_[d], captured_.data() + d * captured_size, n_tokens,
                out->data() + (d + 1) * n_out_, row);
    }
    return Status::Ok();
  }

 private:
  QwenVlProjector(std::unique_ptr<gguf::GgufFile> file, const ClipConfig& config, bool qwen3)
      : file_(std::move(file)), config_(config), weights_(file_.get()), qwen3_(qwen3) {}

  // out row t (stride out_stride) = m(in row t), in: [n_tokens, 4 * n_embd].
  void RunMerger(const Merger& m, const float* in, int64_t n_tokens, float* out, int64_t out_stride)
      REQUIRES(mutex_) {
    const int64_t merged = config_.n_embd * kMerge * kMerge;
    const float* x = in;
    if (m.norm_w != nullptr) {
      normed_.resize(n_tokens * merged);
      kernels::LayerNorm(in, m.norm_w, m.norm_b, n_tokens, merged, config_.eps, normed_.data());
      x = normed_.data();
    }
    hidden_.resize(n_tokens * merged);
    kernels::MatMul(m.fc1, x, n_tokens, hidden_.data(), pool_.get());
    if (m.b1 != nullptr) {
      for (int64_t t = 0; t < n_tokens; ++t) {
        kernels::Add(hidden_.data() + t * merged, m.b1, hidden_.data() + t * merged, merged);
      }
    }
    kernels::GeluTanh(hidden_.data(), hidden_.data(), n_tokens * merged);
    projected_.resize(n_tokens * n_out_);
    kernels::MatMul(m.fc2, hidden_.data(), n_tokens, projected_.data(), pool_.get());
    for (int64_t t = 0; t < n_tokens; ++t) {
      float* dst = out + t * out_stride;
      const float* src = projected_.data() + t * n_out_;
      if (m.b2 != nullptr) {
        kernels::Add(src, m.b2, dst, n_out_);
      } else {
        std::copy_n(src, n_out_, dst);
      }
    }
  }

  int align() const { return static_cast<int>(config_.patch_size * kMerge); }
  ImageSize InputSize(const Image& image) const {
    const int64_t token_pixels = int64_t{align()} * align();
    return SizePreservingRatio(image.width, image.height, align(), kMinTokens * token_pixels,
                               kMaxTokens * token_pixels);
  }

  std::unique_ptr<gguf::GgufFile> file_;
  ClipConfig config_;
  ClipWeights weights_;
  std::unique_ptr<QwenVisionTransformer> vit_;
  std::unique_ptr<ThreadPool> pool_;
  const bool qwen3_;
  int64_t n_out_ = 0;              // the merger's output width (the language model's n_embd)
  Merger merger_;                  // mm.0, mm.2
  std::vector<Merger> deepstack_;  // qwen3vl: by layer
  std::vector<int64_t> deepstack_layers_;  // the ViT layer each reads

  Mutex mutex_;  // Encode: one image at a time (the scratch below, the ViT's)
  std::vector<float> pixels_ GUARDED_BY(mutex_);
  std::vector<float> patches_ GUARDED_BY(mutex_);
  std::vector<float> hidden_ GUARDED_BY(mutex_);
  std::vector<float> captured_ GUARDED_BY(mutex_);  // deepstack layers' ViT outputs
  std::vector<float> normed_ GUARDED_BY(mutex_);
  std::vector<float> projected_ GUARDED_BY(mutex_);
};

}  // namespace

StatusOr<std::unique_ptr<Projector>> MakeQwen25VlProjector(std::unique_ptr<gguf::GgufFile> file,
                                                           const ClipConfig& config,
                                                           const Projector::Options& options) {
  return QwenVlProjector::Make(std::move(file), config, options, /*qwen3=*/false);
}

StatusOr<std::unique_ptr<Projector>> MakeQwen3VlProjector(std::unique_ptr<gguf::GgufFile> file,
                                                          const ClipConfig& config,
                                                          const Projector::Options& options) {
  return QwenVlProjector::Make(std::move(file), config, options, /*qwen3=*/true);
}

}  // namespace radixlm::vision::internal
