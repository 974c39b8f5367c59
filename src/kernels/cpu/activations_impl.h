// Per-ISA activation kernels (internal; dispatched by kernels/activations.cc).
// All compute out[i] = f(x[i]) (or act(gate[i]) * up[i]); out may alias the inputs exactly.
#pragma once

#include <cstdint>

namespace radixlm::kernels::cpu {

// GELU as ggml's CPU backend computes it (GGML_GELU_FP16): x is rounded to F16 and looked up in
// a table of F16-rounded tanh-GELU values; x <= -10 gives 0 and x >= 10 gives x. This table:
// [65536] floats, entry h = F16(gelu(F16ToF32(h))) with gelu evaluated in float as ggml does.
// Built once on first use (thread-safe).
const float* GeluF16Table();
inline constexpr float kGeluTableLow = -10.0f;   // x <= this: gelu(x) = 0
inline constexpr float kGeluTableHigh = 10.0f;   // x >= this: gelu(x) = x

namespace scalar {
void GeluTanh(const float* x, float* out, int64_t n);
void Silu(const float* x, float* out, int64_t n);
void GeGlu(const float* gate, const float* up, float* out, int64_t n);
void SwiGlu(const float* gate, const float* up, float* out, int64_t n);
}  // namespace scalar

// Vectorized: SiLU with a polynomial exp (max relative error ~2e-7 vs std::exp), GELU with
// a gather from GeluF16Table (bit-identical to scalar).
namespace avx2 {
void GeluTanh(const float* x, float* out, int64_t n);
void Silu(const float* x, float* out, int64_t n);
void GeGlu(const float* gate, const float* up, float* out, int64_t n);
void SwiGlu(const float* gate, const float* up, float* out, int64_t n);
}  // namespace avx2

}  // namespace radixlm::kernels::cpu
