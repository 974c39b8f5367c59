#include "kernels/fp16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/isa.h"
#include "kernels/dot.h"

namespace radixlm::kernels {
namespace {

// Reference half -> float by the definition (sign, exponent, mantissa).
double HalfValue(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
  double v;
  if (exp == 0) {
    v = std::ldexp(mant, -24);
  } else if (exp == 31) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(1024 + mant, exp - 25);
  }
  return sign ? -v : v;
}

TEST(Fp16, EveryHalfConvertsExactlyAndRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = F16ToF32(static_cast<uint16_t>(h));
    const double ref = HalfValue(static_cast<uint16_t>(h));
    if (std::isnan(ref)) {
      EXPECT_TRUE(std::isnan(f));
      EXPECT_TRUE(std::isnan(F16ToF32(F32ToF16(f))));
      continue;
    }
    EXPECT_EQ(static_cast<double>(f), ref) << h;
    EXPECT_EQ(F32ToF16(f), h) << h;
  }
}

TEST(Fp16, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties to even (1.0).
  EXPECT_EQ(F32ToF16(1.0f + std::ldexp(1.0f, -11)), F32ToF16(1.0f));
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  EXPECT_EQ(F16ToF32(F32ToF16(1.0f + 3 * std::ldexp(1.0f, -11))), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(F16ToF32(F32ToF16(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(F16ToF32(F32ToF16(65520.0f))));
  EXPECT_EQ(F16ToF32(F32ToF16(65519.0f)), 65504.0f);
  EXPECT_EQ(F16ToF32(F32ToF16(std::ldexp(1.0f, -25))), 0.0f);  // tie -> even (0)
  EXPECT_EQ(F16ToF32(F32ToF16(std::ldexp(1.5f, -25))), std::ldexp(1.0f, -24));
  EXPECT_EQ(F32ToF16(-0.0f), 0x8000);
}

TEST(Bf16, RoundsToNearestEvenAndKeepsNan) {
  EXPECT_EQ(Bf16ToF32(F32ToBf16(1.0f)), 1.0f);
  EXPECT_EQ(F32ToBf16(1.0f + std::ldexp(1.0f, -8)), F32ToBf16(1.0f));  // tie -> even
  EXPECT_EQ(Bf16ToF32(F32ToBf16(1.0f + 3 * std::ldexp(1.0f, -8))), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(Bf16ToF32(F32ToBf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(Bf16ToF32(F32ToBf16(std::numeric_limits<float>::infinity()))));
}

TEST(Fp16, SimdRowsMatchScalarBitForBit) {
  std::mt19937 rng(5);
  std::vector<float> src(1003);
  for (auto& x : src) {
    uint32_t bits = rng();
    if (rng() % 4 == 0) bits = (bits & 0x80000000u) | (0x33000000u + (bits & 0x0fffffffu));
    x = BitsToF32(bits);  // any float, incl. subnormal, inf, NaN, half-subnormal range
  }
  const int64_t n = static_cast<int64_t>(src.size());
  std::vector<uint16_t> h_scalar(n), h_vec(n), b_scalar(n), b_vec(n);
  cpu::scalar::F32ToF16Row(src.data(), h_scalar.data(), n);
  cpu::scalar::F32ToBf16Row(src.data(), b_scalar.data(), n);
  F32ToF16Row(src.data(), h_vec.data(), n);
  F32ToBf16Row(src.data(), b_vec.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(src[i])) {
      EXPECT_TRUE(std::isnan(F16ToF32(h_vec[i])));
      EXPECT_TRUE(std::isnan(Bf16ToF32(b_vec[i])));
      continue;
    }
    EXPECT_EQ(h_vec[i], h_scalar[i]) << src[i];
    EXPECT_EQ(b_vec[i], b_scalar[i]) << src[i];
  }
  std::vector<float> f_scalar(n), f_vec(n);
  cpu::scalar::F16ToF32Row(h_scalar.data(), f_scalar.data(), n);
  F16ToF32Row(h_scalar.data(), f_vec.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isnan(f_scalar[i])) {
      EXPECT_EQ(F32ToBits(f_vec[i]), F32ToBits(f_scalar[i]));
    }
  }
  cpu::scalar::Bf16ToF32Row(b_scalar.data(), f_scalar.data(), n);
  Bf16ToF32Row(b_scalar.data(), f_vec.data(), n);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(F32ToBits(f_vec[i]), F32ToBits(f_scalar[i]));
}

}  // namespace
}  // namespace radixlm::kernels
