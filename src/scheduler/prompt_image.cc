#include "scheduler/prompt_image.h"

#include <algorithm>

#include "util/split_mix.h"

namespace radixlm {

void WriteImageIds(const ImageHash& hash, std::span<int32_t> ids, int64_t first_row) {
  for (size_t k = 0; k < ids.size(); ++k) {
    const uint64_t i = static_cast<uint64_t>(first_row) + k;
    const uint64_t mixed = SplitMix64(hash.h1 + i) ^ SplitMix64(hash.h2 - i);
    ids[k] = kImageIdBase | static_cast<int32_t>(mixed & static_cast<uint64_t>(kImageIdBase - 1));
  }
}

bool HasMropeImages(std::span<const PromptImage> images) {
  for (const PromptImage& image : images) {
    if (image.grid_cols > 0) return true;
  }
  return false;
}

void MropePositions(std::span<const PromptImage> images, int64_t begin, int64_t end,
                    std::vector<int64_t>* out) {
  out->reserve(out->size() + 3 * static_cast<size_t>(std::max<int64_t>(end - begin, 0)));
  int64_t delta = 0;  // t position minus index, for tokens after the images passed
  size_t next = 0;    // the first image not wholly before token i
  for (int64_t i = begin; i < end; ++i) {
    while (next < images.size() && images[next].begin + images[next].n <= i) {
      const PromptImage& image = images[next++];
      if (image.grid_cols > 0) delta += std::max(image.grid_rows, image.grid_cols) - image.n;
    }
    if (next < images.size() && images[next].begin <= i && images[next].grid_cols > 0) {
      const PromptImage& image = images[next];
      const int64_t p0 = image.begin + delta;
      const int64_t j = i - image.begin;
      out->insert(out->end(), {p0, p0 + j / image.grid_cols, p0 + j % image.grid_cols});
    } else {
      const int64_t p = i + delta;
      out->insert(out->end(), {p, p, p});
    }
  }
}

}  // namespace radixlm
