// Row-wise LayerNorm with weight and bias, as ggml_norm followed by ggml_mul and ggml_add (the
// encoders' norm: BERT-style text encoders, the vision transformers of src/vision).
#pragma once

#include <cstdint>

namespace radixlm::kernels {

// out[r, i] = (x[r, i] - mean) * scale * weight[i] + bias[i], scale = 1 / sqrtf(var + eps),
// the row's mean and variance summed in double. x, out: [n_rows, dim] (out may alias x
// exactly); weight, bias: [dim] or nullptr (none). Single-threaded, allocation-free.
void LayerNorm(const float* x, const float* weight, const float* bias, int64_t n_rows, int64_t dim,
               float eps, float* out);

}  // namespace radixlm::kernels
