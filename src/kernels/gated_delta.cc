#include "kernels/gated_delta.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/gated_delta_chunk_impl.h"
#include "kernels/dot.h"

namespace radixlm::kernels {

namespace cpu::scalar {

// Value indices in blocks of kBlock (sums on the stack), each block's two passes over the keys.
void GatedDeltaStep(float* m, const float* q, const float* k, const float* v, float decay,
                    float beta, int64_t s, float* out) {
  constexpr int64_t kBlock = 64;
  const float scale = 1.0f / std::sqrt(static_cast<float>(s));
  float acc[kBlock];
  float delta[kBlock];
  for (int64_t jb = 0; jb < s; jb += kBlock) {
    const int64_t nj = std::min(kBlock, s - jb);
    std::fill_n(acc, nj, 0.0f);
    for (int64_t i = 0; i < s; ++i) {
      float* row = m + i * s + jb;
      for (int64_t j = 0; j < nj; ++j) {
        row[j] *= decay;
        acc[j] += row[j] * k[i];
      }
    }
    for (int64_t j = 0; j < nj; ++j) {
      delta[j] = (v[jb + j] - acc[j]) * beta;
      acc[j] = 0.0f;
    }
    for (int64_t i = 0; i < s; ++i) {
      float* row = m + i * s + jb;
      for (int64_t j = 0; j < nj; ++j) {
        row[j] += delta[j] * k[i];
        acc[j] += row[j] * q[i];
      }
    }
    for (int64_t j = 0; j < nj; ++j) out[jb + j] = acc[j] * scale;
  }
}

void GatedDeltaChunk(float* m, const GatedDeltaTokens& x, int64_t n, int64_t s, float* scratch) {
  GatedDeltaChunkVec<ScalarLanes, 4, 4>(m, x, n, s, scratch);
}

}  // namespace cpu::scalar

int64_t GatedDeltaChunkScratch(int64_t s) {
  const int64_t c = kGatedDeltaChunk;
  return 6 * c * s + 3 * c * c + c + std::max(c, s);
}

void GatedDeltaStep(float* m, const float* q, const float* k, const float* v, float decay,
                    float beta, int64_t s, float* out) {
#if defined(RADIXLM_KERNELS_AVX512)
  if (ActiveIsa() >= Isa::kAvx512 && s % 16 == 0) {
    return cpu::avx512::GatedDeltaStep(m, q, k, v, decay, beta, s, out);
  }
#endif
#if defined(RADIXLM_KERNELS_X86)
  if (ActiveIsa() >= Isa::kAvx2 && s % 8 == 0) {
    return cpu::avx2::GatedDeltaStep(m, q, k, v, decay, beta, s, out);
  }
#endif
  cpu::scalar::GatedDeltaStep(m, q, k, v, decay, beta, s, out);
}

void GatedDeltaChunk(float* m, const GatedDeltaTokens& x, int64_t n, int64_t s, float* scratch) {
#if defined(RADIXLM_KERNELS_AVX512)
  if (ActiveIsa() >= Isa::kAvx512) return cpu::avx512::GatedDeltaChunk(m, x, n, s, scratch);
#endif
#if defined(RADIXLM_KERNELS_X86)
  if (ActiveIsa() >= Isa::kAvx2) return cpu::avx2::GatedDeltaChunk(m, x, n, s, scratch);
#endif
  cpu::scalar::GatedDeltaChunk(m, x, n, s, scratch);
}

}  // namespace radixlm::kernels
