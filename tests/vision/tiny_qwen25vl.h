// A tiny random-weight Qwen2.5-VL projector GGUF (llama.cpp's tensor names and keys, as
// convert_hf_to_gguf.py's Qwen2VLVisionModel writes them for qwen2_5_vl) and a plain float
// reference of its forward pass, written from the model's definition in patch (row-major)
// order: window attention as a mask by window, the merger over each 2x2 group.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/ggml_types.h"
#include "tiny_projector.h"
#include "vision/image.h"

namespace radixlm::vision::testing {

struct TinyQwenSpec {
  std::string projector_type = "qwen2.5vl_merger";
  int64_t n_embd = 32;
  int64_t n_heads = 4;
  int64_t n_ff = 40;  // not a multiple of 32: the padded GEMM path
  int64_t n_layers = 2;
  int64_t patch_size = 4;
  int64_t n_wa_pattern = 2;   // layer 0 windowed, layer 1 full; < 0: key not written
  int64_t window_size = 16;   // pixels (2 x 2 groups); 0: key not written (llama.cpp's 112)
  int64_t spatial_merge = 0;  // 0: key not written
  int64_t projection_dim = 24;
  float eps = 1e-6f;
  std::array<float, 3> mean = {0.48145466f, 0.4578275f, 0.40821073f};
  std::array<float, 3> std = {0.26862954f, 0.26130258f, 0.27577711f};
  gguf::GgmlType matrix_type = gguf::GgmlType::kF32;  // the layers' and the merger's matrices
  uint64_t seed = 1;
  std::vector<std::string> omit_tensors = {};
  std::vector<std::string> extra_tensors = {};  // written as F32 [n_embd] vectors of ones
};

TinyProjector MakeTinyQwen25Vl(const TinyQwenSpec& spec);

// The forward pass on an image whose sides are already multiples of 2 * patch_size (no
// resizing): [(h / 2p) * (w / 2p), projection_dim], tokens row-major.
std::vector<float> ReferenceQwen25Vl(const TinyProjector& p, const TinyQwenSpec& spec,
                                     const Image& image);

}  // namespace radixlm::vision::testing
