// Hand-made cases for RadixCache match / insert / split / locks / paging / disabled mode.
#include "cache/radix_cache.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace radixlm {
namespace {

using Ids = std::vector<int32_t>;

Ids Range(int32_t first, int32_t n) {
  Ids ids(n);
  std::iota(ids.begin(), ids.end(), first);
  return ids;
}

#define EXPECT_INVARIANTS(cache)                                              \
  do {                                                                        \
    Status _st = (cache).CheckInvariants();                                   \
    EXPECT_TRUE(_st.ok()) << _st.ToString() << "\n" << (cache).DebugString(); \
  } while (0)

TEST(RadixCacheTest, EmptyTreeMatchesNothing) {
  RadixCache cache({});
  auto m = cache.MatchPrefix(Ids{1, 2, 3});
  EXPECT_TRUE(m.slots.empty());
  EXPECT_EQ(m.last_node, cache.root());
  EXPECT_TRUE(cache.MatchPrefix(Ids{}).slots.empty());
  EXPECT_EQ(cache.TotalSize(), 0);
  EXPECT_INVARIANTS(cache);
}

TEST(RadixCacheTest, InsertThenMatchReturnsSlots) {
  RadixCache cache({});
  EXPECT_EQ(cache.Insert(Ids{1, 2, 3}, Ids{10, 11, 12}), 0u);
  EXPECT_EQ(cache.TotalSize(), 3);
  EXPECT_EQ(cache.evictable_size(), 3);
  EXPECT_EQ(cache.protected_size(), 0);

  auto full = cache.MatchPrefix(Ids{1, 2, 3, 4});
  EXPECT_EQ(full.slots, (Ids{10, 11, 12}));
  EXPECT_EQ(full.last_node->key, (Ids{1, 2, 3}));
  EXPECT_TRUE(cache.MatchPrefix(Ids{2, 3}).slots.empty());
  EXPECT_EQ(cache.num_nodes(), 1);
  EXPECT_INVARIANTS(cache);
}

TEST(RadixCacheTest, InsertReturnsAlreadyPresentLength) {
  RadixCache cache({});
  EXPECT_EQ(cache.Insert(Ids{1, 2, 3}, Ids{10, 11, 12}), 0u);
  // The first 3 tokens are present: the caller frees its duplicates 20, 21, 22.
  EXPECT_EQ(cache.Insert(Ids{1, 2, 3, 4, 5}, Ids{20, 21, 22, 23, 24}), 3u);
  EXPECT_EQ(cache.TotalSize(), 5);
  auto m = cache.MatchPrefix(Ids{1, 2, 3, 4, 5});
  EXPECT_EQ(m.slots, (Ids{10, 11, 12, 23, 24}));  // the tree kept its own slots
  EXPECT_EQ(m.last_node->key, (Ids{4, 5}));
  // Inserting something fully present adds nothing.
  EXPECT_EQ(cache.Insert(Ids{1, 2, 3, 4}, Ids{30, 31, 32, 33}), 4u);
  EXPECT_EQ(cache.TotalSize(), 5);
  EXPECT_EQ(cache.Insert(Ids{}, Ids{}), 0u);
  EXPECT_INVARIANTS(cache);
}

TEST(RadixCacheTest, MatchEndingInsideANodeSplitsIt) {
  RadixCache cache({});
  cache.Insert(Ids{1, 2, 3, 4, 5, 6}, Range(100, 6));
  RadixNode* whole = cache.MatchPrefix(Ids{1, 2, 3, 4, 5, 6}).last_node;
  ASSERT_EQ(cache.num_nodes(), 1);

  auto m = cache.MatchPrefix(Ids{1, 2, 3, 9, 9});
  EXPECT_EQ(m.slots, (Ids{100, 101, 102}));
  EXPECT_EQ(m.last_node->key, (Ids{1, 2, 3}));
  EXPECT_EQ(cache.num_nodes(), 2);
  // The deeper node keeps its identity (a request may hold it) and the tail of the run.
  EXPECT_EQ(whole->key, (Ids{4, 5, 6}));
  EXPECT_EQ(whole->value, (Ids{103, 104, 105}));
  EXPECT_EQ(whole->parent, m.last_node);
  EXPECT_EQ(m.last_node->parent, cache.root());
  EXPECT_EQ(cache.TotalSize(), 6);
  // A match ending exactly at a node boundary does not split.
  cache.MatchPrefix(Ids{1, 2, 3});
  EXPECT_EQ(cache.num_nodes(), 2);
  EXPECT_EQ(cache.MatchPrefix(Ids{1, 2, 3, 4, 5, 6, 7}).last_node, whole);
  EXPECT_INVARIANTS(cache);
}

TEST(RadixCacheTest, InsertDivergingAndShorterKeysSplit) {
  RadixCache cache({});
  cache.Insert(Ids{1, 2, 3, 4}, Range(10, 4));
  EXPECT_EQ(cache.Insert(Ids{1, 2, 5, 6}, Range(20, 4)), 2u);
  EXPECT_EQ(cache.num_nodes(), 3);  // [1 2] -> {[3 4], [5 6]}
  EXPECT_EQ(cache.TotalSize(), 6);
  EXPECT_EQ(cache.MatchPrefix(Ids{1, 2, 5, 6}).slots, (Ids{10, 11, 22, 23}));
  EXPECT_EQ(cache.MatchPrefix(Ids{1, 2, 3, 4}).slots, (Ids{10, 11, 12, 13}));

  // A key that is a strict prefix of a node's run splits it as well.
  cache.Insert(Ids{7, 8, 9}, Range(30, 3));
  EXPECT_EQ(cache.Insert(Ids{7, 8}, Range(40, 2)), 2u);
  EXPECT_EQ(cache.num_nodes(), 5);
  EXPECT_EQ(cache.TotalSize(), 9);
  auto m = cache.MatchPrefix(Ids{7, 8});
  EXPECT_EQ(m.last_node->key, (Ids{7, 8}));
  EXPECT_EQ(m.last_node->children.size(), 1u);
  EXPECT_INVARIANTS(cache);
}

TEST(RadixCacheTest, SplitKeepsLockStateConsistent) {
  RadixCache cache({});
  cache.Insert(Ids{1, 2, 3, 4}, Range(10, 4));
  RadixNode* node = cache.MatchPrefix(Ids{1, 2, 3, 4}).last_node;
  cache.IncLockRef(node);
  EXPECT_EQ(cache.protected_size(), 4);
  auto m = cache.MatchPrefix(Ids{1, 2});  // split under a lock
  EXPECT_EQ(m.last_node->lock_ref, 1);
  EXPECT_EQ(node->lock_ref, 1);
  EXPECT_EQ(cache.protected_size(), 4);
  EXPECT_INVARIANTS(cache);
  EXPECT_EQ(cache.DecLockRef(node), 4);  // both halves become evictable
  EXPECT_EQ(cache.evictable_size(), 4);
  EXPECT_EQ(m.last_node->lock_ref, 0);
  EXPECT_INVARIANTS(cache);
}

TEST(RadixCacheTest, LockRefProtectsWholePath) {
  RadixCache cache({});
  cache.Insert(Ids{1, 2, 3, 4}, Range(10, 4));
  cache.Insert(Ids{1, 2, 5, 6, 7}, Range(20, 5));  // [1 2] -> {[3 4], [5 6 7]}
  RadixNode* left = cache.MatchPrefix(Ids{1, 2, 3, 4}).last_node;
  RadixNode* right = cache.MatchPrefix(Ids{1, 2, 5, 6, 7}).last_node;
  RadixNode* shared = left->parent;

  EXPECT_EQ(cache.IncLockRef(left), -4);  // [3 4] and [1 2]
  EXPECT_EQ(cache.protected_size(), 4);
  EXPECT_EQ(cache.evictable_size(), 3);
  EXPECT_EQ(cache.IncLockRef(right), -3);  // [1 2] already protected
  EXPECT_EQ(shared->lock_ref, 2);
  EXPECT_EQ(cache.IncLockRef(left), 0);  // a second lock changes no sizes
  EXPECT_EQ(left->lock_ref, 2);
  EXPECT_EQ(shared->lock_ref, 3);
  EXPECT_EQ(cache.protected_size(), 7);
  EXPECT_INVARIANTS(cache);

  EXPECT_EQ(cache.DecLockRef(left), 0);
  EXPECT_EQ(cache.DecLockRef(left), 2);  // [3 4] evictable, [1 2] still held by right
  EXPECT_EQ(cache.protected_size(), 5);
  EXPECT_EQ(cache.DecLockRef(right), 5);
  EXPECT_EQ(cache.evictable_size(), 7);
  EXPECT_EQ(cache.protected_size(), 0);
  EXPECT_EQ(cache.IncLockRef(cache.root()), 0);  // the root is never counted
  EXPECT_INVARIANTS(cache);
}

TEST(RadixCacheTest, MatchStampsAccessTimeAndCountsHits) {
  uint64_t now = 0;
  RadixCache cache({.clock = [&now] { return now; }});
  now = 5;
  cache.Insert(Ids{1, 2, 3, 4}, Range(10, 4));
  RadixNode* node = cache.MatchPrefix(Ids{1, 2, 3, 4}).last_node;  // hit 1 at t=5
  EXPECT_EQ(node->creation_time, 5u);
  now = 9;
  cache.MatchPrefix(Ids{1, 2});  // splits; only the matched upper half is stamped
  EXPECT_EQ(node->parent->hit_count, 2u);
  EXPECT_EQ(node->parent->last_access_time, 9u);
  EXPECT_EQ(node->parent->creation_time, 5u);  // the upper half is as old as its tokens
  EXPECT_EQ(node->hit_count, 1u);
  EXPECT_EQ(node->last_access_time, 5u);
  now = 12;
  cache.MatchPrefix(Ids{1, 2, 3, 4});
  EXPECT_EQ(node->hit_count, 2u);
  EXPECT_EQ(node->parent->hit_count, 3u);
  EXPECT_EQ(node->last_access_time, 12u);
}

TEST(RadixCacheTest, InsertRaisesPriorityAlongPath) {
  RadixCache cache({});
  cache.Insert(Ids{1, 2, 3, 4}, Range(10, 4), /*priority=*/1);
  cache.Insert(Ids{1, 2, 7}, Range(20, 3), /*priority=*/5);
  RadixNode* shared = cache.MatchPrefix(Ids{1, 2}).last_node;
  EXPECT_EQ(shared->priority, 5);
  EXPECT_EQ(cache.MatchPrefix(Ids{1, 2, 3, 4}).last_node->priority, 1);
  EXPECT_EQ(cache.MatchPrefix(Ids{1, 2, 7}).last_node->priority, 5);
  cache.Insert(Ids{1, 2, 3, 4}, Range(30, 4), /*priority=*/0);  // never lowers
  EXPECT_EQ(cache.MatchPrefix(Ids{1, 2, 3, 4}).last_node->priority, 1);
}

TEST(RadixCacheTest, PagedKeysAreTruncatedToWholePages) {
  RadixCache cache({.page_size = 4});
  // Slots of a paged tree are whole pool pages: page 2 = slots 8..11, page 3 = 12..15.
  EXPECT_EQ(cache.Insert(Ids{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Range(8, 10)), 0u);
  EXPECT_EQ(cache.TotalSize(), 8);  // the partial third page is not stored
  auto m = cache.MatchPrefix(Ids{1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(m.slots, Range(8, 8));
  // A match ending mid-page rounds down to the page boundary (and splits there).
  auto partial = cache.MatchPrefix(Ids{1, 2, 3, 4, 5, 6, 0, 0});
  EXPECT_EQ(partial.slots, Range(8, 4));
  EXPECT_EQ(partial.last_node->key, (Ids{1, 2, 3, 4}));
  EXPECT_EQ(cache.num_nodes(), 2);
  // First page differs anywhere: no match, no split.
  EXPECT_TRUE(cache.MatchPrefix(Ids{1, 2, 3, 0, 5, 6, 7, 8}).slots.empty());
  EXPECT_TRUE(cache.MatchPrefix(Ids{1, 2, 3}).slots.empty());  // shorter than a page
  EXPECT_EQ(cache.num_nodes(), 2);
  // Insert reports already-present lengths in whole pages.
  EXPECT_EQ(cache.Insert(Ids{1, 2, 3, 4, 5, 6, 0, 0}, Range(16, 8)), 4u);
  EXPECT_EQ(cache.TotalSize(), 12);
  EXPECT_INVARIANTS(cache);
}

TEST(RadixCacheTest, PagedChildrenAreKeyedByTheirFirstPage) {
  RadixCache cache({.page_size = 2});
  // Same first token, different first page: two children of the root, no shared node.
  cache.Insert(Ids{1, 2, 3, 4}, Range(2, 4));
  cache.Insert(Ids{1, 3, 5, 6}, Range(6, 4));
  EXPECT_EQ(cache.root()->children.size(), 2u);
  EXPECT_EQ(cache.num_nodes(), 2);
  EXPECT_EQ(cache.MatchPrefix(Ids{1, 3, 5, 6}).slots, Range(6, 4));
  EXPECT_EQ(cache.MatchPrefix(Ids{1, 2, 3, 4}).slots, Range(2, 4));
  // Token mode shares the first token instead.
  RadixCache tokens({.page_size = 1});
  tokens.Insert(Ids{1, 2, 3, 4}, Range(2, 4));
  EXPECT_EQ(tokens.Insert(Ids{1, 3, 5, 6}, Range(6, 4)), 1u);
  EXPECT_EQ(tokens.root()->children.size(), 1u);
  EXPECT_EQ(tokens.num_nodes(), 3);
  EXPECT_INVARIANTS(cache);
  EXPECT_INVARIANTS(tokens);
}

TEST(RadixCacheTest, DisabledModeStoresNothing) {
  RadixCache cache({.disable = true});
  EXPECT_TRUE(cache.disabled());
  // Everything is "already present": the caller frees all of its slots.
  EXPECT_EQ(cache.Insert(Ids{1, 2, 3}, Ids{10, 11, 12}), 3u);
  EXPECT_EQ(cache.TotalSize(), 0);
  auto m = cache.MatchPrefix(Ids{1, 2, 3});
  EXPECT_TRUE(m.slots.empty());
  EXPECT_EQ(m.last_node, cache.root());
  EXPECT_EQ(cache.IncLockRef(m.last_node), 0);
  EXPECT_EQ(cache.DecLockRef(m.last_node), 0);
  EXPECT_EQ(cache.Evict(10, [](std::span<const int32_t>) { FAIL(); }), 0);
  EXPECT_INVARIANTS(cache);
}

TEST(RadixCacheTest, ResetDropsEverything) {
  RadixCache cache({});
  cache.Insert(Ids{1, 2, 3}, Ids{10, 11, 12});
  cache.Insert(Ids{1, 5}, Ids{20, 21});
  cache.Reset();
  EXPECT_EQ(cache.TotalSize(), 0);
  EXPECT_EQ(cache.num_nodes(), 0);
  EXPECT_TRUE(cache.root()->children.empty());
  EXPECT_TRUE(cache.MatchPrefix(Ids{1, 2, 3}).slots.empty());
  EXPECT_INVARIANTS(cache);
}

TEST(RadixCacheTest, DebugStringShowsTheTree) {
  RadixCache cache({});
  cache.Insert(Ids{1, 2, 3}, Ids{10, 11, 12});
  cache.Insert(Ids{1, 2, 4}, Ids{20, 21, 22});
  const std::string text = cache.DebugString();
  EXPECT_NE(text.find("root"), std::string::npos) << text;
  EXPECT_NE(text.find("key=[1 2]"), std::string::npos) << text;
  EXPECT_NE(text.find("slots=[22]"), std::string::npos) << text;
  EXPECT_NE(text.find("evictable=4"), std::string::npos) << text;
}

TEST(RadixCacheTest, LongPrefixesMatchAndSplit) {
  RadixCache cache({});
  const int32_t n = 32768;
  const Ids key = Range(1, n);
  const Ids slots = Range(1000, n);
  cache.Insert(key, slots);
  auto m = cache.MatchPrefix(key);
  EXPECT_EQ(m.slots, slots);
  Ids variant = key;
  variant[n - 100] = -1;  // differs near the end: one split deep inside the run
  auto partial = cache.MatchPrefix(variant);
  EXPECT_EQ(partial.slots.size(), static_cast<size_t>(n - 100));
  EXPECT_EQ(cache.Insert(variant, Range(40000, n)), static_cast<size_t>(n - 100));
  EXPECT_EQ(cache.TotalSize(), n + 100);
  EXPECT_INVARIANTS(cache);
}

TEST(RadixCacheTest, DeepTreeOfIncrementalExtensions) {
  // A conversation growing turn by turn: one node per turn, 500 deep.
  constexpr int32_t kTurns = 500;
  constexpr int32_t kTurnLen = 16;
  const Ids all_ids = Range(0, kTurns * kTurnLen);
  const Ids all_slots = Range(1, kTurns * kTurnLen);
  RadixCache cache({});
  for (int32_t turn = 1; turn <= kTurns; ++turn) {
    const size_t len = static_cast<size_t>(turn) * kTurnLen;
    ASSERT_EQ(cache.Insert(std::span(all_ids).first(len), std::span(all_slots).first(len)),
              len - kTurnLen);
  }
  EXPECT_EQ(cache.num_nodes(), kTurns);
  auto m = cache.MatchPrefix(all_ids);
  EXPECT_EQ(m.slots, all_slots);
  cache.IncLockRef(m.last_node);
  EXPECT_EQ(cache.protected_size(), static_cast<int64_t>(all_ids.size()));
  cache.DecLockRef(m.last_node);
  EXPECT_INVARIANTS(cache);
}  // The destructor tears the deep tree down without recursion.

}  // namespace
}  // namespace radixlm
