// idefics3: SmolVLM's / Idefics3's vision tower as llama.cpp runs it (tools/mtmd/models/
// siglip.cpp, the PROJECTOR_TYPE_IDEFICS3 branch; clip.cpp's loader; preprocessing:
// mtmd_image_preprocessor_idefics3, idefics3.h). For each tile, then the overview:
//   1. per channel (v / 255 - image_mean) / image_std
//   2. the SigLIP ViT (vit.h): [side * side patches, n_embd]
//   3. pixel shuffle by s = clip.vision.projector.scale_factor (clip_graph::
//      build_patch_merge_permute): token (ty, tx) of the (side / s)^2, row-major, is the
//      concatenation of the s x s patches (ty * s + dy, tx * s + dx), dy outer, dx inner
//   4. mm.model.fc.weight: [n_embd * s * s] -> the language model's width, no bias
// Encode's rows: the tiles' in row-major order, then the overview's (mtmd.cpp places the
// overview last for this type).
#include "vision/idefics3.h"

#include <algorithm>

#include "util/mutex.h"
#include "util/thread_pool.h"
#include "vision/image_resize.h"
#include "vision/projector_types.h"
#include "vision/vit.h"

namespace radixlm::vision {

Idefics3Grid Idefics3GridFor(int width, int height, int tile_size, int longest_edge) {
  Idefics3Grid g;
  const double aspect = static_cast<double>(width) / height;
  if (width >= height) {
    g.width = longest_edge;
    g.height = std::max(1, static_cast<int>(longest_edge / aspect));
    g.height += g.height % 2;
  } else {
    g.height = longest_edge;
    g.width = std::max(1, static_cast<int>(longest_edge * aspect));
    g.width += g.width % 2;
  }
  g.cols = (g.width + tile_size - 1) / tile_size;
  g.rows = (g.height + tile_size - 1) / tile_size;
  return g;
}

namespace {

bool HasPixels(const Image& image) {
  return image.width > 0 && image.height > 0 &&
         image.rgb.size() == static_cast<size_t>(image.width) * image.height * 3;
}

Image Crop(const Image& src, int x0, int y0, int size) {
  Image tile{.width = size, .height = size, .rgb = std::vector<uint8_t>(size_t(size) * size * 3)};
  for (int y = 0; y < size; ++y) {
    const uint8_t* row = src.rgb.data() + (static_cast<size_t>(y0 + y) * src.width + x0) * 3;
    std::copy(row, row + size_t(size) * 3, tile.rgb.data() + size_t(y) * size * 3);
  }
  return tile;
}

}  // namespace

StatusOr<Idefics3Slices> SliceIdefics3(const Image& image, int tile_size, int longest_edge) {
  if (!HasPixels(image)) {
    return InvalidArgument("the image has no pixels or its RGB buffer is not width x height x 3");
  }
  Idefics3Slices s;
  s.grid = Idefics3GridFor(image.width, image.height, tile_size, longest_edge);
  const Image resized = ResizePillow(image, s.grid.width, s.grid.height, ResizeFilter::kLanczos);
  const Image refined = ResizePillow(resized, s.grid.cols * tile_size, s.grid.rows * tile_size,
                                     ResizeFilter::kLanczos);
  s.overview = ResizePillow(refined, tile_size, tile_size, ResizeFilter::kLanczos);
  for (int y = 0; y < s.grid.rows; ++y) {
    for (int x = 0; x < s.grid.cols; ++x) {
      s.tiles.push_back(Crop(refined, x * tile_size, y * tile_size, tile_size));
    }
  }
  return s;
}

namespace internal {
namespace {

class Idefics3Projector final : public Projector {
 public:
  static StatusOr<std::unique_ptr<Projector>> Make(std::unique_ptr<gguf::GgufFile> file,
                                                   const ClipConfig& config,
                                                   const Options& options) {
    RADIXLM_ASSIGN_OR_RETURN(const int64_t longest_edge,
                             file->GetIntOr("clip.vision.preproc_image_size", 0));
    if (longest_edge <= 0) {
      return Unimplemented(
          "idefics3 projector without 'clip.vision.preproc_image_size' (an older conversion): "
          "llama.cpp's size-preserving slicing for such files is not supported");
    }
    if (config.scale_factor < 2) {
      return InvalidArgument(
          "projector metadata: idefics3 needs 'clip.vision.projector.scale_factor' of at least 2");
    }
    std::unique_ptr<Idefics3Projector> p(new Idefics3Projector(std::move(file), config));
    p->longest_edge_ = static_cast<int>(longest_edge);
    ClipWeights& w = p->weights_;
    RADIXLM_ASSIGN_OR_RETURN(p->vit_, VisionTransformer::Load(config, &w));
    const int64_t side = p->vit_->patches_per_side(), s = config.scale_factor;
    if (side % s != 0) {
      return InvalidArgument("projector metadata: " + std::to_string(side) +
                             " patches per side do not shuffle by " + std::to_string(s));
    }
    p->tokens_side_ = side / s;
    p->merged_ = config.n_embd * s * s;
    const gguf::TensorInfo* fc = w.Find("mm.model.fc.weight");
    if (fc == nullptr || fc->shape.size() != 2 || fc->shape[0] != p->merged_) {
      return InvalidArgument("projector: tensor 'mm.model.fc.weight' is missing or not [" +
                             std::to_string(p->merged_) + ", n_text]");
    }
    p->n_out_ = fc->shape[1];
    if (p->n_out_ != config.projection_dim) {
      return InvalidArgument("projector: 'mm.model.fc.weight' gives " + std::to_string(p->n_out_) +
                             " outputs but clip.vision.projection_dim is " +
                             std::to_string(config.projection_dim));
    }
    RADIXLM_RETURN_IF_ERROR(w.Matrix("mm.model.fc.weight", p->merged_, p->n_out_, &p->fc_));
    p->pool_ = std::make_unique<ThreadPool>(options.n_threads);
    w.Pack(p->pool_.get());
    return std::unique_ptr<Projector>(std::move(p));
  }

  std::string_view type() const override { return "idefics3"; }
  int64_t n_embd() const override { return n_out_; }
  int64_t TokensFor(const Image& image) const override {
    if (image.width <= 0 || image.height <= 0) return 0;
    const Idefics3Grid g = Idefics3GridFor(image.width, image.height,
                                           static_cast<int>(config_.image_size), longest_edge_);
    return (int64_t{g.cols} * g.rows + 1) * tokens_side_ * tokens_side_;
  }
  // No text of its own around the image: the pieces hold it all.
  ImagePromptFormat prompt_format() const override { return {}; }
  // mtmd_tokenize's layout for MTMD_SLICE_TMPL_IDEFICS3 (llama.cpp 0.3.36, mtmd.cpp add_media;
  // Idefics3Processor's): each tile row by row, after the text
  // "<fake_token_around_image><row_{r}_col_{c}>" (1-based; tokenized, special tokens parsed),
  // "\n" (one token) after every tile row but the last, then the overview between the tokens
  // "\n\n", "<fake_token_around_image>", "<global-img>" and "<fake_token_around_image>".
  std::vector<ImagePromptPiece> PromptPieces(const Image& image) const override {
    using Kind = ImagePromptPiece::Kind;
    const Idefics3Grid g = Idefics3GridFor(std::max(image.width, 1), std::max(image.height, 1),
                                           static_cast<int>(config_.image_size), longest_edge_);
    const int64_t per_tile = tokens_side_ * tokens_side_;
    std::vector<ImagePromptPiece> pieces;
    int64_t row = 0;
    for (int y = 0; y < g.rows; ++y) {
      for (int x = 0; x < g.cols; ++x) {
        pieces.push_back({.kind = Kind::kText,
                          .text = "<fake_token_around_image><row_" + std::to_string(y + 1) +
                                  "_col_" + std::to_string(x + 1) + ">"});
        pieces.push_back({.kind = Kind::kRows, .first_row = row, .n_rows = per_tile});
        row += per_tile;
      }
      if (y != g.rows - 1) pieces.push_back({.kind = Kind::kToken, .text = "\n"});
    }
    for (const char* token : {"\n\n", "<fake_token_around_image>", "<global-img>"}) {
      pieces.push_back({.kind = Kind::kToken, .text = token});
    }
    pieces.push_back({.kind = Kind::kRows, .first_row = row, .n_rows = per_tile});
    pieces.push_back({.kind = Kind::kToken, .text = "<fake_token_around_image>"});
    return pieces;
  }
  std::vector<std::string> PromptTokens() const override {
    return {"\n", "\n\n", "<fake_token_around_image>", "<global-img>"};
  }
  int64_t weights_bytes() const override { return weights_.resident_bytes(); }

  Status Encode(const Image& image, std::vector<float>* out) override {
    RADIXLM_ASSIGN_OR_RETURN(
        const Idefics3Slices slices,
        SliceIdefics3(image, static_cast<int>(config_.image_size), longest_edge_));
    MutexLock lock(&mutex_);
    const int64_t per_tile = tokens_side_ * tokens_side_ * n_out_;
    out->resize((slices.tiles.size() + 1) * per_tile);
    float* dst = out->data();
    for (const Image& tile : slices.tiles) {
      EncodeTile(tile, dst);
      dst += per_tile;
    }
    EncodeTile(slices.overview, dst);
    return Status::Ok();
  }

 private:
  Idefics3Projector(std::unique_ptr<gguf::GgufFile> file, const ClipConfig& config)
      : file_(std::move(file)), config_(config), weights_(file_.get()) {}

  // One image_size square image -> [tokens_side^2, n_out] at out.
  void EncodeTile(const Image& tile, float* out) REQUIRES(mutex_) {
    const int64_t plane = config_.image_size * config_.image_size;
    pixels_.resize(3 * plane);
    for (int64_t i = 0; i < plane; ++i) {
      for (int ch = 0; ch < 3; ++ch) {
        const float v = static_cast<float>(tile.rgb[i * 3 + ch]) / 255.0f;
        pixels_[ch * plane + i] = (v - config_.image_mean[ch]) / config_.image_std[ch];
      }
    }
    vit_->Forward(pixels_.data(), &patches_, pool_.get());
    PixelShuffle();
    kernels::MatMul(fc_, tokens_.data(), tokens_side_ * tokens_side_, out, pool_.get());
  }

  // patches_ [side * side, h] -> tokens_ [tokens_side^2, h * s * s].
  void PixelShuffle() REQUIRES(mutex_) {
    const int64_t h = config_.n_embd, s = config_.scale_factor, side = vit_->patches_per_side();
    tokens_.resize(tokens_side_ * tokens_side_ * merged_);
    for (int64_t ty = 0; ty < tokens_side_; ++ty) {
      for (int64_t tx = 0; tx < tokens_side_; ++tx) {
        float* dst = tokens_.data() + (ty * tokens_side_ + tx) * merged_;
        for (int64_t dy = 0; dy < s; ++dy) {
          for (int64_t dx = 0; dx < s; ++dx) {
            const float* src = patches_.data() + ((ty * s + dy) * side + tx * s + dx) * h;
            std::copy(src, src + h, dst + (dy * s + dx) * h);
          }
        }
      }
    }
  }

  std::unique_ptr<gguf::GgufFile> file_;
  ClipConfig config_;
  ClipWeights weights_;
  std::unique_ptr<VisionTransformer> vit_;
  std::unique_ptr<ThreadPool> pool_;
  int longest_edge_ = 0;
  int64_t tokens_side_ = 0;
  int64_t merged_ = 0;  // n_embd * s * s
  int64_t n_out_ = 0;
  kernels::WeightMatrix fc_;

  Mutex mutex_;  // Encode: one image at a time (the scratch below, the ViT's)
  std::vector<float> pixels_ GUARDED_BY(mutex_);
  std::vector<float> patches_ GUARDED_BY(mutex_);
  std::vector<float> tokens_ GUARDED_BY(mutex_);
};

}  // namespace

StatusOr<std::unique_ptr<Projector>> MakeIdefics3Projector(std::unique_ptr<gguf::GgufFile> file,
                                                           const ClipConfig& config,
                                                           const Projector::Options& options) {
  return Idefics3Projector::Make(std::move(file), config, options);
}

}  // namespace internal
}  // namespace radixlm::vision
