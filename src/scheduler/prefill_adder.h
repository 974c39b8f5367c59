// PrefillAdder: the token budgets of one scheduling round (SGLang's PrefillAdder).
//
// It decides how many tokens of each candidate to prefill this round; it does not touch the
// cache or the pool (the scheduler matches, locks and allocates around it), so it is a small
// pure accounting object. Budgets, all in tokens:
//   total    KV that may still be promised: (free + evictable) minus what running requests are
//            expected to still need (min(remaining max_new_tokens, clip) * new_token_ratio each),
//            minus what this round admits (its prefill, plus min(max_new_tokens, clip) for a
//            request whose prefill completes). A candidate needing more is refused: kNoToken.
//   current  KV that must exist right now: free + evictable minus this round's prefills.
//   input    max_prefill_tokens minus the decode tokens mixed into the same batch; a candidate
//            that does not fit waits for the next round (kOther), unless it is the first.
//   chunk    chunked_prefill_size minus the decode tokens; a longer prompt is cut (page-
//            aligned) and becomes the round's chunked request.
//   batch    the runner's hard cap on new tokens per forward (applies even without chunking).
//   rows     full-logits rows for input logprobs; a prompt needing them is chunked to fit.
// At most one request per round is left partially prefilled: once one is cut, the round ends.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>

namespace radixlm {

struct PrefillBudgets {
  int32_t page_size = 1;
  int32_t clip_max_new_tokens = 4096;
  double available_tokens = 0;  // free + evictable KV tokens (after this round's decode slots)
  double running_reserve = 0;   // sum over running requests of min(remaining, clip) * ratio
  int64_t input_tokens = 0;     // max_prefill_tokens - decode tokens in the batch
  std::optional<int64_t> chunk_tokens;  // chunked_prefill_size - decode tokens; nullopt: off
  int64_t batch_tokens = 0;             // runner cap - decode tokens in the batch
  int64_t logprob_rows = 0;             // max_logprob_rows_per_batch
  int32_t request_slots = 0;            // max_running_requests - requests holding KV
  // Never cut a prompt into chunks (an encoder attends over its whole prompt at once): one that
  // does not fit this round's budget waits for another round.
  bool whole_prompts = false;
};

struct PrefillCandidate {
  int64_t extend_len = 0;           // tokens still to prefill (fill_len - prefix)
  int64_t max_new_tokens = 0;       // remaining new tokens it may generate
  bool needs_logprob_rows = false;  // every prefilled token needs a full logits row
  // Ranges [a, b) of the tokens to prefill (relative to the first) that a cut must not fall
  // inside, in order (a bidirectional image span: its tokens are computed together). A cut
  // that would moves back to the range's start; when that leaves nothing, the request waits.
  std::span<const std::pair<int64_t, int64_t>> whole_ranges = {};
  // Admit even if the total budget says no (the first candidate when nothing else holds KV,
  // so a lone request always makes progress when it physically fits).
  bool force = false;
};

class PrefillAdder {
 public:
  enum class Result { kContinue, kNoToken, kOther };

  explicit PrefillAdder(const PrefillBudgets& budgets);

  // The request continuing a chunked prefill (it already holds a request slot). Returns the
  // tokens to prefill this round (> 0), or nullopt when nothing fits.
  std::optional<int64_t> AddChunked(const PrefillCandidate& candidate);

  // A waiting request. On kContinue / kOther with *extend_len > 0 it is admitted for
  // *extend_len tokens (fewer than candidate.extend_len when cut); otherwise it is not.
  Result AddOne(const PrefillCandidate& candidate, int64_t* extend_len);

  // The scheduler locked (delta < 0) or unlocked (delta > 0) a prefix: evictable KV changed.
  void OnEvictableChange(int64_t delta) { budgets_.available_tokens += delta; }

  bool has_partial() const { return has_partial_; }
  int64_t admitted_tokens() const { return admitted_tokens_; }
  int32_t admitted_requests() const { return admitted_requests_; }
  double rem_total_tokens() const;
  double cur_rem_tokens() const { return budgets_.available_tokens - cur_offset_; }

 private:
  int64_t CeilPage(int64_t n) const;
  int64_t FloorPage(int64_t n) const;
  // Most tokens of one request that fit this round's chunk / batch / row budgets and memory.
  int64_t ChunkLimit(bool needs_logprob_rows) const;
  // `extend` moved back to the start of a whole range it would cut (PrefillCandidate).
  static int64_t AvoidSplit(const PrefillCandidate& candidate, int64_t extend);
  void Charge(int64_t extend, int64_t reserved_new_tokens, bool logprob_rows);
  Result State() const;

  PrefillBudgets budgets_;
  double total_offset_ = 0;  // promised this round: prefills + their reserves
  double cur_offset_ = 0;    // needed right now: prefills
  int64_t admitted_tokens_ = 0;
  int32_t admitted_requests_ = 0;
  bool has_partial_ = false;
};

}  // namespace radixlm
