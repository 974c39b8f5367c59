#include "model/rotary.h"

#include <cmath>

namespace radixlm::model {

RotaryEmbedding::RotaryEmbedding(int64_t head_dim, RopeLayout layout, float base, float freq_scale,
                                 const float* freq_factors, float attn_factor, int64_t rope_dims)
    : head_dim_(head_dim),
      rope_dims_(rope_dims > 0 ? rope_dims : head_dim),
      layout_(layout),
      theta_scale_(std::pow(base, -2.0f / static_cast<float>(rope_dims_))),
      freq_scale_(freq_scale),
      attn_factor_(attn_factor) {
  if (freq_factors != nullptr) freq_factors_.assign(freq_factors, freq_factors + rope_dims_ / 2);
}

void RotaryEmbedding::ComputeTables(const int64_t* positions, int64_t n, float* cos,
                                    float* sin) const {
  const int64_t h = half();
  const int64_t rotated = rope_dims_ / 2;
  const bool factors = !freq_factors_.empty();
  for (int64_t t = 0; t < n; ++t) {
    float theta = static_cast<float>(positions[t]);
    for (int64_t k = rotated; k < h; ++k) {  // partial rotary: the rest pass through
      cos[t * h + k] = 1.0f;
      sin[t * h + k] = 0.0f;
    }
    for (int64_t k = 0; k < rotated; ++k) {
      const float extrap = factors ? theta / freq_factors_[k] : theta;
      const float angle = freq_scale_ * extrap;
      cos[t * h + k] = std::cos(angle);
      sin[t * h + k] = std::sin(angle);
      theta *= theta_scale_;
    }
    if (attn_factor_ != 1.0f) {
      for (int64_t k = 0; k < rotated; ++k) {
        cos[t * h + k] *= attn_factor_;
        sin[t * h + k] *= attn_factor_;
      }
    }
  }
}

}  // namespace radixlm::model
