// Unpacking of nibble-packed PackedWeights blocks (kernels/packed_weights.h) into the 8 byte
// chunks of 16 rows x 4 columns that vpdpbusd / tdpbsud take. Include only in files compiled
// with AVX-512 F + BW.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace radixlm::kernels::cpu {

// 16 scales at p: IEEE halves (widened exactly) or floats (PackedWeights::half_scales).
inline __m512 LoadScales16(const uint8_t* p, bool half) {
  return half ? _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)))
              : _mm512_load_ps(p);
}

// wq[c] = chunk c of the block at blk (64-byte aligned): low nibbles of bytes 64c.. for c < 4,
// high nibbles of 64(c-4).. for c >= 4; with kHigh, bit c of the plane at blk + 256 becomes
// bit 4 of chunk c (16-bit shifts are safe: bit 4 of a byte only receives bits of that byte).
template <bool kHigh>
inline void UnpackChunks(const uint8_t* blk, __m512i* wq) {
  const __m512i low4 = _mm512_set1_epi8(15);
  for (int c = 0; c < 4; ++c) {
    const __m512i v = _mm512_load_si512(blk + 64 * c);
    wq[c] = _mm512_and_si512(v, low4);
    wq[c + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
  }
  if constexpr (kHigh) {
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

}  // namespace radixlm::kernels::cpu
