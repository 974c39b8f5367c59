// Sampler: picks the next token from one processed logits row.
//
// Pipeline (SGLang's order), on a row that ProcessLogits (penalties.h) has already edited:
//   greedy (temperature < kSamplingEps or top_k == 1): argmax, ties to the lowest id;
//   otherwise: softmax(logits / temperature) -> top_k -> top_p -> min_p -> one draw.
// Each filter renormalizes what the previous one left (FlashInfer's top-k-first semantics):
//   top_k: keep the k highest logits (ties to the lower id);
//   top_p: over the kept tokens sorted by probability, keep a token while the mass strictly
//          before it is <= top_p (so the top token always stays; top_p = 1 keeps all);
//   min_p: keep tokens with prob >= min_p * (max prob).
//
// Randomness: one uniform per draw, a pure function of (seed, step): see UniformForStep. A
// request's output therefore depends only on its own logits, params, seed and step, never on
// the rest of the batch or on thread scheduling; a retracted request that replays its steps
// gets the same tokens. `seed` comes from ResolveSeed (sampling_seed, or a random seed chosen
// once per request), `step` is the number of tokens the request has already generated.
//
// Cost for vocab V: greedy one pass; plain temperature / min_p two passes, no sort; top_k
// O(V + k log k) via nth_element; top_p without top_k sorts only the prefix it needs (growing
// geometrically), not the whole vocabulary. Logprobs add one O(V) pass (top-N: O(V log N)).
//
// Thread-safety: a Sampler owns scratch buffers ([V] each, allocated once in the constructor)
// and is not thread-safe; use one per thread (BatchSampler does). Sample never allocates, except
// that *top_logprobs grows once to top_logprobs_num if its capacity is smaller.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/logprobs.h"
#include "sampling/sampling_params.h"

namespace radixlm {

// The request's RNG seed: its sampling_seed if set, else a fresh random 64-bit seed (each call
// returns a different one; thread-safe). Call once when the request is admitted and keep it.
uint64_t ResolveSeed(const SamplingParams& params);

// The uniform in [0, 1) used for draw `step` of a request seeded with `seed`.
double UniformForStep(uint64_t seed, uint64_t step);

struct SampleOptions {
  uint64_t seed = 0;  // from ResolveSeed
  uint64_t step = 0;  // tokens this request has already generated
  bool return_logprob = false;
  int32_t top_logprobs_num = 0;  // > 0: also fill the top-N list
  LogprobMode logprob_mode = LogprobMode::kAfterTemperature;
};

struct SampleResult {
  int32_t token = -1;
  float logprob = 0.0f;  // of `token`, when SampleOptions::return_logprob; else 0
};

class Sampler {
 public:
  explicit Sampler(int32_t vocab_size);

  int32_t vocab_size() const { return vocab_size_; }

  // logits: [vocab_size], after ProcessLogits; not modified. params must have passed Validate.
  // NaN logits count as -inf. A row with no finite logit (everything masked) falls back to the
  // argmax (token 0), as SGLang does; a +inf logit is taken greedily.
  // top_logprobs: required when options.top_logprobs_num > 0; cleared and filled, best first.
  SampleResult Sample(std::span<const float> logits, const SamplingParams& params,
                      const SampleOptions& options,
                      std::vector<TokenLogprob>* top_logprobs = nullptr);

 private:
  // Draws from the filtered distribution; returns the token. Fills *norm_out with the
  // normalizer at `temperature` when it computed the full softmax sum on the way (else leaves
  // it untouched and returns with *have_norm false).
  int32_t SampleFiltered(std::span<const float> logits, float max_logit,
                         const SamplingParams& params, double uniform,
                         LogSoftmaxNormalizer* norm_out, bool* have_norm);
  // Sorts the first `count` entries of index_ by exp-prob (descending; ties to the lower id)
  // where index_ holds all V tokens; incremental so only the needed prefix is ever sorted.
  void SortPrefix(size_t* sorted, size_t count);

  int32_t vocab_size_;
  std::vector<int32_t> index_;      // [V] token ids (candidate order)
  std::vector<float> prob_;         // [V] unnormalized probs, by token id
  std::vector<float> cand_prob_;    // [V] unnormalized probs, by candidate position
  std::vector<float> sanitized_;    // [V] copy of a row with NaN replaced by -inf
};

}  // namespace radixlm
