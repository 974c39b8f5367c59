// Draft pacing: when speculation pays. A drafted token adds one row to the decode forward. A
// step's time is about t0 + t1 * tokens (t0: reading the weights once, t1: one token's
// arithmetic), so with B tokens in the batch, D drafted and G of them kept, drafting raises
// throughput when G / B > t1 * D / (t0 + t1 * B), i.e. when the kept share G / D exceeds
// c(B) = B / (B + r), r = t0 / t1. A request tracks a running mean of its drafts' kept share
// and backs off (skips drafting for 1, 2, 4, ... rounds) while it stays under c(B).
// r differs from one CPU to the next (about 8 where memory is slow, 4 where arithmetic is the
// larger part), so the scheduler fits it to the decode forwards it runs (StepCostFit).
#pragma once

#include <algorithm>
#include <cstdint>

namespace radixlm::spec {

// r until the fit has seen enough: on the CPU a decode step reads the weights in about the
// time of 8 tokens' arithmetic.
inline constexpr double kWeightPassTokens = 8.0;
inline constexpr int32_t kMaxBackoffRounds = 16;

// c(B): the kept share of drafted tokens above which drafting pays in a batch of B tokens, for
// a step-cost ratio r.
inline double MinKeptShare(int64_t batch_tokens, double r = kWeightPassTokens) {
  const auto b = static_cast<double>(batch_tokens);
  return b / (b + r);
}

// r = t0 / t1 fitted by least squares to (tokens, seconds) of decode forwards, each sample's
// weight decaying by kDecay per later sample (a half-life of about 140 forwards). Until the
// samples span enough batch sizes (a weighted standard deviation of one token or more over at
// least 16 samples' weight), or when the fit is degenerate (t0 or t1 not positive), r is
// kWeightPassTokens; a fitted r is clamped to [1, 64].
class StepCostFit {
 public:
  static constexpr double kDecay = 0.995;

  void Add(int64_t tokens, double seconds) {
    const auto x = static_cast<double>(tokens);
    w_ = kDecay * w_ + 1.0;
    x_ = kDecay * x_ + x;
    y_ = kDecay * y_ + seconds;
    xx_ = kDecay * xx_ + x * x;
    xy_ = kDecay * xy_ + x * seconds;
  }

  double WeightPassTokens() const {
    if (w_ < 16.0) return kWeightPassTokens;
    const double mx = x_ / w_, my = y_ / w_;
    const double var = xx_ / w_ - mx * mx;
    if (var < 1.0) return kWeightPassTokens;
    const double t1 = (xy_ / w_ - mx * my) / var;
    const double t0 = my - t1 * mx;
    if (!(t1 > 0.0) || !(t0 > 0.0)) return kWeightPassTokens;
    return std::clamp(t0 / t1, 1.0, 64.0);
  }

 private:
  double w_ = 0, x_ = 0, y_ = 0, xx_ = 0, xy_ = 0;
};

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
  // in a batch of batch_tokens tokens (0: pace only by drafts that keep nothing), for a
  // step-cost ratio r.
  void OnVerified(int32_t drafted, int32_t kept, int64_t batch_tokens,
                  double r = kWeightPassTokens) {
    if (drafted > 0) kept_share = 0.5 * (kept_share + static_cast<double>(kept) / drafted);
    if (kept == 0 || (batch_tokens > 0 && kept_share < MinKeptShare(batch_tokens, r))) {
      backoff =
          backoff == 0 ? 1 : (2 * backoff < kMaxBackoffRounds ? 2 * backoff : kMaxBackoffRounds);
      skip_rounds = backoff;
    } else {
      backoff = 0;
    }
  }
};

}  // namespace radixlm::spec
