// Packed allowed-token bitmasks: the hook through which constrained decoding restricts sampling.
//
// Layout (the same as xgrammar's): int32 words, word w covers tokens [32*w, 32*w + 32), and bit b
// (value 1u << b, least significant first) of word w is token 32*w + b. A set bit means the token
// is allowed. A mask for a vocabulary of V tokens has BitmaskWords(V) words; bits past V-1 in
// the last word are ignored.
#pragma once

#include <cstdint>
#include <span>

namespace radixlm {

constexpr int32_t BitmaskWords(int32_t vocab_size) { return (vocab_size + 31) / 32; }

// Fills `mask` ([BitmaskWords(vocab)]) with all tokens allowed (true) or none allowed (false).
void FillBitmask(std::span<int32_t> mask, bool allowed);

// Marks one token allowed / disallowed. token must be < 32 * mask.size().
inline void SetTokenAllowed(std::span<int32_t> mask, int32_t token, bool allowed) {
  auto& word = reinterpret_cast<uint32_t&>(mask[token >> 5]);
  const uint32_t bit = 1u << (token & 31);
  word = allowed ? (word | bit) : (word & ~bit);
}

inline bool IsTokenAllowed(std::span<const int32_t> mask, int32_t token) {
  return (static_cast<uint32_t>(mask[token >> 5]) >> (token & 31)) & 1u;
}

// Sets logits[t] = -inf for every token t whose bit is clear. logits is [vocab];
// mask.size() must be >= BitmaskWords(logits.size()). Words that are all ones are skipped, so a
// mostly-allowed mask costs about one load per 32 tokens.
void ApplyTokenBitmask(std::span<float> logits, std::span<const int32_t> mask);

}  // namespace radixlm
