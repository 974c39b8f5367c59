// AVX2 attention inner kernel: scores, online softmax and P·V for one (query, head) pair.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/attention_impl.h"
#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/avx2_math.h"

namespace radixlm::kernels::cpu::avx2 {

void AttendBlock(const float* q, const float* k, const float* v, int n, int lo, int hi,
                 int head_dim, float scale, float softcap, float* m, float* l, float* acc) {
  if (lo >= hi) return;
  alignas(32) float s[kAttendBlockMax + 8];
  const int cnt = hi - lo;
  float block_max = -INFINITY;
  const bool vec_dim = head_dim % 16 == 0;
  for (int j = lo; j < hi; ++j) {
    const float* kj = k + static_cast<int64_t>(j) * head_dim;
    float dot;
    if (vec_dim) {
      __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
      for (int d = 0; d < head_dim; d += 16) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), _mm256_loadu_ps(kj + d), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + d + 8), _mm256_loadu_ps(kj + d + 8), a1);
      }
      dot = HsumF32(_mm256_add_ps(a0, a1));
    } else {
      dot = 0.0f;
      for (int d = 0; d < head_dim; ++d) dot += q[d] * kj[d];
    }
    s[j - lo] = dot * scale;
  }
  for (int j = cnt; j < cnt + 8; ++j) s[j] = 0.0f;  // defined values in the vector overrun
  if (softcap > 0.0f) {
    const __m256 cap = _mm256_set1_ps(softcap), inv = _mm256_set1_ps(1.0f / softcap);
    for (int j = 0; j < cnt; j += 8) {  // s has room for the overrun lanes
      _mm256_storeu_ps(s + j, _mm256_mul_ps(cap, Tanh(_mm256_mul_ps(_mm256_loadu_ps(s + j), inv))));
    }
  }
  for (int j = 0; j < cnt; ++j) block_max = std::max(block_max, s[j]);
  const float new_m = std::max(*m, block_max);
  const float corr = std::exp(*m - new_m);  // 0 when *m == -inf
  // p_j = exp(s_j - new_m), vectorized; then the running sum.
  const __m256 vm = _mm256_set1_ps(new_m);
  for (int j = 0; j < cnt; j += 8) {
    _mm256_storeu_ps(s + j, Exp(_mm256_sub_ps(_mm256_loadu_ps(s + j), vm)));
  }
  float psum = 0.0f;
  for (int j = 0; j < cnt; ++j) psum += s[j];
  *l = *l * corr + psum;
  *m = new_m;
  if (vec_dim) {
    const __m256 vc = _mm256_set1_ps(corr);
    for (int d = 0; d < head_dim; d += 16) {
      __m256 a0 = _mm256_mul_ps(_mm256_loadu_ps(acc + d), vc);
      __m256 a1 = _mm256_mul_ps(_mm256_loadu_ps(acc + d + 8), vc);
      for (int j = 0; j < cnt; ++j) {
        const float* vj = v + static_cast<int64_t>(lo + j) * head_dim + d;
        const __m256 p = _mm256_set1_ps(s[j]);
        a0 = _mm256_fmadd_ps(p, _mm256_loadu_ps(vj), a0);
        a1 = _mm256_fmadd_ps(p, _mm256_loadu_ps(vj + 8), a1);
      }
      _mm256_storeu_ps(acc + d, a0);
      _mm256_storeu_ps(acc + d + 8, a1);
    }
  } else {
    for (int d = 0; d < head_dim; ++d) acc[d] *= corr;
    for (int j = 0; j < cnt; ++j) {
      const float* vj = v + static_cast<int64_t>(lo + j) * head_dim;
      for (int d = 0; d < head_dim; ++d) acc[d] += s[j] * vj[d];
    }
  }
}

}  // namespace radixlm::kernels::cpu::avx2
