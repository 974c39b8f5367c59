// The delta-rule step of a gated DeltaNet head (hybrid models' linear layers), one token:
//
//   M = decay M;  M += (beta (v - M k)) kᵀ;  out = M q / sqrt(S)
//
// M is stored key-major, m[i * S + j] = M[j][i] (row i: key index i over every value index j),
// so each step streams M twice with the value index in SIMD lanes and no horizontal sums. Every
// ISA level computes the same floats: each value index j sums over the keys i in ascending order
// with separately rounded products and sums (no fused multiply-add; the files are compiled with
// -ffp-contract=off), which is also the order of the plain per-row loop
//   for j: row = M[j]; row *= decay; d = (v[j] - Σ_i row[i] k[i]) beta; row += d k;
//          out[j] = (Σ_i row[i] q[i]) / sqrt(S).
#pragma once

#include <cstdint>

namespace radixlm::kernels {

// m: [S, S] key-major, updated in place; q, k: [S] (L2-normed); v, out: [S]. S >= 1.
// Dispatched on the active ISA; single-threaded.
void GatedDeltaStep(float* m, const float* q, const float* k, const float* v, float decay,
                    float beta, int64_t s, float* out);

namespace cpu {
namespace scalar {
void GatedDeltaStep(float* m, const float* q, const float* k, const float* v, float decay,
                    float beta, int64_t s, float* out);
}  // namespace scalar
namespace avx2 {  // s % 8 == 0
void GatedDeltaStep(float* m, const float* q, const float* k, const float* v, float decay,
                    float beta, int64_t s, float* out);
}  // namespace avx2
namespace avx512 {  // s % 16 == 0
void GatedDeltaStep(float* m, const float* q, const float* k, const float* v, float decay,
                    float beta, int64_t s, float* out);
}  // namespace avx512
}  // namespace cpu

}  // namespace radixlm::kernels
