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

// Reference decoder by the definition for a minifloat with 1 sign bit, 5 exponent bits (bias 15)
// and kMant mantissa bits: F16 is kMant = 10, E5M2 is kMant = 2 (F16's top byte).
template <int kMant>
double MiniFloatValue(uint32_t code) {
  const int sign = (code >> (5 + kMant)) & 1, exp = (code >> kMant) & 31;
  const int mant = code & ((1 << kMant) - 1);
  double v;
  if (exp == 0) {
    v = std::ldexp(mant, -14 - kMant);
  } else if (exp == 31) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp((1 << kMant) + mant, exp - 15 - kMant);
  }
  return sign ? -v : v;
}

double HalfValue(uint16_t h) { return MiniFloatValue<10>(h); }
double E5M2Value(uint8_t b) { return MiniFloatValue<2>(b); }

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

TEST(E5M2, EveryCodeConvertsExactly) {
  for (uint32_t b = 0; b < 256; ++b) {
    const float f = E5M2ToF32(static_cast<uint8_t>(b));
    const double ref = E5M2Value(static_cast<uint8_t>(b));
    if (std::isnan(ref)) {
      EXPECT_TRUE(std::isnan(f)) << b;
      EXPECT_TRUE(std::isnan(E5M2ToF32(F32ToE5M2(f)))) << b;
      continue;
    }
    EXPECT_EQ(static_cast<double>(f), ref) << b;
    EXPECT_EQ(F32ToE5M2(f), b) << b;
  }
}

// Every F16 value rounds to the nearest E5M2 value (ties to the even code), finite values
// saturating at +-57344; inf and NaN keep their kind.
TEST(E5M2, EveryHalfRoundsToTheNearestCode) {
  std::vector<double> finite;  // the non-negative finite E5M2 values, ascending with the code
  for (int b = 0; b < 0x7c; ++b) finite.push_back(E5M2Value(static_cast<uint8_t>(b)));
  for (uint32_t h = 0; h < 65536; ++h) {
    const double x = HalfValue(static_cast<uint16_t>(h));
    const uint8_t got = F16ToE5M2(static_cast<uint16_t>(h));
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(E5M2ToF32(got))) << h;
      continue;
    }
    if (std::isinf(x)) {
      EXPECT_EQ(E5M2ToF32(got), static_cast<float>(x)) << h;
      continue;
    }
    const double ax = std::fabs(x);
    int best = 0;
    for (int b = 1; b < static_cast<int>(finite.size()); ++b) {
      const double d = std::fabs(finite[b] - ax), db = std::fabs(finite[best] - ax);
      if (d < db || (d == db && (b & 1) == 0)) best = b;
    }
    const uint8_t want = static_cast<uint8_t>(best | (std::signbit(x) ? 0x80 : 0));
    EXPECT_EQ(got, want) << "half " << h << " = " << x;
  }
  EXPECT_EQ(E5M2ToF32(F32ToE5M2(1e6f)), 57344.0f);
  EXPECT_EQ(E5M2ToF32(F32ToE5M2(-1e6f)), -57344.0f);
}

TEST(E5M2, RowsMatchTheScalarConversions) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-300.0f, 300.0f);
  for (const int n : {0, 1, 7, 255, 256, 257, 1000}) {
    std::vector<float> src(n);
    for (float& x : src) x = dist(rng);
    if (n > 6) {  // saturation, inf and NaN on the row path too
      src[1] = 1e6f;
      src[2] = -7e4f;
      src[3] = std::numeric_limits<float>::infinity();
      src[4] = std::numeric_limits<float>::quiet_NaN();
    }
    std::vector<uint8_t> codes(n);
    F32ToE5M2Row(src.data(), codes.data(), n);
    std::vector<float> back(n);
    E5M2ToF32Row(codes.data(), back.data(), n);
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(codes[i], F32ToE5M2(src[i])) << i;
      if (!std::isnan(src[i])) {
        ASSERT_EQ(back[i], E5M2ToF32(codes[i])) << i;
      }
    }
  }
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
