// VisionTransformer: the SigLIP / CLIP-style ViT of a projector GGUF, as llama.cpp's
// clip_graph::build_inp and build_vit build it (tools/mtmd/clip.cpp) with LayerNorm, learned
// position embeddings and no class token:
//
//   x = conv_patch(pixels) (+ patch_bias) + position_embd    one row per patch, row-major
//   (x = LayerNorm(x) with v.pre_ln when the file has it)
//   per layer:  x = x + O(Attention(LayerNorm_1(x)))          Q, K, V, O with their biases
//               x = x + down(act(up(LayerNorm_2(x))))         act: clip.use_gelu / use_silu
//   x = LayerNorm(x) with v.post_ln when the file has it
//
// The patch convolution is a matmul over each patch's 3 * p * p values, ordered channel, then
// row, then column (ggml's im2col). Float matrices whose width is not a multiple of 32 (the
// patch kernel's 588 columns, SigLIP's FFN of 4304) are held with zero columns (and the FFN's
// up matrix with zero rows) to the next multiple, so that they run on the packed GEMM: the
// zeros change no sum. Attention is bidirectional over the image's patches, with
// K and V rounded to F16 (llama.cpp's flash attention, which its CPU build uses by default).
// Files whose ffn_down reads n_embd values (the legacy converters' swapped names) have up and
// down swapped, as llama.cpp does for these projector types.
//
// The patches of one image run as one batch; nothing of another image enters, so an image's
// output never depends on what else the engine runs (and the matmuls are batch-invariant).
// Thread-safety: Forward() uses this object's scratch; one caller at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "util/status.h"
#include "util/thread_pool.h"
#include "vision/clip_config.h"
#include "vision/clip_weights.h"

namespace radixlm::vision {

class VisionTransformer {
 public:
  // Reads the v.* tensors for `config` (image_size x image_size input) into `weights`.
  static StatusOr<std::unique_ptr<VisionTransformer>> Load(const ClipConfig& config,
                                                           ClipWeights* weights);
  ~VisionTransformer();

  int64_t patches_per_side() const { return side_; }
  int64_t n_patches() const { return side_ * side_; }

  // pixels: [3, image_size, image_size] planar, normalised. out: [n_patches, n_embd].
  void Forward(const float* pixels, std::vector<float>* out, ThreadPool* pool);

 private:
  struct Layer;
  VisionTransformer() = default;
  void RunLayer(const Layer& layer, ThreadPool* pool);

  ClipConfig config_;
  int64_t side_ = 0;
  int64_t patch_cols_ = 0;  // 3 * p * p, padded to the GEMM's 32 columns
  kernels::WeightMatrix patch_w_, position_;
  const float* patch_b_ = nullptr;
  const float* pre_ln_w_ = nullptr;
  const float* pre_ln_b_ = nullptr;
  const float* post_ln_w_ = nullptr;
  const float* post_ln_b_ = nullptr;
  std::vector<Layer> layers_;

  // Scratch, sized for one image.
  std::vector<float> x_, cur_, q_, k_, v_, attn_, proj_, up_;
  std::vector<uint16_t> k_cache_, v_cache_;
  std::vector<int64_t> q_pos_;
  std::vector<int32_t> slots_;
};

}  // namespace radixlm::vision
