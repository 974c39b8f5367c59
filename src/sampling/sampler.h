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
// once per request), `step` is the number of tokens the request has already generated. Two
// requests with the same sampling_seed and the same logits produce the same tokens, so when a
// request with n > 1 is expanded, each copy should get its own seed (unless identical copies
// are wanted).
//
// Cost for vocab V (no full sort anywhere): greedy is one pass; temperature / min_p a few
// vectorized passes (exp is a branch-free polynomial, softmax_math.h); top_k one pass with a
// k-sized heap (nth_element for k > 2048); top_p without top_k a mass histogram over the float
// exponent of each prob, so only the tokens in the one bucket that straddles the cut are sorted.
// Logprobs add one O(V) pass (top-N: O(V log N)).
//
// Thread-safety: a Sampler owns scratch buffers ([V] each, allocated once in the constructor)
// and is not thread-safe; use one per thread (BatchSampler does). Sample never allocates, except
// that *top_logprobs (*token_ids_logprobs) grows once to top_logprobs_num (the number of
// token_ids_logprob ids) if its capacity is smaller.
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
  // With return_logprob: the ids whose logprobs to report (token_ids_logprob), each in
  // [0, vocab); borrowed for the call.
  std::span<const int32_t> token_ids_logprob = {};
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
  // token_ids_logprobs: required when return_logprob and options.token_ids_logprob is not
  // empty; cleared and filled in the order of those ids, from the same distribution as
  // result.logprob.
  SampleResult Sample(std::span<const float> logits, const SamplingParams& params,
                      const SampleOptions& options,
                      std::vector<TokenLogprob>* top_logprobs = nullptr,
                      std::vector<TokenLogprob>* token_ids_logprobs = nullptr);

 private:
  // Draws from the filtered distribution; returns the token. Sets *norm_out (at the request's
  // temperature) and *have_norm when it computed the full softmax sum on the way.
  int32_t SampleFiltered(std::span<const float> logits, float max_logit,
                         const SamplingParams& params, double uniform,
                         LogSoftmaxNormalizer* norm_out, bool* have_norm);
  // index_[0, k) = the k highest logits, best first (ties to the lower id). Returns k.
  size_t SelectTopK(std::span<const float> logits, size_t k);
  // With prob_ holding every token's unnormalized prob: the top-p nucleus (mass strictly before
  // a token <= target) into index_ / cand_prob_, in no particular order. Returns its size.
  size_t CollectNucleus(double target);
  // With prob_ filled: a draw from all tokens whose prob >= threshold, via per-block sums.
  int32_t DrawFullVocab(float threshold, double uniform);

  int32_t vocab_size_;
  std::vector<int32_t> index_;       // [V] candidate token ids
  std::vector<int32_t> boundary_;    // [V] tokens of the top-p boundary bucket
  std::vector<float> prob_;          // [V] unnormalized probs, by token id
  std::vector<float> cand_prob_;     // [V] unnormalized probs, by candidate position
  std::vector<float> sanitized_;     // [V] copy of a row with NaN replaced by -inf
  std::vector<TokenLogprob> heap_;   // top-k selection heap (logit stored in .logprob)
  std::vector<double> bucket_mass_;  // top-p histogram: mass per float-exponent bucket
  std::vector<double> block_sum_;    // per-block prob sums for DrawFullVocab
};

}  // namespace radixlm
