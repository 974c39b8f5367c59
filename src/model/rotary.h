// Rotary position embedding as the model applies it: one cos/sin table per forward pass and
// RoPE variant (gemma3 has two: local and global layers), shared by all heads and layers that
// use that variant.
//
// theta(pos, k) = pos * freq_scale * base^(-2k / rope_dims) / freq_factor[k]
// for pair k in [0, rope_dims/2), and cos 1, sin 0 (the values pass through) for the pairs after
// (partial rotary: rope_dims < head_dim, with the kNormal layout only); pairs are (x[2k], x[2k+1])
// for RopeLayout::kNormal and (x[k], x[k + head_dim/2]) for kNeox. freq_factor is llama-3's
// rope_freqs tensor or LongRoPE's factors (or 1). The tables hold cos(theta) * attn_factor and
// sin(theta) * attn_factor (LongRoPE's magnitude scaling; 1 elsewhere), as ggml's rope multiplies
// them by its mscale. theta is evaluated as ggml's CPU RoPE does, so greedy tokens match
// llama.cpp's: in float, with base^(-2k / rope_dims) as repeated products of powf(base, -2 /
// rope_dims), i.e. theta_k = freq_scale * ((float(pos) * s^k) / freq_factor[k]), then cosf / sinf.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model_config.h"

namespace radixlm::model {

class RotaryEmbedding {
 public:
  // freq_factors: [rope_dims/2] or null; copied. rope_dims <= 0: head_dim.
  RotaryEmbedding(int64_t head_dim, RopeLayout layout, float base, float freq_scale,
                  const float* freq_factors, float attn_factor = 1.0f, int64_t rope_dims = 0);

  int64_t head_dim() const { return head_dim_; }
  int64_t half() const { return head_dim_ / 2; }

  // cos, sin: [n, head_dim/2] for the given positions (theta as described above).
  void ComputeTables(const int64_t* positions, int64_t n, float* cos, float* sin) const;

  // The tables are applied by the kernel backend's rope (kernels::ApplyRopeTables), with
  // neox() telling the pair layout.
  bool neox() const { return layout_ == RopeLayout::kNeox; }

 private:
  int64_t head_dim_;
  int64_t rope_dims_;
  RopeLayout layout_;
  float theta_scale_;  // powf(base, -2 / rope_dims)
  float freq_scale_;
  float attn_factor_;
  std::vector<float> freq_factors_;  // [head_dim/2], or empty (all 1)
};

}  // namespace radixlm::model
