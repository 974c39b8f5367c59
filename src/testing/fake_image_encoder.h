// FakeImageEncoder: a test double of the vision projector (engine/image_encoder.h). An "image"
// is bytes starting with "FAKEIMG"; anything else is refused as undecodable. Its rows are a
// deterministic function of every byte (so two different files give different rows, the same
// file the same rows), n_tokens rows of n_embd values (as a grid of grid_rows x grid_cols when
// given: M-RoPE positions), placed in the prompt as set_pieces() says (default: one span).
// Counts its encodes.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/image_encoder.h"

namespace radixlm {

class FakeImageEncoder : public ImageEncoder {
 public:
  FakeImageEncoder(int64_t n_tokens, int64_t n_embd, ImagePromptLayout layout = {},
                   int64_t grid_rows = 0, int64_t grid_cols = 0)
      : n_tokens_(n_tokens),
        n_embd_(n_embd),
        layout_(std::move(layout)),
        grid_rows_(grid_rows),
        grid_cols_(grid_cols) {}

  // The bytes of a fake image file whose content is `seed`.
  static std::vector<uint8_t> File(const std::string& seed);

  std::string_view projector_type() const override { return "fake"; }
  int64_t n_embd() const override { return n_embd_; }
  ImagePromptLayout layout() const override { return layout_; }
  StatusOr<ImageTokens> Encode(std::span<const uint8_t> bytes, std::vector<float>* rows) override;

  int64_t encodes() const { return encodes_.load(); }
  // The pieces every image is laid out as (ImageTokens::pieces); before the first Encode.
  void set_pieces(std::vector<ImagePiece> pieces) { pieces_ = std::move(pieces); }

 private:
  const int64_t n_tokens_;
  const int64_t n_embd_;
  const ImagePromptLayout layout_;
  const int64_t grid_rows_;
  const int64_t grid_cols_;
  std::vector<ImagePiece> pieces_;
  std::atomic<int64_t> encodes_{0};
};

}  // namespace radixlm
