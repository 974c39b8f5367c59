// AVX2 GELU(tanh) / SiLU via one vectorized exp:
//   gelu_tanh(x) = 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
//   silu(x)      = x / (1 + exp(-x))
#include <immintrin.h>

#include <cmath>

#include "kernels/cpu/activations_impl.h"
#include "kernels/cpu/avx2_math.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

inline __m256 Gelu8(__m256 x) {
  const __m256 x2 = _mm256_mul_ps(x, x);
  const __m256 inner = _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), x2, _mm256_set1_ps(1.0f));
  const __m256 u = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.7978845608028654f), x), inner);
  const __m256 e = Exp(_mm256_mul_ps(_mm256_set1_ps(-2.0f), u));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

inline __m256 Silu8(__m256 x) {
  const __m256 e = Exp(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

inline float GeluScalar(float x) {
  const float u = 0.7978845608028654f * x * (1.0f + 0.044715f * x * x);
  return x / (1.0f + std::exp(std::min(88.7f, -2.0f * u)));
}
inline float SiluScalar(float x) { return x / (1.0f + std::exp(std::min(88.7f, -x))); }

}  // namespace

void GeluTanh(const float* x, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, Gelu8(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) out[i] = GeluScalar(x[i]);
}

void Silu(const float* x, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, Silu8(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) out[i] = SiluScalar(x[i]);
}

void GeGlu(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = Gelu8(_mm256_loadu_ps(gate + i));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(g, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = GeluScalar(gate[i]) * up[i];
}

void SwiGlu(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 s = Silu8(_mm256_loadu_ps(gate + i));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = SiluScalar(gate[i]) * up[i];
}

}  // namespace radixlm::kernels::cpu::avx2
