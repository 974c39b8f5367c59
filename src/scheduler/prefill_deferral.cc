#include "scheduler/prefill_deferral.h"

namespace radixlm {
namespace {

double Smooth(const std::optional<double>& old, double sample) {
  return old.has_value() ? *old + StepTimes::kSmoothing * (sample - *old) : sample;
}

}  // namespace

void StepTimes::Observe(int64_t prefill_tokens, int64_t decode_rows, double seconds) {
  if (!(seconds >= 0)) return;
  if (prefill_tokens == 0) {
    if (decode_rows > 0) decode_step_s_ = Smooth(decode_step_s_, seconds);
    return;
  }
  if (prefill_tokens >= kMinPrefillSampleTokens) {
    prefill_token_s_ = Smooth(prefill_token_s_, seconds / static_cast<double>(prefill_tokens));
  }
}

std::optional<double> StepTimes::PrefillSeconds(int64_t tokens) const {
  if (!prefill_token_s_.has_value()) return std::nullopt;
  return *prefill_token_s_ * static_cast<double>(tokens);
}

std::optional<double> StepTimes::DecodeSeconds(int64_t steps) const {
  if (decode_step_s_.has_value()) return *decode_step_s_ * static_cast<double>(steps);
  if (prefill_token_s_.has_value()) {
    return *prefill_token_s_ * kDecodeStepPrefillTokens * static_cast<double>(steps);
  }
  return std::nullopt;
}

bool ShouldDeferPrefill(const StepTimes& times, int64_t prefill_tokens, int64_t decode_steps_left,
                        double min_prefill_s) {
  if (!(min_prefill_s > 0) || prefill_tokens <= 0 || decode_steps_left <= 0) return false;
  const std::optional<double> prefill = times.PrefillSeconds(prefill_tokens);
  const std::optional<double> decode = times.DecodeSeconds(decode_steps_left);
  if (!prefill.has_value() || !decode.has_value() || *prefill < min_prefill_s) return false;
  return *decode < *prefill;
}

}  // namespace radixlm
