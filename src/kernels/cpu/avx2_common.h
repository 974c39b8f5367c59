// Inline AVX2 helpers shared by the AVX2 kernel files. Include only from translation units
// compiled with -mavx2 -mfma -mf16c. They have internal linkage (an unnamed namespace): the
// AVX-512 files include them too, and a copy compiled with AVX-512 flags must never be the one
// the linker keeps for an AVX2-only CPU's calls.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace radixlm::kernels::cpu::avx2 {
namespace {

inline float HalfToFloat(uint16_t h) { return _cvtsh_ss(h); }

inline __m256i Load256(const void* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

inline float HsumF32(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline int HsumI32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// 16 bytes of packed nibbles -> 32 bytes: low nibbles (elements 0..15), then high (16..31).
inline __m256i NibblesToBytes(const uint8_t* p) {
  const __m128i tmp = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m256i bytes = _mm256_set_m128i(_mm_srli_epi16(tmp, 4), tmp);
  return _mm256_and_si256(bytes, _mm256_set1_epi8(0x0F));
}

// 32 bits (little-endian) -> 32 bytes, 0xFF where the bit is set, else 0.
inline __m256i BitsToBytes(const uint8_t* p) {
  uint32_t x32;
  std::memcpy(&x32, p, sizeof(x32));
  const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101,
                                         0x0000000000000000);
  __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(x32)), shuf);
  bytes = _mm256_or_si256(bytes, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe));
  return _mm256_cmpeq_epi8(bytes, _mm256_set1_epi64x(-1));
}

// Sum of adjacent products of signed bytes x and y, as 8 int32 (each covers 4 bytes).
inline __m256i DotI8PairsI32(__m256i x, __m256i y) {
  const __m256i ax = _mm256_sign_epi8(x, x);  // |x| (as unsigned; -128 -> 128 is still right)
  const __m256i sy = _mm256_sign_epi8(y, x);  // y with x's sign
  const __m256i dot16 = _mm256_maddubs_epi16(ax, sy);
  return _mm256_madd_epi16(dot16, _mm256_set1_epi16(1));
}

// Unsigned bytes u (< 128) times signed bytes y, summed in groups of 4, as 8 int32.
inline __m256i DotU8I8I32(__m256i u, __m256i y) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, y), _mm256_set1_epi16(1));
}

// Sum of each group of 4 signed bytes, as 8 int32.
inline __m256i SumI8Quads(__m256i y) { return DotU8I8I32(_mm256_set1_epi8(1), y); }

// Unpacks the 12 packed bytes of Q4_K/Q5_K scales into 8 scales (low 8 bytes) and 8 mins
// (high 8 bytes), each 6 bits.
inline __m128i UnpackScalesMins(const uint8_t* packed) {
  constexpr uint32_t kMask1 = 0x3f3f3f3f, kMask2 = 0x0f0f0f0f, kMask3 = 0x03030303;
  uint32_t u[4];
  std::memcpy(u, packed, 12);
  u[3] = ((u[2] >> 4) & kMask2) | (((u[1] >> 6) & kMask3) << 4);
  const uint32_t mins_lo = u[1] & kMask1;
  u[1] = (u[2] & kMask2) | (((u[0] >> 6) & kMask3) << 4);
  u[2] = mins_lo;
  u[0] &= kMask1;
  return _mm_set_epi32(static_cast<int>(u[3]), static_cast<int>(u[2]), static_cast<int>(u[1]),
                       static_cast<int>(u[0]));
}

// Shuffle mask broadcasting int16 element i of each 128-bit lane to all 8 positions.
inline __m256i BroadcastI16Mask(int i) {
  const int lo = 2 * i, hi = 2 * i + 1;
  return _mm256_set1_epi16(static_cast<int16_t>(lo | (hi << 8)));
}

}  // namespace
}  // namespace radixlm::kernels::cpu::avx2
