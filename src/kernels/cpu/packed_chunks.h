// Unpacking of nibble-packed PackedWeights blocks (kernels/packed_weights.h) into the 8 byte
// chunks of 16 rows x 4 columns that vpdpbusd / tdpbsud take. Include only in files compiled
// with AVX-512 F + BW.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/packed_weights.h"

namespace radixlm::kernels::cpu {

// 16 IEEE halves at p, widened exactly.
inline __m512 LoadHalves16(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Negated floats (exact).
inline __m512 Negate16(__m512 v) {
  return _mm512_castsi512_ps(
      _mm512_xor_si512(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN)));
}

// kK4 (Q4_K, Q5_K): the 16 rows' d = dsup * sc and m = -(dmin * mn) of the block whose 24
// scale bytes are at sp, given its super-block's halves widened, dsup and neg_dmin = -dmin
// (the product of the negated half is the negated product: the same float).
inline void K4Scales16(const uint8_t* sp, __m512 dsup, __m512 neg_dmin, __m512* d, __m512* m) {
  const __m512i lo =
      _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sp)));
  // Row r's high nibble: nibble r % 8 of the 32-bit word r / 8 of the 8 bytes after lo.
  const __m512i words = _mm512_permutexvar_epi32(
      _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
      _mm512_castsi128_si512(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sp + 16))));
  const __m512i shifts =
      _mm512_set_epi32(28, 24, 20, 16, 12, 8, 4, 0, 28, 24, 20, 16, 12, 8, 4, 0);
  const __m512i hi = _mm512_srlv_epi32(words, shifts);
  const __m512i n15 = _mm512_set1_epi32(15), n3 = _mm512_set1_epi32(3);
  const __m512i sc = _mm512_or_si512(_mm512_and_si512(lo, n15),
                                     _mm512_slli_epi32(_mm512_and_si512(hi, n3), 4));
  const __m512i mn =
      _mm512_or_si512(_mm512_srli_epi32(lo, 4),
                      _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(hi, 2), n3), 4));
  d[0] = _mm512_mul_ps(dsup, _mm512_cvtepi32_ps(sc));
  *m = _mm512_mul_ps(neg_dmin, _mm512_cvtepi32_ps(mn));
}

// kQ3K: the 16 rows' d[s] = dh * (ls[s] - 32) of the block whose 24 scale bytes are at sp
// (kK4's bytes with the two sub-blocks' ls in place of sc and mn).
inline void Q3KScales16(const uint8_t* sp, __m512 dh, __m512* d) {
  __m512 ls0, ls1;
  K4Scales16(sp, _mm512_set1_ps(1.0f), _mm512_set1_ps(1.0f), &ls0, &ls1);
  const __m512 n32 = _mm512_set1_ps(32.0f);
  d[0] = _mm512_mul_ps(dh, _mm512_sub_ps(ls0, n32));  // small integers: exact
  d[1] = _mm512_mul_ps(dh, _mm512_sub_ps(ls1, n32));
}

// kQ2K: the 16 rows' d[s] = dh * sc[s] and m[s] = -(dmin * mn[s]) of the block whose 32 scale
// bytes are at sp (neg_dmin = -dmin).
inline void Q2KScales16(const uint8_t* sp, __m512 dh, __m512 neg_dmin, __m512* d, __m512* m) {
  for (int s = 0; s < 2; ++s) {
    const __m512i v =
        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sp + 16 * s)));
    d[s] = _mm512_mul_ps(dh, _mm512_cvtepi32_ps(_mm512_and_si512(v, _mm512_set1_epi32(15))));
    m[s] = _mm512_mul_ps(neg_dmin, _mm512_cvtepi32_ps(_mm512_srli_epi32(v, 4)));
  }
}

// kQ6K: the 16 rows' d[s] = dh * sc[s] of the block whose scale bytes are at sp.
inline void Q6KScales16(const uint8_t* sp, __m512 dh, __m512* d) {
  for (int s = 0; s < 2; ++s) {
    const __m512i sc =
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sp + 16 * s)));
    d[s] = _mm512_mul_ps(dh, _mm512_cvtepi32_ps(sc));
  }
}

// kI6 (IQ4_XS): the 16 rows' d = dh * (ls - 32) of the block whose 12 scale bytes are at sp.
inline __m512 I6Scales16(const uint8_t* sp, __m512 dh) {
  // Row r's low nibble: nibble r % 8 of the 32-bit word r / 8; its high bits: bits 2r..2r+1
  // of the 32-bit word at sp + 8.
  int32_t lo[2], hi;
  std::memcpy(lo, sp, 8);
  std::memcpy(&hi, sp + 8, 4);
  const __m512i words = _mm512_set_epi32(lo[1], lo[1], lo[1], lo[1], lo[1], lo[1], lo[1], lo[1],
                                         lo[0], lo[0], lo[0], lo[0], lo[0], lo[0], lo[0], lo[0]);
  const __m512i low = _mm512_and_si512(
      _mm512_srlv_epi32(words,
                        _mm512_set_epi32(28, 24, 20, 16, 12, 8, 4, 0, 28, 24, 20, 16, 12, 8, 4, 0)),
      _mm512_set1_epi32(15));
  const __m512i high = _mm512_and_si512(
      _mm512_srlv_epi32(_mm512_set1_epi32(hi), _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14,
                                                                12, 10, 8, 6, 4, 2, 0)),
      _mm512_set1_epi32(3));
  const __m512i ls = _mm512_or_si512(low, _mm512_slli_epi32(high, 4));
  return _mm512_mul_ps(dh, _mm512_cvtepi32_ps(_mm512_sub_epi32(ls, _mm512_set1_epi32(32))));
}

// kE8M0 (MXFP4): 2^(e - 128) of the 16 rows' exponent bytes at p, as E8M0HalfToFloat.
inline __m512 E8M0Scales16(const uint8_t* p) {
  const __m512i e = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __m512i sub = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
  const __mmask16 small = _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2));
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(small, normal, sub));
}

// The float scales of block b of group g for the 16 rows (PackedWeights::ScaleD / ScaleM, the
// same values): d[0] (and d[1], Q6_K's second 16 columns) and, with a min, m.
inline void BlockScales16(const PackedWeights& w, int64_t g, int64_t b, __m512* d, __m512* m) {
  const uint8_t* sp = w.Scales(g, b);
  switch (w.scale_form) {
    case ScaleForm::kK4: {
      const uint8_t* sup = w.Supers(g, b);
      K4Scales16(sp, LoadHalves16(sup), Negate16(LoadHalves16(sup + 32)), d, m);
      return;
    }
    case ScaleForm::kQ6K:
      Q6KScales16(sp, LoadHalves16(w.Supers(g, b)), d);
      return;
    case ScaleForm::kI6:
      d[0] = I6Scales16(sp, LoadHalves16(w.Supers(g, b)));
      return;
    case ScaleForm::kE8M0:
      d[0] = E8M0Scales16(sp);
      return;
    default:
      d[0] = LoadHalves16(sp);
      if (w.has_min) *m = LoadHalves16(sp + 32);
      return;
  }
}

// wq[c] = chunk c of the block at blk (64-byte aligned): low nibbles of bytes 64c.. for c < 4,
// high nibbles of 64(c-4).. for c >= 4; with kHigh 1, bit c of the plane at blk + 256 becomes
// bit 4 of chunk c (16-bit shifts are safe: bit 4 of a byte only receives bits of that byte);
// with kHigh 2, bits 2 (c % 4)..+1 of plane c / 4 (at blk + 256 + 64 (c / 4)) become bits 4-5
// (after the shift, the mask keeps bits that came from the same byte).
template <int kHigh>
inline void UnpackChunks(const uint8_t* blk, __m512i* wq) {
  const __m512i low4 = _mm512_set1_epi8(15);
  for (int c = 0; c < 4; ++c) {
    const __m512i v = _mm512_load_si512(blk + 64 * c);
    wq[c] = _mm512_and_si512(v, low4);
    wq[c + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
  }
  if constexpr (kHigh == 2) {
    const __m512i bits45 = _mm512_set1_epi8(0x30);
    for (int p = 0; p < 2; ++p) {
      const __m512i hb = _mm512_load_si512(blk + 256 + 64 * p);
      __m512i* q = wq + 4 * p;
      q[0] = _mm512_or_si512(q[0], _mm512_and_si512(_mm512_slli_epi16(hb, 4), bits45));
      q[1] = _mm512_or_si512(q[1], _mm512_and_si512(_mm512_slli_epi16(hb, 2), bits45));
      q[2] = _mm512_or_si512(q[2], _mm512_and_si512(hb, bits45));
      q[3] = _mm512_or_si512(q[3], _mm512_and_si512(_mm512_srli_epi16(hb, 2), bits45));
    }
  }
  if constexpr (kHigh == 1) {
    const __m512i hb = _mm512_load_si512(blk + 256);
    const __m512i bit4 = _mm512_set1_epi8(0x10);
    wq[0] = _mm512_or_si512(wq[0], _mm512_and_si512(_mm512_slli_epi16(hb, 4), bit4));
    wq[1] = _mm512_or_si512(wq[1], _mm512_and_si512(_mm512_slli_epi16(hb, 3), bit4));
    wq[2] = _mm512_or_si512(wq[2], _mm512_and_si512(_mm512_slli_epi16(hb, 2), bit4));
    wq[3] = _mm512_or_si512(wq[3], _mm512_and_si512(_mm512_slli_epi16(hb, 1), bit4));
    wq[4] = _mm512_or_si512(wq[4], _mm512_and_si512(hb, bit4));
    wq[5] = _mm512_or_si512(wq[5], _mm512_and_si512(_mm512_srli_epi16(hb, 1), bit4));
    wq[6] = _mm512_or_si512(wq[6], _mm512_and_si512(_mm512_srli_epi16(hb, 2), bit4));
    wq[7] = _mm512_or_si512(wq[7], _mm512_and_si512(_mm512_srli_epi16(hb, 3), bit4));
  }
}

// Q2_K / Q3_K (2 low bits four chunks per byte): chunk c's bits 2 (c / 2)..+1 of the 64
// bytes at blk + 64 (c % 2); with kHigh 1 (Q3_K), bit c of the plane at blk + 128 becomes
// bit 2 (16-bit shifts: the masks keep bits of the same byte).
template <int kHigh>
inline void UnpackChunks2(const uint8_t* blk, __m512i* wq) {
  const __m512i low2 = _mm512_set1_epi8(3);
  for (int p = 0; p < 2; ++p) {
    const __m512i v = _mm512_load_si512(blk + 64 * p);
    wq[p] = _mm512_and_si512(v, low2);
    wq[p + 2] = _mm512_and_si512(_mm512_srli_epi16(v, 2), low2);
    wq[p + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low2);
    wq[p + 6] = _mm512_and_si512(_mm512_srli_epi16(v, 6), low2);
  }
  if constexpr (kHigh == 1) {
    const __m512i hb = _mm512_load_si512(blk + 128);
    const __m512i bit2 = _mm512_set1_epi8(4);
    wq[0] = _mm512_or_si512(wq[0], _mm512_and_si512(_mm512_slli_epi16(hb, 2), bit2));
    wq[1] = _mm512_or_si512(wq[1], _mm512_and_si512(_mm512_slli_epi16(hb, 1), bit2));
    wq[2] = _mm512_or_si512(wq[2], _mm512_and_si512(hb, bit2));
    for (int c = 3; c < 8; ++c) {
      wq[c] = _mm512_or_si512(wq[c], _mm512_and_si512(_mm512_srli_epi16(hb, c - 2), bit2));
    }
  }
}

}  // namespace radixlm::kernels::cpu
