#include "kernels/dot.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

#include "kernels/cpu/isa.h"
#include "kernels/quant.h"
#include "test_util.h"

namespace radixlm::kernels {
namespace {

using testing::Dequantize;
using testing::MakeActivation;
using testing::RandomFloats;
using testing::RandomWeightRow;
using testing::RefDot;
using testing::ScaleKind;

std::string Name(GgmlType t) {
  switch (t) {
    case GgmlType::kF32:
      return "F32";
    case GgmlType::kF16:
      return "F16";
    case GgmlType::kBF16:
      return "BF16";
    case GgmlType::kQ4_0:
      return "Q4_0";
    case GgmlType::kQ4_1:
      return "Q4_1";
    case GgmlType::kQ5_0:
      return "Q5_0";
    case GgmlType::kQ5_1:
      return "Q5_1";
    case GgmlType::kQ8_0:
      return "Q8_0";
    case GgmlType::kQ4_K:
      return "Q4_K";
    case GgmlType::kQ5_K:
      return "Q5_K";
    case GgmlType::kQ6_K:
      return "Q6_K";
    default:
      return "?";
  }
}

class DotTest : public ::testing::TestWithParam<GgmlType> {};

// The dispatched dot equals "dequantize both rows, then dot in double" for random blocks with
// every scale regime (the integer parts are exact, so the tolerance is float rounding only).
TEST_P(DotTest, MatchesDequantizedReference) {
  const GgmlType t = GetParam();
  std::mt19937 rng(1234 + static_cast<int>(t));
  const int64_t bs = BlockSize(t) == 1 ? 32 : BlockSize(t);
  for (ScaleKind kind : {ScaleKind::kNormal, ScaleKind::kTiny, ScaleKind::kHuge, ScaleKind::kZero,
                         ScaleKind::kMixed}) {
    for (int64_t blocks : {1, 2, 3, 7, 10}) {
      const int64_t n = blocks * bs;
      const auto w = RandomWeightRow(rng, t, n, kind);
      const auto xf = RandomFloats(rng, n, -2.0f, 2.0f);
      const auto xq = MakeActivation(t, xf);
      const auto wd = Dequantize(t, w.data(), n);
      const auto xd = Dequantize(ActivationType(t), xq.data(), n);
      const double ref = RefDot(wd, xd, nullptr);
      const double mag = testing::DotMagnitude(t, w, xd);
      const float got = VecDot(t, n, w.data(), xq.data());
      EXPECT_NEAR(got, ref, 2e-6 * mag + 1e-30)
          << Name(t) << " kind=" << static_cast<int>(kind) << " n=" << n;
    }
  }
}

// Every available SIMD path equals the scalar reference.
TEST_P(DotTest, SimdMatchesScalar) {
  const GgmlType t = GetParam();
  std::mt19937 rng(99 + static_cast<int>(t));
  const VecDotFn scalar = GetVecDotFnForIsa(t, Isa::kScalar);
  ASSERT_NE(scalar, nullptr);
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const VecDotFn fn = GetVecDotFnForIsa(t, isa);
    if (fn == nullptr) continue;
    for (int trial = 0; trial < 50; ++trial) {
      const int64_t bs = BlockSize(t) == 1 ? 1 : BlockSize(t);
      // Float types also get lengths that are not a multiple of the vector width.
      const int64_t n = bs == 1 ? 1 + rng() % 700 : bs * (1 + rng() % 12);
      const auto w = RandomWeightRow(rng, t, n, ScaleKind::kMixed);
      const auto xq = MakeActivation(t, RandomFloats(rng, n, -3.0f, 3.0f));
      const double mag = testing::DotMagnitude(t, w, Dequantize(ActivationType(t), xq.data(), n));
      EXPECT_NEAR(fn(n, w.data(), xq.data()), scalar(n, w.data(), xq.data()), 1e-6 * mag + 1e-30)
          << Name(t) << " " << IsaName(isa) << " n=" << n;
    }
  }
}

// Extreme activations: a zero row and rows with one dominant element.
TEST_P(DotTest, ZeroAndSpikyActivations) {
  const GgmlType t = GetParam();
  std::mt19937 rng(7);
  const int64_t n = (BlockSize(t) == 1 ? 32 : BlockSize(t)) * 4;
  const auto w = RandomWeightRow(rng, t, n, ScaleKind::kNormal);
  std::vector<float> zero(n, 0.0f);
  EXPECT_EQ(VecDot(t, n, w.data(), MakeActivation(t, zero).data()), 0.0f) << Name(t);
  std::vector<float> spiky(n, 1e-3f);
  spiky[n / 3] = 1e4f;
  const auto xq = MakeActivation(t, spiky);
  const auto xd = Dequantize(ActivationType(t), xq.data(), n);
  const double ref = RefDot(Dequantize(t, w.data(), n), xd, nullptr);
  EXPECT_NEAR(VecDot(t, n, w.data(), xq.data()), ref,
              2e-6 * testing::DotMagnitude(t, w, xd) + 1e-30)
      << Name(t);
}

// The 4-row kernels equal 4 single-row dots (same arithmetic up to summation order).
TEST_P(DotTest, FourRowKernelMatchesSingleDots) {
  const GgmlType t = GetParam();
  const VecDot4Fn dot4 = GetVecDot4Fn(t);
  if (dot4 == nullptr) GTEST_SKIP() << "no 4-row kernel for " << Name(t);
  std::mt19937 rng(55);
  const int64_t bs = BlockSize(t);
  for (ScaleKind kind : {ScaleKind::kNormal, ScaleKind::kMixed, ScaleKind::kHuge}) {
    const int64_t n = bs * (1 + rng() % 9);
    const auto w = RandomWeightRow(rng, t, n, kind);
    const size_t stride = RowBytes(ActivationType(t), n) + 8;  // padded rows
    std::vector<uint8_t> xs(4 * stride);
    for (int j = 0; j < 4; ++j) {
      const auto xq = MakeActivation(t, RandomFloats(rng, n, -2.0f, 2.0f));
      std::copy(xq.begin(), xq.end(), xs.begin() + j * stride);
    }
    float out[4];
    dot4(n, w.data(), xs.data(), stride, out);
    for (int j = 0; j < 4; ++j) {
      const uint8_t* xj = xs.data() + j * stride;
      const auto xd = Dequantize(ActivationType(t), xj, n);
      EXPECT_NEAR(out[j], VecDot(t, n, w.data(), xj),
                  1e-6 * testing::DotMagnitude(t, w, xd) + 1e-30)
          << Name(t) << " row " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllWeightTypes, DotTest, ::testing::ValuesIn(testing::kWeightTypes),
                         [](const auto& info) { return Name(info.param); });

TEST(DotDispatch, ActivationTypes) {
  EXPECT_EQ(ActivationType(GgmlType::kF16), GgmlType::kF32);
  EXPECT_EQ(ActivationType(GgmlType::kQ5_0), GgmlType::kQ8_0);
  EXPECT_EQ(ActivationType(GgmlType::kQ8_0), GgmlType::kQ8_0);
  EXPECT_EQ(ActivationType(GgmlType::kQ4_K), GgmlType::kQ8_K);
  EXPECT_EQ(ActivationType(GgmlType::kQ6_K), GgmlType::kQ8_K);
  EXPECT_EQ(ActivationType(GgmlType::kIQ4_NL), GgmlType::kQ8_0);
  EXPECT_EQ(ActivationType(GgmlType::kMXFP4), GgmlType::kQ8_0);
  EXPECT_EQ(ActivationType(GgmlType::kQ3_K), GgmlType::kQ8_K);
  EXPECT_EQ(GetVecDotFn(GgmlType::kQ8_K), nullptr);  // an activation format, not a weight
  EXPECT_TRUE(IsaAvailable(Isa::kScalar));
  EXPECT_TRUE(IsaAvailable(ActiveIsa()));
  // Names the SIMD paths the parity tests above exercised on this machine.
  std::printf("dot kernels: active %s; available:", IsaName(ActiveIsa()));
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512, Isa::kAmx}) {
    if (IsaAvailable(isa)) std::printf(" %s", IsaName(isa));
  }
  std::printf("\n");
}

}  // namespace
}  // namespace radixlm::kernels
