#include "sampling/sampler.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

namespace radixlm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
// How many tokens the first top-p round sorts; later rounds grow 4x.
constexpr size_t kTopPFirstRound = 256;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::atomic<uint64_t>& RandomSeedCounter() {
  static std::atomic<uint64_t> counter{[] {
    std::random_device device;
    const uint64_t entropy = (static_cast<uint64_t>(device()) << 32) ^ device();
    const uint64_t now = static_cast<uint64_t>(
        std::chrono::steady_clock::now().time_since_epoch().count());
    return SplitMix64(entropy ^ SplitMix64(now));
  }()};
  return counter;
}

// Draws from candidates [0, n) with weights cand_prob[0, n) (not normalized; the first one is
// positive). Returns the position, never one of zero weight.
size_t DrawPosition(std::span<const float> cand_prob, size_t n, double uniform) {
  double mass = 0.0;
  for (size_t j = 0; j < n; ++j) mass += cand_prob[j];
  const double target = uniform * mass;
  double cum = 0.0;
  size_t last_positive = 0;
  for (size_t j = 0; j < n; ++j) {
    if (cand_prob[j] <= 0.0f) continue;
    cum += cand_prob[j];
    last_positive = j;
    if (cum > target) return j;
  }
  return last_positive;  // rounding: target landed at the very end
}

}  // namespace

uint64_t ResolveSeed(const SamplingParams& params) {
  if (params.sampling_seed.has_value()) return static_cast<uint64_t>(*params.sampling_seed);
  return SplitMix64(RandomSeedCounter().fetch_add(0x9E3779B97F4A7C15ull,
                                                  std::memory_order_relaxed));
}

double UniformForStep(uint64_t seed, uint64_t step) {
  const uint64_t bits = SplitMix64(SplitMix64(seed) ^ SplitMix64(step ^ 0x632BE59BD9B4E019ull));
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

Sampler::Sampler(int32_t vocab_size)
    : vocab_size_(vocab_size),
      index_(vocab_size),
      prob_(vocab_size),
      cand_prob_(vocab_size),
      sanitized_(vocab_size) {
  assert(vocab_size > 0);
}

SampleResult Sampler::Sample(std::span<const float> logits, const SamplingParams& params,
                             const SampleOptions& options,
                             std::vector<TokenLogprob>* top_logprobs) {
  assert(logits.size() == static_cast<size_t>(vocab_size_));
  float max_logit = -kInf;
  bool has_nan = false;
  for (float x : logits) {
    if (x > max_logit) {
      max_logit = x;
    } else if (std::isnan(x)) {
      has_nan = true;
    }
  }
  if (has_nan) {
    std::transform(logits.begin(), logits.end(), sanitized_.begin(),
                   [](float x) { return std::isnan(x) ? -kInf : x; });
    logits = sanitized_;
  }

  SampleResult result;
  LogSoftmaxNormalizer norm;
  bool have_norm = false;
  const bool greedy = params.IsGreedy() || max_logit == -kInf || max_logit == kInf;
  if (greedy) {
    // The first maximal logit (also token 0 when everything is -inf).
    result.token = static_cast<int32_t>(std::find(logits.begin(), logits.end(), max_logit) -
                                        logits.begin());
  } else {
    result.token = SampleFiltered(logits, max_logit, params,
                                  UniformForStep(options.seed, options.step), &norm, &have_norm);
  }

  const bool want_top = options.top_logprobs_num > 0;
  if (!options.return_logprob && !want_top) return result;
  // Greedy runs at temperature 1 in SGLang, so its logprobs are the untempered ones.
  const bool tempered = !greedy && options.logprob_mode == LogprobMode::kAfterTemperature;
  if (!have_norm || !tempered) {
    norm = ComputeLogSoftmaxNormalizer(logits, tempered ? params.temperature : 1.0f);
  }
  if (options.return_logprob) result.logprob = norm.Logprob(logits[result.token]);
  if (want_top) {
    assert(top_logprobs != nullptr);
    TopLogprobs(logits, options.top_logprobs_num, norm, top_logprobs);
  }
  return result;
}

void Sampler::SortPrefix(size_t* sorted, size_t count) {
  const size_t vocab = index_.size();
  count = std::min(count, vocab);
  if (count <= *sorted) return;
  const float* prob = prob_.data();
  auto more_likely = [prob](int32_t a, int32_t b) {
    return prob[a] > prob[b] || (prob[a] == prob[b] && a < b);
  };
  auto first = index_.begin() + static_cast<std::ptrdiff_t>(*sorted);
  auto middle = index_.begin() + static_cast<std::ptrdiff_t>(count);
  if (count < vocab) std::nth_element(first, middle, index_.end(), more_likely);
  std::sort(first, middle, more_likely);
  *sorted = count;
}

int32_t Sampler::SampleFiltered(std::span<const float> logits, float max_logit,
                                const SamplingParams& params, double uniform,
                                LogSoftmaxNormalizer* norm_out, bool* have_norm) {
  const size_t vocab = logits.size();
  const float inv_t = 1.0f / params.temperature;
  const size_t top_k = static_cast<size_t>(params.EffectiveTopK(static_cast<int32_t>(vocab)));
  size_t n = 0;  // candidates: index_[0, n), probs cand_prob_[0, n), most likely first

  if (top_k < vocab) {
    // top_k: select by logit (monotone in probability), then only the k survivors get exp().
    std::iota(index_.begin(), index_.end(), 0);
    const float* data = logits.data();
    auto higher = [data](int32_t a, int32_t b) {
      return data[a] > data[b] || (data[a] == data[b] && a < b);
    };
    auto kth = index_.begin() + static_cast<std::ptrdiff_t>(top_k);
    std::nth_element(index_.begin(), kth, index_.end(), higher);
    std::sort(index_.begin(), kth, higher);
    n = top_k;
    for (size_t j = 0; j < n; ++j) cand_prob_[j] = std::exp((logits[index_[j]] - max_logit) * inv_t);
    if (params.top_p < 1.0f) {
      // top_p over the renormalized top-k distribution.
      double mass = 0.0;
      for (size_t j = 0; j < n; ++j) mass += cand_prob_[j];
      const double target = params.top_p * mass;
      double cum = 0.0;
      size_t keep = 0;
      while (keep < n && !(cum > target)) cum += cand_prob_[keep++];
      n = keep;
    }
  } else {
    double total = 0.0;
    for (size_t t = 0; t < vocab; ++t) {
      prob_[t] = std::exp((logits[t] - max_logit) * inv_t);  // exp(-inf) == 0
      total += prob_[t];
    }
    *norm_out = LogSoftmaxNormalizer{max_logit, inv_t, static_cast<float>(std::log(total)), false};
    *have_norm = true;

    if (params.top_p >= 1.0f) {
      // No sort at all: min_p is a threshold on prob (the max token has prob exactly 1 here).
      const float threshold = params.min_p;
      double kept = total;
      if (threshold > 0.0f) {
        kept = 0.0;
        for (size_t t = 0; t < vocab; ++t) kept += prob_[t] >= threshold ? prob_[t] : 0.0f;
      }
      const double target = uniform * kept;
      double cum = 0.0;
      size_t last_positive = 0;
      for (size_t t = 0; t < vocab; ++t) {
        const float p = prob_[t];
        if (p <= 0.0f || p < threshold) continue;
        cum += p;
        last_positive = t;
        if (cum > target) return static_cast<int32_t>(t);
      }
      return static_cast<int32_t>(last_positive);
    }

    // top_p: sort only as long a prefix as the cut needs.
    std::iota(index_.begin(), index_.end(), 0);
    const double target = params.top_p * total;
    size_t sorted = 0;
    double cum = 0.0;
    while (true) {
      if (n == sorted) {
        if (sorted == vocab) break;
        SortPrefix(&sorted, std::max(kTopPFirstRound, sorted * 4));
      }
      if (cum > target) break;  // the mass before candidate n already exceeds top_p
      cum += prob_[index_[n++]];
    }
    for (size_t j = 0; j < n; ++j) cand_prob_[j] = prob_[index_[j]];
  }

  if (params.min_p > 0.0f) {
    const float threshold = params.min_p * cand_prob_[0];
    size_t keep = 1;
    while (keep < n && cand_prob_[keep] >= threshold) ++keep;
    n = keep;
  }
  return index_[DrawPosition(cand_prob_, n, uniform)];
}

}  // namespace radixlm
