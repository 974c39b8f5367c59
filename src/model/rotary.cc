#include "model/rotary.h"

#include <cmath>

namespace radixlm::model {

RotaryEmbedding::RotaryEmbedding(int64_t head_dim, RopeLayout layout, float base, float freq_scale,
                                 const float* freq_factors)
    : head_dim_(head_dim),
      layout_(layout),
      theta_scale_(std::pow(base, -2.0f / static_cast<float>(head_dim))),
      freq_scale_(freq_scale) {
  if (freq_factors != nullptr) freq_factors_.assign(freq_factors, freq_factors + half());
}

void RotaryEmbedding::ComputeTables(const int64_t* positions, int64_t n, float* cos,
                                    float* sin) const {
  const int64_t h = half();
  const bool factors = !freq_factors_.empty();
  for (int64_t t = 0; t < n; ++t) {
    float theta = static_cast<float>(positions[t]);
    for (int64_t k = 0; k < h; ++k) {
      const float extrap = factors ? theta / freq_factors_[k] : theta;
      const float angle = freq_scale_ * extrap;
      cos[t * h + k] = std::cos(angle);
      sin[t * h + k] = std::sin(angle);
      theta *= theta_scale_;
    }
  }
}

void RotaryEmbedding::Apply(float* x, int64_t row_begin, int64_t row_end, int64_t n_heads,
                            const float* cos, const float* sin) const {
  const int64_t h = half();
  // Pair k's two elements are `stride` apart, and pair k starts at offset first(k).
  const bool neox = layout_ == RopeLayout::kNeox;
  const int64_t stride = neox ? h : 1;
  for (int64_t t = row_begin; t < row_end; ++t) {
    const float* c = cos + t * h;
    const float* s = sin + t * h;
    float* row = x + t * n_heads * head_dim_;
    for (int64_t head = 0; head < n_heads; ++head) {
      float* v = row + head * head_dim_;
      for (int64_t k = 0; k < h; ++k) {
        float* a = v + (neox ? k : 2 * k);
        float* b = a + stride;
        const float x0 = *a;
        const float x1 = *b;
        // As ggml's rotate_pairs compiles (GCC contracts x0 * c - x1 * s into one FMA): this
        // makes the rotated Q/K bit-identical to llama.cpp's.
        *a = std::fma(x0, c[k], -(x1 * s[k]));
        *b = std::fma(x0, s[k], x1 * c[k]);
      }
    }
  }
}

}  // namespace radixlm::model
