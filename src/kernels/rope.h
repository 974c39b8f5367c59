// Rotary position embedding (RoPE), ggml semantics.
//
// For a head vector of head_dim floats, the first rope_dim are rotated in pairs and the rest
// pass through unchanged. Pair k (k in [0, rope_dim/2)) with frequency
//   theta_k = pos * freq_scale * freq_base^(-2k / rope_dim)      (before llama3 scaling)
// is rotated by theta_k:  (a, b) -> (a cos - b sin, a sin + b cos), where the pair is
//   normal (GPT-J / llama "NORM"):  a = x[2k],  b = x[2k + 1]
//   neox   (GPT-NeoX, Gemma, Qwen): a = x[k],   b = x[k + rope_dim / 2]
// Llama-3 frequency scaling (when llama3_factor > 0) rescales each inverse frequency as in
// Meta's reference (wavelen above original_max_position / low_freq_factor: divide by factor;
// below original_max_position / high_freq_factor: keep; smooth interpolation in between);
// freq_scale is then usually 1.
#pragma once

#include <cstdint>
#include <vector>

namespace radixlm::kernels {

struct RopeConfig {
  int rope_dim = 0;  // rotated dims per head (even, <= head_dim)
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;     // linear scaling: 1 / factor
  bool neox = false;           // pair layout, see above
  float llama3_factor = 0.0f;  // 0 = no llama3 scaling
  float llama3_low_freq_factor = 1.0f;
  float llama3_high_freq_factor = 4.0f;
  int llama3_original_max_position = 8192;

  bool operator==(const RopeConfig&) const = default;
};

// Precomputed inverse frequencies for one config. Immutable after construction; thread-safe.
class Rope {
 public:
  explicit Rope(const RopeConfig& config);
  const RopeConfig& config() const { return config_; }

  // Rotates x: [n_heads, head_dim] (contiguous) in place at position pos.
  void Apply(float* x, int n_heads, int head_dim, int64_t pos) const;
  // Rotates n_tokens rows x: [n_tokens, n_heads * head_dim], token t at positions[t].
  void ApplyRows(float* x, int64_t n_tokens, int n_heads, int head_dim,
                 const int64_t* positions) const;

  // theta multiplier per pair (inv_freq * freq_scale, llama3-adjusted): [rope_dim / 2].
  // Double, so pos * inv_freq keeps its fractional part at long contexts.
  const std::vector<double>& inv_freq() const { return inv_freq_; }

 private:
  RopeConfig config_;
  std::vector<double> inv_freq_;
};

// Same as Rope(config).Apply(...), with the inverse frequencies cached per thread (a few
// most-recently-used configs), so calling it per token does not recompute powers.
void ApplyRope(float* x, int n_heads, int head_dim, int64_t pos, const RopeConfig& config);

// Rotates rows [row_begin, row_end) of x: [n_rows, n_heads * head_dim] in place with
// precomputed tables: row t's pair k turns by the angle whose cos / sin are cos[t * half + k] /
// sin[t * half + k] (half = head_dim / 2; every dim rotates); pairs as `neox` says (above).
// Each rotation is (fma(a, c, -(b s)), fma(a, s, b c)): ggml's rotate_pairs as GCC contracts
// it, so rotated Q/K are bit-identical to llama.cpp's.
void ApplyRopeTables(float* x, int64_t row_begin, int64_t row_end, int64_t n_heads,
                     int64_t head_dim, bool neox, const float* cos, const float* sin);

}  // namespace radixlm::kernels
