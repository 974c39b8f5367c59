// AVX2 int8 GEMM over PackedWeights (vpmaddubsw; gemm_avx2_impl.h) and the activation
// quantizer that feeds it, bit for bit the scalar QuantizeActivationRowScalar.
#include <immintrin.h>

#include "kernels/cpu/gemm_avx2_impl.h"
#include "kernels/cpu/gemm_packed.h"
#include "kernels/fp16.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

inline float HmaxF32(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline int32_t HsumI32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

}  // namespace

void PackedGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                int64_t g1, float* y, int64_t y_stride) {
  PackedGemm256<false>(w, a, n_tokens, g0, g1, y, y_stride);
}

void QuantizeActivationRow(const float* x, int64_t n, int act_block, int8_t* qs, float* dx,
                           int32_t* sum16, float* dxs) {
  const __m256 sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t a = 0; a < n / act_block; ++a) {
    const float* xa = x + act_block * a;
    __m256 amax_v = _mm256_setzero_ps();
    for (int k = 0; k < act_block; k += 8) {
      amax_v = _mm256_max_ps(amax_v, _mm256_and_ps(_mm256_loadu_ps(xa + k), sign_mask));
    }
    const float amax = HmaxF32(amax_v);
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    const float d =
        act_block == 32 ? F16ToF32(F32ToF16(amax / 127.0f)) : (amax != 0.0f ? 1.0f / id : 0.0f);
    const __m256 idv = _mm256_set1_ps(id);
    for (int64_t b = act_block / 32 * a; b < act_block / 32 * (a + 1); ++b) {
      __m256i q[4];
      for (int i = 0; i < 4; ++i) {
        q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 32 * b + 8 * i), idv));
      }
      const int32_t s0 = HsumI32(_mm256_add_epi32(q[0], q[1]));
      const int32_t s1 = HsumI32(_mm256_add_epi32(q[2], q[3]));
      // int32 -> int8 (|q| <= 127: no saturation), then undo the packs' lane interleave.
      const __m256i p16a = _mm256_packs_epi32(q[0], q[1]);
      const __m256i p16b = _mm256_packs_epi32(q[2], q[3]);
      const __m256i p8 = _mm256_packs_epi16(p16a, p16b);
      const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs + 32 * b),
                          _mm256_permutevar8x32_epi32(p8, order));
      dx[b] = d;
      sum16[2 * b] = s0;
      sum16[2 * b + 1] = s1;
      dxs[b] = d * static_cast<float>(s0 + s1);
    }
  }
}

}  // namespace radixlm::kernels::cpu::avx2
