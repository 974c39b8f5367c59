// SplitMix64's finaliser: a fixed, well-mixed 64-bit -> 64-bit hash (sampling seeds, the token
// ids that stand for an image's rows, fake models' logits). Its values are part of outputs tests
// compare, so it never changes.
#pragma once

#include <cstdint>

namespace radixlm {

constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace radixlm
