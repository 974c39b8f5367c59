// An image's radix-tree ids (scheduler/prompt_image.h): outside every vocabulary, the same for
// the same content, different from the first position on for different content; so the tree
// shares a prompt through the same image and stops at a different one.
#include "scheduler/prompt_image.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

#include "cache/radix_cache.h"

namespace radixlm {
namespace {

using Ids = std::vector<int32_t>;

Ids ImageIds(ImageHash hash, int n) {
  Ids ids(n);
  WriteImageIds(hash, ids);
  return ids;
}

Ids Prompt(const Ids& image) {
  Ids ids = {5, 6, 7};
  ids.insert(ids.end(), image.begin(), image.end());
  ids.insert(ids.end(), {8, 9, 10, 11});
  return ids;
}

TEST(PromptImageTest, IdsAreOutsideTheVocabularyAndKeyedByContent) {
  std::mt19937_64 rng(49);
  for (int trial = 0; trial < 200; ++trial) {
    const ImageHash a{rng(), rng()};
    const ImageHash b{rng(), rng()};
    const Ids ia = ImageIds(a, 16);
    for (int32_t id : ia) {
      EXPECT_TRUE(IsImageId(id));
      EXPECT_GE(id, kImageIdBase);
    }
    EXPECT_EQ(ImageIds(a, 16), ia);
    EXPECT_NE(ImageIds(b, 1)[0], ia[0]);  // (a 2^-30 chance per pair)
  }
  EXPECT_FALSE(IsImageId(262143));  // the largest vocabularies are ~2^18
}

TEST(PromptImageTest, TheTreeSharesTheSameImageAndStopsAtAnother) {
  for (const int32_t page : {1, 4}) {
    SCOPED_TRACE(page);
    RadixCache cache({.page_size = page});
    const Ids cat = Prompt(ImageIds({1, 2}, 8));
    Ids slots(cat.size());
    std::iota(slots.begin(), slots.end(), 100);
    cache.Insert(cat, slots);
    const auto same = cache.MatchPrefix(cat);
    EXPECT_EQ(same.slots.size(), cat.size() / page * page);
    const auto dog = cache.MatchPrefix(Prompt(ImageIds({3, 4}, 8)));
    EXPECT_EQ(dog.slots.size(), 3u / page * page);  // the text before the image only
  }
}

}  // namespace
}  // namespace radixlm
