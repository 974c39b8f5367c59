#include "sampling/token_bitmask.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace radixlm {

void FillBitmask(std::span<int32_t> mask, bool allowed) {
  std::fill(mask.begin(), mask.end(), allowed ? int32_t{-1} : int32_t{0});
}

void ApplyTokenBitmask(std::span<float> logits, std::span<const int32_t> mask) {
  const int64_t vocab = static_cast<int64_t>(logits.size());
  assert(static_cast<int64_t>(mask.size()) * 32 >= vocab);
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const int64_t n_words = (vocab + 31) / 32;
  for (int64_t w = 0; w < n_words; ++w) {
    const uint32_t word = static_cast<uint32_t>(mask[w]);
    if (word == 0xFFFFFFFFu) continue;
    const int64_t base = w * 32;
    const int64_t n = std::min<int64_t>(32, vocab - base);
    if (word == 0) {
      std::fill_n(logits.begin() + base, n, kNegInf);
      continue;
    }
    for (int64_t b = 0; b < n; ++b) {
      if (((word >> b) & 1u) == 0) logits[base + b] = kNegInf;
    }
  }
}

}  // namespace radixlm
