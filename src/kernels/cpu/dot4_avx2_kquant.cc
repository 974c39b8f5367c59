// AVX2 K-quant dots of one weight row against 4 activation rows (Q8_K): the weight
// super-block (scales, mins, quants) is unpacked once and reused for all 4 rows. Used by
// MatMul for prefill and batched decode; same arithmetic as the single-row kernels.
#include <cmath>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/isa.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

inline const BlockQ8K* Row(const void* x, size_t stride, int j) {
  return reinterpret_cast<const BlockQ8K*>(static_cast<const uint8_t*>(x) + j * stride);
}

}  // namespace

// Same float order as DotQ4K (ggml's repacked Q4_K GEMM) for each of the 4 rows.
void Dot4Q4K(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  const BlockQ4K* a = static_cast<const BlockQ4K*>(w);
  const BlockQ8K* y[4] = {Row(x, x_stride, 0), Row(x, x_stride, 1), Row(x, x_stride, 2),
                          Row(x, x_stride, 3)};
  const __m256i m4 = _mm256_set1_epi8(0xF);
  float acc[4] = {0, 0, 0, 0};
  float acc_m[4] = {0, 0, 0, 0};
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float dw = HalfToFloat(a[i].d), dmw = HalfToFloat(a[i].dmin);
    const __m256i sm16 = _mm256_cvtepu8_epi16(UnpackScalesMins(a[i].scales));
    const __m128i mins = _mm256_extracti128_si256(sm16, 1);
    const __m128i sc = _mm256_castsi256_si128(sm16);
    const __m256i scales = _mm256_set_m128i(sc, sc);
    __m256i sums[4][4];  // [row][sub-block pair]
    const uint8_t* q4 = a[i].qs;
    for (int c = 0; c < kQK_K / 64; ++c, q4 += 32) {
      const __m256i scale_l = _mm256_shuffle_epi8(scales, BroadcastI16Mask(2 * c));
      const __m256i scale_h = _mm256_shuffle_epi8(scales, BroadcastI16Mask(2 * c + 1));
      const __m256i q4bits = Load256(q4);
      const __m256i q4l = _mm256_and_si256(q4bits, m4);
      const __m256i q4h = _mm256_and_si256(_mm256_srli_epi16(q4bits, 4), m4);
      for (int j = 0; j < 4; ++j) {
        const int8_t* q8 = y[j][i].qs + 64 * c;
        const __m256i pl = _mm256_madd_epi16(scale_l, _mm256_maddubs_epi16(q4l, Load256(q8)));
        const __m256i ph = _mm256_madd_epi16(scale_h, _mm256_maddubs_epi16(q4h, Load256(q8 + 32)));
        sums[j][c] = _mm256_add_epi32(pl, ph);
      }
    }
    for (int j = 0; j < 4; ++j) {
      const __m256i bs = Load256(y[j][i].bsums);
      const __m128i q8s =
          _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
      const __m128i imin = _mm_madd_epi16(mins, q8s);
      const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(sums[j][0], sums[j][1]),
                                          _mm256_hadd_epi32(sums[j][2], sums[j][3]));
      const __m128i isum = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
      alignas(16) float fs[4], fm[4];
      _mm_store_ps(fs, _mm_cvtepi32_ps(isum));
      _mm_store_ps(fm, _mm_cvtepi32_ps(imin));
      const float d = dw * y[j][i].d, dmin = dmw * y[j][i].d;
      for (int k = 0; k < 4; ++k) {
        acc[j] = std::fma(fs[k], d, acc[j]);
        acc_m[j] = std::fma(fm[k], dmin, acc_m[j]);
      }
    }
  }
  for (int j = 0; j < 4; ++j) out[j] = acc[j] - acc_m[j];
}

void Dot4Q6K(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  const BlockQ6K* a = static_cast<const BlockQ6K*>(w);
  const BlockQ8K* y[4] = {Row(x, x_stride, 0), Row(x, x_stride, 1), Row(x, x_stride, 2),
                          Row(x, x_stride, 3)};
  const __m256i m4 = _mm256_set1_epi8(0xF);
  const __m256i m2 = _mm256_set1_epi8(3);
  float acc[4] = {0, 0, 0, 0};
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float dw = HalfToFloat(a[i].d);
    const __m128i scales8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a[i].scales));
    const __m256i scales16 = _mm256_cvtepi8_epi16(scales8);
    __m256i sumi[4];
    for (int j = 0; j < 4; ++j) {  // the -32 offset via bsums, as in DotQ6K
      const __m256i offset = _mm256_madd_epi16(scales16, Load256(y[j][i].bsums));
      sumi[j] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offset, 5));
    }
    const uint8_t* ql = a[i].ql;
    const uint8_t* qh = a[i].qh;
    for (int c = 0; c < 2; ++c, ql += 64, qh += 32) {
      const __m256i bits1 = Load256(ql);
      const __m256i bits2 = Load256(ql + 32);
      const __m256i bitsh = Load256(qh);
      for (int g = 0; g < 4; ++g) {
        // Group g: low nibbles of bits1/bits2 (g = 0, 1) or high nibbles (g = 2, 3), plus qh
        // bits 2g..2g+1; sub-block scales 8c + 2g and 8c + 2g + 1.
        const __m256i src = (g & 1) ? bits2 : bits1;
        const __m256i lo =
            (g < 2) ? _mm256_and_si256(src, m4) : _mm256_and_si256(_mm256_srli_epi16(src, 4), m4);
        const __m256i hi =
            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(bitsh, 2 * g), m2), 4);
        const __m256i q = _mm256_or_si256(lo, hi);
        const int s0 = 8 * c + 2 * g;
        const __m256i sc = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(
            scales8, _mm_set_epi64x(0x0101010101010101LL * (s0 + 1), 0x0101010101010101LL * s0)));
        for (int j = 0; j < 4; ++j) {
          const __m256i p = _mm256_maddubs_epi16(q, Load256(y[j][i].qs + 128 * c + 32 * g));
          sumi[j] = _mm256_add_epi32(sumi[j], _mm256_madd_epi16(sc, p));
        }
      }
    }
    for (int j = 0; j < 4; ++j) {  // as DotQ6K
      acc[j] = std::fma(static_cast<float>(HsumI32(sumi[j])) * dw, y[j][i].d, acc[j]);
    }
  }
  for (int j = 0; j < 4; ++j) out[j] = acc[j];
}

}  // namespace radixlm::kernels::cpu::avx2
