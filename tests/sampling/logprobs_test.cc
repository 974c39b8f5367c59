// Logprobs: log-softmax, token logprob, top-N, prompt scoring.
#include "sampling/logprobs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "sampling/softmax_math.h"

namespace radixlm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> RandomLogits(int32_t vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::vector<float> logits(vocab);
  for (float& x : logits) x = normal(rng);
  return logits;
}

TEST(LogprobsTest, LogSoftmaxSumsToOneInProbSpace) {
  for (float temperature : {1.0f, 0.3f, 5.0f}) {
    const std::vector<float> logits = RandomLogits(5000, 1);
    std::vector<float> out(logits.size());
    LogSoftmax(logits, temperature, out);
    double total = 0;
    for (float lp : out) {
      EXPECT_LE(lp, 0.0f);
      total += std::exp(static_cast<double>(lp));
    }
    EXPECT_NEAR(total, 1.0, 1e-4) << temperature;
    // Differences of logprobs are differences of scaled logits.
    EXPECT_NEAR(out[1] - out[2], (logits[1] - logits[2]) / temperature, 1e-3);
  }
}

TEST(LogprobsTest, KnownValuesAndTokenLogprob) {
  const std::vector<float> logits = {0.0f, std::log(3.0f)};  // probs 1/4, 3/4
  EXPECT_NEAR(TokenLogprobOf(logits, 0), std::log(0.25), 1e-6);
  EXPECT_NEAR(TokenLogprobOf(logits, 1), std::log(0.75), 1e-6);
  // Temperature 0.5 squares the odds: 1/10, 9/10.
  EXPECT_NEAR(TokenLogprobOf(logits, 0, 0.5f), std::log(0.1), 1e-6);
  // Large logits do not overflow.
  const std::vector<float> big = {1000.0f, 1000.0f};
  EXPECT_NEAR(TokenLogprobOf(big, 1), std::log(0.5), 1e-6);
}

TEST(LogprobsTest, MaskedTokensClampAndEmptyRow) {
  const std::vector<float> logits = {1.0f, -kInf, NAN, 1.0f};
  EXPECT_EQ(TokenLogprobOf(logits, 1), kMinLogprob);
  EXPECT_EQ(TokenLogprobOf(logits, 2), kMinLogprob);
  EXPECT_NEAR(TokenLogprobOf(logits, 3), std::log(0.5), 1e-6);
  const std::vector<float> masked(4, -kInf);
  const LogSoftmaxNormalizer norm = ComputeLogSoftmaxNormalizer(masked);
  EXPECT_TRUE(norm.empty);
  EXPECT_EQ(norm.Logprob(masked[0]), kMinLogprob);
  const std::vector<float> with_inf = {0.0f, kInf, kInf};
  EXPECT_NEAR(TokenLogprobOf(with_inf, 1), std::log(0.5), 1e-6);
  EXPECT_EQ(TokenLogprobOf(with_inf, 0), kMinLogprob);
}

TEST(LogprobsTest, TopLogprobsSortedAndConsistent) {
  const std::vector<float> logits = RandomLogits(20000, 2);
  std::vector<float> all(logits.size());
  LogSoftmax(logits, 0.7f, all);
  std::vector<TokenLogprob> top;
  TopLogprobs(logits, 10, 0.7f, &top);
  ASSERT_EQ(top.size(), 10u);
  std::vector<float> sorted = all;
  std::sort(sorted.begin(), sorted.end(), std::greater<float>());
  for (size_t i = 0; i < top.size(); ++i) {
    EXPECT_FLOAT_EQ(top[i].logprob, all[top[i].token]);
    EXPECT_FLOAT_EQ(top[i].logprob, sorted[i]);
    if (i > 0) {
      EXPECT_GE(top[i - 1].logprob, top[i].logprob);
    }
  }
  // n larger than the vocabulary: every token, sorted; n = 0: nothing.
  const std::vector<float> small = {0.5f, 2.0f, -1.0f};
  TopLogprobs(small, 10, 1.0f, &top);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].token, 1);
  EXPECT_EQ(top[1].token, 0);
  EXPECT_EQ(top[2].token, 2);
  TopLogprobs(small, 0, 1.0f, &top);
  EXPECT_TRUE(top.empty());
  // Ties: lower id first.
  const std::vector<float> tied = {1.0f, 3.0f, 3.0f, 3.0f};
  TopLogprobs(tied, 2, 1.0f, &top);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].token, 1);
  EXPECT_EQ(top[1].token, 2);
}

TEST(LogprobsTest, InputTokenLogprobsScorePrompt) {
  constexpr int32_t kVocab = 50;
  constexpr int kRows = 6;
  std::vector<float> logits;
  for (int i = 0; i < kRows; ++i) {
    const std::vector<float> row = RandomLogits(kVocab, 10 + i);
    logits.insert(logits.end(), row.begin(), row.end());
  }
  const std::vector<int32_t> next = {3, 0, 49, 7, 7, 12};
  std::vector<float> out(kRows);
  std::vector<std::vector<TokenLogprob>> top;
  InputTokenLogprobs(logits, kVocab, next, 1.0f, out, 3, &top);
  ASSERT_EQ(top.size(), static_cast<size_t>(kRows));
  for (int i = 0; i < kRows; ++i) {
    const std::span<const float> row(logits.data() + i * kVocab, kVocab);
    EXPECT_FLOAT_EQ(out[i], TokenLogprobOf(row, next[i]));
    ASSERT_EQ(top[i].size(), 3u);
    std::vector<TokenLogprob> expected;
    TopLogprobs(row, 3, 1.0f, &expected);
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(top[i][j].token, expected[j].token);
      EXPECT_FLOAT_EQ(top[i][j].logprob, expected[j].logprob);
    }
  }
  // token_ids_logprob: each row's logprobs of the requested ids, in their order.
  const std::vector<int32_t> ids = {49, 3, 3};
  std::vector<std::vector<TokenLogprob>> by_id;
  InputTokenLogprobs(logits, kVocab, next, 1.0f, out, 0, nullptr, ids, &by_id);
  ASSERT_EQ(by_id.size(), static_cast<size_t>(kRows));
  for (int i = 0; i < kRows; ++i) {
    const std::span<const float> row(logits.data() + i * kVocab, kVocab);
    ASSERT_EQ(by_id[i].size(), ids.size());
    for (size_t j = 0; j < ids.size(); ++j) {
      EXPECT_EQ(by_id[i][j].token, ids[j]);
      EXPECT_FLOAT_EQ(by_id[i][j].logprob, TokenLogprobOf(row, ids[j]));
    }
  }
  // Temperature applies to every row; no top lists requested.
  std::vector<float> scaled(kRows);
  InputTokenLogprobs(logits, kVocab, next, 2.0f, scaled);
  const std::span<const float> row0(logits.data(), kVocab);
  EXPECT_FLOAT_EQ(scaled[0], TokenLogprobOf(row0, next[0], 2.0f));
}

TEST(SoftmaxMathTest, ExpNonPositiveMatchesStdExp) {
  using softmax_math::ExpNonPositive;
  EXPECT_EQ(ExpNonPositive(0.0f), 1.0f);
  EXPECT_EQ(ExpNonPositive(-kInf), 0.0f);
  EXPECT_EQ(ExpNonPositive(-88.0f), 0.0f);
  EXPECT_EQ(ExpNonPositive(-1e30f), 0.0f);
  EXPECT_TRUE(std::isnan(ExpNonPositive(NAN)));
  double worst = 0;
  for (float x = -87.0f; x <= 0.0f; x += 0.000731f) {
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(ExpNonPositive(x) - want) / want);
  }
  EXPECT_LT(worst, 3e-7);
}

TEST(SoftmaxMathTest, SumsAreAccurateOnLongRows) {
  std::vector<float> row(262144 + 37);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-20.0f, 0.0f);
  for (float& x : row) x = uniform(rng);
  double want = 0;
  for (float x : row) want += std::exp(static_cast<double>(x) * 0.5);
  std::vector<float> out(row.size());
  EXPECT_NEAR(softmax_math::ExpShiftedAndSum(row, 0.0f, 0.5f, out) / want, 1.0, 1e-6);
  EXPECT_NEAR(softmax_math::SumExpShifted(row, 0.0f, 0.5f) / want, 1.0, 1e-6);
  EXPECT_NEAR(out[5], std::exp(row[5] * 0.5), 1e-6);
  bool has_nan = true;
  EXPECT_EQ(softmax_math::MaxIgnoringNan(row, &has_nan), *std::max_element(row.begin(), row.end()));
  EXPECT_FALSE(has_nan);
  row[7] = NAN;
  softmax_math::MaxIgnoringNan(row, &has_nan);
  EXPECT_TRUE(has_nan);
}

}  // namespace
}  // namespace radixlm
