// Per-ISA activation kernels (internal; dispatched by kernels/activations.cc).
// All compute out[i] = f(x[i]) (or act(gate[i]) * up[i]); out may alias the inputs exactly.
#pragma once

#include <cstdint>

namespace radixlm::kernels::cpu {

namespace scalar {
void GeluTanh(const float* x, float* out, int64_t n);
void Silu(const float* x, float* out, int64_t n);
void GeGlu(const float* gate, const float* up, float* out, int64_t n);
void SwiGlu(const float* gate, const float* up, float* out, int64_t n);
}  // namespace scalar

// Vectorized with a polynomial exp (max relative error ~2e-7 vs std::exp).
namespace avx2 {
void GeluTanh(const float* x, float* out, int64_t n);
void Silu(const float* x, float* out, int64_t n);
void GeGlu(const float* gate, const float* up, float* out, int64_t n);
void SwiGlu(const float* gate, const float* up, float* out, int64_t n);
}  // namespace avx2

}  // namespace radixlm::kernels::cpu
