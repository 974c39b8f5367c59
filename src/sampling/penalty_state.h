// PenaltyState: the per-request token history that the penalties read.
//
// It keeps, for one request, the count of every distinct output token (frequency / presence /
// repetition penalties), the number of output tokens (min_new_tokens), and optionally the set of
// prompt tokens (repetition penalty). It is sparse: memory and penalty cost grow with the number
// of distinct tokens seen, not with the vocabulary, so a 262k-token vocabulary costs nothing.
//
// Ownership / threading: one PenaltyState per request, owned by the request and mutated only by
// the scheduler thread (AddOutputToken after each sampled token). Reads (the penalties) may run
// on other threads while no mutation is in progress.
//
// Allocation: AddOutputToken does not allocate while the number of distinct output tokens stays
// within Reserve()'s argument (reserve max_new_tokens up front); beyond that it grows
// geometrically, like a vector.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace radixlm {

struct TokenCount {
  int32_t token;
  int32_t count;
};

class PenaltyState {
 public:
  PenaltyState() = default;

  // Room for `max_distinct_tokens` distinct output tokens without reallocating.
  void Reserve(int32_t max_distinct_tokens);

  // Records the prompt, for the repetition penalty only (frequency / presence penalties count
  // output tokens only, as in SGLang and OpenAI). Replaces any previous prompt. Tokens must be
  // >= 0. Not for the per-token path: it sorts a copy of the prompt.
  void SetPromptTokens(std::span<const int32_t> prompt);

  // Counts one sampled token (>= 0).
  void AddOutputToken(int32_t token);

  // Forgets everything (for example, before replaying a retracted request's output).
  void Clear();

  int32_t num_output_tokens() const { return num_output_tokens_; }
  // How many times `token` appears in the output so far (0 if never).
  int32_t OutputCount(int32_t token) const;
  bool InPrompt(int32_t token) const;

  // The distinct output tokens with their counts, in order of first appearance.
  std::span<const TokenCount> output_counts() const { return entries_; }
  // The distinct prompt tokens, ascending.
  std::span<const int32_t> prompt_tokens() const { return prompt_tokens_; }

 private:
  // Open-addressing table (linear probing) from token to index in entries_; -1 = empty slot.
  // Capacity is a power of two kept at least twice the number of entries.
  int32_t FindSlot(int32_t token) const;
  void Rehash(size_t capacity);

  std::vector<TokenCount> entries_;
  std::vector<int32_t> slots_;
  std::vector<int32_t> prompt_tokens_;  // sorted, unique
  int32_t num_output_tokens_ = 0;
};

}  // namespace radixlm
