// Projector: a vision encoder loaded from llama.cpp's projector GGUF (`--mmproj`,
// general.architecture "clip"), turning one decoded image into the rows of embeddings the
// language model reads in place of the image's tokens.
//
// One implementation per clip.projector_type (llama.cpp's names), chosen by Load(); each reads
// its own preprocessing from the file's metadata (image size, resize, mean / std). Built:
//   gemma3             SigLIP ViT, average pool to tokens-per-side, RMS norm, projection
//                      (gemma3.cc)
//   gemma4v            Gemma 4: dynamic resolution, RMS-norm ViT with x / y position tables
//                      and 2-D rope, average pool, projection (gemma4v.cc)
//   qwen2.5vl_merger   Qwen2.5-VL: dynamic resolution, ViT with 2-D RoPE and window attention,
//                      2x2 patch merger (qwen25vl.cc, qwen_vit.cc)
//   qwen3vl_merger     Qwen3-VL: the same resolution and 2-D RoPE, learned position embeddings
//                      resized to the grid, LayerNorm ViT, the 2x2 merger and the deepstack
//                      mergers of chosen layers, concatenated per token (qwen25vl.cc)
//   idefics3           SmolVLM / Idefics3: tiles and an overview (idefics3.h), SigLIP ViT on
//                      each, pixel shuffle, linear projection (idefics3.cc); its prompt
//                      layout puts text around each tile and the overview (PromptPieces)
// Every other type is refused with an Unimplemented error naming it.
//
// Batch invariance: an image's embeddings depend on that image and the file only (each image
// runs alone through the encoder, on batch-invariant kernels).
// Thread-safety: Encode() serialises its callers (one image at a time on the projector's thread
// pool); the accessors are safe from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.h"
#include "util/status.h"
#include "vision/image.h"

namespace radixlm::vision {

// An image's tokens as a grid of rows x cols, row by row (Qwen-VL's merged patches, to which
// the language model's M-RoPE gives 2-D positions); {0, 0}: a plain sequence (gemma3).
struct TokenGrid {
  int64_t rows = 0;
  int64_t cols = 0;
};

// What the language model's side needs to know to place an image (llama.cpp's mtmd.cpp).
struct ImagePromptFormat {
  std::string begin;  // text before the image's embeddings ("<start_of_image>" for gemma3)
  std::string end;    // text after them ("<end_of_image>")
  // What a client writes between begin and end in place of the image (qwen2.5vl_merger,
  // qwen3vl_merger: "<|image_pad|>", repeated or not, as SGLang's qwen2-vl chat template's
  // image_token "<|vision_start|><|image_pad|><|vision_end|>"); empty: nothing.
  std::string pad = {};
  // The language model attends bidirectionally within the image's span (llama.cpp's
  // mtmd_decode_use_non_causal: true for gemma3), causally elsewhere.
  bool non_causal_span = false;
};

// One piece of an image's place in the prompt, between ImagePromptFormat's begin and end, as
// llama.cpp's mtmd_tokenize lays out an image of the projector's type: text, or rows of
// Encode's output.
struct ImagePromptPiece {
  enum class Kind {
    kText,   // `text`, tokenized on its own with special tokens parsed
    kToken,  // the vocabulary token whose text is `text` (mtmd's lookup_token: one token)
    kRows,   // rows [first_row, first_row + n_rows) of Encode's output
  };
  Kind kind = Kind::kRows;
  std::string text = {};
  int64_t first_row = 0;
  int64_t n_rows = 0;
};

class Projector {
 public:
  struct Options {
    int n_threads = 0;  // <= 0: one per hardware thread
  };

  // Opens the GGUF at `path` and builds the projector its clip.projector_type names.
  // InvalidArgument for a file that is not a vision projector or is malformed (naming the key
  // or tensor), Unimplemented for a projector type or feature not built.
  static StatusOr<std::unique_ptr<Projector>> Load(const std::string& path, const Options& options);
  static StatusOr<std::unique_ptr<Projector>> FromGguf(std::unique_ptr<gguf::GgufFile> file,
                                                       const Options& options);
  // The projector types Load() builds.
  static std::vector<std::string_view> SupportedTypes();

  virtual ~Projector() = default;

  virtual std::string_view type() const = 0;  // clip.projector_type, e.g. "gemma3"
  // Width of each output row: the language model's hidden size (clip.vision.projection_dim),
  // times 1 + n_deepstack() (llama.cpp's clip_n_mmproj_embd).
  virtual int64_t n_embd() const = 0;
  // qwen3vl_merger: the deepstack slices after the main one in each row (each of the language
  // model's width; its layer k adds slice k + 1 to its hidden state). 0 elsewhere.
  virtual int64_t n_deepstack() const { return 0; }
  // Rows Encode() produces for this image (gemma3: (image_size / patch / scale)^2, any image;
  // qwen2.5vl_merger: (h / 2p) * (w / 2p) of the size the image is resized to; gemma4v:
  // (h / kp) * (w / kp) of that size, k the pooling factor; idefics3:
  // (tiles + 1) * (image_size / patch / scale)^2).
  virtual int64_t TokensFor(const Image& image) const = 0;
  // How those rows lie on the image (rows * cols == TokensFor(image) when not {0, 0}).
  virtual TokenGrid GridFor(const Image&) const { return {}; }
  virtual ImagePromptFormat prompt_format() const = 0;
  // The pieces this image's place in the prompt is made of, in order; every row of Encode's
  // output lies in one kRows piece, in order. Default: one span of all TokensFor(image) rows.
  virtual std::vector<ImagePromptPiece> PromptPieces(const Image& image) const;
  // The texts of the kToken pieces PromptPieces can give (to check the language model's
  // vocabulary has each, once): none by default.
  virtual std::vector<std::string> PromptTokens() const { return {}; }
  // Bytes of weights resident for the forward pass.
  virtual int64_t weights_bytes() const = 0;

  // out becomes [TokensFor(image), n_embd()] row-major. InvalidArgument for an image with no
  // pixels or whose rgb size is not width * height * 3.
  virtual Status Encode(const Image& image, std::vector<float>* out) = 0;
};

}  // namespace radixlm::vision
