// AVX2 dots of one Q2_K / Q3_K / IQ4_XS weight row against 4 Q8_K activation rows (IQ4_NL, MXFP4:
// Q8_0):
// each weight super-block is unpacked once (bit planes, high bits, scales, IQ4 levels) and
// multiplied with all 4 rows. Per row, the integer sums and the float operations are those of the
// single-row kernels (dot_avx2_lowbit.cc), so out[j] is bit for bit their result (batch
// invariance).
#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/iq_grids.h"
#include "kernels/cpu/lowbit_impl.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

inline const BlockQ8K* Row(const void* x, size_t stride, int j) {
  return reinterpret_cast<const BlockQ8K*>(static_cast<const uint8_t*>(x) + j * stride);
}

// As in dot_avx2_lowbit.cc.
inline __m256i ScalePairMask(int k) {
  const __m128i lo = _mm_set1_epi16(static_cast<int16_t>((4 * k) | ((4 * k + 1) << 8)));
  const __m128i hi = _mm_set1_epi16(static_cast<int16_t>((4 * k + 2) | ((4 * k + 3) << 8)));
  return _mm256_set_m128i(hi, lo);
}

inline void SplitHalves(__m256i scales16, __m256i halves[2]) {
  const __m128i lo = _mm256_castsi256_si128(scales16);
  const __m128i hi = _mm256_extracti128_si256(scales16, 1);
  halves[0] = _mm256_set_m128i(lo, lo);
  halves[1] = _mm256_set_m128i(hi, hi);
}

inline __m128i UnpackQ3KScalesI8(const uint8_t* packed) {
  constexpr uint32_t kLow4 = 0x0F0F0F0F, kLow2 = 0x03030303;
  uint32_t a[3];
  std::memcpy(a, packed, sizeof(a));
  const __m128i s =
      _mm_set_epi32(static_cast<int>(((a[1] >> 4) & kLow4) | (((a[2] >> 6) & kLow2) << 4)),
                    static_cast<int>(((a[0] >> 4) & kLow4) | (((a[2] >> 4) & kLow2) << 4)),
                    static_cast<int>((a[1] & kLow4) | (((a[2] >> 2) & kLow2) << 4)),
                    static_cast<int>((a[0] & kLow4) | ((a[2] & kLow2) << 4)));
  return _mm_sub_epi8(s, _mm_set1_epi8(32));
}

}  // namespace

void Dot4Q2K(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  const BlockQ2K* a = static_cast<const BlockQ2K*>(w);
  const BlockQ8K* y[4] = {Row(x, x_stride, 0), Row(x, x_stride, 1), Row(x, x_stride, 2),
                          Row(x, x_stride, 3)};
  const __m256i m3 = _mm256_set1_epi8(3);
  const __m128i m4 = _mm_set1_epi8(0xF);
  __m256 acc[4], acc_m[4];
  for (int j = 0; j < 4; ++j) acc[j] = acc_m[j] = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float dw = HalfToFloat(a[i].d), dmw = HalfToFloat(a[i].dmin);
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a[i].scales));
    const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), m4));
    __m256i halves[2];
    SplitHalves(_mm256_cvtepu8_epi16(_mm_and_si128(packed, m4)), halves);
    __m256i sumi[4];
    for (int j = 0; j < 4; ++j) sumi[j] = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i bits = Load256(a[i].qs + 32 * h);
      for (int k = 0; k < 4; ++k) {
        const __m256i q2 = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * k), m3);
        const __m256i sc = _mm256_shuffle_epi8(halves[h], ScalePairMask(k));
        for (int j = 0; j < 4; ++j) {
          const __m256i p16 = _mm256_maddubs_epi16(q2, Load256(y[j][i].qs + 128 * h + 32 * k));
          sumi[j] = _mm256_add_epi32(sumi[j], _mm256_madd_epi16(sc, p16));
        }
      }
    }
    for (int j = 0; j < 4; ++j) {
      const float d = y[j][i].d * dw, dmin = y[j][i].d * dmw;
      acc_m[j] = _mm256_fmadd_ps(
          _mm256_set1_ps(dmin),
          _mm256_cvtepi32_ps(_mm256_madd_epi16(mins16, Load256(y[j][i].bsums))), acc_m[j]);
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi[j]), acc[j]);
    }
  }
  for (int j = 0; j < 4; ++j) out[j] = HsumF32(_mm256_sub_ps(acc[j], acc_m[j]));
}

void Dot4Q3K(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  const BlockQ3K* a = static_cast<const BlockQ3K*>(w);
  const BlockQ8K* y[4] = {Row(x, x_stride, 0), Row(x, x_stride, 1), Row(x, x_stride, 2),
                          Row(x, x_stride, 3)};
  const __m256i m3 = _mm256_set1_epi8(3);
  const __m256i m4 = _mm256_set1_epi8(4);
  float sum[4] = {0, 0, 0, 0};
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m256i scales16 = _mm256_cvtepi8_epi16(UnpackQ3KScalesI8(a[i].scales));
    __m256i sumi[4];
    for (int j = 0; j < 4; ++j) {
      // -4 * sum_j scale_j * bsum_j
      sumi[j] = _mm256_sub_epi32(
          _mm256_setzero_si256(),
          _mm256_slli_epi32(_mm256_madd_epi16(scales16, Load256(y[j][i].bsums)), 2));
    }
    __m256i halves[2];
    SplitHalves(scales16, halves);
    const __m256i hbits = Load256(a[i].hmask);
    for (int h = 0; h < 2; ++h) {
      const __m256i bits = Load256(a[i].qs + 32 * h);
      for (int k = 0; k < 4; ++k) {
        const int bit = 4 * h + k;
        const __m256i hb =
            bit <= 2 ? _mm256_slli_epi16(hbits, 2 - bit) : _mm256_srli_epi16(hbits, bit - 2);
        const __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(bits, 2 * k), m3),
                                           _mm256_and_si256(hb, m4));
        const __m256i sc = _mm256_shuffle_epi8(halves[h], ScalePairMask(k));
        for (int j = 0; j < 4; ++j) {
          const __m256i p16 = _mm256_maddubs_epi16(q3, Load256(y[j][i].qs + 128 * h + 32 * k));
          sumi[j] = _mm256_add_epi32(sumi[j], _mm256_madd_epi16(sc, p16));
        }
      }
    }
    const float dw = HalfToFloat(a[i].d);
    for (int j = 0; j < 4; ++j) {
      sum[j] += (y[j][i].d * dw) * static_cast<float>(HsumI32(sumi[j]));
    }
  }
  for (int j = 0; j < 4; ++j) out[j] = sum[j];
}

void Dot4IQ4XS(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  const BlockIQ4XS* a = static_cast<const BlockIQ4XS*>(w);
  const BlockQ8K* y[4] = {Row(x, x_stride, 0), Row(x, x_stride, 1), Row(x, x_stride, 2),
                          Row(x, x_stride, 3)};
  const __m256i table =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues)));
  __m256 acc[4];
  for (int j = 0; j < 4; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    __m256i sumi[4];
    for (int j = 0; j < 4; ++j) sumi[j] = _mm256_setzero_si256();
    const uint8_t* qs = a[i].qs;
    for (int ib = 0; ib < kQK_K / 32; ++ib, qs += 16) {
      const int ls = ((a[i].scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) |
                     (((a[i].scales_h >> (2 * ib)) & 3) << 4);
      const __m256i levels = _mm256_shuffle_epi8(table, NibblesToBytes(qs));
      // The sign of each level moves onto the activations (as in the single-row kernel).
      const __m256i magnitudes = _mm256_sign_epi8(levels, levels);
      const __m256i scale = _mm256_set1_epi16(static_cast<int16_t>(ls - 32));
      for (int j = 0; j < 4; ++j) {
        const __m256i y8 = _mm256_sign_epi8(Load256(y[j][i].qs + 32 * ib), levels);
        sumi[j] = _mm256_add_epi32(sumi[j],
                                   _mm256_madd_epi16(_mm256_maddubs_epi16(magnitudes, y8), scale));
      }
    }
    const float dw = HalfToFloat(a[i].d);
    for (int j = 0; j < 4; ++j) {
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(y[j][i].d * dw), _mm256_cvtepi32_ps(sumi[j]), acc[j]);
    }
  }
  for (int j = 0; j < 4; ++j) out[j] = HsumF32(acc[j]);
}

// IQ4_NL pairs with Q8_0 activations (blocks of 32, a half scale each); as in the single-row
// kernel, even blocks accumulate into one float vector and odd blocks into another.
void Dot4IQ4NL(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  const BlockIQ4NL* a = static_cast<const BlockIQ4NL*>(w);
  const BlockQ8_0* y[4];
  for (int j = 0; j < 4; ++j) {
    y[j] = reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(x) + j * x_stride);
  }
  const __m256i table =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues)));
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[4][2];
  for (int j = 0; j < 4; ++j) acc[j][0] = acc[j][1] = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK4_NL; ++i) {
    const __m256i levels = _mm256_shuffle_epi8(table, NibblesToBytes(a[i].qs));
    const __m256i magnitudes = _mm256_sign_epi8(levels, levels);
    const float dw = HalfToFloat(a[i].d);
    for (int j = 0; j < 4; ++j) {
      const __m256i y8 = _mm256_sign_epi8(Load256(y[j][i].qs), levels);
      const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(magnitudes, y8), ones);
      __m256& target = acc[j][i % 2];
      target = _mm256_fmadd_ps(_mm256_set1_ps(dw * HalfToFloat(y[j][i].d)), _mm256_cvtepi32_ps(p),
                               target);
    }
  }
  for (int j = 0; j < 4; ++j) out[j] = HsumF32(_mm256_add_ps(acc[j][0], acc[j][1]));
}

// MXFP4 as IQ4_NL above, with its levels and E8M0 exponent (the single-row kernel's order).
void Dot4MXFP4(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  const BlockMXFP4* a = static_cast<const BlockMXFP4*>(w);
  const BlockQ8_0* y[4];
  for (int j = 0; j < 4; ++j) {
    y[j] = reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(x) + j * x_stride);
  }
  const __m256i table =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kMxfp4Values)));
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[4][2];
  for (int j = 0; j < 4; ++j) acc[j][0] = acc[j][1] = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_MXFP4; ++i) {
    const __m256i levels = _mm256_shuffle_epi8(table, NibblesToBytes(a[i].qs));
    const __m256i magnitudes = _mm256_sign_epi8(levels, levels);
    const float dw = E8M0HalfToFloat(a[i].e);
    for (int j = 0; j < 4; ++j) {
      const __m256i y8 = _mm256_sign_epi8(Load256(y[j][i].qs), levels);
      const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(magnitudes, y8), ones);
      __m256& target = acc[j][i % 2];
      target = _mm256_fmadd_ps(_mm256_set1_ps(HalfToFloat(y[j][i].d) * dw), _mm256_cvtepi32_ps(p),
                               target);
    }
  }
  for (int j = 0; j < 4; ++j) out[j] = HsumF32(_mm256_add_ps(acc[j][0], acc[j][1]));
}

}  // namespace radixlm::kernels::cpu::avx2
