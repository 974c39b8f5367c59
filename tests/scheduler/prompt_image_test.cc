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

PromptImage GridImage(int64_t begin, int64_t rows, int64_t cols) {
  PromptImage image;
  image.begin = begin;
  image.n = rows * cols;
  image.grid_rows = rows;
  image.grid_cols = cols;
  return image;
}

using Pos = std::vector<std::vector<int64_t>>;  // (t, h, w) per token

Pos Positions(const std::vector<PromptImage>& images, int64_t begin, int64_t end) {
  std::vector<int64_t> flat;
  MropePositions(images, begin, end, &flat);
  EXPECT_EQ(flat.size(), static_cast<size_t>(3 * (end - begin)));
  Pos out;
  for (size_t i = 0; i + 2 < flat.size(); i += 3)
    out.push_back({flat[i], flat[i + 1], flat[i + 2]});
  return out;
}

// text(3), a 2 x 3 grid at t = 3 (row by row: h = 3 + row, w = 3 + col), then text from
// 3 + max(2, 3) = 6 on (index 9 is at 6: three behind), decode steps past the prompt too.
TEST(MropePositionsTest, OneImage) {
  const std::vector<PromptImage> images = {GridImage(3, 2, 3)};
  EXPECT_TRUE(HasMropeImages(images));
  const Pos want = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2},                                     // text
                    {3, 3, 3}, {3, 3, 4}, {3, 3, 5}, {3, 4, 3}, {3, 4, 4},   {3, 4, 5},  // image
                    {6, 6, 6}, {7, 7, 7}, {8, 8, 8}, {9, 9, 9}, {10, 10, 10}};
  EXPECT_EQ(Positions(images, 0, 14), want);
  EXPECT_EQ(Positions(images, 20, 21), (Pos{{17, 17, 17}}));  // a later decode step
}

// Text before, between and after two images; the second is taller than wide (3 rows x 2
// columns: the text after it continues at p0 + 3).
TEST(MropePositionsTest, TwoImagesWithTextBetween) {
  // [0, 2) text, [2, 6) 2x2 image, [6, 8) text, [8, 14) 3x2 image, [14, 16) text.
  const std::vector<PromptImage> images = {GridImage(2, 2, 2), GridImage(8, 3, 2)};
  const Pos want = {{0, 0, 0}, {1, 1, 1},                          // text
                    {2, 2, 2}, {2, 2, 3},   {2, 3, 2}, {2, 3, 3},  // image 1 (2x2)
                    {4, 4, 4}, {5, 5, 5},                          // text: 2 + 2
                    {6, 6, 6}, {6, 6, 7},   {6, 7, 6}, {6, 7, 7}, {6, 8, 6}, {6, 8, 7},  // 3x2
                    {9, 9, 9}, {10, 10, 10}};  // text: 6 + 3
  EXPECT_EQ(Positions(images, 0, 16), want);
  EXPECT_EQ(Positions(images, 16, 18), (Pos{{11, 11, 11}, {12, 12, 12}}));  // decode
}

// Any split of the prompt into chunks gives the positions of one pass; an image without a grid
// (gemma3's) takes one position per token.
TEST(MropePositionsTest, ChunksEqualOnePass) {
  const std::vector<PromptImage> images = {GridImage(1, 2, 3), GridImage(9, 1, 4),
                                           GridImage(13, 3, 3)};
  const Pos whole = Positions(images, 0, 26);
  for (int64_t a = 0; a <= 26; ++a) {
    for (int64_t b = a; b <= 26; ++b) {
      Pos parts = Positions(images, 0, a);
      for (const auto& p : Positions(images, a, b)) parts.push_back(p);
      for (const auto& p : Positions(images, b, 26)) parts.push_back(p);
      ASSERT_EQ(parts, whole) << "chunks [0, " << a << "), [" << a << ", " << b << "), [" << b
                              << ", 26)";
    }
  }
  PromptImage gemma3 = GridImage(2, 1, 4);
  gemma3.grid_rows = gemma3.grid_cols = 0;
  const std::vector<PromptImage> plain = {gemma3};
  EXPECT_FALSE(HasMropeImages(plain));
  EXPECT_EQ(
      Positions(plain, 0, 8),
      (Pos{
          {0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {4, 4, 4}, {5, 5, 5}, {6, 6, 6}, {7, 7, 7}}));
}

}  // namespace
}  // namespace radixlm
