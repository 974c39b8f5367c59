#include "kernels/rope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "test_util.h"

namespace radixlm::kernels {
namespace {

// Direct formula in double: pair k rotated by pos * scale * base^(-2k/d).
std::vector<double> RopeRef(const std::vector<float>& x, int n_heads, int head_dim, int64_t pos,
                            const RopeConfig& c) {
  std::vector<double> y(x.begin(), x.end());
  const int half = c.rope_dim / 2;
  for (int h = 0; h < n_heads; ++h) {
    for (int k = 0; k < half; ++k) {
      const double theta = pos * static_cast<double>(c.freq_scale) *
                           std::pow(double(c.freq_base), -2.0 * k / c.rope_dim);
      const int ia = h * head_dim + (c.neox ? k : 2 * k);
      const int ib = h * head_dim + (c.neox ? k + half : 2 * k + 1);
      const double a = x[ia], b = x[ib];
      y[ia] = a * std::cos(theta) - b * std::sin(theta);
      y[ib] = a * std::sin(theta) + b * std::cos(theta);
    }
  }
  return y;
}

TEST(Rope, BothLayoutsMatchDirectFormula) {
  std::mt19937 rng(3);
  for (bool neox : {false, true}) {
    for (int rope_dim : {64, 32}) {  // 32 < head_dim: the tail passes through
      RopeConfig c;
      c.rope_dim = rope_dim;
      c.freq_base = neox ? 1e6f : 1e4f;
      c.freq_scale = neox ? 0.125f : 1.0f;
      c.neox = neox;
      for (int64_t pos : {0LL, 1LL, 17LL, 4096LL, 100000LL}) {
        const auto x = testing::RandomFloats(rng, 3 * 64);
        auto y = x;
        ApplyRope(y.data(), 3, 64, pos, c);
        const auto ref = RopeRef(x, 3, 64, pos, c);
        for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ref[i], 2e-5) << i << " " << pos;
        auto z = x;
        Rope(c).Apply(z.data(), 3, 64, pos);
        EXPECT_EQ(z, y);
      }
    }
  }
}

TEST(Rope, ApplyRowsUsesPerTokenPositions) {
  RopeConfig c;
  c.rope_dim = 16;
  c.neox = true;
  std::mt19937 rng(4);
  const auto x = testing::RandomFloats(rng, 2 * 2 * 16);
  const int64_t pos[] = {5, 9};
  auto y = x;
  Rope(c).ApplyRows(y.data(), 2, 2, 16, pos);
  for (int t = 0; t < 2; ++t) {
    std::vector<float> xt(x.begin() + t * 32, x.begin() + (t + 1) * 32);
    ApplyRope(xt.data(), 2, 16, pos[t], c);
    for (int i = 0; i < 32; ++i) EXPECT_EQ(y[t * 32 + i], xt[i]);
  }
}

TEST(Rope, Llama3ScalingMatchesMetaReference) {
  RopeConfig c;
  c.rope_dim = 128;
  c.freq_base = 500000.0f;
  c.llama3_factor = 8.0f;
  c.llama3_low_freq_factor = 1.0f;
  c.llama3_high_freq_factor = 4.0f;
  c.llama3_original_max_position = 8192;
  const Rope rope(c);
  for (int k = 0; k < 64; ++k) {
    const double inv = std::pow(500000.0, -2.0 * k / 128);
    const double wavelen = 2 * M_PI / inv;
    double want;
    if (wavelen < 8192.0 / 4) {
      want = inv;
    } else if (wavelen > 8192.0) {
      want = inv / 8;
    } else {
      const double smooth = (8192.0 / wavelen - 1) / (4 - 1);
      want = (1 - smooth) * inv / 8 + smooth * inv;
    }
    EXPECT_NEAR(rope.inv_freq()[k], want, 1e-6 * want) << k;
  }
}

}  // namespace
}  // namespace radixlm::kernels
