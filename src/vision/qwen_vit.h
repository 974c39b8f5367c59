// QwenVisionTransformer: the ViT of Qwen2.5-VL's and Qwen3-VL's projector GGUFs as llama.cpp's
// clip_graph_qwen2vl builds it for PROJECTOR_TYPE_QWEN25VL (tools/mtmd/models/qwen2vl.cpp) and
// clip_graph_qwen3vl for PROJECTOR_TYPE_QWEN3VL (models/qwen3vl.cpp), with the inputs clip.cpp
// sets for them, on an image of any size that is a multiple of 2 * patch:
//
//   x = conv_patch_0(pixels) + conv_patch_1(pixels)     the temporal pair of a still image
//       (+ v.patch_embd.bias, + v.position_embd interpolated to the patch grid: Qwen3-VL)
//   rows ordered by 2x2 merge group (groups row-major, each group's 4 patches row-major), and
//   the groups permuted so that each attention window's groups are contiguous
//   (x = Norm(x) with v.pre_ln when the file has it)
//   per layer:  x = x + O(Attention(RoPE2D(Q), RoPE2D(K), V))(Norm_1(x))
//               x = x + down(act(gate(h)) * up(h)),  h = Norm_2(x)   (down(act(up(h))) without
//               a gate: Qwen3-VL)
//   x = Norm(x) with v.post_ln when the file has it
//   the groups put back in row-major order
//
// Norm is RMSNorm (Qwen2.5-VL) or LayerNorm (Options::qwen3: Qwen3-VL), each with its
// bias where the file has one. Q, K and V come from attn_q / attn_k / attn_v, or from one fused
// attn_qkv (Qwen3-VL: its rows are Q's, then K's, then V's). The learned position embeddings
// ([n_embd, side * side]) are resized to the patch grid as ggml_interpolate does with
// GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ALIGN_CORNERS (as is when the grid is side x side).
//
// RoPE2D is ggml's vision rope (GGML_ROPE_TYPE_VISION, base 10000) over head_dim / 2 pairs
// (x[j], x[j + head_dim / 2]): pair j < head_dim / 4 turns by row * 10000^(-4j / head_dim),
// pair j >= head_dim / 4 by column * 10000^(-4(j - head_dim / 4) / head_dim). Attention is
// bidirectional; in window layers each query sees its window's patches only (windows of
// window_size pixels, window_size / patch / 2 groups a side, cut from the top left), in the
// full layers ((layer + 1) % n_wa_pattern == 0, or every layer when n_wa_pattern is 0) every
// patch. K and V are rounded to F16 (llama.cpp's flash attention, its CPU default).
//
// Thread-safety: Forward() uses this object's scratch; one caller at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/matmul.h"
#include "util/status.h"
#include "util/thread_pool.h"
#include "vision/clip_config.h"
#include "vision/clip_weights.h"

namespace radixlm::vision {

class QwenVisionTransformer {
 public:
  struct Options {
    int64_t n_wa_pattern = 0;   // clip.vision.n_wa_pattern; 0: every layer attends fully
    int64_t window_size = 112;  // pixels a side
    // Qwen3-VL's tower: LayerNorm (NORM_TYPE_NORMAL) instead of RMSNorm, and v.patch_embd.bias
    // and v.position_embd.weight required (Qwen2.5-VL's refuses the bias, as llama.cpp asserts,
    // and ignores position embeddings, as its graph does).
    bool qwen3 = false;
  };
  // Reads the v.* tensors for `config` into `weights`.
  static StatusOr<std::unique_ptr<QwenVisionTransformer>> Load(const ClipConfig& config,
                                                               const Options& options,
                                                               ClipWeights* weights);
  ~QwenVisionTransformer();

  // pixels: [3, height, width] planar, normalised; width and height multiples of 2 * patch.
  // out: [n_patches, n_embd], the rows of each 2x2 group contiguous, groups row-major.
  // capture_layers (ascending, each < n_layers): the hidden state after each of these layers
  // (before the post-norm) is appended to *captured ([capture_layers.size(), n_patches,
  // n_embd], ordered as out; Qwen3-VL's deepstack mergers read them).
  void Forward(const float* pixels, int64_t width, int64_t height, std::vector<float>* out,
               ThreadPool* pool, std::span<const int64_t> capture_layers = {},
               std::vector<float>* captured = nullptr);

 private:
  struct Layer;
  QwenVisionTransformer() = default;
  // Fills order_ (group at each position), windows_ and the rope tables for a grid.
  void Plan(int64_t groups_x, int64_t groups_y);
  void RunLayer(const Layer& layer, bool full_attention, ThreadPool* pool);
  void Rope2d(float* rows) const;
  void Norm(const float* x, const float* w, const float* b, int64_t n, float* out) const;
  // Adds the position embeddings resized to the patch grid, in the planned row order.
  void AddPositionEmbeddings(int64_t patches_x, int64_t patches_y);
  // Appends x_ (planned order) to *out in row-major group order.
  void AppendInImageOrder(std::vector<float>* out) const;

  ClipConfig config_;
  Options options_;
  int64_t patch_cols_ = 0;  // 3 * p * p, padded to the GEMM's 32 columns
  int64_t n_ff_ = 0;        // the FFN width as the matrices hold it (padded to 32)
  kernels::WeightMatrix patch_w0_, patch_w1_;
  const float* pre_ln_w_ = nullptr;
  const float* pre_ln_b_ = nullptr;
  const float* post_ln_w_ = nullptr;
  const float* post_ln_b_ = nullptr;
  const float* patch_b_ = nullptr;  // v.patch_embd.bias or null
  std::vector<float> position_;     // [pos_side * pos_side, n_embd], or empty (none)
  int64_t pos_side_ = 0;
  std::vector<Layer> layers_;

  // Per image: the group at each position, window bounds (in patches), rope tables.
  std::vector<int64_t> order_;
  std::vector<int64_t> window_starts_;  // ascending, ends with n_patches
  std::vector<float> cos_, sin_;        // [n_patches, head_dim / 2]
  // Scratch, sized for one image.
  std::vector<float> x_, cur_, q_, k_, v_, qkv_, attn_, proj_, up_, gate_;
  std::vector<uint16_t> k_cache_, v_cache_;
  std::vector<int64_t> q_pos_;
  std::vector<int32_t> slots_;
};

}  // namespace radixlm::vision
