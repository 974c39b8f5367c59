// AVX-512 (F+BW+VL+DQ) dot products for the types where wider registers pay off: float rows
// and the 32-element block types (two blocks per 512-bit register). Weight unpacking reuses the
// AVX2 helpers. Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx2 -mfma -mf16c.
//
// Not exercised on the development machine (no AVX-512 there): dot.cc validates every kernel
// here against the scalar reference at startup and falls back to AVX2 on any mismatch, and the
// kernel tests compare them whenever the CPU has AVX-512.
#include <immintrin.h>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/isa.h"
#include "kernels/fp16.h"

namespace radixlm::kernels::cpu::avx512 {
namespace {

using avx2::BitsToBytes;
using avx2::HalfToFloat;
using avx2::NibblesToBytes;

inline __m256i WeightBytes(const BlockQ4_0& b) {
  return _mm256_sub_epi8(NibblesToBytes(b.qs), _mm256_set1_epi8(8));
}
inline __m256i WeightBytes(const BlockQ5_0& b) {
  const __m256i hi =
      _mm256_andnot_si256(BitsToBytes(b.qh), _mm256_set1_epi8(static_cast<char>(0xF0)));
  return _mm256_or_si256(NibblesToBytes(b.qs), hi);
}
inline __m256i WeightBytes(const BlockQ8_0& b) { return avx2::Load256(b.qs); }

inline __m512i Join(__m256i lo, __m256i hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// Sum of products of signed bytes, in groups of 4, as 16 int32 (x may be -128; y may not).
inline __m512i DotI8(__m512i x, __m512i y) {
  const __m512i ax = _mm512_abs_epi8(x);
  const __mmask64 neg = _mm512_movepi8_mask(x);
  const __m512i sy = _mm512_mask_sub_epi8(y, neg, _mm512_setzero_si512(), y);
  return _mm512_madd_epi16(_mm512_maddubs_epi16(ax, sy), _mm512_set1_epi16(1));
}

template <typename Block>
float DotSymmetric(int64_t n, const void* w, const void* x) {
  const Block* a = static_cast<const Block*>(w);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(x);
  const int64_t nb = n / kQK8_0;
  __m512 acc = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 2 <= nb; i += 2) {
    const __m512i qx = Join(WeightBytes(a[i]), WeightBytes(a[i + 1]));
    const __m512i qy = Join(avx2::Load256(y[i].qs), avx2::Load256(y[i + 1].qs));
    const float d0 = HalfToFloat(a[i].d) * HalfToFloat(y[i].d);
    const float d1 = HalfToFloat(a[i + 1].d) * HalfToFloat(y[i + 1].d);
    const __m512 d =
        _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(d0)), _mm256_set1_ps(d1), 1);
    acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(DotI8(qx, qy)), acc);
  }
  float sum = _mm512_reduce_add_ps(acc);
  if (i < nb) {
    const __m256i qx = WeightBytes(a[i]);
    const __m256i qy = avx2::Load256(y[i].qs);
    const __m256i p = avx2::DotI8PairsI32(qx, qy);
    sum += HalfToFloat(a[i].d) * HalfToFloat(y[i].d) * avx2::HsumF32(_mm256_cvtepi32_ps(p));
  }
  return sum;
}

}  // namespace

float DotF32(int64_t n, const void* w, const void* x) {
  const float* a = static_cast<const float*>(w);
  const float* b = static_cast<const float*>(x);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), acc1);
  }
  if (i < n) {  // masked tail, up to 31 elements
    const __mmask16 m0 = n - i >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (n - i)) - 1);
    acc0 =
        _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m0, a + i), _mm512_maskz_loadu_ps(m0, b + i), acc0);
    if (n - i > 16) {
      const __mmask16 m1 = static_cast<__mmask16>((1u << (n - i - 16)) - 1);
      acc1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m1, a + i + 16),
                             _mm512_maskz_loadu_ps(m1, b + i + 16), acc1);
    }
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

float DotF16(int64_t n, const void* w, const void* x) {
  const uint16_t* a = static_cast<const uint16_t*>(w);
  const float* b = static_cast<const float*>(x);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 w0 = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)));
    const __m512 w1 =
        _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i + 16)));
    acc0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(b + i), acc0);
    acc1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(b + i + 16), acc1);
  }
  float sum = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
  for (; i < n; ++i) sum += F16ToF32(a[i]) * b[i];
  return sum;
}

float DotQ4_0(int64_t n, const void* w, const void* x) { return DotSymmetric<BlockQ4_0>(n, w, x); }
float DotQ5_0(int64_t n, const void* w, const void* x) { return DotSymmetric<BlockQ5_0>(n, w, x); }
float DotQ8_0(int64_t n, const void* w, const void* x) { return DotSymmetric<BlockQ8_0>(n, w, x); }

}  // namespace radixlm::kernels::cpu::avx512
