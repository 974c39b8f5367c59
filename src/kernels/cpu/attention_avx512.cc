// AVX-512 P·V accumulation for attention: the same per-element operations as the scalar and
// AVX2 AccumulateBlock (attention_impl.h), 16 output columns per instruction.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/attention_impl.h"

namespace radixlm::kernels::cpu::avx512 {

void AccumulateBlock(const float* p, const float* v, int n, int width, int lane0, float* acc) {
  if (width % 32 != 0) return avx2::AccumulateBlock(p, v, n, width, lane0, acc);
  // One key straight into its lane's accumulator row (the partial groups at the ends).
  auto one_key = [&](int j) {
    float* a = acc + static_cast<int64_t>((lane0 + j) % kLanes) * width;
    const float* vj = v + static_cast<int64_t>(j) * width;
    const __m512 pj = _mm512_set1_ps(p[j]);
    for (int d = 0; d < width; d += 16) {
      _mm512_storeu_ps(a + d, _mm512_fmadd_ps(_mm512_loadu_ps(vj + d), pj, _mm512_loadu_ps(a + d)));
    }
  };
  int j = 0;
  const int head = std::min(n, (kLanes - lane0 % kLanes) % kLanes);
  for (; j < head; ++j) one_key(j);
  // Whole groups: key g + l goes to lane l. 32 columns x 8 lanes in 16 registers, so every
  // line of V is read once.
  const int full_end = j + (n - j) / kLanes * kLanes;
  if (full_end > j) {
    for (int d = 0; d < width; d += 32) {
      __m512 a[kLanes][2];
      for (int l = 0; l < kLanes; ++l) {
        a[l][0] = _mm512_loadu_ps(acc + l * width + d);
        a[l][1] = _mm512_loadu_ps(acc + l * width + d + 16);
      }
      for (int g = j; g < full_end; g += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
          const float* vk = v + static_cast<int64_t>(g + l) * width + d;
          const __m512 pk = _mm512_set1_ps(p[g + l]);
          a[l][0] = _mm512_fmadd_ps(_mm512_loadu_ps(vk), pk, a[l][0]);
          a[l][1] = _mm512_fmadd_ps(_mm512_loadu_ps(vk + 16), pk, a[l][1]);
        }
      }
      for (int l = 0; l < kLanes; ++l) {
        _mm512_storeu_ps(acc + l * width + d, a[l][0]);
        _mm512_storeu_ps(acc + l * width + d + 16, a[l][1]);
      }
    }
  }
  for (j = full_end; j < n; ++j) one_key(j);
}

}  // namespace radixlm::kernels::cpu::avx512
