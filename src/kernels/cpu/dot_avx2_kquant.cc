// AVX2 dot products of the K-quant types (256-element super-blocks) with Q8_K activations.
// The sub-block minimum / offset terms use the activation's precomputed 16-element sums
// (bsums), so the inner loops only do unsigned-weight x signed-activation byte products.
#include <cmath>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/isa.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

// Sum over the 8 sub-blocks of min[j] * (bsums[2j] + bsums[2j+1]) as an int, and the scales
// as 16 int16 (both lanes: scales 0..7).
inline int MinsTimesBsums(__m128i scales_mins, const int16_t* bsums, __m256i* scales16) {
  const __m256i sm16 = _mm256_cvtepu8_epi16(scales_mins);  // [scales 0..7 | mins 0..7]
  const __m256i q8sums = Load256(bsums);
  const __m128i q8s = _mm_hadd_epi16(_mm256_castsi256_si128(q8sums),
                                     _mm256_extracti128_si256(q8sums, 1));  // 8 sums of 32
  const __m128i prod = _mm_madd_epi16(_mm256_extracti128_si256(sm16, 1), q8s);
  const __m128i sc = _mm256_castsi256_si128(sm16);
  *scales16 = _mm256_set_m128i(sc, sc);
  __m128i s = _mm_add_epi32(prod, _mm_unpackhi_epi64(prod, prod));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

}  // namespace

// Q4_K in the float order of ggml's repacked Q4_K GEMM (ggml_gemm_q4_K_8x8_q8_K, which
// llama.cpp runs for prompt batches): per pair of 32-element sub-blocks, the exact integer sum
// is FMA'd into one float accumulator with d_w * d_x, and the minimum terms into another with
// dmin_w * d_x; the result is their difference. Bit-identical to llama.cpp's prefill output.
float DotQ4K(int64_t n, const void* w, const void* x) {
  const BlockQ4K* a = static_cast<const BlockQ4K*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  const __m256i m4 = _mm256_set1_epi8(0xF);
  float acc = 0.0f, acc_m = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = HalfToFloat(a[i].d) * y[i].d;
    const float dmin = HalfToFloat(a[i].dmin) * y[i].d;
    const __m256i sm16 = _mm256_cvtepu8_epi16(UnpackScalesMins(a[i].scales));
    const __m128i sc = _mm256_castsi256_si128(sm16);
    const __m256i scales = _mm256_set_m128i(sc, sc);
    // Minimum terms of the 4 sub-block pairs: min[2k] * bsum32[2k] + min[2k+1] * bsum32[2k+1].
    const __m256i q8sums = Load256(y[i].bsums);
    const __m128i q8s =
        _mm_hadd_epi16(_mm256_castsi256_si128(q8sums), _mm256_extracti128_si256(q8sums, 1));
    const __m128i imin = _mm_madd_epi16(_mm256_extracti128_si256(sm16, 1), q8s);
    const uint8_t* q4 = a[i].qs;
    const int8_t* q8 = y[i].qs;
    __m256i sums[4];
    for (int j = 0; j < kQK_K / 64; ++j, q4 += 32, q8 += 64) {
      const __m256i scale_l = _mm256_shuffle_epi8(scales, BroadcastI16Mask(2 * j));
      const __m256i scale_h = _mm256_shuffle_epi8(scales, BroadcastI16Mask(2 * j + 1));
      const __m256i q4bits = Load256(q4);
      const __m256i q4l = _mm256_and_si256(q4bits, m4);
      const __m256i q4h = _mm256_and_si256(_mm256_srli_epi16(q4bits, 4), m4);
      const __m256i pl = _mm256_madd_epi16(scale_l, _mm256_maddubs_epi16(q4l, Load256(q8)));
      const __m256i ph = _mm256_madd_epi16(scale_h, _mm256_maddubs_epi16(q4h, Load256(q8 + 32)));
      sums[j] = _mm256_add_epi32(pl, ph);
    }
    // The 4 pair sums at once (exact int32): [s0 s1 s2 s3].
    const __m256i h =
        _mm256_hadd_epi32(_mm256_hadd_epi32(sums[0], sums[1]), _mm256_hadd_epi32(sums[2], sums[3]));
    const __m128i isum = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    alignas(16) float fs[4], fm[4];
    _mm_store_ps(fs, _mm_cvtepi32_ps(isum));
    _mm_store_ps(fm, _mm_cvtepi32_ps(imin));
    for (int k = 0; k < 4; ++k) {
      acc = std::fma(fs[k], d, acc);
      acc_m = std::fma(fm[k], dmin, acc_m);
    }
  }
  return acc - acc_m;
}

float DotQ5K(int64_t n, const void* w, const void* x) {
  const BlockQ5K* a = static_cast<const BlockQ5K*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  const __m256i m4 = _mm256_set1_epi8(0xF);
  const __m256i one = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps();
  float acc_m = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = y[i].d * HalfToFloat(a[i].d);
    const float dmin = y[i].d * HalfToFloat(a[i].dmin);
    __m256i scales;
    const int summ = MinsTimesBsums(UnpackScalesMins(a[i].scales), y[i].bsums, &scales);
    acc_m += dmin * static_cast<float>(summ);
    const uint8_t* q5 = a[i].qs;
    const int8_t* q8 = y[i].qs;
    const __m256i hbits = Load256(a[i].qh);
    __m256i sumi = _mm256_setzero_si256();
    for (int j = 0; j < kQK_K / 64; ++j, q5 += 32, q8 += 64) {
      const __m256i scale_l = _mm256_shuffle_epi8(scales, BroadcastI16Mask(2 * j));
      const __m256i scale_h = _mm256_shuffle_epi8(scales, BroadcastI16Mask(2 * j + 1));
      const __m256i q5bits = Load256(q5);
      // 5th bit of the low half is bit 2j of qh, of the high half bit 2j+1: move to bit 4.
      const __m256i hl = _mm256_and_si256(_mm256_srli_epi16(hbits, 2 * j), one);
      const __m256i hh = _mm256_and_si256(_mm256_srli_epi16(hbits, 2 * j + 1), one);
      const __m256i q5l = _mm256_or_si256(_mm256_and_si256(q5bits, m4), _mm256_slli_epi16(hl, 4));
      const __m256i q5h = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q5bits, 4), m4),
                                          _mm256_slli_epi16(hh, 4));
      const __m256i p16l = _mm256_maddubs_epi16(q5l, Load256(q8));
      const __m256i p16h = _mm256_maddubs_epi16(q5h, Load256(q8 + 32));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(scale_l, p16l));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(scale_h, p16h));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return HsumF32(acc) - acc_m;
}

float DotQ6K(int64_t n, const void* w, const void* x) {
  const BlockQ6K* a = static_cast<const BlockQ6K*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  const __m256i m4 = _mm256_set1_epi8(0xF);
  const __m256i m2 = _mm256_set1_epi8(3);
  // Shuffle masks selecting scale bytes (2k, 2k+1) as [8 x 2k, 8 x 2k+1] for k = 0..3.
  float acc = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m128i scales8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a[i].scales));
    // The -32 offset: sum_j scale[j] * 32 * bsums[j].
    const __m256i scales16 = _mm256_cvtepi8_epi16(scales8);
    const __m256i offset = _mm256_madd_epi16(scales16, Load256(y[i].bsums));
    __m256i sumi = _mm256_slli_epi32(offset, 5);
    sumi = _mm256_sub_epi32(_mm256_setzero_si256(), sumi);
    const uint8_t* ql = a[i].ql;
    const uint8_t* qh = a[i].qh;
    const int8_t* q8 = y[i].qs;
    for (int c = 0; c < 2; ++c, ql += 64, qh += 32, q8 += 128) {
      const __m256i bits1 = Load256(ql);
      const __m256i bits2 = Load256(ql + 32);
      const __m256i bitsh = Load256(qh);
      const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(bitsh, m2), 4);
      const __m256i h1 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(bitsh, 2), m2), 4);
      const __m256i h2 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(bitsh, 4), m2), 4);
      const __m256i h3 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(bitsh, 6), m2), 4);
      const __m256i q0 = _mm256_or_si256(_mm256_and_si256(bits1, m4), h0);
      const __m256i q1 = _mm256_or_si256(_mm256_and_si256(bits2, m4), h1);
      const __m256i q2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(bits1, 4), m4), h2);
      const __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(bits2, 4), m4), h3);
      // 32-element group g of this chunk uses scales 8c + 2g (first 16) and 8c + 2g + 1.
      const __m128i s01 = _mm_shuffle_epi8(
          scales8,
          _mm_set_epi64x(0x0101010101010101LL * (8 * c + 1), 0x0101010101010101LL * (8 * c)));
      const __m128i s23 = _mm_shuffle_epi8(
          scales8,
          _mm_set_epi64x(0x0101010101010101LL * (8 * c + 3), 0x0101010101010101LL * (8 * c + 2)));
      const __m128i s45 = _mm_shuffle_epi8(
          scales8,
          _mm_set_epi64x(0x0101010101010101LL * (8 * c + 5), 0x0101010101010101LL * (8 * c + 4)));
      const __m128i s67 = _mm_shuffle_epi8(
          scales8,
          _mm_set_epi64x(0x0101010101010101LL * (8 * c + 7), 0x0101010101010101LL * (8 * c + 6)));
      const __m256i p0 = _mm256_maddubs_epi16(q0, Load256(q8));
      const __m256i p1 = _mm256_maddubs_epi16(q1, Load256(q8 + 32));
      const __m256i p2 = _mm256_maddubs_epi16(q2, Load256(q8 + 64));
      const __m256i p3 = _mm256_maddubs_epi16(q3, Load256(q8 + 96));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_cvtepi8_epi16(s01), p0));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_cvtepi8_epi16(s23), p1));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_cvtepi8_epi16(s45), p2));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_cvtepi8_epi16(s67), p3));
    }
    // llama.cpp's prefill order for Q6_K: the super-block's exact integer sum times d_w, then
    // fused with d_x into one float accumulator.
    const float t = static_cast<float>(HsumI32(sumi)) * HalfToFloat(a[i].d);
    acc = std::fma(t, y[i].d, acc);
  }
  return acc;
}

}  // namespace radixlm::kernels::cpu::avx2
