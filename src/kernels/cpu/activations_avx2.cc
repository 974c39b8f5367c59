// AVX2 GELU(tanh) / SiLU:
//   gelu: ggml's F16 table (activations_impl.h): F16C rounding of x, then a gather
//   silu(x) = x / (1 + exp(-x)) with one vectorized exp
#include <immintrin.h>

#include <cmath>

#include "kernels/cpu/activations_impl.h"
#include "kernels/cpu/avx2_math.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

// Table value for x; x itself where x >= kGeluTableHigh. (Lanes <= kGeluTableLow: callers.)
inline __m256 GeluLookup8(const float* table, __m256 x) {
  const __m128i h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 t = _mm256_i32gather_ps(table, _mm256_cvtepu16_epi32(h), 4);
  return _mm256_blendv_ps(t, x, _mm256_cmp_ps(x, _mm256_set1_ps(kGeluTableHigh), _CMP_GE_OQ));
}

// All-ones lanes where x > kGeluTableLow (false for NaN: the table's NaN entry is used then).
inline __m256 AboveLow8(__m256 x) {
  return _mm256_cmp_ps(x, _mm256_set1_ps(kGeluTableLow), _CMP_NLE_UQ);
}

inline __m256 Silu8(__m256 x) {
  const __m256 e = Exp(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

inline float SiluScalar(float x) { return x / (1.0f + std::exp(std::min(88.7f, -x))); }

}  // namespace

void GeluTanh(const float* x, float* out, int64_t n) {
  const float* table = GeluF16Table();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    _mm256_storeu_ps(out + i, _mm256_and_ps(AboveLow8(v), GeluLookup8(table, v)));
  }
  if (i < n) scalar::GeluTanh(x + i, out + i, n - i);
}

void Silu(const float* x, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, Silu8(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) out[i] = SiluScalar(x[i]);
}

void GeGlu(const float* gate, const float* up, float* out, int64_t n) {
  const float* table = GeluF16Table();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(gate + i);
    const __m256 g = _mm256_mul_ps(GeluLookup8(table, v), _mm256_loadu_ps(up + i));
    _mm256_storeu_ps(out + i, _mm256_and_ps(AboveLow8(v), g));
  }
  if (i < n) scalar::GeGlu(gate + i, up + i, out + i, n - i);
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
