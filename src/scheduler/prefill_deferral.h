// Prefill deferral: shortest remaining work first between running decodes and a long prefill.
//
// With chunked prefill, requests that are decoding ride along in every prefill chunk's forward
// pass: each of their tokens waits for a whole chunk. When a long prompt arrives while a few
// requests are near the end of their outputs, they finish only after its whole prefill (a
// 4k-token prompt of a 1B model: tens of seconds), one token per chunk. Running those decodes
// to completion first and the prefill after is the classic shortest-remaining-processing-time
// order: with D the decodes' remaining time and P the prefill's, decoding first finishes the
// decodes at D and the prefill at D + P; prefilling first finishes the prefill at P and the
// decodes at about P + D. The sum is smaller the first way exactly when D < P.
//
// The scheduler defers a prefill only when (a) it is long: its estimated time is at least
// SchedulerConfig::defer_long_prefill_s, so prompts that cost less than that never wait, and
// (b) every running decode would finish before it: max remaining output tokens x the decode
// step's time < the prefill's time. Since the decodes' remaining tokens shrink with every step,
// a deferred prefill waits less than its own estimated time. Requests that may stop earlier
// (EOS, stop strings) count with their max_new_tokens, which only makes deferral rarer.
//
// While the head of the queue is deferred, a request behind it is admitted when its own
// prefill is not long and the head would still be deferred with it decoding too: its whole
// work is less than the head's prefill, so the same order puts it first. That can hold the
// head longer than the decodes alone would; the waiting queue's starvation bound
// (SchedulerConfig::starvation_max_skips / starvation_max_wait_s) ends it: a starved head is
// passed by nobody and waits only for the decodes already running. The same holds for a
// request deferred mid-prefill (the chunked one), except that only prompts whose whole prefill
// fits the step pass it (one request at a time is mid-prefill), and on models whose state is
// snapshotted at chunk ends (hybrid) nothing passes it.
//
// The times are exponential moving averages of the scheduler's own forward passes (StepTimes),
// timed on the scheduler's clock; until a prefill of at least kMinPrefillSampleTokens tokens has
// been timed nothing is deferred, and until a decode-only step has been timed one is taken to
// cost kDecodeStepPrefillTokens prefill tokens.
#pragma once

#include <cstdint>
#include <optional>

namespace radixlm {

class StepTimes {
 public:
  static constexpr int64_t kMinPrefillSampleTokens = 64;  // shorter prefills: mostly overhead
  static constexpr double kDecodeStepPrefillTokens = 8.0;
  static constexpr double kSmoothing = 0.25;  // weight of the newest sample

  // One forward pass: prefill_tokens new prompt tokens (0: a decode-only step) and decode_rows
  // decoding requests, in `seconds`.
  void Observe(int64_t prefill_tokens, int64_t decode_rows, double seconds);

  std::optional<double> prefill_token_seconds() const { return prefill_token_s_; }
  std::optional<double> decode_step_seconds() const { return decode_step_s_; }

  // The estimated seconds of prefilling `tokens` tokens; nullopt before the first sample.
  std::optional<double> PrefillSeconds(int64_t tokens) const;
  // The estimated seconds of `steps` decode steps; nullopt before any prefill or decode sample.
  std::optional<double> DecodeSeconds(int64_t steps) const;

 private:
  std::optional<double> prefill_token_s_;
  std::optional<double> decode_step_s_;
};

// Whether to run only the decodes this step, leaving a prefill of prefill_tokens tokens for
// later (the contract above). decode_steps_left: the most output tokens any running decode may
// still produce. min_prefill_s <= 0 disables deferral.
bool ShouldDeferPrefill(const StepTimes& times, int64_t prefill_tokens, int64_t decode_steps_left,
                        double min_prefill_s);

}  // namespace radixlm
