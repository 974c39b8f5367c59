#include "scheduler/prefill_adder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/check.h"

namespace radixlm {

PrefillAdder::PrefillAdder(const PrefillBudgets& budgets) : budgets_(budgets) {
  RADIXLM_CHECK_GE(budgets_.page_size, 1);
}

int64_t PrefillAdder::CeilPage(int64_t n) const {
  const int64_t p = budgets_.page_size;
  return (n + p - 1) / p * p;
}

int64_t PrefillAdder::FloorPage(int64_t n) const {
  const int64_t p = budgets_.page_size;
  return n / p * p;
}

double PrefillAdder::rem_total_tokens() const {
  return budgets_.available_tokens - budgets_.running_reserve - total_offset_;
}

int64_t PrefillAdder::ChunkLimit(bool needs_logprob_rows) const {
  int64_t limit = budgets_.batch_tokens;
  if (budgets_.chunk_tokens.has_value()) limit = std::min(limit, *budgets_.chunk_tokens);
  if (needs_logprob_rows) limit = std::min(limit, budgets_.logprob_rows);
  // Physically: whole pages of free-or-evictable KV.
  const double cur = std::floor(cur_rem_tokens());
  limit = std::min<int64_t>(limit, cur <= 0 ? 0 : FloorPage(static_cast<int64_t>(cur)));
  return limit;
}

int64_t PrefillAdder::AvoidSplit(const PrefillCandidate& c, int64_t extend) {
  for (const auto& [a, b] : c.whole_ranges) {
    if (a < extend && extend < b) return a;
  }
  return extend;
}

void PrefillAdder::Charge(int64_t extend, int64_t reserved_new_tokens, bool logprob_rows) {
  const int64_t paged = CeilPage(extend);
  total_offset_ += static_cast<double>(paged + reserved_new_tokens);
  cur_offset_ += static_cast<double>(paged);
  budgets_.input_tokens -= extend;
  if (budgets_.chunk_tokens.has_value()) *budgets_.chunk_tokens -= extend;
  budgets_.batch_tokens -= extend;
  if (logprob_rows) budgets_.logprob_rows -= extend;
  admitted_tokens_ += extend;
}

PrefillAdder::Result PrefillAdder::State() const {
  if (has_partial_) return Result::kOther;
  if (rem_total_tokens() <= 0 || cur_rem_tokens() <= 0) return Result::kNoToken;
  if (budgets_.input_tokens <= 0 || budgets_.batch_tokens <= 0) return Result::kOther;
  if (budgets_.chunk_tokens.has_value() && *budgets_.chunk_tokens <= 0) return Result::kOther;
  if (budgets_.request_slots <= 0 || budgets_.logprob_rows <= 0) return Result::kOther;
  return Result::kContinue;
}

std::optional<int64_t> PrefillAdder::AddChunked(const PrefillCandidate& c) {
  RADIXLM_DCHECK(!has_partial_ && c.extend_len > 0);
  int64_t extend = std::min(c.extend_len, ChunkLimit(c.needs_logprob_rows));
  if (extend <= 0) return std::nullopt;
  const bool cut = extend < c.extend_len;
  if (cut && FloorPage(extend) > 0) extend = FloorPage(extend);
  if (cut) extend = AvoidSplit(c, extend);
  if (extend <= 0) return std::nullopt;
  Charge(extend, cut ? 0 : std::min<int64_t>(c.max_new_tokens, budgets_.clip_max_new_tokens),
         c.needs_logprob_rows);
  has_partial_ = cut;
  return extend;
}

PrefillAdder::Result PrefillAdder::AddOne(const PrefillCandidate& c, int64_t* extend_len) {
  RADIXLM_DCHECK_GT(c.extend_len, 0);
  *extend_len = 0;
  if (has_partial_ || budgets_.request_slots <= 0) return Result::kOther;
  const int64_t reserve = std::min<int64_t>(c.max_new_tokens, budgets_.clip_max_new_tokens);
  if (!c.force && static_cast<double>(c.extend_len + reserve) > rem_total_tokens()) {
    return Result::kNoToken;
  }
  if (CeilPage(c.extend_len) > budgets_.input_tokens && admitted_requests_ > 0) {
    return Result::kOther;
  }
  const int64_t limit = ChunkLimit(c.needs_logprob_rows);
  int64_t extend = c.extend_len;
  if (extend > limit && budgets_.whole_prompts) {
    return admitted_requests_ > 0 ? Result::kOther : Result::kNoToken;
  }
  if (extend > limit) {
    // Cut it: this becomes the round's chunked request.
    extend = FloorPage(limit) > 0 ? FloorPage(limit) : limit;
    extend = AvoidSplit(c, extend);
    if (extend <= 0) return c.force ? Result::kNoToken : Result::kOther;
    Charge(extend, 0, c.needs_logprob_rows);
    has_partial_ = true;
  } else {
    Charge(extend, reserve, c.needs_logprob_rows);
  }
  --budgets_.request_slots;
  ++admitted_requests_;
  *extend_len = extend;
  return State();
}

}  // namespace radixlm
