#include "cache/radix_node.h"

#include <algorithm>

namespace radixlm {

namespace {

// Finalizer of MurmurHash3: every input bit affects every output bit.
uint64_t Mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace

size_t PageHash::operator()(std::span<const int32_t> page) const {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ page.size();
  size_t i = 0;
  // Two ids per 64-bit word: a page of 16 ids costs 8 multiply-xor rounds.
  for (; i + 2 <= page.size(); i += 2) {
    const uint64_t word = (static_cast<uint64_t>(static_cast<uint32_t>(page[i])) << 32) |
                          static_cast<uint32_t>(page[i + 1]);
    h = (h ^ word) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
  }
  if (i < page.size()) {
    h = (h ^ static_cast<uint32_t>(page[i])) * 0x9e3779b97f4a7c15ULL;
  }
  return static_cast<size_t>(Mix64(h));
}

bool PageEqual::operator()(std::span<const int32_t> a, std::span<const int32_t> b) const {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace radixlm
