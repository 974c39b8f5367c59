// GatedDeltaStep with the value index in AVX-512 lanes (gated_delta.h): blocks of up to 128
// value indices, their sums in registers. Separate multiplies and adds, compiled with
// -ffp-contract=off: the floats of the scalar reference.
#include <immintrin.h>

#include <cmath>

#include "kernels/gated_delta.h"

namespace radixlm::kernels::cpu::avx512 {
namespace {

template <int NV>
void Block(float* m, const float* q, const float* k, const float* v, float decay, float beta,
           int64_t s, float scale, float* out) {
  __m512 acc[NV];
  for (int u = 0; u < NV; ++u) acc[u] = _mm512_setzero_ps();
  const __m512 d = _mm512_set1_ps(decay);
  for (int64_t i = 0; i < s; ++i) {
    float* row = m + i * s;
    const __m512 ki = _mm512_set1_ps(k[i]);
    for (int u = 0; u < NV; ++u) {
      const __m512 x = _mm512_mul_ps(_mm512_loadu_ps(row + 16 * u), d);
      _mm512_storeu_ps(row + 16 * u, x);
      acc[u] = _mm512_add_ps(acc[u], _mm512_mul_ps(x, ki));
    }
  }
  __m512 delta[NV];
  const __m512 b = _mm512_set1_ps(beta);
  for (int u = 0; u < NV; ++u) {
    delta[u] = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(v + 16 * u), acc[u]), b);
    acc[u] = _mm512_setzero_ps();
  }
  for (int64_t i = 0; i < s; ++i) {
    float* row = m + i * s;
    const __m512 ki = _mm512_set1_ps(k[i]);
    const __m512 qi = _mm512_set1_ps(q[i]);
    for (int u = 0; u < NV; ++u) {
      const __m512 x = _mm512_add_ps(_mm512_loadu_ps(row + 16 * u), _mm512_mul_ps(delta[u], ki));
      _mm512_storeu_ps(row + 16 * u, x);
      acc[u] = _mm512_add_ps(acc[u], _mm512_mul_ps(x, qi));
    }
  }
  const __m512 sc = _mm512_set1_ps(scale);
  for (int u = 0; u < NV; ++u) _mm512_storeu_ps(out + 16 * u, _mm512_mul_ps(acc[u], sc));
}

}  // namespace

void GatedDeltaStep(float* m, const float* q, const float* k, const float* v, float decay,
                    float beta, int64_t s, float* out) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(s));
  for (int64_t jb = 0; jb < s; jb += 128) {
    float* mb = m + jb;
    const float* vb = v + jb;
    float* ob = out + jb;
    switch ((s - jb >= 128 ? 128 : s - jb) / 16) {
      case 8:
        Block<8>(mb, q, k, vb, decay, beta, s, scale, ob);
        break;
      case 7:
        Block<7>(mb, q, k, vb, decay, beta, s, scale, ob);
        break;
      case 6:
        Block<6>(mb, q, k, vb, decay, beta, s, scale, ob);
        break;
      case 5:
        Block<5>(mb, q, k, vb, decay, beta, s, scale, ob);
        break;
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

}  // namespace radixlm::kernels::cpu::avx512
