// Element-wise and row-wise float ops used by the model forward.
//
// All functions are single-threaded, allocation-free, and vectorized where it pays. Unless a
// comment says otherwise, `out` may alias an input exactly (in-place), but not partially.
// RoPE lives in rope.h (included here for convenience).
#pragma once

#include <cstdint>

#include "kernels/rope.h"

namespace radixlm::kernels {

// Row-wise RMSNorm: out[r, i] = x[r, i] / sqrt(mean_i(x[r, :]^2) + eps) * weight[i].
// x, out: [n_rows, dim]; weight: [dim] or nullptr (no scaling). As ggml: the float squares
// are summed in double, then scale = 1 / sqrtf(float(mean) + eps) and out = (x * scale) * w.
// Note: Gemma's "1 + weight" convention is already folded into GGUF norm weights by the
// converter, so pass the GGUF tensor as is.
void RmsNorm(const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps,
             float* out);

// out[i] = a[i] + b[i]
void Add(const float* a, const float* b, float* out, int64_t n);
// out[i] = a[i] * b[i]
void Mul(const float* a, const float* b, float* out, int64_t n);
// out[i] = x[i] * s
void Scale(const float* x, float s, float* out, int64_t n);
// out[i] = a[i] + b[i] * s   (residual add with scaling)
void AddScaled(const float* a, const float* b, float s, float* out, int64_t n);

// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), evaluated the
// way ggml's CPU backend does so greedy tokens match llama.cpp's: x rounded to F16, the result
// rounded to F16 (a 64K-entry table); 0 for x <= -10 and x for x >= 10.
void GeluTanh(const float* x, float* out, int64_t n);
// out[i] = x / (1 + exp(-x))
void Silu(const float* x, float* out, int64_t n);
// Gated FFN activations: out[i] = act(gate[i]) * up[i]. out may alias gate or up.
void GeGlu(const float* gate, const float* up, float* out, int64_t n);   // act = GeluTanh
void SwiGlu(const float* gate, const float* up, float* out, int64_t n);  // act = Silu
// gpt-oss's clamped variant (ggml's swiglu_oai with alpha 1.702, limit 7), elementwise:
// g = min(gate, 7), out = g / (1 + exp(-1.702 g)) * (clamp(up, -7, 7) + 1). Scalar on every
// ISA (as ggml's CPU backend). out may alias gate or up.
void SwiGluOai(const float* gate, const float* up, float* out, int64_t n);

// In place, numerically stable (max-subtracted) softmax over x[0..n). n >= 1.
// -inf entries get probability 0; if all are -inf the result is all 0.
void Softmax(float* x, int64_t n);
// In place: x[i] = cap * tanh(x[i] / cap)  (Gemma-2 style logit soft-capping). cap > 0.
void SoftCap(float* x, float cap, int64_t n);

}  // namespace radixlm::kernels
