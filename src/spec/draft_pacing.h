// Draft pacing: when speculation pays. A drafted token adds one row to the decode forward. A
// step's time is about t0 + t1 * tokens (t0: reading the weights once, t1: one token's
// arithmetic), so with B tokens in the batch, D drafted and G of them kept, drafting raises
// throughput when G / B > t1 * D / (t0 + t1 * B), i.e. when the kept share G / D exceeds
// c(B) = B / (B + r), r = t0 / t1. A request tracks a running mean of its drafts' kept share
// and backs off (skips drafting for 1, 2, 4, ... rounds) while it stays under c(B).
#pragma once

#include <cstdint>

namespace radixlm::spec {

// r: on the CPU a decode step reads the weights in about the time of 8 tokens' arithmetic.
inline constexpr double kWeightPassTokens = 8.0;
inline constexpr int32_t kMaxBackoffRounds = 16;

// c(B): the kept share of drafted tokens above which drafting pays in a batch of B tokens.
inline double MinKeptShare(int64_t batch_tokens) {
  const auto b = static_cast<double>(batch_tokens);
  return b / (b + kWeightPassTokens);
}

// One request's pacing state.
struct DraftPacer {
  double kept_share = 1.0;  // running mean of kept / drafted, halved toward each new draft
  int32_t backoff = 0;      // rounds to skip after the next draft that does not pay
  int32_t skip_rounds = 0;  // rounds left without a draft

  // A round where the request may draft: false while backing off (and counts the round).
  bool MayDraft() {
    if (skip_rounds == 0) return true;
    --skip_rounds;
    return false;
  }

  // After a verification of `drafted` tokens (0: the draft was empty), `kept` of them kept,
  // in a batch of batch_tokens tokens (0: pace only by drafts that keep nothing).
  void OnVerified(int32_t drafted, int32_t kept, int64_t batch_tokens) {
    if (drafted > 0) kept_share = 0.5 * (kept_share + static_cast<double>(kept) / drafted);
    if (kept == 0 || (batch_tokens > 0 && kept_share < MinKeptShare(batch_tokens))) {
      backoff = backoff == 0 ? 1 : (2 * backoff < kMaxBackoffRounds ? 2 * backoff
                                                                     : kMaxBackoffRounds);
      skip_rounds = backoff;
    } else {
      backoff = 0;
    }
  }
};

}  // namespace radixlm::spec
