#include "sampling/logprobs.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "sampling/softmax_math.h"

namespace radixlm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// NaN sorts as -inf.
inline float Key(float logit) { return std::isnan(logit) ? -kInf : logit; }

// a ranks above b: higher logit, then lower token id.
inline bool Better(const TokenLogprob& a, const TokenLogprob& b) {
  return a.logprob > b.logprob || (a.logprob == b.logprob && a.token < b.token);
}

}  // namespace

float LogSoftmaxNormalizer::Logprob(float logit) const {
  if (empty || !(logit > -kInf)) return kMinLogprob;
  if (max == kInf) return logit == kInf ? -log_sum : kMinLogprob;
  const float value = (logit - max) * inv_temperature - log_sum;
  return std::max(value, kMinLogprob);
}

LogSoftmaxNormalizer ComputeLogSoftmaxNormalizer(std::span<const float> logits, float temperature) {
  assert(temperature > 0.0f);
  LogSoftmaxNormalizer norm;
  norm.inv_temperature = 1.0f / temperature;
  bool has_nan = false;
  const float max = softmax_math::MaxIgnoringNan(logits, &has_nan);
  norm.max = max;
  if (max == -kInf) {
    norm.empty = true;
    return norm;
  }
  double sum = 0.0;
  if (max == kInf) {
    // Degenerate: the +inf tokens share all the mass.
    for (float x : logits) sum += x == kInf ? 1.0 : 0.0;
  } else if (!has_nan) {
    sum = softmax_math::SumExpShifted(logits, max, norm.inv_temperature);
  } else {
    for (float x : logits) {
      if (x > -kInf) sum += softmax_math::ExpNonPositive((x - max) * norm.inv_temperature);
    }
  }
  norm.log_sum = static_cast<float>(std::log(sum));
  return norm;
}

void LogSoftmax(std::span<const float> logits, float temperature, std::span<float> out) {
  assert(out.size() == logits.size());
  const LogSoftmaxNormalizer norm = ComputeLogSoftmaxNormalizer(logits, temperature);
  for (size_t t = 0; t < logits.size(); ++t) out[t] = norm.Logprob(logits[t]);
}

float TokenLogprobOf(std::span<const float> logits, int32_t token, float temperature) {
  assert(token >= 0 && static_cast<size_t>(token) < logits.size());
  return ComputeLogSoftmaxNormalizer(logits, temperature).Logprob(logits[token]);
}

void TopLogprobs(std::span<const float> logits, int32_t n, const LogSoftmaxNormalizer& norm,
                 std::vector<TokenLogprob>* out) {
  out->clear();
  const size_t want = std::min(logits.size(), static_cast<size_t>(std::max(n, 0)));
  if (want == 0) return;
  out->reserve(want);
  // A heap of the best `want` so far, keyed by logit (stored in .logprob); the front is the
  // worst of them, so a candidate only has to beat the front.
  std::vector<TokenLogprob>& heap = *out;
  for (size_t t = 0; t < logits.size(); ++t) {
    const TokenLogprob candidate{static_cast<int32_t>(t), Key(logits[t])};
    if (heap.size() < want) {
      heap.push_back(candidate);
      std::push_heap(heap.begin(), heap.end(), Better);
    } else if (Better(candidate, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), Better);
      heap.back() = candidate;
      std::push_heap(heap.begin(), heap.end(), Better);
    }
  }
  std::sort_heap(heap.begin(), heap.end(), Better);  // best first
  for (TokenLogprob& entry : heap) entry.logprob = norm.Logprob(entry.logprob);
}

void TopLogprobs(std::span<const float> logits, int32_t n, float temperature,
                 std::vector<TokenLogprob>* out) {
  TopLogprobs(logits, n, ComputeLogSoftmaxNormalizer(logits, temperature), out);
}

void TokenIdsLogprobs(std::span<const float> logits, std::span<const int32_t> ids,
                      const LogSoftmaxNormalizer& norm, std::vector<TokenLogprob>* out) {
  out->clear();
  out->reserve(ids.size());
  for (const int32_t id : ids) {
    assert(id >= 0 && static_cast<size_t>(id) < logits.size());
    out->push_back({id, norm.Logprob(logits[static_cast<size_t>(id)])});
  }
}

void InputTokenLogprobs(std::span<const float> logits, int32_t vocab_size,
                        std::span<const int32_t> next_tokens, float temperature,
                        std::span<float> out_logprobs, int32_t top_n,
                        std::vector<std::vector<TokenLogprob>>* out_top,
                        std::span<const int32_t> ids,
                        std::vector<std::vector<TokenLogprob>>* out_ids) {
  const size_t n_rows = next_tokens.size();
  assert(logits.size() == n_rows * static_cast<size_t>(vocab_size));
  assert(out_logprobs.size() == n_rows);
  const bool want_top = top_n > 0 && out_top != nullptr;
  if (want_top) out_top->resize(n_rows);
  const bool want_ids = !ids.empty() && out_ids != nullptr;
  if (want_ids) out_ids->resize(n_rows);
  for (size_t i = 0; i < n_rows; ++i) {
    const std::span<const float> row = logits.subspan(i * vocab_size, vocab_size);
    const LogSoftmaxNormalizer norm = ComputeLogSoftmaxNormalizer(row, temperature);
    const int32_t token = next_tokens[i];
    assert(token >= 0 && token < vocab_size);
    out_logprobs[i] = norm.Logprob(row[token]);
    if (want_top) TopLogprobs(row, top_n, norm, &(*out_top)[i]);
    if (want_ids) TokenIdsLogprobs(row, ids, norm, &(*out_ids)[i]);
  }
}

}  // namespace radixlm
