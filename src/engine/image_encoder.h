// ImageEncoder: what the engine needs of a vision projector (--mmproj): one image file's bytes
// in, the rows the language model takes for the image's token span out, and how the prompt
// wraps that span for the projector's model family.
//
// Implementations: the projector GGUF's (engine/projector_encoder.h, over src/vision) and, in
// tests, a deterministic double (testing/fake_image_encoder.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace radixlm {

// How a projector's images sit in the prompt (llama.cpp's mtmd for the same projector type):
// begin_text, the image's pieces (ImageTokens; by default one span of all its rows), end_text,
// each text tokenized on its own.
struct ImagePromptLayout {
  std::string begin_text = {};  // gemma3: "<start_of_image>"
  std::string end_text = {};    // gemma3: "<end_of_image>"
  // A client's stand-in between begin_text and end_text (Qwen-VL: "<|image_pad|>"); empty: none.
  std::string pad_text = {};
  // The spans attend bidirectionally (gemma3; llama.cpp's mtmd_decode_use_non_causal).
  bool bidirectional = false;
  // The texts of the single vocabulary tokens the pieces can name (ImagePiece::kToken), which
  // the language model's vocabulary must have (idefics3: "<global-img>", ...).
  std::vector<std::string> vocabulary_tokens = {};
};

// One piece of an image's place in the prompt, in order (idefics3: text before each tile,
// the tile's rows, a newline token after each tile row, ...).
struct ImagePiece {
  enum class Kind {
    kText,   // `text`, tokenized on its own (special tokens parsed, no BOS)
    kToken,  // the one vocabulary token whose text is `text` (llama.cpp mtmd's lookup_token)
    kRows,   // rows [first_row, first_row + n_rows) of the image's encoder output
  };
  Kind kind = Kind::kRows;
  std::string text = {};
  int64_t first_row = 0;
  int64_t n_rows = 0;
};

// What Encode() made of one image: n rows, lying on the image as a grid of grid_rows x
// grid_cols (row by row) whose M-RoPE positions are 2-D (qwen2.5vl_merger), or grid 0 (a
// plain sequence: gemma3); placed in the prompt as `pieces` (kRows pieces cover rows 0..n in
// order), or as one span of all n rows when `pieces` is empty.
struct ImageTokens {
  int64_t n = 0;
  int64_t grid_rows = 0;
  int64_t grid_cols = 0;
  std::vector<ImagePiece> pieces = {};
};

class ImageEncoder {
 public:
  virtual ~ImageEncoder() = default;

  virtual std::string_view projector_type() const = 0;
  // Width of each output row; must equal the language model's hidden size (times 1 + its
  // deepstack layers: qwen3vl).
  virtual int64_t n_embd() const = 0;
  // The deepstack slices after the first in each row (qwen3vl_merger); 0 elsewhere.
  virtual int64_t n_deepstack() const { return 0; }
  virtual ImagePromptLayout layout() const = 0;
  // Decodes and encodes one image file: *rows gets [n, n_embd] floats and the tokens are
  // described. InvalidArgument naming the problem for an image that cannot be decoded
  // (truncated, unsupported format, over the size or pixel limits). Thread-safe.
  virtual StatusOr<ImageTokens> Encode(std::span<const uint8_t> bytes,
                                       std::vector<float>* rows) = 0;
};

}  // namespace radixlm
