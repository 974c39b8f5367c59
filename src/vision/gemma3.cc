// gemma3: Gemma 3's vision tower as llama.cpp runs it (tools/mtmd/models/siglip.cpp, the
// PROJECTOR_TYPE_GEMMA3 branch; preprocessing: mtmd_image_preprocessor_fixed_size):
//   1. resize to fit image_size x image_size keeping the aspect ratio (Pillow bilinear), centred
//      on black (llama.cpp's PAD_CEIL; Hugging Face's processor stretches instead)
//   2. per channel (v / 255 - image_mean) / image_std
//   3. the SigLIP ViT (vit.h): [side * side patches, n_embd]
//   4. average pool over k x k patches (k = clip.vision.projector.scale_factor, default 4):
//      (side / k)^2 tokens, row-major; sums in float in row, then column order, then / k^2
//   5. RMS norm with mm.soft_emb_norm.weight (eps = layer_norm_epsilon)
//   6. mm.input_projection.weight ([text, vision] in the file: applied transposed)
#include <algorithm>

#include "kernels/ops.h"
#include "util/mutex.h"
#include "util/thread_pool.h"
#include "vision/image_resize.h"
#include "vision/projector_types.h"
#include "vision/vit.h"

namespace radixlm::vision::internal {
namespace {

constexpr int64_t kDefaultMerge = 4;  // llama.cpp's default for every Gemma 3 size

class Gemma3Projector final : public Projector {
 public:
  static StatusOr<std::unique_ptr<Projector>> Make(std::unique_ptr<gguf::GgufFile> file,
                                                   const ClipConfig& config,
                                                   const Options& options) {
    std::unique_ptr<Gemma3Projector> p(new Gemma3Projector(std::move(file), config));
    ClipWeights& w = p->weights_;
    RADIXLM_ASSIGN_OR_RETURN(p->vit_, VisionTransformer::Load(config, &w));
    p->merge_ = config.scale_factor > 0 ? config.scale_factor : kDefaultMerge;
    const int64_t side = p->vit_->patches_per_side();
    if (side % p->merge_ != 0) {
      return InvalidArgument("projector metadata: " + std::to_string(side) +
                             " patches per side do not pool by " + std::to_string(p->merge_));
    }
    p->tokens_side_ = side / p->merge_;
    const gguf::TensorInfo* proj = w.Find("mm.input_projection.weight");
    if (proj == nullptr || proj->shape.size() != 2 || proj->shape[1] != config.n_embd) {
      return InvalidArgument("projector: tensor 'mm.input_projection.weight' is missing or not [" +
                             std::string("n_text, ") + std::to_string(config.n_embd) + "]");
    }
    p->n_out_ = proj->shape[0];
    if (p->n_out_ != config.projection_dim) {
      return InvalidArgument(
          "projector: 'mm.input_projection.weight' gives " + std::to_string(p->n_out_) +
          " outputs but clip.vision.projection_dim is " + std::to_string(config.projection_dim));
    }
    RADIXLM_RETURN_IF_ERROR(
        w.TransposedMatrix("mm.input_projection.weight", config.n_embd, p->n_out_, &p->proj_));
    RADIXLM_RETURN_IF_ERROR(w.Vector("mm.soft_emb_norm.weight", config.n_embd, true, &p->norm_w_));
    p->pool_ = std::make_unique<ThreadPool>(options.n_threads);
    w.Pack(p->pool_.get());
    return std::unique_ptr<Projector>(std::move(p));
  }

  std::string_view type() const override { return "gemma3"; }
  int64_t n_embd() const override { return n_out_; }
  int64_t TokensFor(const Image&) const override { return tokens_side_ * tokens_side_; }
  ImagePromptFormat prompt_format() const override {
    return {.begin = "<start_of_image>", .end = "<end_of_image>", .non_causal_span = true};
  }
  int64_t weights_bytes() const override { return weights_.resident_bytes(); }

  Status Encode(const Image& image, std::vector<float>* out) override {
    if (image.width <= 0 || image.height <= 0 ||
        image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3) {
      return InvalidArgument("the image has no pixels or its RGB buffer is not width x height x 3");
    }
    MutexLock lock(&mutex_);
    const int size = static_cast<int>(config_.image_size);
    const Image fitted = ResizeToFit(image, size, size, ResizeFilter::kBilinear);
    const int64_t plane = int64_t{size} * size;
    pixels_.resize(3 * plane);
    for (int64_t i = 0; i < plane; ++i) {
      for (int ch = 0; ch < 3; ++ch) {
        const float v = static_cast<float>(fitted.rgb[i * 3 + ch]) / 255.0f;
        pixels_[ch * plane + i] = (v - config_.image_mean[ch]) / config_.image_std[ch];
      }
    }
    vit_->Forward(pixels_.data(), &patches_, pool_.get());
    Pool();
    kernels::RmsNorm(tokens_.data(), norm_w_, tokens_side_ * tokens_side_, config_.n_embd,
                     config_.eps, tokens_.data());
    const int64_t n_tokens = tokens_side_ * tokens_side_;
    out->resize(n_tokens * n_out_);
    kernels::MatMul(proj_, tokens_.data(), n_tokens, out->data(), pool_.get());
    return Status::Ok();
  }

 private:
  Gemma3Projector(std::unique_ptr<gguf::GgufFile> file, const ClipConfig& config)
      : file_(std::move(file)), config_(config), weights_(file_.get()) {}

  // patches_ [side * side, n_embd] -> tokens_ [tokens_side^2, n_embd] (ggml_pool_2d, AVG).
  void Pool() REQUIRES(mutex_) {
    const int64_t h = config_.n_embd, side = vit_->patches_per_side(), k = merge_;
    tokens_.assign(tokens_side_ * tokens_side_ * h, 0.0f);
    const float area = static_cast<float>(k * k);
    for (int64_t oy = 0; oy < tokens_side_; ++oy) {
      for (int64_t ox = 0; ox < tokens_side_; ++ox) {
        float* dst = tokens_.data() + (oy * tokens_side_ + ox) * h;
        for (int64_t ky = 0; ky < k; ++ky) {
          for (int64_t kx = 0; kx < k; ++kx) {
            const float* src = patches_.data() + ((oy * k + ky) * side + ox * k + kx) * h;
            for (int64_t d = 0; d < h; ++d) dst[d] += src[d];
          }
        }
        for (int64_t d = 0; d < h; ++d) dst[d] /= area;
      }
    }
  }

  std::unique_ptr<gguf::GgufFile> file_;
  ClipConfig config_;
  ClipWeights weights_;
  std::unique_ptr<VisionTransformer> vit_;
  std::unique_ptr<ThreadPool> pool_;
  int64_t merge_ = kDefaultMerge;
  int64_t tokens_side_ = 0;
  int64_t n_out_ = 0;
  kernels::WeightMatrix proj_;
  const float* norm_w_ = nullptr;

  Mutex mutex_;  // Encode: one image at a time (the scratch below, the ViT's)
  std::vector<float> pixels_ GUARDED_BY(mutex_);
  std::vector<float> patches_ GUARDED_BY(mutex_);
  std::vector<float> tokens_ GUARDED_BY(mutex_);
};

}  // namespace

StatusOr<std::unique_ptr<Projector>> MakeGemma3Projector(std::unique_ptr<gguf::GgufFile> file,
                                                         const ClipConfig& config,
                                                         const Projector::Options& options) {
  return Gemma3Projector::Make(std::move(file), config, options);
}

}  // namespace radixlm::vision::internal
