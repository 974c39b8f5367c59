// Pooling: how an embedding model turns a prompt's final hidden states into one vector
// (SGLang's --is-embedding, llama.cpp's <arch>.pooling_type), and the L2 normalisation applied
// after it.
//
//   kMean  the mean of every position's row
//   kCls   the first position's row (BERT's [CLS])
//   kLast  the last position's row (decoder embedders: Qwen3-Embedding, gte-Qwen2, e5-mistral)
//
// The rows are the model's final-normed hidden states (ModelOptions::output_hidden_states).
// PoolingAccumulator takes them chunk by chunk, so a chunked prefill pools the same vector as
// one pass (mean: summed in position order, divided once at the end).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/status.h"

namespace radixlm {

enum class Pooling { kNone, kMean, kCls, kLast };

// "mean" | "cls" | "last"; InvalidArgument naming the value otherwise.
StatusOr<Pooling> ParsePooling(const std::string& name);
const char* PoolingName(Pooling pooling);

// llama.cpp's LLAMA_POOLING_TYPE_* value of a GGUF's <arch>.pooling_type: 0 none, 1 mean,
// 2 cls, 3 last; 4 (rank: a reranker's head) and others are Unimplemented, naming the value.
StatusOr<Pooling> PoolingFromGguf(int64_t pooling_type);

// Whether pooling needs every position's hidden state (mean, cls) rather than the last one
// only: then no prefix can come from the KV cache (the cached positions' hidden states are
// gone) and every row of every chunk is read.
inline bool PoolingNeedsAllRows(Pooling pooling) {
  return pooling == Pooling::kMean || pooling == Pooling::kCls;
}

// Scales v to unit L2 norm in place (a zero vector stays zero).
void L2Normalize(std::span<float> v);

// One request's pooled vector, fed the hidden-state rows of its prompt's positions in order.
class PoolingAccumulator {
 public:
  PoolingAccumulator(Pooling pooling, int64_t width) : pooling_(pooling), width_(width) {}

  // rows: [n, width], the hidden states of positions [first_position, first_position + n).
  void Add(int64_t first_position, int64_t n, const float* rows);
  // The pooled vector over `n_positions` positions, L2-normalised when `normalize`.
  std::vector<float> Finish(int64_t n_positions, bool normalize);

 private:
  Pooling pooling_;
  int64_t width_;
  std::vector<double> sum_;  // [width] (mean), in double so the order of chunks does not show
  std::vector<float> row_;   // [width] (cls, last)
};

}  // namespace radixlm
