#include "kernels/layer_norm.h"

#include <cmath>

namespace radixlm::kernels {

void LayerNorm(const float* x, const float* weight, const float* bias, int64_t n_rows, int64_t dim,
               float eps, float* out) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = out + r * dim;
    double sum = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum += xr[i];
    const float mean = static_cast<float>(sum / static_cast<double>(dim));
    double sum2 = 0.0;
    for (int64_t i = 0; i < dim; ++i) {
      yr[i] = xr[i] - mean;
      sum2 += static_cast<double>(yr[i]) * yr[i];
    }
    const float variance = static_cast<float>(sum2 / static_cast<double>(dim));
    const float scale = 1.0f / std::sqrt(variance + eps);
    for (int64_t i = 0; i < dim; ++i) {
      float v = yr[i] * scale;
      if (weight != nullptr) v *= weight[i];
      if (bias != nullptr) v += bias[i];
      yr[i] = v;
    }
  }
}

}  // namespace radixlm::kernels
