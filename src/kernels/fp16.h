// Half-precision conversions: IEEE binary16 (F16) and bfloat16 (BF16) <-> float, and the 8-bit
// float E5M2 (OCP FP8: 1 sign, 5 exponent, 2 mantissa bits; F16's top byte) used by the
// fp8_e5m2 KV cache.
//
// Scalar conversions are exact bit manipulations (no table, no ISA requirement):
//   F16ToF32 / Bf16ToF32: exact (every half value is a float), incl. subnormals, inf, NaN.
//   F32ToF16: round-to-nearest-even; overflow -> inf; NaN stays NaN (quiet).
//   F32ToBf16: round-to-nearest-even; NaN stays NaN (quiet).
//   E5M2ToF32: exact. F32ToE5M2: the F16 value (F32ToF16) rounded to nearest even in E5M2,
//   finite values saturating at +-57344 (the largest finite E5M2); inf stays inf, NaN NaN.
// Row conversions dispatch at runtime to F16C/AVX2 code where the CPU has it; results are
// bit-identical to the scalar functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace radixlm::kernels {

inline float BitsToF32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
inline uint32_t F32ToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float F16ToF32(uint16_t h) {
  // Shift the exponent/mantissa into float position and rescale by 2^112 (the bias
  // difference); subnormal halves become normal floats through the multiply.
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  if (em >= 0x7c00u) {  // inf / NaN
    return BitsToF32(sign | 0x7f800000u | (static_cast<uint32_t>(em & 0x03ffu) << 13));
  }
  const float mag = BitsToF32(em << 13) * 0x1p112f;
  return BitsToF32(sign | F32ToBits(mag));
}

inline uint16_t F32ToF16(float f) {
  const uint32_t x = F32ToBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520
  if (ax < 0x38800000u) {
    // Result is subnormal (or zero): align the mantissa by adding a magic float whose ulp is
    // the half subnormal step 2^-24; the FPU does the round-to-nearest-even.
    const float r = BitsToF32(ax) + 0.5f;  // 0.5 has ulp 2^-24
    return static_cast<uint16_t>(sign | (F32ToBits(r) - F32ToBits(0.5f)));
  }
  // Normal: rebias exponent (127 -> 15) and round the 13 dropped mantissa bits to nearest even.
  const uint32_t odd = (ax >> 13) & 1u;
  const uint32_t rounded = ax + 0xc8000fffu + odd;  // -(112 << 23) + 0xfff + odd (mod 2^32)
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

inline float Bf16ToF32(uint16_t b) { return BitsToF32(static_cast<uint32_t>(b) << 16); }

inline uint16_t F32ToBf16(float f) {
  const uint32_t x = F32ToBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

inline float E5M2ToF32(uint8_t b) { return F16ToF32(static_cast<uint16_t>(b << 8)); }

inline uint8_t F16ToE5M2(uint16_t h) {
  const uint16_t sign = h & 0x8000u;
  const uint16_t em = h & 0x7fffu;
  if (em > 0x7c00u) return static_cast<uint8_t>((h >> 8) | 0x02u);  // NaN stays (quiet) NaN
  if (em == 0x7c00u) return static_cast<uint8_t>(h >> 8);           // inf
  const uint32_t rounded = em + 0x7fu + ((em >> 8) & 1u);
  const uint32_t mag = std::min<uint32_t>(rounded >> 8, 0x7bu);  // saturate at 57344
  return static_cast<uint8_t>((sign >> 8) | mag);
}

inline uint8_t F32ToE5M2(float f) {
  // Finite floats beyond F16's range saturate too (F32ToF16 would make them inf).
  const uint32_t x = F32ToBits(f);
  if ((x & 0x7fffffffu) > 0x47600000u && (x & 0x7fffffffu) < 0x7f800000u) {  // 57344 < |f| < inf
    return static_cast<uint8_t>(((x >> 24) & 0x80u) | 0x7bu);
  }
  return F16ToE5M2(F32ToF16(f));
}

// Row conversions: dst[i] = convert(src[i]) for i in [0, n). src and dst must not overlap.
void F16ToF32Row(const uint16_t* src, float* dst, int64_t n);
void F32ToF16Row(const float* src, uint16_t* dst, int64_t n);
void Bf16ToF32Row(const uint16_t* src, float* dst, int64_t n);
void F32ToBf16Row(const float* src, uint16_t* dst, int64_t n);
void E5M2ToF32Row(const uint8_t* src, float* dst, int64_t n);
void F32ToE5M2Row(const float* src, uint8_t* dst, int64_t n);

}  // namespace radixlm::kernels
