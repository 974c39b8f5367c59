#include "sampling/penalty_state.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace radixlm {
namespace {

inline size_t HashToken(int32_t token, size_t mask) {
  // Fibonacci hashing: spreads consecutive ids across the table.
  return (static_cast<uint64_t>(static_cast<uint32_t>(token)) * 0x9E3779B97F4A7C15ull >> 32) & mask;
}

}  // namespace

void PenaltyState::Reserve(int32_t max_distinct_tokens) {
  if (max_distinct_tokens <= 0) return;
  entries_.reserve(static_cast<size_t>(max_distinct_tokens));
  const size_t want = std::bit_ceil(static_cast<size_t>(max_distinct_tokens) * 2);
  if (want > slots_.size()) Rehash(want);
}

void PenaltyState::SetPromptTokens(std::span<const int32_t> prompt) {
  prompt_tokens_.assign(prompt.begin(), prompt.end());
  std::sort(prompt_tokens_.begin(), prompt_tokens_.end());
  prompt_tokens_.erase(std::unique(prompt_tokens_.begin(), prompt_tokens_.end()),
                       prompt_tokens_.end());
}

int32_t PenaltyState::FindSlot(int32_t token) const {
  const size_t mask = slots_.size() - 1;
  size_t slot = HashToken(token, mask);
  while (true) {
    const int32_t index = slots_[slot];
    if (index < 0 || entries_[index].token == token) return static_cast<int32_t>(slot);
    slot = (slot + 1) & mask;
  }
}

void PenaltyState::Rehash(size_t capacity) {
  assert(std::has_single_bit(capacity));
  slots_.assign(capacity, -1);
  for (size_t i = 0; i < entries_.size(); ++i) {
    slots_[FindSlot(entries_[i].token)] = static_cast<int32_t>(i);
  }
}

void PenaltyState::AddOutputToken(int32_t token) {
  assert(token >= 0);
  ++num_output_tokens_;
  if ((entries_.size() + 1) * 2 > slots_.size()) {
    Rehash(std::max<size_t>(16, slots_.size() * 2));
  }
  const int32_t slot = FindSlot(token);
  if (slots_[slot] >= 0) {
    ++entries_[slots_[slot]].count;
    return;
  }
  slots_[slot] = static_cast<int32_t>(entries_.size());
  entries_.push_back(TokenCount{token, 1});
}

void PenaltyState::Clear() {
  entries_.clear();
  std::fill(slots_.begin(), slots_.end(), -1);
  prompt_tokens_.clear();
  num_output_tokens_ = 0;
}

int32_t PenaltyState::OutputCount(int32_t token) const {
  if (entries_.empty()) return 0;
  const int32_t index = slots_[FindSlot(token)];
  return index < 0 ? 0 : entries_[index].count;
}

bool PenaltyState::InPrompt(int32_t token) const {
  return std::binary_search(prompt_tokens_.begin(), prompt_tokens_.end(), token);
}

}  // namespace radixlm
