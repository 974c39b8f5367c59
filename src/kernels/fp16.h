// Half-precision conversions: IEEE binary16 (F16) and bfloat16 (BF16) <-> float.
//
// Scalar conversions are exact bit manipulations (no table, no ISA requirement):
//   F16ToF32 / Bf16ToF32: exact (every half value is a float), incl. subnormals, inf, NaN.
//   F32ToF16: round-to-nearest-even; overflow -> inf; NaN stays NaN (quiet).
//   F32ToBf16: round-to-nearest-even; NaN stays NaN (quiet).
// Row conversions dispatch at runtime to F16C/AVX2 code where the CPU has it; results are
// bit-identical to the scalar functions.
#pragma once

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

// Row conversions: dst[i] = convert(src[i]) for i in [0, n). src and dst must not overlap.
void F16ToF32Row(const uint16_t* src, float* dst, int64_t n);
void F32ToF16Row(const float* src, uint16_t* dst, int64_t n);
void Bf16ToF32Row(const uint16_t* src, float* dst, int64_t n);
void F32ToBf16Row(const float* src, uint16_t* dst, int64_t n);

}  // namespace radixlm::kernels
