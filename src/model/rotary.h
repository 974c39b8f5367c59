// Rotary position embedding as the model applies it: one cos/sin table per forward pass and
// RoPE variant (gemma3 has two: local and global layers), shared by all heads and layers that
// use that variant.
//
// For pair k in [0, rope_dims/2):
//   theta_extrap = pos * base^(-2k / rope_dims) / freq_factor[k]
//   theta        = freq_scale * theta_extrap, or with YaRN (ext_factor > 0)
//                  theta * (1 - mix_k) + theta_extrap * mix_k, mix_k = ramp_k * ext_factor,
//                  ramp_k = 1 - clamp((k - corr_dims[0]) / max(0.001, corr_dims[1] -
//                  corr_dims[0]), 0, 1)
//   cos, sin     = cos(theta) * mscale, sin(theta) * mscale, mscale = attn_factor, times
//                  1 + 0.1 ln(1 / freq_scale) with YaRN
// and cos 1, sin 0 (the values pass through) for the pairs after (partial rotary: rope_dims <
// head_dim, with the kNormal layout only). Pairs are (x[2k], x[2k+1]) for RopeLayout::kNormal
// and (x[k], x[k + head_dim/2]) for kNeox. freq_factor is llama-3's rope_freqs tensor or
// LongRoPE's factors (or 1); attn_factor LongRoPE's / YaRN's magnitude scaling (1 elsewhere).
// Everything is evaluated as ggml's CPU RoPE does (rope_yarn), so greedy tokens match
// llama.cpp's: in float, with base^(-2k / rope_dims) as repeated products of
// powf(base, -2 / rope_dims), then cosf / sinf.
//
// M-RoPE (Qwen2-VL's multimodal RoPE, ggml_rope_multi in GGML_ROPE_TYPE_MROPE mode, NeoX pairs):
// each token has three positions (t, h, w), and pair k takes the one of its section: with
// s = mrope_sections and sector = k % (s[0] + s[1] + s[2]), t for sector < s[0], h for
// sector < s[0] + s[1], else w (llama.cpp's fourth section, which text drives with position 0,
// is not supported). theta is pos_section * base^(-2k / rope_dims), the repeated products as
// above. A text token's three positions are equal, so its table is the 1-D one of that position.
//
// Interleaved M-RoPE (qwen3vl, GGML_ROPE_TYPE_IMROPE): with sector = k % (s[0] + s[1] + s[2] +
// s[3]), pair k takes h where sector % 3 == 1 and sector < 3 s[1], w where sector % 3 == 2 and
// sector < 3 s[2], t where sector % 3 == 0 and sector < 3 s[0], else the fourth position, which
// is 0 (llama.cpp's, for text and images): such pairs are not rotated, text included.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "model/model_config.h"

namespace radixlm::model {

struct RopeParams {
  RopeLayout layout = RopeLayout::kNormal;
  int64_t head_dim = 0;
  int64_t rope_dims = 0;  // <= 0: head_dim
  float base = 10000.0f;
  float freq_scale = 1.0f;
  const float* freq_factors = nullptr;  // [rope_dims/2] or null; copied
  float attn_factor = 1.0f;
  float ext_factor = 0.0f;  // YaRN: 1 (0: none)
  float corr_dims[2] = {0.0f, 0.0f};
  std::array<int64_t, 3> mrope_sections = {0, 0, 0};  // all 0: one position per token
  bool mrope_interleaved = false;                     // IMROPE (see below)
  int64_t mrope_section_e = 0;  // the fourth section (position 0); IMROPE only
};

// YaRN's correction range (ggml_rope_yarn_corr_dims): the pairs whose wavelength falls between
// original_context / beta_fast and original_context / beta_slow rotations.
void YarnCorrDims(int64_t rope_dims, int64_t original_context, float base, float beta_fast,
                  float beta_slow, float dims[2]);

class RotaryEmbedding {
 public:
  explicit RotaryEmbedding(const RopeParams& params);

  int64_t head_dim() const { return head_dim_; }
  int64_t half() const { return head_dim_ / 2; }

  // cos, sin: [n, head_dim/2] for the given positions (as described above).
  void ComputeTables(const int64_t* positions, int64_t n, float* cos, float* sin) const;
  // The same for M-RoPE: positions3 is [n, 3], each token's (t, h, w). Without sections (not
  // mrope()) the t positions drive every pair.
  void ComputeTablesMrope(const int64_t* positions3, int64_t n, float* cos, float* sin) const;

  bool mrope() const { return mrope_sections_[0] + mrope_sections_[1] + mrope_sections_[2] > 0; }

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
  float ext_factor_;
  float corr_dims_[2];
  std::vector<float> freq_factors_;  // [rope_dims/2], or empty (all 1)
  std::array<int64_t, 3> mrope_sections_;
  bool mrope_interleaved_;
  int64_t mrope_section_e_;

  // One token's row of the tables from the position driving each of the three sections.
  void ComputeRow(const int64_t pos[3], float* cos, float* sin) const;
};

}  // namespace radixlm::model
