// BatchSampler: ProcessLogits + Sampler::Sample over a batch of rows, one row per request.
//
// Rows are independent (each has its own params, history, mask, seed and step), so the result of
// a row does not depend on the other rows, on their order, or on how rows are split across
// threads. The caller chooses the parallelism: SampleRange(rows, begin, end, worker) is safe to
// call concurrently for disjoint ranges with distinct worker ids in [0, num_workers), e.g.
//
//   BatchSampler batch(vocab, pool.size());
//   pool.ParallelFor(rows.size(), [&](int64_t b, int64_t e, int t) {
//     batch.SampleRange(rows, b, e, t);
//   });
//
// or SampleAll(rows) runs them sequentially on worker 0.
//
// Ownership: rows borrow everything they point to; the caller keeps it alive for the call.
// Allocation: none per row, except that top_logprobs grows to top_logprobs_num the first time
// a row object is used; keep row objects (e.g. one per running request) across steps.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/logprobs.h"
#include "sampling/penalties.h"
#include "sampling/sampler.h"
#include "sampling/sampling_params.h"

namespace radixlm {

struct BatchSamplingRow {
  // --- inputs ---
  float* logits = nullptr;  // [vocab]; ProcessLogits edits it in place
  const SamplingParams* params = nullptr;
  LogitsProcessorInput processor;  // history, EOS ids, allowed-token bitmask
  SampleOptions options;           // seed, step, logprob requests
  // --- outputs ---
  SampleResult result;
  std::vector<TokenLogprob> top_logprobs;  // filled when options.top_logprobs_num > 0
  // Filled when options.return_logprob and options.token_ids_logprob is not empty.
  std::vector<TokenLogprob> token_ids_logprobs;
};

class BatchSampler {
 public:
  // One Sampler (scratch of a few [vocab] buffers) per worker.
  BatchSampler(int32_t vocab_size, int num_workers);

  int32_t vocab_size() const { return vocab_size_; }
  int num_workers() const { return static_cast<int>(samplers_.size()); }

  // Processes and samples rows [begin, end) using worker `worker`'s scratch.
  void SampleRange(std::span<BatchSamplingRow> rows, int64_t begin, int64_t end, int worker);

  // All rows, sequentially, on worker 0.
  void SampleAll(std::span<BatchSamplingRow> rows) {
    SampleRange(rows, 0, static_cast<int64_t>(rows.size()), 0);
  }

 private:
  int32_t vocab_size_;
  std::vector<Sampler> samplers_;
};

}  // namespace radixlm
