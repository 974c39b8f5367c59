// AVX2/F16C row kernels: half conversions, activation quantizers, and float dot products.
#include <cmath>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/isa.h"
#include "kernels/fp16.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

inline __m256 LoadBf16x8(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

inline __m256 LoadF16x8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Round-to-nearest-even float -> bf16 for 8 lanes (NaN -> quiet NaN), as 8 uint32 (< 2^16).
inline __m256i F32ToBf16x8(__m256 v) {
  const __m256i x = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
  const __m256 is_nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  return _mm256_blendv_epi8(rounded, nan, _mm256_castps_si256(is_nan));
}

// Max |x| over n floats (n a multiple of 8).
inline float AbsMax(const float* x, int n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m = _mm256_setzero_ps();
  for (int j = 0; j < n; j += 8)
    m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)));
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Quantizes 32 floats by multiplier id (round half to even) into 32 int8 in element order.
inline __m256i Quantize32(const float* x, __m256 id) {
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  __m256i i0 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x), id), kRound));
  __m256i i1 =
      _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 8), id), kRound));
  __m256i i2 =
      _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 16), id), kRound));
  __m256i i3 =
      _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 24), id), kRound));
  i0 = _mm256_packs_epi32(i0, i1);
  i2 = _mm256_packs_epi32(i2, i3);
  i0 = _mm256_packs_epi16(i0, i2);
  return _mm256_permutevar8x32_epi32(i0, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

}  // namespace

void F16ToF32Row(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, LoadF16x8(src + i));
  for (; i < n; ++i) dst[i] = F16ToF32(src[i]);
}

void F32ToF16Row(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i) dst[i] = F32ToF16(src[i]);
}

void Bf16ToF32Row(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, LoadBf16x8(src + i));
  for (; i < n; ++i) dst[i] = Bf16ToF32(src[i]);
}

void F32ToBf16Row(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i a = F32ToBf16x8(_mm256_loadu_ps(src + i));
    const __m256i b = F32ToBf16x8(_mm256_loadu_ps(src + i + 8));
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), packed);
  }
  for (; i < n; ++i) dst[i] = F32ToBf16(src[i]);
}

void QuantizeQ8_0(const float* src, BlockQ8_0* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK8_0; ++b, src += kQK8_0) {
    const float amax = AbsMax(src, kQK8_0);
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    dst[b].d = F32ToF16(d);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst[b].qs), Quantize32(src, _mm256_set1_ps(id)));
  }
}

void QuantizeQ8K(const float* src, BlockQ8K* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, src += kQK_K) {
    const float amax = AbsMax(src, kQK_K);
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    dst[b].d = amax != 0.0f ? 1.0f / id : 0.0f;
    const __m256 vid = _mm256_set1_ps(id);
    for (int j = 0; j < kQK_K; j += 32) {
      const __m256i q = Quantize32(src + j, vid);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst[b].qs + j), q);
      // Per 128-bit lane: 4 int32 quad sums -> one 16-element group sum.
      __m256i s = SumI8Quads(q);
      s = _mm256_hadd_epi32(s, s);
      s = _mm256_hadd_epi32(s, s);
      dst[b].bsums[j / 16] = static_cast<int16_t>(_mm256_extract_epi32(s, 0));
      dst[b].bsums[j / 16 + 1] = static_cast<int16_t>(_mm256_extract_epi32(s, 4));
    }
  }
}

float DotF32(int64_t n, const void* w, const void* x) {
  const float* a = static_cast<const float*>(w);
  const float* b = static_cast<const float*>(x);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), acc3);
  }
  for (; i + 8 <= n; i += 8) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  }
  float sum = HsumF32(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

float DotF16(int64_t n, const void* w, const void* x) {
  const uint16_t* a = static_cast<const uint16_t*>(w);
  const float* b = static_cast<const float*>(x);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(LoadF16x8(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(LoadF16x8(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(LoadF16x8(a + i), _mm256_loadu_ps(b + i), acc0);
  float sum = HsumF32(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) sum += F16ToF32(a[i]) * b[i];
  return sum;
}

float DotBf16(int64_t n, const void* w, const void* x) {
  const uint16_t* a = static_cast<const uint16_t*>(w);
  const float* b = static_cast<const float*>(x);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(LoadBf16x8(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(LoadBf16x8(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8) {
    acc0 = _mm256_fmadd_ps(LoadBf16x8(a + i), _mm256_loadu_ps(b + i), acc0);
  }
  float sum = HsumF32(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) sum += Bf16ToF32(a[i]) * b[i];
  return sum;
}

}  // namespace radixlm::kernels::cpu::avx2
