#include "eval/score.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace radixlm::eval {

namespace {

// log-softmax of row at `target`, and the row's argmax.
void ScoreRow(const float* row, int64_t vocab, int32_t target, int32_t* argmax, double* logprob) {
  const int64_t best = std::max_element(row, row + vocab) - row;
  double sum = 0.0;
  for (int64_t i = 0; i < vocab; ++i) sum += std::exp(static_cast<double>(row[i] - row[best]));
  *argmax = static_cast<int32_t>(best);
  *logprob = static_cast<double>(row[target] - row[best]) - std::log(sum);
}

}  // namespace

StatusOr<ScoreResult> ScoreSequence(model::Model& model, std::span<const int32_t> ids,
                                    int64_t chunk) {
  const auto n = static_cast<int64_t>(ids.size());
  if (n < 2) return InvalidArgument("need at least 2 tokens to score");
  if (chunk < 1) return InvalidArgument("chunk must be >= 1");
  const int64_t vocab = model.config().vocab_size;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab) {
      return InvalidArgument("token id out of range: " + std::to_string(id));
    }
  }
  model::KvCacheOptions cache_options;
  cache_options.n_slots = n + 1;  // slot 0 is padding; token i lives in slot i + 1
  RADIXLM_ASSIGN_OR_RETURN(auto cache, model.CreateKvCache(cache_options));

  std::vector<int32_t> slots(n);
  std::iota(slots.begin(), slots.end(), 1);
  const std::span<const int32_t> all_slots(slots);
  ScoreResult result;
  result.argmax.resize(n - 1);
  result.logprob.resize(n - 1);
  model::ForwardOutput out;
  for (int64_t start = 0; start < n - 1; start += chunk) {
    const int64_t len = std::min(chunk, n - 1 - start);
    model::ForwardBatch batch;
    model::SequenceInput seq;
    seq.tokens = ids.subspan(start, len);
    seq.new_slots = all_slots.subspan(start, len);
    seq.prefix_slots = all_slots.first(start);
    seq.logits = model::LogitsMode::kAll;
    batch.sequences.push_back(seq);
    RADIXLM_RETURN_IF_ERROR(model.Forward(batch, *cache, &out));
    for (int64_t r = 0; r < len; ++r) {
      ScoreRow(out.Row(0, r), vocab, ids[start + r + 1], &result.argmax[start + r],
               &result.logprob[start + r]);
    }
  }
  double nll = 0.0;
  for (double lp : result.logprob) nll -= lp;
  result.nll_mean = nll / static_cast<double>(result.logprob.size());
  result.perplexity = std::exp(result.nll_mean);
  return result;
}

}  // namespace radixlm::eval
