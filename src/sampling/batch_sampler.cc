#include "sampling/batch_sampler.h"

#include <algorithm>
#include <cassert>

namespace radixlm {

BatchSampler::BatchSampler(int32_t vocab_size, int num_workers) : vocab_size_(vocab_size) {
  const int workers = std::max(num_workers, 1);
  samplers_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) samplers_.emplace_back(vocab_size);
}

void BatchSampler::SampleRange(std::span<BatchSamplingRow> rows, int64_t begin, int64_t end,
                               int worker) {
  assert(worker >= 0 && worker < num_workers());
  assert(begin >= 0 && end <= static_cast<int64_t>(rows.size()));
  Sampler& sampler = samplers_[static_cast<size_t>(worker)];
  for (int64_t i = begin; i < end; ++i) {
    BatchSamplingRow& row = rows[static_cast<size_t>(i)];
    assert(row.logits != nullptr && row.params != nullptr);
    const std::span<float> logits(row.logits, static_cast<size_t>(vocab_size_));
    ProcessLogits(logits, *row.params, row.processor);
    row.result = sampler.Sample(logits, *row.params, row.options, &row.top_logprobs,
                                &row.token_ids_logprobs);
  }
}

}  // namespace radixlm
