#include "scheduler/retraction.h"

#include <algorithm>

namespace radixlm {

std::vector<Request*> RetractionOrder(std::span<Request* const> running) {
  std::vector<Request*> order(running.begin(), running.end());
  std::sort(order.begin(), order.end(), [](const Request* a, const Request* b) {
    if (a->output_len() != b->output_len()) return a->output_len() < b->output_len();
    if (a->prompt_len != b->prompt_len) return a->prompt_len > b->prompt_len;
    return a->arrival_seq > b->arrival_seq;
  });
  return order;
}

int64_t RetractionTarget(int64_t remaining_requests, int32_t retract_decode_steps,
                         int32_t page_size) {
  // Each request may also need a fresh page for its first step.
  return remaining_requests * (static_cast<int64_t>(retract_decode_steps) + page_size - 1);
}

double NewTokenRatioAfterRetraction(std::span<Request* const> remaining,
                                    int32_t retract_decode_steps) {
  double decoded = 0, max_new = 0;
  for (const Request* r : remaining) {
    decoded += static_cast<double>(r->output_len());
    max_new += static_cast<double>(r->max_new_tokens);
  }
  if (max_new <= 0) return 1.0;
  const double ratio =
      (decoded + static_cast<double>(retract_decode_steps) * remaining.size()) / max_new;
  return std::min(1.0, ratio);
}

}  // namespace radixlm
