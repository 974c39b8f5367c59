// RadixCache eviction: order per policy, cascade to childless parents, locks.
#include <gtest/gtest.h>

#include <vector>

#include "cache/eviction_policy.h"
#include "cache/radix_cache.h"

namespace radixlm {
namespace {

using Ids = std::vector<int32_t>;

// A cache with a manual clock, recording the slots each eviction frees, one entry per node.
class EvictionTest : public ::testing::Test {
 protected:
  std::unique_ptr<RadixCache> MakeCache(EvictionPolicy policy) {
    return std::make_unique<RadixCache>(
        RadixCacheConfig{.eviction_policy = policy, .clock = [this] { return now_; }});
  }
  int64_t Evict(RadixCache& cache, int64_t n) {
    return cache.Evict(n, [this](std::span<const int32_t> slots) {
      evicted_.emplace_back(slots.begin(), slots.end());
    });
  }
  // Three unrelated one-node branches with slot runs {10, 11}, {20, 21}, {30, 31}.
  void InsertThreeBranches(RadixCache& cache, int32_t prio_a = 0, int32_t prio_b = 0,
                           int32_t prio_c = 0) {
    now_ = 1;
    cache.Insert(Ids{1, 1}, Ids{10, 11}, prio_a);
    now_ = 2;
    cache.Insert(Ids{2, 2}, Ids{20, 21}, prio_b);
    now_ = 3;
    cache.Insert(Ids{3, 3}, Ids{30, 31}, prio_c);
  }

  uint64_t now_ = 0;
  std::vector<Ids> evicted_;
};

TEST(EvictionPolicyTest, ParsesNamesAndRejectsOthers) {
  for (const char* name : {"lru", "lfu", "fifo", "priority"}) {
    auto policy = ParseEvictionPolicy(name);
    ASSERT_TRUE(policy.ok()) << name;
    EXPECT_STREQ(EvictionPolicyName(*policy), name);
  }
  auto bad = ParseEvictionPolicy("mru");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("lru|lfu|fifo|priority"), std::string::npos);
  EXPECT_FALSE(ParseEvictionPolicy("").ok());
  EXPECT_FALSE(ParseEvictionPolicy("LRU").ok());
}

TEST_F(EvictionTest, LruEvictsLeastRecentlyUsedFirst) {
  auto cache = MakeCache(EvictionPolicy::kLru);
  InsertThreeBranches(*cache);
  now_ = 4;
  cache->MatchPrefix(Ids{1, 1});   // A becomes the most recent
  EXPECT_EQ(Evict(*cache, 1), 2);  // a whole node goes, even when fewer tokens are asked
  EXPECT_EQ(Evict(*cache, 2), 2);
  EXPECT_EQ(Evict(*cache, 2), 2);
  EXPECT_EQ(evicted_, (std::vector<Ids>{{20, 21}, {30, 31}, {10, 11}}));
  EXPECT_EQ(cache->TotalSize(), 0);
  EXPECT_TRUE(cache->CheckInvariants().ok());
}

TEST_F(EvictionTest, LfuEvictsFewestHitsFirstThenLeastRecent) {
  auto cache = MakeCache(EvictionPolicy::kLfu);
  InsertThreeBranches(*cache);
  now_ = 4;
  cache->MatchPrefix(Ids{3, 3});
  cache->MatchPrefix(Ids{3, 3});
  cache->MatchPrefix(Ids{1, 1});
  now_ = 5;
  cache->MatchPrefix(Ids{2, 2});  // A and B: one hit each; A less recent
  EXPECT_EQ(Evict(*cache, 6), 6);
  EXPECT_EQ(evicted_, (std::vector<Ids>{{10, 11}, {20, 21}, {30, 31}}));
}

TEST_F(EvictionTest, FifoEvictsOldestInsertedRegardlessOfUse) {
  auto cache = MakeCache(EvictionPolicy::kFifo);
  InsertThreeBranches(*cache);
  now_ = 9;
  cache->MatchPrefix(Ids{1, 1});
  cache->MatchPrefix(Ids{1, 1});
  EXPECT_EQ(Evict(*cache, 6), 6);
  EXPECT_EQ(evicted_, (std::vector<Ids>{{10, 11}, {20, 21}, {30, 31}}));
}

TEST_F(EvictionTest, PriorityEvictsLowestPriorityFirst) {
  auto cache = MakeCache(EvictionPolicy::kPriority);
  InsertThreeBranches(*cache, /*prio_a=*/5, /*prio_b=*/-1, /*prio_c=*/3);
  EXPECT_EQ(Evict(*cache, 4), 4);
  EXPECT_EQ(evicted_, (std::vector<Ids>{{20, 21}, {30, 31}}));
  EXPECT_EQ(cache->TotalSize(), 2);
}

TEST_F(EvictionTest, CascadesToParentsLeftChildless) {
  auto cache = MakeCache(EvictionPolicy::kLru);
  now_ = 1;
  cache->Insert(Ids{1, 2, 3}, Ids{10, 11, 12});
  now_ = 2;
  cache->Insert(Ids{1, 2, 4}, Ids{20, 21, 22});  // [1 2] -> {[3] @1, [4] @2}, [1 2] @2
  now_ = 3;
  cache->Insert(Ids{9}, Ids{30});
  // [3] then [4] go; their parent [1 2] (t=2) is then older than [9] (t=3) and goes next.
  EXPECT_EQ(Evict(*cache, 3), 4);
  EXPECT_EQ(evicted_, (std::vector<Ids>{{12}, {22}, {10, 11}}));
  EXPECT_EQ(cache->num_nodes(), 1);
  EXPECT_EQ(cache->MatchPrefix(Ids{9}).slots, (Ids{30}));
  EXPECT_TRUE(cache->CheckInvariants().ok()) << cache->DebugString();
}

TEST_F(EvictionTest, InnerNodesAreNotCandidatesWhileTheyHaveChildren) {
  auto cache = MakeCache(EvictionPolicy::kLru);
  now_ = 1;
  cache->Insert(Ids{1, 2, 3}, Ids{10, 11, 12});
  now_ = 5;
  cache->Insert(Ids{1, 2, 4}, Ids{20, 21, 22});
  now_ = 6;
  cache->MatchPrefix(Ids{1, 2, 3});  // [3] newest now; [1 2] is inner
  EXPECT_EQ(Evict(*cache, 1), 1);
  EXPECT_EQ(evicted_, (std::vector<Ids>{{22}}));
  EXPECT_EQ(cache->MatchPrefix(Ids{1, 2, 3}).slots, (Ids{10, 11, 12}));
}

TEST_F(EvictionTest, LockedPathsAreNeverEvicted) {
  auto cache = MakeCache(EvictionPolicy::kLru);
  now_ = 1;
  cache->Insert(Ids{1, 2, 3}, Ids{10, 11, 12});
  now_ = 2;
  cache->Insert(Ids{1, 2, 4}, Ids{20, 21, 22});
  now_ = 3;
  cache->Insert(Ids{7, 7}, Ids{30, 31});
  RadixNode* locked = cache->MatchPrefix(Ids{1, 2, 3}).last_node;
  cache->IncLockRef(locked);
  // Oldest in LRU terms, but locked: [1 2 3] survives, [4] and [7 7] go.
  EXPECT_EQ(Evict(*cache, 100), 3);
  EXPECT_EQ(cache->TotalSize(), 3);
  EXPECT_EQ(cache->protected_size(), 3);
  EXPECT_EQ(cache->evictable_size(), 0);
  EXPECT_EQ(cache->MatchPrefix(Ids{1, 2, 3}).slots, (Ids{10, 11, 12}));
  EXPECT_EQ(Evict(*cache, 100), 0);
  // A lock on an inner node protects it but not its other subtrees.
  cache->DecLockRef(locked);
  cache->Insert(Ids{1, 2, 5}, Ids{40, 41, 42});
  RadixNode* inner = cache->MatchPrefix(Ids{1, 2}).last_node;
  cache->IncLockRef(inner);
  EXPECT_EQ(Evict(*cache, 100), 2);
  EXPECT_EQ(cache->TotalSize(), 2);
  EXPECT_EQ(cache->MatchPrefix(Ids{1, 2}).last_node, inner);
  cache->DecLockRef(inner);
  EXPECT_EQ(Evict(*cache, 100), 2);
  EXPECT_EQ(cache->TotalSize(), 0);
  EXPECT_TRUE(cache->CheckInvariants().ok()) << cache->DebugString();
}

TEST_F(EvictionTest, EvictIntoKvPoolFreesSlots) {
  auto pool_or = KvPool::Create({.size = 8, .page_size = 1});
  ASSERT_TRUE(pool_or.ok());
  KvPool pool = std::move(pool_or).value();
  auto slots = pool.Allocate(5);
  ASSERT_TRUE(slots.has_value());
  RadixCache cache({});
  cache.Insert(Ids{1, 2, 3, 4, 5}, *slots);
  EXPECT_TRUE(cache.CheckInvariants(pool, 0).ok());
  EXPECT_EQ(cache.Evict(1, pool), 5);
  EXPECT_EQ(pool.available(), 8);
  EXPECT_TRUE(cache.CheckInvariants(pool, 0).ok());
  EXPECT_EQ(cache.Evict(0, pool), 0);
}

}  // namespace
}  // namespace radixlm
