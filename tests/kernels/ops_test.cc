#include "kernels/ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/activations_impl.h"
#include "kernels/fp16.h"
#include "test_util.h"

namespace radixlm::kernels {
namespace {

using testing::RandomFloats;

double GeluRef(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
// ggml's CPU GELU (what radixlm emulates): the formula in float (tanhf) on x rounded to F16,
// the result rounded to F16; 0 / x outside (-10, 10).
double GeluF16Ref(float x) {
  if (x <= -10.0f) return 0.0;
  if (x >= 10.0f) return x;
  const float h = F16ToF32(F32ToF16(x));
  const float g =
      0.5f * h * (1.0f + std::tanh(0.7978845608028654f * h * (1.0f + 0.044715f * h * h)));
  return F16ToF32(F32ToF16(g));
}
double SiluRef(double x) { return x / (1.0 + std::exp(-x)); }

TEST(Ops, RmsNormMatchesFormula) {
  std::mt19937 rng(1);
  const int64_t rows = 3, dim = 641;
  const auto x = RandomFloats(rng, rows * dim, -4.0f, 4.0f);
  const auto w = RandomFloats(rng, dim);
  std::vector<float> y(rows * dim), y_now(rows * dim);
  RmsNorm(x.data(), w.data(), rows, dim, 1e-6f, y.data());
  RmsNorm(x.data(), nullptr, rows, dim, 1e-6f, y_now.data());
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < dim; ++i) ss += double(x[r * dim + i]) * x[r * dim + i];
    const double inv = 1.0 / std::sqrt(ss / dim + 1e-6);
    for (int64_t i = 0; i < dim; ++i) {
      EXPECT_NEAR(y[r * dim + i], x[r * dim + i] * inv * w[i], 1e-5);
      EXPECT_NEAR(y_now[r * dim + i], x[r * dim + i] * inv, 1e-5);
    }
  }
  // In place.
  std::vector<float> z = x;
  RmsNorm(z.data(), w.data(), rows, dim, 1e-6f, z.data());
  EXPECT_EQ(z, y);
}

TEST(Ops, ActivationsMatchFormulasIncludingExtremes) {
  std::vector<float> x = {0.0f,  -0.0f,  1e-30f, 0.5f,   -0.5f,  3.0f,    -3.0f, 10.0f, -10.0f,
                          30.0f, -30.0f, 88.0f,  -88.0f, 200.0f, -200.0f, 1e30f, -1e30f};
  std::mt19937 rng(2);
  const auto more = RandomFloats(rng, 1000, -12.0f, 12.0f);
  x.insert(x.end(), more.begin(), more.end());
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> g(n), s(n), gs(n), ss(n);
  GeluTanh(x.data(), g.data(), n);
  Silu(x.data(), s.data(), n);
  cpu::scalar::GeluTanh(x.data(), gs.data(), n);
  cpu::scalar::Silu(x.data(), ss.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const double tol = 2e-6 * std::max(1.0, std::fabs(double(x[i])));
    // Exactly ggml's value; and, for the F16-rounded input, within F16 output rounding (plus
    // float cancellation in 1 + tanh for x < -4) of the double formula.
    EXPECT_EQ(g[i], static_cast<float>(GeluF16Ref(x[i]))) << x[i];
    if (std::fabs(x[i]) < 10.0f) {
      const double want = GeluRef(F16ToF32(F32ToF16(x[i])));
      EXPECT_NEAR(g[i], want, std::ldexp(std::fabs(want), -10) + 4e-7) << x[i];
    }
    EXPECT_EQ(g[i], gs[i]) << x[i];  // SIMD and scalar: the same table lookups
    EXPECT_NEAR(s[i], SiluRef(x[i]), tol) << x[i];
    EXPECT_NEAR(ss[i], SiluRef(x[i]), tol) << x[i];
  }
  const auto up = RandomFloats(rng, n);
  std::vector<float> geglu(n), geglu_scalar(n), swiglu(n);
  GeGlu(x.data(), up.data(), geglu.data(), n);
  cpu::scalar::GeGlu(x.data(), up.data(), geglu_scalar.data(), n);
  SwiGlu(x.data(), up.data(), swiglu.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(geglu[i], x[i] <= -10.0f ? 0.0f : g[i] * up[i]) << x[i];
    EXPECT_EQ(geglu[i], geglu_scalar[i]) << x[i];
    EXPECT_NEAR(swiglu[i], s[i] * up[i], 1e-6 * std::fabs(s[i]) + 1e-30);
  }
}

// gpt-oss's clamped SwiGLU: the gate clamped above at 7 (not below), up to [-7, 7] and shifted
// by one, the sigmoid's slope 1.702 (llama.cpp's swiglu_oai). In place, as the FFN calls it.
TEST(Ops, SwiGluOaiClampsGateAndUp) {
  std::vector<float> gate = {-30.0f, -7.5f, -1.0f, 0.0f, 0.5f, 6.9f, 7.0f, 9.0f, 100.0f};
  std::vector<float> up = {1.0f, -9.0f, 0.25f, 3.0f, -1.0f, 7.5f, -7.0f, 2.0f, 50.0f};
  std::mt19937 rng(8);
  const auto more_g = RandomFloats(rng, 500, -12.0f, 12.0f);
  const auto more_u = RandomFloats(rng, 500, -12.0f, 12.0f);
  gate.insert(gate.end(), more_g.begin(), more_g.end());
  up.insert(up.end(), more_u.begin(), more_u.end());
  const int64_t n = static_cast<int64_t>(gate.size());
  std::vector<float> out = gate;
  SwiGluOai(out.data(), up.data(), out.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const double g = std::min(double{gate[i]}, 7.0);
    const double u = std::clamp(double{up[i]}, -7.0, 7.0);
    const double want = g / (1.0 + std::exp(-1.702 * g)) * (u + 1.0);
    EXPECT_NEAR(out[i], want, 2e-6 * std::fabs(want) + 1e-30) << gate[i] << " " << up[i];
  }
  EXPECT_LT(std::fabs(out[0]), 1e-15f);  // gate -30: ~0 (the gate is not clamped below)
  EXPECT_NEAR(out[8], 7.0 / (1.0 + std::exp(-1.702 * 7.0)) * 8.0, 1e-5);  // both clamped
}

TEST(Ops, SoftmaxIsStableAndHandlesMaskedEntries) {
  std::vector<float> x = {1000.0f, 1001.0f, -std::numeric_limits<float>::infinity(), 999.0f};
  Softmax(x.data(), 4);
  const double e0 = std::exp(-1.0), e2 = std::exp(-2.0), z = e0 + 1 + e2;
  EXPECT_NEAR(x[0], e0 / z, 1e-6);
  EXPECT_NEAR(x[1], 1 / z, 1e-6);
  EXPECT_EQ(x[2], 0.0f);
  EXPECT_NEAR(x[3], e2 / z, 1e-6);
  std::vector<float> all_masked(3, -std::numeric_limits<float>::infinity());
  Softmax(all_masked.data(), 3);
  for (float v : all_masked) EXPECT_EQ(v, 0.0f);
}

TEST(Ops, ElementwiseHelpers) {
  const std::vector<float> a = {1, 2, 3}, b = {4, 5, 6};
  std::vector<float> o(3);
  Add(a.data(), b.data(), o.data(), 3);
  EXPECT_EQ(o, (std::vector<float>{5, 7, 9}));
  Mul(a.data(), b.data(), o.data(), 3);
  EXPECT_EQ(o, (std::vector<float>{4, 10, 18}));
  Scale(a.data(), 2.0f, o.data(), 3);
  EXPECT_EQ(o, (std::vector<float>{2, 4, 6}));
  AddScaled(a.data(), b.data(), 0.5f, o.data(), 3);
  EXPECT_EQ(o, (std::vector<float>{3, 4.5f, 6}));
  std::vector<float> c = {0.0f, 10.0f, -1000.0f};
  SoftCap(c.data(), 30.0f, 3);
  EXPECT_EQ(c[0], 0.0f);
  EXPECT_NEAR(c[1], 30.0 * std::tanh(10.0 / 30.0), 1e-5);
  EXPECT_NEAR(c[2], -30.0, 1e-5);
}

}  // namespace
}  // namespace radixlm::kernels
