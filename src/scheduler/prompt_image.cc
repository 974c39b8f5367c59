#include "scheduler/prompt_image.h"

namespace radixlm {

namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

void WriteImageIds(const ImageHash& hash, std::span<int32_t> ids) {
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint64_t mixed = SplitMix64(hash.h1 + i) ^ SplitMix64(hash.h2 - i);
    ids[i] = kImageIdBase | static_cast<int32_t>(mixed & static_cast<uint64_t>(kImageIdBase - 1));
  }
}

}  // namespace radixlm
