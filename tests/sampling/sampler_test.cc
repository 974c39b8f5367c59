// Sampler: greedy, temperature / top-k / top-p / min-p distributions, seeding, edge cases.
#include "sampling/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <vector>

namespace radixlm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> RandomLogits(int32_t vocab, uint32_t seed, float scale = 3.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> logits(vocab);
  for (float& x : logits) x = normal(rng);
  return logits;
}

// The distribution the sampler should draw from, by brute force in double: softmax(l / T), then
// top_k, top_p, min_p, each renormalizing what the previous left.
// Token ids by descending logit, ties to the lower id.
std::vector<int32_t> SortedOrder(const std::vector<float>& logits) {
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  return order;
}

std::vector<double> ReferenceDistribution(const std::vector<float>& logits, const SamplingParams& p,
                                          const std::vector<int32_t>& order) {
  const size_t vocab = logits.size();
  const double max = logits[order[0]];
  std::vector<double> prob(vocab);
  for (size_t t = 0; t < vocab; ++t) prob[t] = std::exp((logits[t] - max) / p.temperature);
  size_t n = static_cast<size_t>(p.EffectiveTopK(static_cast<int32_t>(vocab)));
  double mass = 0;
  for (size_t j = 0; j < n; ++j) mass += prob[order[j]];
  double cum = 0;
  size_t keep = 0;
  while (keep < n && cum <= p.top_p * mass) cum += prob[order[keep++]];
  n = keep;
  const double threshold = p.min_p * prob[order[0]];
  keep = 1;
  while (keep < n && prob[order[keep]] >= threshold) ++keep;
  n = keep;
  std::vector<double> dist(vocab, 0.0);
  mass = 0;
  for (size_t j = 0; j < n; ++j) mass += prob[order[j]];
  for (size_t j = 0; j < n; ++j) dist[order[j]] = prob[order[j]] / mass;
  return dist;
}

std::vector<double> ReferenceDistribution(const std::vector<float>& logits,
                                          const SamplingParams& p) {
  return ReferenceDistribution(logits, p, SortedOrder(logits));
}

// Pearson's chi-square of `counts` against `dist`; tokens of zero expected mass must never occur.
double ChiSquare(const std::vector<int>& counts, const std::vector<double>& dist, int draws,
                 int* dof) {
  double chi2 = 0;
  *dof = -1;
  for (size_t t = 0; t < counts.size(); ++t) {
    if (dist[t] == 0.0) {
      EXPECT_EQ(counts[t], 0) << "token " << t << " has zero probability but was sampled";
      continue;
    }
    const double expected = draws * dist[t];
    chi2 += (counts[t] - expected) * (counts[t] - expected) / expected;
    ++*dof;
  }
  return chi2;
}

// Draws `draws` tokens (steps 0..draws-1 of `seed`) and checks them against the reference.
void ExpectMatchesReference(const std::vector<float>& logits, const SamplingParams& params,
                            uint64_t seed, int draws = 20000) {
  Sampler sampler(static_cast<int32_t>(logits.size()));
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < draws; ++i) {
    const SampleResult r = sampler.Sample(logits, params, {.seed = seed, .step = uint64_t(i)});
    ASSERT_GE(r.token, 0);
    ASSERT_LT(r.token, static_cast<int32_t>(logits.size()));
    ++counts[r.token];
  }
  const std::vector<double> dist = ReferenceDistribution(logits, params);
  int dof = 0;
  const double chi2 = ChiSquare(counts, dist, draws, &dof);
  if (dof == 0) return;  // a single possible token: the zero-mass check above is the test
  // Mean dof, sd sqrt(2 dof): allow 6 sd. The seeds are fixed, so this is deterministic.
  EXPECT_LT(chi2, dof + 6.0 * std::sqrt(2.0 * dof)) << "dof " << dof;
}

int32_t ArgMax(const std::vector<float>& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

TEST(SamplerTest, UniformIsInUnitIntervalAndDependsOnSeedAndStep) {
  double sum = 0;
  for (uint64_t step = 0; step < 10000; ++step) {
    const double u = UniformForStep(7, step);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
  EXPECT_EQ(UniformForStep(7, 3), UniformForStep(7, 3));
  EXPECT_NE(UniformForStep(7, 3), UniformForStep(7, 4));
  EXPECT_NE(UniformForStep(7, 3), UniformForStep(8, 3));
}

TEST(SamplerTest, ResolveSeedUsesSamplingSeedElseRandom) {
  SamplingParams p;
  p.sampling_seed = 1234;
  EXPECT_EQ(ResolveSeed(p), 1234u);
  p.sampling_seed.reset();
  std::set<uint64_t> seen;
  for (int i = 0; i < 100; ++i) seen.insert(ResolveSeed(p));
  EXPECT_EQ(seen.size(), 100u);
}

TEST(SamplerTest, GreedyIsArgmax) {
  SamplingParams p;
  p.temperature = 0.0f;
  Sampler sampler(1000);
  for (uint32_t row = 0; row < 20; ++row) {
    const std::vector<float> logits = RandomLogits(1000, row);
    EXPECT_EQ(sampler.Sample(logits, p, {.seed = row}).token, ArgMax(logits));
  }
  // Ties go to the lowest id, like torch.argmax.
  std::vector<float> tied = {1.0f, 5.0f, 2.0f, 5.0f};
  Sampler small(4);
  EXPECT_EQ(small.Sample(tied, p, {}).token, 1);
}

TEST(SamplerTest, TopK1AndTinyTopPAreGreedy) {
  Sampler sampler(500);
  for (uint32_t row = 0; row < 10; ++row) {
    const std::vector<float> logits = RandomLogits(500, 100 + row, 1.0f);
    SamplingParams top_k1;
    top_k1.top_k = 1;
    SamplingParams tiny_top_p;
    tiny_top_p.top_p = 1e-6f;
    SamplingParams tiny_top_p_with_k;
    tiny_top_p_with_k.top_p = 1e-6f;
    tiny_top_p_with_k.top_k = 50;
    for (uint64_t step = 0; step < 50; ++step) {
      const SampleOptions options{.seed = row, .step = step};
      EXPECT_EQ(sampler.Sample(logits, top_k1, options).token, ArgMax(logits));
      EXPECT_EQ(sampler.Sample(logits, tiny_top_p, options).token, ArgMax(logits));
      EXPECT_EQ(sampler.Sample(logits, tiny_top_p_with_k, options).token, ArgMax(logits));
    }
  }
}

TEST(SamplerTest, MinPOneIsGreedyAndMinPFilters) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.15f),
                                     std::log(0.05f)};
  SamplingParams p;
  p.min_p = 1.0f;
  Sampler sampler(4);
  for (uint64_t step = 0; step < 200; ++step) {
    EXPECT_EQ(sampler.Sample(logits, p, {.seed = 3, .step = step}).token, 0);
  }
  // min_p 0.25: threshold 0.125 keeps tokens 0..2, drops 3 (prob 0.05).
  p.min_p = 0.25f;
  ExpectMatchesReference(logits, p, 11);
  const std::vector<double> dist = ReferenceDistribution(logits, p);
  EXPECT_EQ(dist[3], 0.0);
  EXPECT_NEAR(dist[0], 0.5 / 0.95, 1e-6);
}

TEST(SamplerTest, DistributionMatchesTemperatureSoftmax) {
  const std::vector<float> logits = {2.0f, 1.0f, 0.5f, 0.0f, -0.5f, -1.0f, 1.5f, 0.2f};
  for (float temperature : {1.0f, 0.7f, 2.0f}) {
    SamplingParams p;
    p.temperature = temperature;
    SCOPED_TRACE(temperature);
    ExpectMatchesReference(logits, p, 42);
  }
  // Spot-check the reference itself against softmax(l / T).
  SamplingParams p;
  p.temperature = 0.7f;
  const std::vector<double> dist = ReferenceDistribution(logits, p);
  double z = 0;
  for (float l : logits) z += std::exp(l / 0.7);
  EXPECT_NEAR(dist[0], std::exp(2.0 / 0.7) / z, 1e-6);
}

TEST(SamplerTest, TopKTopPDistributions) {
  const std::vector<float> logits = RandomLogits(64, 5, 1.5f);
  SamplingParams top_k;
  top_k.top_k = 5;
  ExpectMatchesReference(logits, top_k, 1);
  SamplingParams top_p;
  top_p.top_p = 0.8f;
  ExpectMatchesReference(logits, top_p, 2);
  SamplingParams all;
  all.temperature = 0.8f;
  all.top_k = 20;
  all.top_p = 0.9f;
  all.min_p = 0.05f;
  ExpectMatchesReference(logits, all, 3);
  SamplingParams top_p_min_p;
  top_p_min_p.top_p = 0.95f;
  top_p_min_p.min_p = 0.1f;
  ExpectMatchesReference(logits, top_p_min_p, 4);
}

TEST(SamplerTest, WideNucleusDistribution) {
  // A flat row: the nucleus has many tokens spread over a few histogram buckets, with the cut
  // inside one of them.
  const std::vector<float> logits = RandomLogits(300, 6, 0.3f);
  SamplingParams p;
  p.top_p = 0.7f;
  const std::vector<double> dist = ReferenceDistribution(logits, p);
  EXPECT_GT(std::count_if(dist.begin(), dist.end(), [](double x) { return x > 0; }), 150);
  ExpectMatchesReference(logits, p, 12, 12000);
  p.min_p = 0.8f;  // with min_p on top
  ExpectMatchesReference(logits, p, 13, 6000);
}

TEST(SamplerTest, LargeTopKUsesSelection) {
  // k above the heap limit: nth_element path; every draw must be among the k best.
  const std::vector<float> logits = RandomLogits(6000, 8, 2.0f);
  SamplingParams p;
  p.top_k = 3000;
  const std::vector<double> dist = ReferenceDistribution(logits, p);
  Sampler sampler(6000);
  for (uint64_t step = 0; step < 100; ++step) {
    const int32_t token = sampler.Sample(logits, p, {.seed = 4, .step = step}).token;
    ASSERT_GT(dist[token], 0.0) << token;
  }
  p.top_k = 2;  // and a tiny k with a tie at the boundary resolved to the lower id
  std::vector<float> tied = {1.0f, 3.0f, 2.0f, 3.0f, 2.0f};
  Sampler small(5);
  for (uint64_t step = 0; step < 100; ++step) {
    const int32_t token = small.Sample(tied, p, {.seed = 4, .step = step}).token;
    EXPECT_TRUE(token == 1 || token == 3) << token;
  }
  p.top_k = 3;
  for (uint64_t step = 0; step < 100; ++step) {
    const int32_t token = small.Sample(tied, p, {.seed = 4, .step = step}).token;
    EXPECT_NE(token, 4);  // ties with token 2 at the boundary; the lower id wins
    EXPECT_NE(token, 0);
  }
}

TEST(SamplerTest, FlatDistributionTopP) {
  // Equal logits: top_p 0.5 must keep exactly the first half by id (ties to the lower id). The
  // whole row sits in one histogram bucket, which then has to be sorted: the slowest path.
  const std::vector<float> logits(2000, 0.0f);
  SamplingParams p;
  p.top_p = 0.5f;
  const std::vector<double> dist = ReferenceDistribution(logits, p);
  EXPECT_GT(dist[999], 0.0);
  EXPECT_EQ(dist[1001], 0.0);
  Sampler sampler(2000);
  for (uint64_t step = 0; step < 300; ++step) {
    EXPECT_LE(sampler.Sample(logits, p, {.seed = 9, .step = step}).token, 1000);
  }
}

TEST(SamplerTest, SameSeedSameSequenceDifferentSeedsDiffer) {
  const std::vector<float> logits = RandomLogits(300, 77, 1.0f);
  SamplingParams p;
  p.temperature = 1.2f;
  p.top_p = 0.95f;
  Sampler a(300), b(300);
  std::vector<int32_t> first, second, other;
  for (uint64_t step = 0; step < 64; ++step) {
    first.push_back(a.Sample(logits, p, {.seed = 5, .step = step}).token);
    second.push_back(b.Sample(logits, p, {.seed = 5, .step = step}).token);
    other.push_back(a.Sample(logits, p, {.seed = 6, .step = step}).token);
  }
  EXPECT_EQ(first, second);
  EXPECT_NE(first, other);
  // Steps are independent draws, not one repeated draw.
  EXPECT_GT(std::set<int32_t>(first.begin(), first.end()).size(), 10u);
}

TEST(SamplerTest, LargeVocabTopKAndTopPStayInTheReferenceSet) {
  constexpr int32_t kVocab = 262144;
  const std::vector<float> logits = RandomLogits(kVocab, 2024, 1.5f);
  Sampler sampler(kVocab);
  SamplingParams top_k;
  top_k.top_k = 40;
  top_k.temperature = 0.8f;
  SamplingParams top_p;
  top_p.top_p = 0.3f;  // thousands of tokens: past the probe, into the histogram path
  top_p.temperature = 1.0f;
  SamplingParams peaked;
  peaked.top_p = 0.6f;  // ~70 tokens: found by the top-512 probe
  peaked.temperature = 0.37f;
  SamplingParams peaked_min_p = peaked;
  peaked_min_p.min_p = 0.01f;
  const std::vector<int32_t> order = SortedOrder(logits);
  for (const SamplingParams* p : {&top_k, &top_p, &peaked, &peaked_min_p}) {
    const std::vector<double> dist = ReferenceDistribution(logits, *p, order);
    const size_t support = std::count_if(dist.begin(), dist.end(), [](double x) { return x > 0; });
    EXPECT_GT(support, p == &top_p ? 1000u : 5u);
    if (p == &peaked) {
      EXPECT_LT(support, 512u);
    }
    std::set<int32_t> seen;
    for (uint64_t step = 0; step < 16; ++step) {
      const int32_t token = sampler.Sample(logits, *p, {.seed = 1, .step = step}).token;
      ASSERT_GT(dist[token], 0.0) << token;
      seen.insert(token);
    }
    EXPECT_GT(seen.size(), 1u);
  }
}

TEST(SamplerTest, NegativeZeroMinPIsZero) {
  // JSON may carry -0.0; it passes Validate and must behave exactly like 0.
  const std::vector<float> logits = {0.0f, 0.5f, 1.0f, 0.2f};
  SamplingParams p;
  p.min_p = -0.0f;
  ASSERT_TRUE(p.Validate(4).ok());
  ExpectMatchesReference(logits, p, 21, 10000);
}

TEST(SamplerTest, NanMaskedAndInfiniteRows) {
  Sampler sampler(5);
  SamplingParams p;
  // NaN counts as -inf.
  std::vector<float> with_nan = {NAN, 1.0f, NAN, -kInf, 0.5f};
  for (uint64_t step = 0; step < 200; ++step) {
    const int32_t token = sampler.Sample(with_nan, p, {.seed = 1, .step = step}).token;
    EXPECT_TRUE(token == 1 || token == 4) << token;
  }
  // Everything masked: argmax fallback (token 0), no crash.
  const std::vector<float> masked(5, -kInf);
  EXPECT_EQ(sampler.Sample(masked, p, {.seed = 1, .return_logprob = true}).token, 0);
  // +inf is taken greedily.
  std::vector<float> with_inf = {0.0f, 1.0f, kInf, 3.0f, kInf};
  EXPECT_EQ(sampler.Sample(with_inf, p, {.seed = 1, .return_logprob = true}).token, 2);
  // Only one finite token.
  std::vector<float> single = {-kInf, -kInf, -kInf, 2.0f, -kInf};
  for (uint64_t step = 0; step < 20; ++step) {
    EXPECT_EQ(sampler.Sample(single, p, {.seed = 2, .step = step}).token, 3);
  }
}

TEST(SamplerTest, LogprobsFollowSglang) {
  const std::vector<float> logits = {1.0f, 2.0f, 0.5f, -1.0f};
  auto log_softmax = [&](int32_t token, double temperature) {
    double z = 0;
    for (float l : logits) z += std::exp(l / temperature);
    return logits[token] / temperature - std::log(z);
  };
  Sampler sampler(4);
  std::vector<TokenLogprob> top;

  SamplingParams greedy;
  greedy.temperature = 0.0f;
  SampleResult r =
      sampler.Sample(logits, greedy, {.return_logprob = true, .top_logprobs_num = 2}, &top);
  EXPECT_EQ(r.token, 1);
  EXPECT_NEAR(r.logprob, log_softmax(1, 1.0), 1e-5);  // greedy: temperature 1
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].token, 1);
  EXPECT_FLOAT_EQ(top[0].logprob, r.logprob);
  EXPECT_EQ(top[1].token, 0);

  SamplingParams sampled;
  sampled.temperature = 0.5f;
  sampled.top_k = 2;  // filters do not change the logprobs
  for (uint64_t step = 0; step < 20; ++step) {
    r = sampler.Sample(logits, sampled,
                       {.seed = 3, .step = step, .return_logprob = true, .top_logprobs_num = 4},
                       &top);
    EXPECT_NEAR(r.logprob, log_softmax(r.token, 0.5), 1e-5);
    ASSERT_EQ(top.size(), 4u);
    EXPECT_NEAR(top[3].logprob, log_softmax(3, 0.5), 1e-5);
    r = sampler.Sample(logits, sampled,
                       {.seed = 3,
                        .step = step,
                        .return_logprob = true,
                        .logprob_mode = LogprobMode::kBeforeTemperature});
    EXPECT_NEAR(r.logprob, log_softmax(r.token, 1.0), 1e-5);
  }
  // top_p path reuses its normalizer; it must agree too.
  SamplingParams nucleus;
  nucleus.temperature = 0.8f;
  nucleus.top_p = 0.9f;
  r = sampler.Sample(logits, nucleus, {.seed = 8, .return_logprob = true});
  EXPECT_NEAR(r.logprob, log_softmax(r.token, 0.8), 1e-5);
}

TEST(SamplerTest, TokenIdsLogprobsShareTheTokensDistribution) {
  const std::vector<float> logits = RandomLogits(40, 17);
  const std::vector<int32_t> ids = {5, 0, 39, 5};  // order kept, repeats allowed
  Sampler sampler(40);
  std::vector<TokenLogprob> by_id;
  for (const float temperature : {0.0f, 0.7f}) {
    SamplingParams p;
    p.temperature = temperature;
    for (uint64_t step = 0; step < 10; ++step) {
      const SampleResult r = sampler.Sample(
          logits, p, {.seed = 2, .step = step, .return_logprob = true, .token_ids_logprob = ids},
          nullptr, &by_id);
      ASSERT_EQ(by_id.size(), ids.size());
      const float t = temperature > 0 ? temperature : 1.0f;  // greedy: temperature 1
      for (size_t i = 0; i < ids.size(); ++i) {
        EXPECT_EQ(by_id[i].token, ids[i]);
        EXPECT_NEAR(by_id[i].logprob, TokenLogprobOf(logits, ids[i], t), 1e-5);
      }
      EXPECT_NEAR(r.logprob, TokenLogprobOf(logits, r.token, t), 1e-5);
    }
  }
  // Not asked for without return_logprob: the list is left alone.
  by_id.clear();
  SamplingParams greedy;
  greedy.temperature = 0.0f;
  sampler.Sample(logits, greedy, {.token_ids_logprob = ids}, nullptr, &by_id);
  EXPECT_TRUE(by_id.empty());
}

}  // namespace
}  // namespace radixlm
