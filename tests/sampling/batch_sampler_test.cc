// BatchSampler: per-row results independent of batch composition, order and threading.
#include "sampling/batch_sampler.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>
#include <vector>

#include "sampling/token_bitmask.h"

namespace radixlm {
namespace {

constexpr int32_t kVocab = 4096;

std::vector<float> RandomLogits(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> logits(kVocab);
  for (float& x : logits) x = normal(rng);
  return logits;
}

// One request: its params, history and (fixed) logits for every step.
struct FakeRequest {
  SamplingParams params;
  PenaltyState history;
  uint64_t seed = 0;
  uint32_t logits_seed = 0;
};

std::vector<FakeRequest> MakeRequests() {
  std::vector<FakeRequest> requests(6);
  requests[0].params.temperature = 0.0f;
  requests[1].params.top_k = 20;
  requests[2].params.top_p = 0.9f;
  requests[2].params.frequency_penalty = 1.0f;
  requests[3].params.min_p = 0.1f;
  requests[3].params.repetition_penalty = 1.3f;
  requests[4].params.temperature = 0.6f;
  requests[4].params.presence_penalty = 1.5f;
  requests[4].params.logit_bias = {{7, 5.0f}};
  requests[5].params.min_new_tokens = 3;
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].params.sampling_seed = 100 + static_cast<int64_t>(i);
    requests[i].seed = ResolveSeed(requests[i].params);
    requests[i].logits_seed = static_cast<uint32_t>(i);
  }
  return requests;
}

// Decodes `steps` tokens for requests[indices] as one batch per step; returns each request's
// tokens (indexed like `requests`). `threads` > 1 splits every batch across std::threads.
std::vector<std::vector<int32_t>> Decode(std::vector<FakeRequest>& requests,
                                         const std::vector<size_t>& indices, int steps,
                                         int threads) {
  BatchSampler batch(kVocab, threads);
  const std::vector<int32_t> eos = {0};
  std::vector<std::vector<int32_t>> out(requests.size());
  std::vector<std::vector<float>> logits(indices.size());
  for (int step = 0; step < steps; ++step) {
    std::vector<BatchSamplingRow> rows(indices.size());
    for (size_t r = 0; r < indices.size(); ++r) {
      FakeRequest& req = requests[indices[r]];
      logits[r] = RandomLogits(req.logits_seed * 1000 + static_cast<uint32_t>(step));
      logits[r][0] = 10.0f;  // EOS very likely: min_new_tokens must hold it back
      rows[r].logits = logits[r].data();
      rows[r].params = &req.params;
      rows[r].processor = {&req.history, eos, nullptr};
      rows[r].options = {.seed = req.seed,
                         .step = static_cast<uint64_t>(req.history.num_output_tokens()),
                         .return_logprob = true,
                         .top_logprobs_num = 2};
    }
    if (threads == 1) {
      batch.SampleAll(rows);
    } else {
      std::vector<std::thread> workers;
      const int64_t n = static_cast<int64_t>(rows.size());
      for (int t = 0; t < threads; ++t) {
        workers.emplace_back(
            [&, t] { batch.SampleRange(rows, n * t / threads, n * (t + 1) / threads, t); });
      }
      for (std::thread& w : workers) w.join();
    }
    for (size_t r = 0; r < indices.size(); ++r) {
      const BatchSamplingRow& row = rows[r];
      EXPECT_EQ(row.top_logprobs.size(), 2u);
      EXPECT_LE(row.result.logprob, 0.0f);
      out[indices[r]].push_back(row.result.token);
      requests[indices[r]].history.AddOutputToken(row.result.token);
    }
  }
  return out;
}

TEST(BatchSamplerTest, OutputDoesNotDependOnBatchOrThreads) {
  constexpr int kSteps = 12;
  std::vector<FakeRequest> full = MakeRequests();
  const auto together = Decode(full, {0, 1, 2, 3, 4, 5}, kSteps, 1);

  std::vector<FakeRequest> reversed = MakeRequests();
  const auto reordered = Decode(reversed, {5, 4, 3, 2, 1, 0}, kSteps, 1);
  EXPECT_EQ(together, reordered);

  std::vector<FakeRequest> threaded = MakeRequests();
  const auto parallel = Decode(threaded, {0, 1, 2, 3, 4, 5}, kSteps, 3);
  EXPECT_EQ(together, parallel);

  for (size_t i = 0; i < full.size(); ++i) {
    std::vector<FakeRequest> alone = MakeRequests();
    const auto single = Decode(alone, {i}, kSteps, 1);
    EXPECT_EQ(single[i], together[i]) << "request " << i;
  }
}

TEST(BatchSamplerTest, AppliesProcessorsPerRow) {
  std::vector<FakeRequest> requests = MakeRequests();
  const auto tokens = Decode(requests, {0, 1, 2, 3, 4, 5}, 4, 1);
  // Request 0 is greedy with EOS at logit 10: EOS every step (no min_new_tokens).
  EXPECT_EQ(tokens[0], std::vector<int32_t>(4, 0));
  // Request 5 must not emit EOS before 3 tokens.
  for (int step = 0; step < 3; ++step) EXPECT_NE(tokens[5][step], 0) << step;

  // A bitmask allowing a single token forces it.
  BatchSampler batch(kVocab, 1);
  std::vector<int32_t> mask(BitmaskWords(kVocab));
  FillBitmask(mask, false);
  SetTokenAllowed(mask, 1234, true);
  std::vector<float> logits = RandomLogits(9);
  SamplingParams params;
  std::vector<BatchSamplingRow> rows(1);
  rows[0].logits = logits.data();
  rows[0].params = &params;
  rows[0].processor.allowed_token_bitmask = mask.data();
  rows[0].options.return_logprob = true;
  batch.SampleAll(rows);
  EXPECT_EQ(rows[0].result.token, 1234);
  EXPECT_NEAR(rows[0].result.logprob, 0.0f, 1e-6);
}

}  // namespace
}  // namespace radixlm
