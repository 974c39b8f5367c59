// Log-probabilities of a logits row: normalizer, one token, top-N, and prompt scoring.
//
// Which distribution (SGLang's behaviour, python/sglang/srt/layers/sampler.py):
//   * Output tokens, sampled (temperature > eps): log_softmax(processed_logits / temperature),
//     where processed = after penalties, grammar mask and logit_bias, and BEFORE top-k / top-p /
//     min-p filtering. This is LogprobMode::kAfterTemperature, the default.
//   * Output tokens, greedy: log_softmax(processed_logits) (SGLang runs greedy at temperature 1).
//     top_k == 1 counts as greedy here whatever the temperature (in SGLang it depends on whether
//     the whole batch is greedy; here a request's logprobs never depend on its batch).
//   * SGLANG_RETURN_ORIGINAL_LOGPROB=1: log_softmax(processed_logits), temperature ignored; here
//     LogprobMode::kBeforeTemperature.
//   * Prompt tokens (logprob_start_len): log_softmax of the model's logits at each position,
//     optionally temperature-scaled (SGLang scales input logprobs by the request temperature);
//     see InputTokenLogprobs.
// Like SGLang, returned logprobs are clamped below at kMinLogprob (the lowest finite float) so a
// masked token (-inf) still serializes to JSON as a number.
//
// NaN logits are treated as -inf. A row with no finite logit has every logprob kMinLogprob.
// Nothing here allocates except where an output vector must grow beyond its capacity.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace radixlm {

inline constexpr float kMinLogprob = std::numeric_limits<float>::lowest();

enum class LogprobMode {
  kAfterTemperature,   // SGLang default: softmax(logits / T); T = 1 for greedy
  kBeforeTemperature,  // SGLANG_RETURN_ORIGINAL_LOGPROB: softmax(logits)
};

struct TokenLogprob {
  int32_t token;
  float logprob;
};

// One position's logprob, as a request's output reports it: the token there and its logprob
// (nullopt for the first prompt token, which nothing predicts), plus the top alternatives when
// top_logprobs_num > 0, and the logprobs of the request's token_ids_logprob ids.
struct LogprobEntry {
  int32_t token = -1;
  std::optional<float> logprob;
  std::vector<TokenLogprob> top;  // best first; empty unless top_logprobs_num > 0
  // One per id of the request's token_ids_logprob, in its order (ids may repeat); empty when
  // it has none, or when logprob is nullopt (nothing scored this position).
  std::vector<TokenLogprob> token_ids;
};

// log_softmax(logits * inv_temperature)[t] == (logits[t] - max) * inv_temperature - log_sum.
struct LogSoftmaxNormalizer {
  float max = 0.0f;              // max finite-or-inf logit (NaN ignored)
  float inv_temperature = 1.0f;  // 1 / temperature
  float log_sum = 0.0f;          // log sum_t exp((logits[t] - max) * inv_temperature)
  bool empty = false;            // no logit above -inf: every logprob is kMinLogprob

  // The clamped logprob of a token whose logit is `logit`.
  float Logprob(float logit) const;
};

// One pass for the max, one for the sum (accumulated in double). temperature > 0.
LogSoftmaxNormalizer ComputeLogSoftmaxNormalizer(std::span<const float> logits,
                                                 float temperature = 1.0f);

// out[t] = clamped log_softmax(logits / temperature)[t]. out.size() == logits.size().
void LogSoftmax(std::span<const float> logits, float temperature, std::span<float> out);

// The clamped logprob of `token` (0 <= token < logits.size()).
float TokenLogprobOf(std::span<const float> logits, int32_t token, float temperature = 1.0f);

// The min(n, vocab) most likely tokens, most likely first; ties go to the lower token id.
// O(vocab log n) with a heap kept in *out (cleared first; allocates only if its capacity < n).
void TopLogprobs(std::span<const float> logits, int32_t n, const LogSoftmaxNormalizer& norm,
                 std::vector<TokenLogprob>* out);
void TopLogprobs(std::span<const float> logits, int32_t n, float temperature,
                 std::vector<TokenLogprob>* out);

// The logprobs of `ids` (each in [0, logits.size())), in their order, under `norm`: SGLang's
// token_ids_logprob. *out is cleared first; allocates only if its capacity < ids.size().
void TokenIdsLogprobs(std::span<const float> logits, std::span<const int32_t> ids,
                      const LogSoftmaxNormalizer& norm, std::vector<TokenLogprob>* out);

// Prompt scoring. logits is [n_rows, vocab] row-major: row i is the model's output at prompt
// position i, predicting next_tokens[i] (so next_tokens.size() == n_rows). Writes
// out_logprobs[i] = logprob of next_tokens[i] under row i. When top_n > 0 and out_top is not
// null, (*out_top)[i] receives row i's top_n entries (out_top is resized to n_rows).
// When `ids` is not empty and out_ids is not null, (*out_ids)[i] receives row i's logprobs of
// `ids` (TokenIdsLogprobs; out_ids is resized to n_rows).
// temperature scales every row (1 = the model's own distribution).
void InputTokenLogprobs(std::span<const float> logits, int32_t vocab_size,
                        std::span<const int32_t> next_tokens, float temperature,
                        std::span<float> out_logprobs, int32_t top_n = 0,
                        std::vector<std::vector<TokenLogprob>>* out_top = nullptr,
                        std::span<const int32_t> ids = {},
                        std::vector<std::vector<TokenLogprob>>* out_ids = nullptr);

}  // namespace radixlm
