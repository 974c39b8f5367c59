// A tiny random-weight gemma4v projector GGUF (llama.cpp's tensor names and keys, as
// convert_hf_to_gguf.py's Gemma4VisionAudioModel writes them: F32 position tables
// [n_embd, positions, 2], per-head q / k norms, post norms, the gated FFN, clamp scalars of
// Gemma4ClippableLinear, std_bias / std_scale) and a plain float reference of its forward pass,
// written from the model's definition in patch (row-major) order.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/ggml_types.h"
#include "tiny_projector.h"
#include "vision/image.h"

namespace radixlm::vision::testing {

struct TinyGemma4vSpec {
  std::string projector_type = "gemma4v";
  int64_t n_embd = 32;
  int64_t n_heads = 4;  // head size 8
  int64_t n_ff = 40;    // not a multiple of 32: the padded GEMM path
  int64_t n_layers = 2;
  int64_t patch_size = 4;
  int64_t merge = 2;       // clip.vision.projector.scale_factor; 0: not written (llama.cpp's 3)
  int64_t positions = 48;  // rows of each position table
  int64_t projection_dim = 24;
  float eps = 1e-6f;
  std::array<float, 3> mean = {0.1f, 0.2f, 0.3f};
  std::array<float, 3> std = {0.9f, 0.8f, 0.7f};
  bool use_gelu = false;    // clip.use_gelu (else llama.cpp's default gelu_quick)
  bool clamps = true;       // the clippable linears' scalars (tight enough to clip)
  bool standardize = true;  // v.std_bias / v.std_scale
  bool out_scale = true;    // v.blk.N.out_scale.weight (a scalar)
  gguf::GgmlType matrix_type = gguf::GgmlType::kF32;  // the layers' matrices and the projection
  uint64_t seed = 1;
  std::vector<std::string> omit_tensors = {};
  std::vector<std::string> extra_tensors = {};  // written as F32 [n_embd] vectors of ones
  bool audio_tower = false;  // also write clip.has_audio_encoder and an audio projector type
};

TinyProjector MakeTinyGemma4v(const TinyGemma4vSpec& spec);

// The forward pass on an image whose sides are already multiples of patch * merge (no
// resizing): [(h / kp) * (w / kp), projection_dim], tokens row-major.
std::vector<float> ReferenceGemma4v(const TinyProjector& p, const TinyGemma4vSpec& spec,
                                    const Image& image);

}  // namespace radixlm::vision::testing
