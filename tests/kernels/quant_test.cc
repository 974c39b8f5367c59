#include "kernels/quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/cpu/isa.h"
#include "test_util.h"

namespace radixlm::kernels {
namespace {

using testing::RandomFloats;

TEST(Quant, GeometryMatchesGgml) {
  EXPECT_EQ(RowBytes(GgmlType::kF32, 10), 40u);
  EXPECT_EQ(RowBytes(GgmlType::kF16, 10), 20u);
  EXPECT_EQ(RowBytes(GgmlType::kBF16, 10), 20u);
  EXPECT_EQ(RowBytes(GgmlType::kQ4_0, 64), 36u);
  EXPECT_EQ(RowBytes(GgmlType::kQ4_1, 64), 40u);
  EXPECT_EQ(RowBytes(GgmlType::kQ5_0, 64), 44u);
  EXPECT_EQ(RowBytes(GgmlType::kQ5_1, 64), 48u);
  EXPECT_EQ(RowBytes(GgmlType::kQ8_0, 640), 680u);
  EXPECT_EQ(RowBytes(GgmlType::kQ4_K, 512), 288u);
  EXPECT_EQ(RowBytes(GgmlType::kQ5_K, 256), 176u);
  EXPECT_EQ(RowBytes(GgmlType::kQ6_K, 2048), 1680u);
  EXPECT_EQ(RowBytes(GgmlType::kQ8_K, 256), 292u);
  EXPECT_FALSE(IsRowSizeValid(GgmlType::kQ4_K, 640));
  EXPECT_TRUE(IsRowSizeValid(GgmlType::kQ8_0, 640));
  EXPECT_EQ(RowBytes(GgmlType::kQ2_K, 512), 168u);
  EXPECT_EQ(RowBytes(GgmlType::kIQ4_NL, 64), 36u);
  EXPECT_EQ(RowBytes(GgmlType::kIQ1_M, 256), 56u);
  EXPECT_EQ(RowBytes(GgmlType::kMXFP4, 64), 34u);
  EXPECT_FALSE(IsSupportedType(GgmlType::kQ8_1));
  EXPECT_FALSE(IsSupportedType(static_cast<GgmlType>(34)));  // TQ1_0: not read
}

// Round trip of the reference quantizers: RMS error relative to the data's RMS stays below a
// per-type bound (measured values plus ~15% margin; these are simple round-to-nearest schemes,
// so the bounds are regression guards, roughly what ggml's reference quantizers achieve).
TEST(Quant, RoundTripErrorBounds) {
  struct Case {
    GgmlType t;
    double max_rel_rms;
  };
  const Case cases[] = {
      {GgmlType::kF32, 0.0},    {GgmlType::kF16, 3e-4},    {GgmlType::kBF16, 2e-3},
      {GgmlType::kQ4_0, 0.115}, {GgmlType::kQ4_1, 0.097},  {GgmlType::kQ5_0, 0.048},
      {GgmlType::kQ5_1, 0.046}, {GgmlType::kQ8_0, 0.0065}, {GgmlType::kQ4_K, 0.081},
      {GgmlType::kQ5_K, 0.041}, {GgmlType::kQ6_K, 0.021},  {GgmlType::kQ8_K, 0.007},
  };
  std::mt19937 rng(42);
  const int64_t n = 4096;
  for (const Case& c : cases) {
    for (int dist = 0; dist < 2; ++dist) {
      std::vector<float> x = RandomFloats(rng, n);
      if (dist == 1) {  // heavier tails: cubes, with an offset (asymmetric blocks)
        for (auto& v : x) v = v * v * v * 3.0f + 0.2f;
      }
      std::vector<uint8_t> q(RowBytes(c.t, n));
      QuantizeRow(c.t, x.data(), q.data(), n);
      const auto y = testing::Dequantize(c.t, q.data(), n);
      double err = 0, ref = 0;
      for (int64_t i = 0; i < n; ++i) {
        err += (x[i] - y[i]) * (x[i] - y[i]);
        ref += x[i] * x[i];
      }
      EXPECT_LE(std::sqrt(err / ref), c.max_rel_rms)
          << "type " << static_cast<int>(c.t) << " dist " << dist;
    }
  }
}

TEST(Quant, ZeroAndConstantRows) {
  const int64_t n = 512;
  for (GgmlType t : testing::kWeightTypes) {
    for (float value : {0.0f, 0.75f, -3.0f}) {
      std::vector<float> x(n, value);
      std::vector<uint8_t> q(RowBytes(t, n));
      QuantizeRow(t, x.data(), q.data(), n);
      const auto y = testing::Dequantize(t, q.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_NEAR(y[i], value, std::fabs(value) * 0.01 + 1e-6)
            << "type " << static_cast<int>(t) << " value " << value;
      }
    }
  }
}

TEST(Quant, ActivationQuantizersSimdMatchScalarBytes) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t n = 256 * (1 + trial % 4);
    auto x = RandomFloats(rng, n, -5.0f, 5.0f);
    if (trial % 5 == 0) std::fill(x.begin(), x.begin() + 256, 0.0f);  // an all-zero block
    if (trial % 7 == 0) x[3] = 1e6f;                                  // a spike
    std::vector<BlockQ8_0> a(n / 32), b(n / 32);
    cpu::scalar::QuantizeQ8_0(x.data(), a.data(), n);
    QuantizeRowQ8_0(x.data(), b.data(), n);
    ASSERT_EQ(std::memcmp(a.data(), b.data(), sizeof(BlockQ8_0) * a.size()), 0);
    std::vector<BlockQ8K> c(n / 256), d(n / 256);
    cpu::scalar::QuantizeQ8K(x.data(), c.data(), n);
    QuantizeRowQ8K(x.data(), d.data(), n);
    ASSERT_EQ(std::memcmp(c.data(), d.data(), sizeof(BlockQ8K) * c.size()), 0);
    for (const BlockQ8K& blk : d) {
      for (int g = 0; g < 16; ++g) {
        int s = 0;
        for (int j = 0; j < 16; ++j) s += blk.qs[16 * g + j];
        EXPECT_EQ(blk.bsums[g], s);
      }
      for (int j = 0; j < 256; ++j) EXPECT_GE(blk.qs[j], -127);
    }
  }
}

// Hand-built blocks pin the on-disk layouts (nibble order, 5th-bit order, scale packing).
TEST(Quant, DequantizeKnownLayouts) {
  BlockQ4_0 q4{};
  q4.d = F32ToF16(2.0f);
  q4.qs[0] = 0x9F;  // element 0: 15 - 8 = 7, element 16: 9 - 8 = 1
  std::vector<float> y(32);
  DequantizeRow(GgmlType::kQ4_0, &q4, y.data(), 32);
  EXPECT_EQ(y[0], 14.0f);
  EXPECT_EQ(y[16], 2.0f);
  EXPECT_EQ(y[1], -16.0f);

  BlockQ5_0 q5{};
  q5.d = F32ToF16(1.0f);
  q5.qh[0] = 0x01;  // element 0 gets the 5th bit
  q5.qh[2] = 0x01;  // element 16 gets the 5th bit
  DequantizeRow(GgmlType::kQ5_0, &q5, y.data(), 32);
  EXPECT_EQ(y[0], 0.0f);  // 16 - 16
  EXPECT_EQ(y[16], 0.0f);
  EXPECT_EQ(y[1], -16.0f);

  BlockQ4K k4{};
  k4.d = F32ToF16(1.0f);
  k4.dmin = F32ToF16(1.0f);
  k4.scales[0] = 3;        // scale of sub-block 0
  k4.scales[4] = 2;        // min of sub-block 0
  k4.scales[8] = 0x15;     // sub-block 4: scale low 4 bits = 5, min low 4 bits = 1
  k4.scales[0] |= 1 << 6;  // sub-block 4 scale high bits = 1 -> 5 + 16 = 21
  k4.qs[0] = 0x21;         // element 0: 1, element 32: 2
  k4.qs[64] = 0x01;        // element 128 (sub-block 4): 1
  std::vector<float> z(256);
  DequantizeRow(GgmlType::kQ4_K, &k4, z.data(), 256);
  EXPECT_EQ(z[0], 3.0f * 1 - 2.0f);
  EXPECT_EQ(z[128], 21.0f * 1 - 1.0f);
}

}  // namespace
}  // namespace radixlm::kernels
