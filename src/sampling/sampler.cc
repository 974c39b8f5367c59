#include "sampling/sampler.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include "sampling/softmax_math.h"
#include "util/split_mix.h"

namespace radixlm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
// top_k up to this uses a heap over one pass; larger k uses nth_element.
constexpr size_t kHeapTopKMax = 2048;
// top_p histogram: a prob in [0, 1] maps to (float bits >> 19): its exponent and 4 mantissa
// bits, so 16 buckets per octave; 1.0f is bucket 0x3F800000 >> 19 = 2032.
constexpr int kBucketShift = 19;
constexpr size_t kNumBuckets = (0x3F800000u >> kBucketShift) + 1;
// DrawFullVocab walks per-block sums first, then scans one block.
constexpr size_t kDrawBlock = 1024;

inline uint32_t BucketOf(float prob) {
  // min(): a polynomial exp may round a hair above 1.
  return std::min<uint32_t>(std::bit_cast<uint32_t>(prob) >> kBucketShift, kNumBuckets - 1);
}

// top_p first looks for its cut among this many most likely tokens.
constexpr size_t kNucleusProbe = 512;
// SelectTopK tests blocks of this many logits at once.
constexpr size_t kTopKBlock = 32;

// A signed integer with the same order as the float x (x not NaN).
inline int32_t OrderKey(float x) {
  const int32_t s = std::bit_cast<int32_t>(x);
  return s ^ ((s >> 31) & 0x7FFFFFFF);
}

// Whether any of values[0, n) (no NaN) is > floor. Integer compares, so the loop vectorizes.
inline bool AnyAbove(const float* values, size_t n, float floor) {
  const int32_t floor_key = OrderKey(floor);
  int32_t any = 0;
  for (size_t i = 0; i < n; ++i) any |= static_cast<int32_t>(OrderKey(values[i]) > floor_key);
  return any != 0;
}

// a ranks above b: higher logit (stored in .logprob), then lower token id. A functor rather
// than a function so the heap algorithms inline it.
struct HigherLogit {
  bool operator()(const TokenLogprob& a, const TokenLogprob& b) const {
    return a.logprob > b.logprob || (a.logprob == b.logprob && a.token < b.token);
  }
};

std::atomic<uint64_t>& RandomSeedCounter() {
  static std::atomic<uint64_t> counter{[] {
    std::random_device device;
    const uint64_t entropy = (static_cast<uint64_t>(device()) << 32) ^ device();
    const uint64_t now =
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
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
  return SplitMix64(
      RandomSeedCounter().fetch_add(0x9E3779B97F4A7C15ull, std::memory_order_relaxed));
}

double UniformForStep(uint64_t seed, uint64_t step) {
  const uint64_t bits = SplitMix64(SplitMix64(seed) ^ SplitMix64(step ^ 0x632BE59BD9B4E019ull));
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

Sampler::Sampler(int32_t vocab_size)
    : vocab_size_(vocab_size),
      index_(vocab_size),
      boundary_(vocab_size),
      prob_(vocab_size),
      cand_prob_(vocab_size),
      sanitized_(vocab_size),
      bucket_mass_(kNumBuckets),
      block_sum_((vocab_size + kDrawBlock - 1) / kDrawBlock) {
  assert(vocab_size > 0);
  heap_.reserve(std::min<size_t>(vocab_size, kHeapTopKMax));
}

SampleResult Sampler::Sample(std::span<const float> logits, const SamplingParams& params,
                             const SampleOptions& options, std::vector<TokenLogprob>* top_logprobs,
                             std::vector<TokenLogprob>* token_ids_logprobs) {
  assert(logits.size() == static_cast<size_t>(vocab_size_));
  bool has_nan = false;
  const float max_logit = softmax_math::MaxIgnoringNan(logits, &has_nan);
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
    result.token =
        static_cast<int32_t>(std::find(logits.begin(), logits.end(), max_logit) - logits.begin());
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
  if (options.return_logprob) {
    result.logprob = norm.Logprob(logits[result.token]);
    if (!options.token_ids_logprob.empty()) {
      assert(token_ids_logprobs != nullptr);
      TokenIdsLogprobs(logits, options.token_ids_logprob, norm, token_ids_logprobs);
    }
  }
  if (want_top) {
    assert(top_logprobs != nullptr);
    TopLogprobs(logits, options.top_logprobs_num, norm, top_logprobs);
  }
  return result;
}

int32_t Sampler::SampleFiltered(std::span<const float> logits, float max_logit,
                                const SamplingParams& params, double uniform,
                                LogSoftmaxNormalizer* norm_out, bool* have_norm) {
  const size_t vocab = logits.size();
  const float inv_t = 1.0f / params.temperature;
  const size_t top_k = static_cast<size_t>(params.EffectiveTopK(static_cast<int32_t>(vocab)));
  size_t n = 0;  // candidates: index_[0, n) with unnormalized probs cand_prob_[0, n)

  if (top_k < vocab) {
    // Only the k survivors get exp(); they come sorted, so top_p and min_p are prefix cuts.
    n = SelectTopK(logits, top_k);
    for (size_t j = 0; j < n; ++j) {
      cand_prob_[j] = softmax_math::ExpNonPositive((logits[index_[j]] - max_logit) * inv_t);
    }
    if (params.top_p < 1.0f) {  // over the renormalized top-k distribution
      double mass = 0.0;
      for (size_t j = 0; j < n; ++j) mass += cand_prob_[j];
      const double target = params.top_p * mass;
      double cum = 0.0;
      size_t keep = 0;
      while (keep < n && !(cum > target)) cum += cand_prob_[keep++];
      n = keep;
    }
    if (params.min_p > 0.0f) {
      const float threshold = params.min_p * cand_prob_[0];
      size_t keep = 1;
      while (keep < n && cand_prob_[keep] >= threshold) ++keep;
      n = keep;
    }
    return index_[DrawPosition(cand_prob_, n, uniform)];
  }

  const double total = softmax_math::ExpShiftedAndSum(logits, max_logit, inv_t, prob_);
  *norm_out = LogSoftmaxNormalizer{max_logit, inv_t, static_cast<float>(std::log(total)), false};
  *have_norm = true;
  // The max token's prob is exactly 1 here, so min_p's threshold is min_p itself.
  // (min_p written as -0.0 must not reach the bit-pattern compares as a huge threshold.)
  const float min_p = params.min_p > 0.0f ? params.min_p : 0.0f;
  if (params.top_p >= 1.0f) return DrawFullVocab(min_p, uniform);

  // The nucleus usually lies within the few hundred most likely tokens: try those first (one
  // heap pass), and fall back to the histogram over the whole row when the cut lies beyond.
  // Each prob is <= 1, so when target >= kNucleusProbe the probe cannot succeed: skip it. On
  // small vocabularies the histogram is cheap anyway.
  const double target = params.top_p * total;
  double cum = 0.0;
  if (vocab >= 8 * kNucleusProbe && target < static_cast<double>(kNucleusProbe)) {
    const size_t probe = SelectTopK(logits, std::min(vocab, kNucleusProbe));
    while (n < probe && !(cum > target)) cum += prob_[index_[n++]];
  }
  if (cum > target) {
    for (size_t j = 0; j < n; ++j) cand_prob_[j] = prob_[index_[j]];
  } else {
    n = CollectNucleus(target);
  }
  if (params.min_p > 0.0f) {
    size_t keep = 0;
    for (size_t j = 0; j < n; ++j) {
      if (cand_prob_[j] >= params.min_p) {
        index_[keep] = index_[j];
        cand_prob_[keep++] = cand_prob_[j];
      }
    }
    n = keep;
  }
  return index_[DrawPosition(cand_prob_, n, uniform)];
}

size_t Sampler::SelectTopK(std::span<const float> logits, size_t k) {
  const size_t vocab = logits.size();
  if (k > kHeapTopKMax) {
    std::iota(index_.begin(), index_.end(), 0);
    const float* data = logits.data();
    auto higher = [data](int32_t a, int32_t b) {
      return data[a] > data[b] || (data[a] == data[b] && a < b);
    };
    auto kth = index_.begin() + static_cast<std::ptrdiff_t>(k);
    std::nth_element(index_.begin(), kth, index_.end(), higher);
    std::sort(index_.begin(), kth, higher);
    return k;
  }
  // Heap of the best k so far with the worst at the front. Tokens arrive in id order, so a
  // later token that ties the front's logit ranks below it: strictly greater is required.
  heap_.clear();
  for (size_t t = 0; t < k; ++t) heap_.push_back({static_cast<int32_t>(t), logits[t]});
  std::make_heap(heap_.begin(), heap_.end(), HigherLogit());
  float floor = heap_.front().logprob;
  const float* data = logits.data();
  for (size_t begin = k; begin < vocab; begin += kTopKBlock) {
    const size_t end = std::min(vocab, begin + kTopKBlock);
    // Most blocks hold nothing above the floor once the heap has warmed up: a vectorized test
    // skips them.
    if (!AnyAbove(data + begin, end - begin, floor)) continue;
    for (size_t t = begin; t < end; ++t) {
      if (!(data[t] > floor)) continue;
      std::pop_heap(heap_.begin(), heap_.end(), HigherLogit());
      heap_.back() = {static_cast<int32_t>(t), data[t]};
      std::push_heap(heap_.begin(), heap_.end(), HigherLogit());
      floor = heap_.front().logprob;
    }
  }
  std::sort_heap(heap_.begin(), heap_.end(), HigherLogit());  // best first
  for (size_t j = 0; j < k; ++j) index_[j] = heap_[j].token;
  return k;
}

size_t Sampler::CollectNucleus(double target) {
  const size_t vocab = prob_.size();
  // Mass per bucket, then walk buckets from the most likely down: every bucket whose mass fits
  // under the target is wholly kept, the first that overflows is the boundary.
  std::fill(bucket_mass_.begin(), bucket_mass_.end(), 0.0);
  for (size_t t = 0; t < vocab; ++t) bucket_mass_[BucketOf(prob_[t])] += prob_[t];
  double above = 0.0;  // mass of the buckets above the boundary
  int64_t boundary = -1;
  for (int64_t b = static_cast<int64_t>(kNumBuckets) - 1; b >= 0; --b) {
    if (above + bucket_mass_[b] > target) {
      boundary = b;
      break;
    }
    above += bucket_mass_[b];
  }
  size_t n = 0;
  size_t n_boundary = 0;
  for (size_t t = 0; t < vocab; ++t) {
    const float p = prob_[t];
    const int64_t bucket = BucketOf(p);
    if (bucket < boundary || p <= 0.0f) continue;
    if (bucket > boundary) {
      index_[n] = static_cast<int32_t>(t);
      cand_prob_[n++] = p;
    } else if (bucket == boundary) {
      boundary_[n_boundary++] = static_cast<int32_t>(t);
    }
  }
  // Inside the boundary bucket the order matters: most likely first, ties to the lower id.
  const float* prob = prob_.data();
  std::sort(
      boundary_.begin(), boundary_.begin() + static_cast<std::ptrdiff_t>(n_boundary),
      [prob](int32_t a, int32_t b) { return prob[a] > prob[b] || (prob[a] == prob[b] && a < b); });
  double cum = above;
  for (size_t j = 0; j < n_boundary && !(cum > target); ++j) {
    const int32_t t = boundary_[j];
    index_[n] = t;
    cand_prob_[n++] = prob[t];
    cum += prob[t];
  }
  return n;
}

int32_t Sampler::DrawFullVocab(float threshold, double uniform) {
  const size_t vocab = prob_.size();
  const float* prob = prob_.data();
  const uint32_t threshold_bits = std::bit_cast<uint32_t>(threshold);  // threshold >= 0
  double total = 0.0;
  for (size_t b = 0; b < block_sum_.size(); ++b) {
    const size_t begin = b * kDrawBlock;
    const size_t end = std::min(vocab, begin + kDrawBlock);
    float lanes[8] = {};
    size_t t = begin;
    for (; t + 8 <= end; t += 8) {
      for (size_t k = 0; k < 8; ++k) {
        lanes[k] += softmax_math::ZeroBelow(prob[t + k], threshold_bits);
      }
    }
    double sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                 ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    for (; t < end; ++t) sum += softmax_math::ZeroBelow(prob[t], threshold_bits);
    block_sum_[b] = sum;
    total += sum;
  }
  const double target = uniform * total;
  double cum = 0.0;
  for (size_t b = 0; b < block_sum_.size(); ++b) {
    if (block_sum_[b] <= 0.0) continue;
    if (cum + block_sum_[b] <= target) {
      cum += block_sum_[b];
      continue;
    }
    const size_t end = std::min(vocab, (b + 1) * kDrawBlock);
    for (size_t t = b * kDrawBlock; t < end; ++t) {
      if (prob[t] <= 0.0f || prob[t] < threshold) continue;
      cum += prob[t];
      if (cum > target) return static_cast<int32_t>(t);
    }
    // Rounding left the target just past this block: go on to the next one.
  }
  // Rounding at the very end: the last eligible token (the max token, prob 1, always is).
  for (size_t t = vocab; t-- > 0;) {
    if (prob[t] > 0.0f && prob[t] >= threshold) return static_cast<int32_t>(t);
  }
  return 0;
}

}  // namespace radixlm
