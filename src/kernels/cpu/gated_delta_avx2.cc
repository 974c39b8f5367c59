// GatedDeltaStep with the value index in AVX2 lanes (gated_delta.h): blocks of up to 32
// value indices, their sums in registers. Separate multiplies and adds, compiled with
// -ffp-contract=off: the floats of the scalar reference.
#include <immintrin.h>

#include <cmath>

#include "kernels/gated_delta.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

template <int NV>
void Block(float* m, const float* q, const float* k, const float* v, float decay, float beta,
           int64_t s, float scale, float* out) {
  __m256 acc[NV];
  for (int u = 0; u < NV; ++u) acc[u] = _mm256_setzero_ps();
  const __m256 d = _mm256_set1_ps(decay);
  for (int64_t i = 0; i < s; ++i) {
    float* row = m + i * s;
    const __m256 ki = _mm256_set1_ps(k[i]);
    for (int u = 0; u < NV; ++u) {
      const __m256 x = _mm256_mul_ps(_mm256_loadu_ps(row + 8 * u), d);
      _mm256_storeu_ps(row + 8 * u, x);
      acc[u] = _mm256_add_ps(acc[u], _mm256_mul_ps(x, ki));
    }
  }
  __m256 delta[NV];
  const __m256 b = _mm256_set1_ps(beta);
  for (int u = 0; u < NV; ++u) {
    delta[u] = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(v + 8 * u), acc[u]), b);
    acc[u] = _mm256_setzero_ps();
  }
  for (int64_t i = 0; i < s; ++i) {
    float* row = m + i * s;
    const __m256 ki = _mm256_set1_ps(k[i]);
    const __m256 qi = _mm256_set1_ps(q[i]);
    for (int u = 0; u < NV; ++u) {
      const __m256 x = _mm256_add_ps(_mm256_loadu_ps(row + 8 * u), _mm256_mul_ps(delta[u], ki));
      _mm256_storeu_ps(row + 8 * u, x);
      acc[u] = _mm256_add_ps(acc[u], _mm256_mul_ps(x, qi));
    }
  }
  const __m256 sc = _mm256_set1_ps(scale);
  for (int u = 0; u < NV; ++u) _mm256_storeu_ps(out + 8 * u, _mm256_mul_ps(acc[u], sc));
}

}  // namespace

void GatedDeltaStep(float* m, const float* q, const float* k, const float* v, float decay,
                    float beta, int64_t s, float* out) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(s));
  for (int64_t jb = 0; jb < s; jb += 32) {
    float* mb = m + jb;
    const float* vb = v + jb;
    float* ob = out + jb;
    switch ((s - jb >= 32 ? 32 : s - jb) / 8) {
      case 4:
        Block<4>(mb, q, k, vb, decay, beta, s, scale, ob);
        break;
      case 3:
        Block<3>(mb, q, k, vb, decay, beta, s, scale, ob);
        break;
      case 2:
        Block<2>(mb, q, k, vb, decay, beta, s, scale, ob);
        break;
      default:
        Block<1>(mb, q, k, vb, decay, beta, s, scale, ob);
        break;
    }
  }
}

}  // namespace radixlm::kernels::cpu::avx2
