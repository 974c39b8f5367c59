// AVX2 attention inner kernels: score rows, softmax exponentials and P·V accumulation.
#include <immintrin.h>

#include <cmath>

#include "kernels/cpu/attention_impl.h"
#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/avx2_math.h"

namespace radixlm::kernels::cpu::avx2 {

void ScoreBlock(const float* q, const float* k, int n, int head_dim, float* scores) {
  if (head_dim % 16 != 0) return scalar::ScoreBlock(q, k, n, head_dim, scores);
  for (int j = 0; j < n; ++j) {
    const float* kj = k + static_cast<int64_t>(j) * head_dim;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    for (int d = 0; d < head_dim; d += 16) {
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), _mm256_loadu_ps(kj + d), a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + d + 8), _mm256_loadu_ps(kj + d + 8), a1);
    }
    scores[j] = HsumF32(_mm256_add_ps(a0, a1));
  }
}

// Like ggml's AVX2 softmax: each group of 8 is summed in float, the groups in double.
double ExpSum(float* s, int n, float max) {
  const __m256 vm = _mm256_set1_ps(max);
  double sum = 0.0;
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 e = Exp(_mm256_sub_ps(_mm256_loadu_ps(s + j), vm));
    _mm256_storeu_ps(s + j, e);
    sum += static_cast<double>(HsumF32(e));
  }
  for (; j < n; ++j) {
    s[j] = std::exp(s[j] - max);
    sum += static_cast<double>(s[j]);
  }
  return sum;
}

void AccumulateBlock(const float* p, const float* v, int n, int head_dim, float* acc) {
  if (head_dim % 16 != 0) return scalar::AccumulateBlock(p, v, n, head_dim, acc);
  for (int d = 0; d < head_dim; d += 16) {
    __m256 a0 = _mm256_loadu_ps(acc + d);
    __m256 a1 = _mm256_loadu_ps(acc + d + 8);
    for (int j = 0; j < n; ++j) {
      const float* vj = v + static_cast<int64_t>(j) * head_dim + d;
      const __m256 pj = _mm256_set1_ps(p[j]);
      a0 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj), a0);
      a1 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj + 8), a1);
    }
    _mm256_storeu_ps(acc + d, a0);
    _mm256_storeu_ps(acc + d + 8, a1);
  }
}

}  // namespace radixlm::kernels::cpu::avx2
