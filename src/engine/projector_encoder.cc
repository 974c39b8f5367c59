#include "engine/projector_encoder.h"

#include <utility>

#include "vision/image.h"
#include "vision/projector.h"

namespace radixlm {

namespace {

// vision::Projector behind the engine's ImageEncoder: decode (vision::DecodeImage, its default
// limits), then encode.
class ProjectorEncoder : public ImageEncoder {
 public:
  explicit ProjectorEncoder(std::unique_ptr<vision::Projector> projector)
      : projector_(std::move(projector)) {}

  std::string_view projector_type() const override { return projector_->type(); }
  int64_t n_embd() const override { return projector_->n_embd(); }
  int64_t n_deepstack() const override { return projector_->n_deepstack(); }
  ImagePromptLayout layout() const override {
    const vision::ImagePromptFormat format = projector_->prompt_format();
    return {.begin_text = format.begin,
            .end_text = format.end,
            .pad_text = format.pad,
            .bidirectional = format.non_causal_span,
            .vocabulary_tokens = projector_->PromptTokens()};
  }

  StatusOr<ImageTokens> Encode(std::span<const uint8_t> bytes, std::vector<float>* rows) override {
    RADIXLM_ASSIGN_OR_RETURN(const vision::Image image, vision::DecodeImage(bytes));
    RADIXLM_RETURN_IF_ERROR(projector_->Encode(image, rows));
    const vision::TokenGrid grid = projector_->GridFor(image);
    ImageTokens tokens;
    tokens.n = projector_->TokensFor(image);
    tokens.grid_rows = grid.rows;
    tokens.grid_cols = grid.cols;
    const std::vector<vision::ImagePromptPiece> pieces = projector_->PromptPieces(image);
    if (pieces.size() > 1) {  // one span of all the rows is the default
      for (const vision::ImagePromptPiece& p : pieces) {
        using From = vision::ImagePromptPiece::Kind;
        const ImagePiece::Kind kind = p.kind == From::kText    ? ImagePiece::Kind::kText
                                      : p.kind == From::kToken ? ImagePiece::Kind::kToken
                                                               : ImagePiece::Kind::kRows;
        tokens.pieces.push_back(
            {.kind = kind, .text = p.text, .first_row = p.first_row, .n_rows = p.n_rows});
      }
    }
    return tokens;
  }

 private:
  std::unique_ptr<vision::Projector> projector_;  // (Encode serialises its callers)
};

}  // namespace

StatusOr<std::unique_ptr<ImageEncoder>> LoadProjectorEncoder(const std::string& path, int threads) {
  StatusOr<std::unique_ptr<vision::Projector>> projector =
      vision::Projector::Load(path, {.n_threads = threads});
  if (!projector.ok()) {
    return Status(projector.status().code(),
                  "--mmproj " + path + ": " + projector.status().message());
  }
  return std::unique_ptr<ImageEncoder>(new ProjectorEncoder(std::move(projector).value()));
}

}  // namespace radixlm
