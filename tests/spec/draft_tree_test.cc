#include "spec/draft_tree.h"

#include <gtest/gtest.h>

#include <vector>

namespace radixlm::spec {
namespace {

TEST(DraftTreeTest, MasksDepthsAndChildrenFollowTheParents) {
  DraftTree t;
  t.Reset(7);
  const int32_t a = t.Add(0, 10);  // 1
  const int32_t b = t.Add(0, 11);  // 2
  const int32_t c = t.Add(a, 12);  // 3
  const int32_t d = t.Add(c, 13);  // 4
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t.depth(0), 0);
  EXPECT_EQ(t.depth(b), 1);
  EXPECT_EQ(t.depth(d), 3);
  EXPECT_EQ(t.masks()[0], 0b1u);
  EXPECT_EQ(t.masks()[b], 0b101u);
  EXPECT_EQ(t.masks()[d], 0b11011u);  // itself, c, a, root
  EXPECT_EQ(t.Child(0, 11), b);
  EXPECT_EQ(t.Child(a, 12), c);
  EXPECT_EQ(t.Child(b, 12), -1);
  EXPECT_EQ(t.Child(0, 12), -1);  // a grandchild is not a child
}

TEST(DraftTreeTest, HoldsAtMostSixtyFourNodes) {
  DraftTree t;
  t.Reset(0);
  int32_t last = 0;
  for (int i = 1; i < DraftTree::kMaxNodes; ++i) last = t.Add(last, i);
  EXPECT_EQ(t.size(), static_cast<size_t>(DraftTree::kMaxNodes));
  EXPECT_EQ(t.Add(last, 99), -1);
  EXPECT_EQ(t.depth(last), DraftTree::kMaxNodes - 1);
  EXPECT_EQ(t.masks()[last], ~uint64_t{0});
}

TEST(DraftTreeTest, PruneDropsSubtreesAndRenumbersTheRest) {
  DraftTree t;
  t.Reset(7);
  const int32_t a = t.Add(0, 10);  // 1
  const int32_t b = t.Add(0, 11);  // 2
  t.Add(a, 12);                    // 3: under a, dropped with it
  const int32_t e = t.Add(b, 14);  // 4
  t.Add(e, 15);                    // 5: dropped itself
  t.Add(e, 16);                    // 6
  const bool keep[] = {false, false, true, true, true, false, true};
  EXPECT_EQ(t.Prune(keep), 3);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(std::vector<int32_t>(t.tokens().begin(), t.tokens().end()),
            (std::vector<int32_t>{7, 11, 14, 16}));  // the root stays whatever keep[0] says
  EXPECT_EQ(t.parent(1), 0);
  EXPECT_EQ(t.parent(2), 1);
  EXPECT_EQ(t.parent(3), 2);
  EXPECT_EQ(t.depth(3), 3);
  EXPECT_EQ(t.masks()[3], 0b1111u);
  EXPECT_EQ(t.Child(1, 14), 2);
  EXPECT_EQ(t.Child(0, 10), -1);
}

}  // namespace
}  // namespace radixlm::spec
