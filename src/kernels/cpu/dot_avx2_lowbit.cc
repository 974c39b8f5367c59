// AVX2 dot products of Q2_K, Q3_K (Q8_K activations), IQ4_NL and MXFP4 (Q8_0), IQ4_XS (Q8_K).
// Quants are widened to bytes and multiplied with vpmaddubsw (unsigned weight x signed
// activation); sub-block offsets (Q2_K's mins, Q3_K's -4) come from the activation's 16-element
// sums (bsums), so every super-block's integer sum is exact and is scaled once in float.
#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/iq_grids.h"
#include "kernels/cpu/lowbit_impl.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

// Shuffle mask picking int16 element 2k in the low lane and 2k + 1 in the high lane of a vector
// holding the same 8 int16 scales in both lanes (the two 16-element sub-blocks of 32 elements).
inline __m256i ScalePairMask(int k) {
  const __m128i lo = _mm_set1_epi16(static_cast<int16_t>((4 * k) | ((4 * k + 1) << 8)));
  const __m128i hi = _mm_set1_epi16(static_cast<int16_t>((4 * k + 2) | ((4 * k + 3) << 8)));
  return _mm256_set_m128i(hi, lo);
}

// 16 int16 scales (scales 0..7 in the low lane, 8..15 in the high) -> per 128-element half h
// the 8 scales of that half in both lanes.
inline void SplitHalves(__m256i scales16, __m256i halves[2]) {
  const __m128i lo = _mm256_castsi256_si128(scales16);
  const __m128i hi = _mm256_extracti128_si256(scales16, 1);
  halves[0] = _mm256_set_m128i(lo, lo);
  halves[1] = _mm256_set_m128i(hi, hi);
}

// The 16 Q3_K scales as signed bytes (6-bit value minus 32).
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

// Signed bytes w times signed bytes y, summed in adjacent pairs as 16 int16 (|w| <= 127 and
// |y| <= 127, so a pair never saturates).
inline __m256i DotI8PairsI16(__m256i w, __m256i y) {
  return _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(y, w));
}

// The half scales of 8 consecutive blocks (the u16 at the start of each `stride`-byte block) as
// 8 floats, converted exactly (vcvtph2ps). A gather and two shuffles for 8 blocks, where
// converting and broadcasting one block's scales at a time kept the shuffle port busy.
inline __m256 HalfScales8(const void* first, int stride) {
  const __m256i offsets =
      _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(stride));
  const __m256i words = _mm256_i32gather_epi32(static_cast<const int*>(first), offsets, 1);
  // The low half of each dword into the low 8 bytes of each lane, then both lanes' into one xmm.
  const __m256i packed = _mm256_shuffle_epi8(
      words, _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5,
                              8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1));
  return _mm256_cvtph_ps(_mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08)));
}

// 32 IQ4 levels of one block: the 16 packed bytes in both lanes (a load, no shuffle), the high
// lane's shifted down by 4, then the table lookup.
inline __m256i Iq4LevelsOfBlock(const uint8_t* qs, __m256i table) {
  const __m256i both =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
  const __m256i nibbles = _mm256_and_si256(_mm256_srlv_epi64(both, _mm256_setr_epi64x(0, 0, 4, 4)),
                                           _mm256_set1_epi8(0xF));
  return _mm256_shuffle_epi8(table, nibbles);
}

}  // namespace

float DotQ2K(int64_t n, const void* w, const void* x) {
  const BlockQ2K* a = static_cast<const BlockQ2K*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  const __m256i m3 = _mm256_set1_epi8(3);
  const __m128i m4 = _mm_set1_epi8(0xF);
  const __m256i pair_mask[4] = {ScalePairMask(0), ScalePairMask(1), ScalePairMask(2),
                                ScalePairMask(3)};
  __m256 acc = _mm256_setzero_ps(), acc_m = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = y[i].d * HalfToFloat(a[i].d);
    const float dmin = y[i].d * HalfToFloat(a[i].dmin);
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a[i].scales));
    const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), m4));
    acc_m =
        _mm256_fmadd_ps(_mm256_set1_ps(dmin),
                        _mm256_cvtepi32_ps(_mm256_madd_epi16(mins16, Load256(y[i].bsums))), acc_m);
    __m256i halves[2];
    SplitHalves(_mm256_cvtepu8_epi16(_mm_and_si128(packed, m4)), halves);
    const int8_t* q8 = y[i].qs;
    __m256i sumi = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h, q8 += 128) {
      const __m256i bits = Load256(a[i].qs + 32 * h);
      __m256i p[4];
      for (int k = 0; k < 4; ++k) {
        const __m256i q2 = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * k), m3);
        const __m256i p16 = _mm256_maddubs_epi16(q2, Load256(q8 + 32 * k));
        p[k] = _mm256_madd_epi16(_mm256_shuffle_epi8(halves[h], pair_mask[k]), p16);
      }
      // A tree of adds (exact integers: any order gives the same sums).
      sumi = _mm256_add_epi32(
          sumi, _mm256_add_epi32(_mm256_add_epi32(p[0], p[1]), _mm256_add_epi32(p[2], p[3])));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return HsumF32(_mm256_sub_ps(acc, acc_m));
}

// q3 = q2 + 4 * hbit - 4: the kernel multiplies the unsigned q2 + 4 * hbit and subtracts
// 4 * scale * (sum of the sub-block's activations) once per super-block. The lanes hold large
// partial sums that cancel, so the super-block's integer sum is reduced exactly before it is
// scaled: the result is the scalar reference's, bit for bit.
float DotQ3K(int64_t n, const void* w, const void* x) {
  const BlockQ3K* a = static_cast<const BlockQ3K*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  const __m256i m3 = _mm256_set1_epi8(3);
  const __m256i m4 = _mm256_set1_epi8(4);
  const __m256i pair_mask[4] = {ScalePairMask(0), ScalePairMask(1), ScalePairMask(2),
                                ScalePairMask(3)};
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m256i scales16 = _mm256_cvtepi8_epi16(UnpackQ3KScalesI8(a[i].scales));
    // -4 * sum_j scale_j * bsum_j
    __m256i sumi = _mm256_slli_epi32(_mm256_madd_epi16(scales16, Load256(y[i].bsums)), 2);
    sumi = _mm256_sub_epi32(_mm256_setzero_si256(), sumi);
    __m256i halves[2];
    SplitHalves(scales16, halves);
    const __m256i hbits = Load256(a[i].hmask);
    const int8_t* q8 = y[i].qs;
    for (int h = 0; h < 2; ++h, q8 += 128) {
      const __m256i bits = Load256(a[i].qs + 32 * h);
      __m256i p[4];
      for (int k = 0; k < 4; ++k) {
        const int bit = 4 * h + k;
        // The high bit moved to bit 2 of each byte: (hbits << (2 - bit)) or >> (bit - 2).
        const __m256i hb =
            bit <= 2 ? _mm256_slli_epi16(hbits, 2 - bit) : _mm256_srli_epi16(hbits, bit - 2);
        const __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(bits, 2 * k), m3),
                                           _mm256_and_si256(hb, m4));
        const __m256i p16 = _mm256_maddubs_epi16(q3, Load256(q8 + 32 * k));
        p[k] = _mm256_madd_epi16(_mm256_shuffle_epi8(halves[h], pair_mask[k]), p16);
      }
      sumi = _mm256_add_epi32(
          sumi, _mm256_add_epi32(_mm256_add_epi32(p[0], p[1]), _mm256_add_epi32(p[2], p[3])));
    }
    sum += (y[i].d * HalfToFloat(a[i].d)) * static_cast<float>(HsumI32(sumi));
  }
  return sum;
}

float DotIQ4NL(int64_t n, const void* w, const void* x) {
  const BlockIQ4NL* a = static_cast<const BlockIQ4NL*>(w);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(x);
  const __m256i table =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues)));
  const __m256i ones = _mm256_set1_epi16(1);
  // Even blocks accumulate into acc[0], odd ones into acc[1] (the 4-row kernel's order too).
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  const int64_t nb = n / kQK4_NL;
  const auto block = [&](int64_t i, __m256 scale) {
    const __m256i p =
        _mm256_madd_epi16(DotI8PairsI16(Iq4LevelsOfBlock(a[i].qs, table), Load256(y[i].qs)), ones);
    acc[i % 2] = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(p), acc[i % 2]);
  };
  int64_t i = 0;
  for (; i + 8 <= nb; i += 8) {
    const __m256 d = _mm256_mul_ps(HalfScales8(&a[i].d, sizeof(BlockIQ4NL)),
                                   HalfScales8(&y[i].d, sizeof(BlockQ8_0)));
    for (int k = 0; k < 8; ++k) block(i + k, _mm256_permutevar8x32_ps(d, _mm256_set1_epi32(k)));
  }
  for (; i < nb; ++i) block(i, _mm256_set1_ps(HalfToFloat(a[i].d) * HalfToFloat(y[i].d)));
  return HsumF32(_mm256_add_ps(acc[0], acc[1]));
}

// MXFP4 is IQ4_NL's layout with the doubled E2M1 levels (|level| <= 12) and an E8M0 exponent
// byte in place of the half scale; the same even / odd accumulators (the 4-row kernel's order).
float DotMXFP4(int64_t n, const void* w, const void* x) {
  const BlockMXFP4* a = static_cast<const BlockMXFP4*>(w);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(x);
  const __m256i table =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kMxfp4Values)));
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t i = 0; i < n / kQK_MXFP4; ++i) {
    const __m256i p =
        _mm256_madd_epi16(DotI8PairsI16(Iq4LevelsOfBlock(a[i].qs, table), Load256(y[i].qs)), ones);
    const float d = HalfToFloat(y[i].d) * E8M0HalfToFloat(a[i].e);
    acc[i % 2] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(p), acc[i % 2]);
  }
  return HsumF32(_mm256_add_ps(acc[0], acc[1]));
}

float DotIQ4XS(int64_t n, const void* w, const void* x) {
  const BlockIQ4XS* a = static_cast<const BlockIQ4XS*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  const __m256i table =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues)));
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const uint8_t* qs = a[i].qs;
    const int8_t* q8 = y[i].qs;
    uint32_t scales_h = a[i].scales_h;
    __m256i sumi0 = _mm256_setzero_si256(), sumi1 = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ib += 2, qs += 32, q8 += 64, scales_h >>= 4) {
      const int ls0 = ((a[i].scales_l[ib / 2] & 0xF) | ((scales_h << 4) & 0x30)) - 32;
      const int ls1 = ((a[i].scales_l[ib / 2] >> 4) | ((scales_h << 2) & 0x30)) - 32;
      const __m256i p0 = DotI8PairsI16(Iq4LevelsOfBlock(qs, table), Load256(q8));
      const __m256i p1 = DotI8PairsI16(Iq4LevelsOfBlock(qs + 16, table), Load256(q8 + 32));
      sumi0 = _mm256_add_epi32(sumi0, _mm256_madd_epi16(p0, _mm256_set1_epi16(ls0)));
      sumi1 = _mm256_add_epi32(sumi1, _mm256_madd_epi16(p1, _mm256_set1_epi16(ls1)));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * HalfToFloat(a[i].d)),
                          _mm256_cvtepi32_ps(_mm256_add_epi32(sumi0, sumi1)), acc);
  }
  return HsumF32(acc);
}

}  // namespace radixlm::kernels::cpu::avx2
