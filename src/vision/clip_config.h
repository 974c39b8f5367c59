// The hyperparameters of a llama.cpp projector GGUF (general.architecture "clip"), read as
// tools/mtmd/clip.cpp's clip_model_loader::load_hparams reads them for the vision encoder.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "gguf/gguf_file.h"
#include "util/status.h"

namespace radixlm::vision {

enum class FfnActivation { kGelu, kGeluQuick, kSilu };

struct ClipConfig {
  std::string projector_type;  // clip.projector_type (or clip.vision.projector_type)
  int64_t n_embd = 0;          // clip.vision.embedding_length
  int64_t n_heads = 0;         // clip.vision.attention.head_count
  int64_t head_dim = 0;        // n_embd / n_heads
  int64_t n_ff = 0;            // clip.vision.feed_forward_length
  int64_t n_layers = 0;        // clip.vision.block_count
  int64_t projection_dim = 0;  // clip.vision.projection_dim: the language model's width
  float eps = 1e-6f;           // clip.vision.attention.layer_norm_epsilon
  int64_t image_size = 0;      // clip.vision.image_size
  int64_t patch_size = 0;      // clip.vision.patch_size
  std::array<float, 3> image_mean{};
  std::array<float, 3> image_std{};
  FfnActivation ffn = FfnActivation::kGeluQuick;  // clip.use_gelu / clip.use_silu
  int64_t scale_factor = 0;  // clip.vision.projector.scale_factor, 0 when absent
};

// Reads and checks the vision hyperparameters; InvalidArgument naming the key for a missing
// or malformed one, or for a file that is not a vision projector.
StatusOr<ClipConfig> ReadClipConfig(const gguf::GgufFile& file);

}  // namespace radixlm::vision
