#include "kernels/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/activations_impl.h"
#include "test_util.h"

namespace radixlm::kernels {
namespace {

using testing::RandomFloats;

double GeluRef(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
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
    EXPECT_NEAR(g[i], GeluRef(x[i]), tol) << x[i];
    EXPECT_NEAR(s[i], SiluRef(x[i]), tol) << x[i];
    EXPECT_NEAR(gs[i], GeluRef(x[i]), tol) << x[i];
    EXPECT_NEAR(ss[i], SiluRef(x[i]), tol) << x[i];
  }
  const auto up = RandomFloats(rng, n);
  std::vector<float> geglu(n), swiglu(n);
  GeGlu(x.data(), up.data(), geglu.data(), n);
  SwiGlu(x.data(), up.data(), swiglu.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(geglu[i], g[i] * up[i], 1e-6 * std::fabs(g[i]) + 1e-30);
    EXPECT_NEAR(swiglu[i], s[i] * up[i], 1e-6 * std::fabs(s[i]) + 1e-30);
  }
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
