// Teacher-forced scoring of a token sequence through the model: per-position argmax and
// log-probability of the actual next token, and perplexity. Used by `radixlm score` (the
// llama.cpp oracle) and by the CI perplexity test.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/model.h"
#include "util/status.h"

namespace radixlm::eval {

struct ScoreResult {
  std::vector<int32_t> argmax;  // [n - 1]: top token after reading ids[0..i]
  std::vector<double> logprob;  // [n - 1]: log p(ids[i + 1] | ids[0..i])
  double nll_mean = 0.0;
  double perplexity = 0.0;
};

// Runs ids through `model` in chunks of `chunk` tokens, each chunk reading the KV the earlier
// chunks wrote (so chunked prefill is exercised). Needs ids.size() >= 2 and ids in range.
// Allocates its own KvCache of ids.size() + 1 slots.
StatusOr<ScoreResult> ScoreSequence(model::Model& model, std::span<const int32_t> ids,
                                    int64_t chunk);

}  // namespace radixlm::eval
