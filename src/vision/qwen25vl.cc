// qwen2.5vl_merger: Qwen2.5-VL's vision tower as llama.cpp runs it (PROJECTOR_TYPE_QWEN25VL:
// tools/mtmd/models/qwen2vl.cpp, clip.cpp's inputs for it; preprocessing:
// mtmd_image_preprocessor_dyn_size):
//   1. dynamic resolution: the size SizePreservingRatio gives (sides multiples of
//      patch * 2, between 8 and 4096 tokens' worth of pixels: llama.cpp's limits for Qwen-VL,
//      which ignores the file's image_min_pixels / image_max_pixels for this type), then resize
//      to fit it keeping the aspect ratio (Pillow bicubic), centred on black (PAD_CEIL)
//   2. per channel (v / 255 - image_mean) / image_std
//   3. the ViT (qwen_vit.h): [h/p * w/p patches, n_embd], each 2x2 group's rows contiguous
//   4. the patch merger: each group's 4 rows as one row of 4 * n_embd, then
//      mm.2(gelu(mm.0(row))) (ggml's tanh GELU): (h / 2p) * (w / 2p) tokens, row-major
// clip.vision.n_wa_pattern is required (as llama.cpp requires it for this type); the window is
// clip.vision.window_size when the file has it, else llama.cpp's 112 pixels (which llama.cpp
// uses for this type whatever the file says; Qwen2.5-VL's own is 112).
#include <algorithm>

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

class Qwen25VlProjector final : public Projector {
 public:
  static StatusOr<std::unique_ptr<Projector>> Make(std::unique_ptr<gguf::GgufFile> file,
                                                   const ClipConfig& config,
                                                   const Options& options) {
    std::unique_ptr<Qwen25VlProjector> p(new Qwen25VlProjector(std::move(file), config));
    const gguf::GgufFile& f = *p->file_;
    RADIXLM_ASSIGN_OR_RETURN(const int64_t merge,
                             f.GetIntOr("clip.vision.spatial_merge_size", kMerge));
    if (merge != kMerge) {
      return Unimplemented("projector: spatial_merge_size " + std::to_string(merge) +
                           " (only 2 is supported)");
    }
    QwenVisionTransformer::Windows windows;
    auto pattern = f.GetInt("clip.vision.n_wa_pattern");
    if (!pattern.ok()) {
      return InvalidArgument("projector metadata: " + pattern.status().message() +
                             " ('clip.vision.n_wa_pattern')");
    }
    windows.n_wa_pattern = *pattern;
    RADIXLM_ASSIGN_OR_RETURN(windows.window_size,
                             f.GetIntOr("clip.vision.window_size", kDefaultWindow));
    ClipWeights& w = p->weights_;
    RADIXLM_ASSIGN_OR_RETURN(p->vit_, QwenVisionTransformer::Load(config, windows, &w));
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
    RADIXLM_RETURN_IF_ERROR(w.Matrix("mm.0.weight", merged, merged, &p->mm0_));
    RADIXLM_RETURN_IF_ERROR(w.Vector("mm.0.bias", merged, false, &p->mm0_b_));
    RADIXLM_RETURN_IF_ERROR(w.Matrix("mm.2.weight", merged, p->n_out_, &p->mm2_));
    RADIXLM_RETURN_IF_ERROR(w.Vector("mm.2.bias", p->n_out_, false, &p->mm2_b_));
    p->pool_ = std::make_unique<ThreadPool>(options.n_threads);
    w.Pack(p->pool_.get());
    return std::unique_ptr<Projector>(std::move(p));
  }

  std::string_view type() const override { return "qwen2.5vl_merger"; }
  int64_t n_embd() const override { return n_out_; }
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
    return {.begin = "<|vision_start|>", .end = "<|vision_end|>", .non_causal_span = false};
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
    vit_->Forward(pixels_.data(), size.width, size.height, &patches_, pool_.get());
    // Each group's 4 rows are contiguous: the merger reads them as one row of 4 * n_embd.
    const int64_t n_tokens = plane / (align() * align());
    const int64_t merged = config_.n_embd * kMerge * kMerge;
    hidden_.resize(n_tokens * merged);
    kernels::MatMul(mm0_, patches_.data(), n_tokens, hidden_.data(), pool_.get());
    if (mm0_b_ != nullptr) {
      for (int64_t t = 0; t < n_tokens; ++t) {
        kernels::Add(hidden_.data() + t * merged, mm0_b_, hidden_.data() + t * merged, merged);
      }
    }
    kernels::GeluTanh(hidden_.data(), hidden_.data(), n_tokens * merged);
    out->resize(n_tokens * n_out_);
    kernels::MatMul(mm2_, hidden_.data(), n_tokens, out->data(), pool_.get());
    if (mm2_b_ != nullptr) {
      for (int64_t t = 0; t < n_tokens; ++t) {
        kernels::Add(out->data() + t * n_out_, mm2_b_, out->data() + t * n_out_, n_out_);
      }
    }
    return Status::Ok();
  }

 private:
  Qwen25VlProjector(std::unique_ptr<gguf::GgufFile> file, const ClipConfig& config)
      : file_(std::move(file)), config_(config), weights_(file_.get()) {}

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
  int64_t n_out_ = 0;
  kernels::WeightMatrix mm0_, mm2_;
  const float* mm0_b_ = nullptr;
  const float* mm2_b_ = nullptr;

  Mutex mutex_;  // Encode: one image at a time (the scratch below, the ViT's)
  std::vector<float> pixels_ GUARDED_BY(mutex_);
  std::vector<float> patches_ GUARDED_BY(mutex_);
  std::vector<float> hidden_ GUARDED_BY(mutex_);
};

}  // namespace

StatusOr<std::unique_ptr<Projector>> MakeQwen25VlProjector(std::unique_ptr<gguf::GgufFile> file,
                                                           const ClipConfig& config,
                                                           const Projector::Options& options) {
  return Qwen25VlProjector::Make(std::move(file), config, options);
}

}  // namespace radixlm::vision::internal
