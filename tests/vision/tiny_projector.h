// A tiny random-weight gemma3 or idefics3 projector GGUF (llama.cpp's tensor names and keys, as
// convert_hf_to_gguf.py's Gemma3VisionModel / SmolVLMModel write them) and a plain float
// reference of its forward pass (direct loops, no kernels), for the vision tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/ggml_types.h"
#include "vision/image.h"

namespace radixlm::vision::testing {

struct TinyProjectorSpec {
  std::string projector_type = "gemma3";
  int64_t n_embd = 32;
  int64_t n_heads = 4;
  int64_t n_ff = 48;
  int64_t n_layers = 2;
  int64_t image_size = 32;
  int64_t patch_size = 4;
  int64_t scale_factor = 2;  // 0: not written (llama.cpp's default 4)
  // idefics3 only: clip.vision.preproc_image_size (the longest edge), 0: not written.
  int64_t preproc_image_size = 0;
  int64_t projection_dim = 24;
  float eps = 1e-6f;
  gguf::GgmlType matrix_type = gguf::GgmlType::kF32;  // the layers' matrices and the projection
  uint64_t seed = 1;
  std::vector<std::string> omit_tensors = {};
};

// The weights as floats (rounded through the file's type), by GGUF tensor name.
struct TinyProjector {
  TinyProjectorSpec spec;
  std::vector<uint8_t> gguf;  // the file's bytes
  std::vector<std::pair<std::string, std::vector<float>>> tensors;
  const std::vector<float>& Get(const std::string& name) const;
};

TinyProjector MakeTinyProjector(const TinyProjectorSpec& spec);

// The gemma3 forward pass in plain float / double loops on an image already image_size square
// (normalisation with mean = std = 0.5): [tokens, projection_dim].
std::vector<float> ReferenceGemma3(const TinyProjector& p, const Image& square);

// The idefics3 forward pass of one tile (an image_size square image): the same ViT, pixel
// shuffle by scale_factor, mm.model.fc.weight: [tokens, projection_dim].
std::vector<float> ReferenceIdefics3Tile(const TinyProjector& p, const Image& square);

// A deterministic test picture: smooth gradients plus a little hash noise.
Image TestPicture(int width, int height, uint32_t seed);

}  // namespace radixlm::vision::testing
