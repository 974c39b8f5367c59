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

// The chunked form of the same recurrence (llama.cpp's build_delta_net_chunking, the WY form of
// the delta rule): n tokens of one head at once, n in [1, kGatedDeltaChunk], as a few small
// matrix products and a forward substitution instead of n passes over M. It gives the outputs
// and final state of n GatedDeltaStep calls up to float rounding, not the same floats (the sums
// run in another order): chunked results depend on where the chunks start. Every ISA level
// computes the same floats (the sums over each inner index in ascending order, one fused
// multiply-add per term; on x86 with subnormals flushed to zero).
inline constexpr int64_t kGatedDeltaChunk = 64;

// Token t's inputs: q + t * qkv_stride (likewise k, v; [S] each, q and k L2-normed),
// log_decay[t * gate_stride] (the step's decay is its exp), beta[t * gate_stride]; its output
// [S] at out + t * out_stride.
struct GatedDeltaTokens {
  const float* q;
  const float* k;
  const float* v;
  int64_t qkv_stride;
  const float* log_decay;
  const float* beta;
  int64_t gate_stride;
  float* out;
  int64_t out_stride;
};

// Floats of the scratch GatedDeltaChunk needs at state size s.
int64_t GatedDeltaChunkScratch(int64_t s);

// m: [S, S] key-major, updated in place (as after the n steps); scratch:
// [GatedDeltaChunkScratch(s)]. Dispatched on the active ISA; single-threaded.
void GatedDeltaChunk(float* m, const GatedDeltaTokens& x, int64_t n, int64_t s, float* scratch);

namespace cpu {
namespace scalar {
void GatedDeltaChunk(float* m, const GatedDeltaTokens& x, int64_t n, int64_t s, float* scratch);
void GatedDeltaStep(float* m, const float* q, const float* k, const float* v, float decay,
                    float beta, int64_t s, float* out);
}  // namespace scalar
namespace avx2 {  // s % 8 == 0 (GatedDeltaChunk: any s)
void GatedDeltaStep(float* m, const float* q, const float* k, const float* v, float decay,
                    float beta, int64_t s, float* out);
void GatedDeltaChunk(float* m, const GatedDeltaTokens& x, int64_t n, int64_t s, float* scratch);
}  // namespace avx2
namespace avx512 {  // s % 16 == 0 (GatedDeltaChunk: any s)
void GatedDeltaStep(float* m, const float* q, const float* k, const float* v, float decay,
                    float beta, int64_t s, float* out);
void GatedDeltaChunk(float* m, const GatedDeltaTokens& x, int64_t n, int64_t s, float* scratch);
}  // namespace avx512
}  // namespace cpu

}  // namespace radixlm::kernels
