// Sliding-window memory: the KvPool's SWA pages and the SWA-aware RadixCache (tombstones, the
// match rule, window locks, EvictSwa, revival), checked against the pool at every step.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "cache/radix_cache.h"

namespace radixlm {
namespace {

using Ids = std::vector<int32_t>;
constexpr int64_t kWindow = 4;

Ids Range(int32_t from, int32_t to) {
  Ids out;
  for (int32_t i = from; i < to; ++i) out.push_back(i);
  return out;
}

TEST(KvPoolSwaTest, AllocationTakesBothKindsAndFreeReleasesBoth) {
  KvPool pool = std::move(KvPool::Create({.size = 8, .page_size = 1, .swa_size = 4})).value();
  EXPECT_TRUE(pool.has_swa());
  EXPECT_EQ(pool.swa_storage_slots(), 5);
  auto a = pool.Allocate(4);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(pool.available(), 4);
  EXPECT_EQ(pool.swa_available(), 0);
  EXPECT_FALSE(pool.Allocate(1).has_value());  // full slots left, but no windowed ones
  for (int32_t s : *a) {
    EXPECT_TRUE(pool.HasSwa(s));
    EXPECT_GT(pool.swa_slot_map()[s], 0);
  }
  pool.FreeSwa(std::span<const int32_t>(*a).first(2));
  EXPECT_EQ(pool.swa_available(), 2);
  EXPECT_EQ(pool.available(), 4);
  EXPECT_FALSE(pool.HasSwa((*a)[0]));
  EXPECT_EQ(pool.swa_slot_map()[(*a)[0]], KvPool::kPaddingSlot);
  pool.FreeSwa(std::span<const int32_t>(*a).first(2));  // already released: skipped
  EXPECT_EQ(pool.swa_available(), 2);
  auto b = pool.Allocate(2);
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(pool.CheckInvariants().ok());
  // MoveSwa hands a page's windowed KV to another page.
  pool.MoveSwa((*b)[0], (*a)[0]);
  EXPECT_TRUE(pool.HasSwa((*a)[0]));
  EXPECT_FALSE(pool.HasSwa((*b)[0]));
  EXPECT_TRUE(pool.CheckInvariants().ok());
  pool.Free(*a);
  pool.Free(*b);
  EXPECT_EQ(pool.available(), 8);
  EXPECT_EQ(pool.swa_available(), 4);
  EXPECT_TRUE(pool.CheckInvariants().ok());
}

TEST(KvPoolSwaTest, ExtendContinuesThePagesWindowedRows) {
  KvPool pool = std::move(KvPool::Create({.size = 16, .page_size = 4, .swa_size = 8})).value();
  auto a = pool.AllocateExtend(-1, 3);
  ASSERT_TRUE(a.has_value());
  auto b = pool.AllocateExtend(a->back(), 3);  // one in the same page, then a new page
  ASSERT_TRUE(b.has_value());
  const auto map = pool.swa_slot_map();
  EXPECT_EQ(map[(*b)[0]], map[a->back()] + 1);
  EXPECT_EQ(map[(*b)[1]] % 4, 0);
  EXPECT_FALSE(pool.AllocateExtend(b->back(), 6).has_value());  // needs 2 pages; SWA has 0
  EXPECT_TRUE(pool.CheckInvariants().ok());
}

class SwaCacheTest : public ::testing::TestWithParam<int32_t> {
 protected:
  void SetUp() override {
    page_ = GetParam();
    pool_ = std::make_unique<KvPool>(
        std::move(KvPool::Create({.size = 128, .page_size = page_, .swa_size = 64})).value());
    cache_ = std::make_unique<RadixCache>(
        RadixCacheConfig{.page_size = page_, .sliding_window = kWindow});
  }

  // Inserts tokens with fresh slots whose first `released` tokens lost their windowed KV (as a
  // request's out-of-window tokens); frees what the tree did not take.
  void InsertFresh(const Ids& tokens, int64_t released = 0) {
    auto slots = pool_->Allocate(static_cast<int64_t>(tokens.size()));
    ASSERT_TRUE(slots.has_value());
    pool_->FreeSwa(std::span<const int32_t>(*slots).first(released));
    const size_t present = cache_->Insert(tokens, *slots, 0, pool_.get());
    pool_->Free(std::span<const int32_t>(*slots).first(present));
    Check();
  }

  int64_t MatchLen(const Ids& tokens) {
    return static_cast<int64_t>(cache_->MatchPrefix(tokens).slots.size());
  }

  void Check() {
    const Status st = cache_->CheckInvariants(*pool_, 0);
    ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << cache_->DebugString();
    EXPECT_EQ(pool_->swa_available() + cache_->swa_evictable_size() + cache_->swa_protected_size(),
              pool_->swa_size());
  }

  int32_t page_ = 1;
  std::unique_ptr<KvPool> pool_;
  std::unique_ptr<RadixCache> cache_;
};

TEST_P(SwaCacheTest, MatchRunsThroughATombstoneOnlyToAnIntactWindow) {
  const Ids t = Range(100, 112);
  InsertFresh(t, /*released=*/6);  // tombstone [0, 6), windowed KV for [6, 12)
  EXPECT_EQ(cache_->swa_evictable_size(), 6);
  EXPECT_EQ(MatchLen(t), 12);                               // 6 intact tokens before the end
  EXPECT_EQ(MatchLen(Ids(t.begin(), t.begin() + 10)), 10);  // 4 == window: still enough
  EXPECT_EQ(MatchLen(Ids(t.begin(), t.begin() + 8)), 0);    // 2 < window: back to before it
  Check();
}

TEST_P(SwaCacheTest, MatchFallsBackToTheLastPointBeforeATombstone) {
  const Ids t = Range(200, 212);
  InsertFresh(Ids(t.begin(), t.begin() + 4));  // live [0, 4)
  InsertFresh(t, /*released=*/8);              // [0, 4) present; tombstone [4, 8), live [8, 12)
  EXPECT_EQ(MatchLen(t), 12);
  EXPECT_EQ(MatchLen(Ids(t.begin(), t.begin() + 10)), 4);
  EXPECT_EQ(MatchLen(Ids(t.begin(), t.begin() + 6)), 4);
  EXPECT_EQ(MatchLen(Ids(t.begin(), t.begin() + 4)), 4);
  Check();
}

TEST_P(SwaCacheTest, LocksProtectOnlyTheLastWindowAndEvictSwaTombstonesTheRest) {
  const Ids t = Range(300, 312);
  InsertFresh(Ids(t.begin(), t.begin() + 4));
  InsertFresh(Ids(t.begin(), t.begin() + 8));
  InsertFresh(t);  // three nodes of 4
  RadixCache::MatchResult m = cache_->MatchPrefix(t);
  ASSERT_EQ(m.slots.size(), 12u);
  uint64_t id = 0;
  cache_->IncLockRef(m.last_node, &id);
  EXPECT_NE(id, 0u);
  EXPECT_EQ(cache_->protected_size(), 12);
  EXPECT_EQ(cache_->swa_protected_size(), 4);
  EXPECT_EQ(cache_->swa_evictable_size(), 8);
  EXPECT_EQ(cache_->EvictSwa(100, *pool_), 8);
  EXPECT_EQ(cache_->TotalSize(), 12);  // full KV kept
  EXPECT_EQ(pool_->swa_available(), pool_->swa_size() - 4);
  EXPECT_EQ(MatchLen(t), 12);  // the locked window is intact
  Check();
  cache_->DecLockRef(m.last_node, id);
  EXPECT_EQ(cache_->swa_protected_size(), 0);
  EXPECT_EQ(cache_->swa_evictable_size(), 4);
  // The last live node is an unlocked leaf: deleted, and the tombstones left as leaves go too.
  EXPECT_EQ(cache_->EvictSwa(1, *pool_), 4);
  EXPECT_EQ(cache_->TotalSize(), 0);
  EXPECT_EQ(pool_->available(), pool_->size());
  EXPECT_EQ(pool_->swa_available(), pool_->swa_size());
  Check();
}

TEST_P(SwaCacheTest, ALockSplitsWhereItsWindowStarts) {
  const Ids t = Range(350, 370);
  InsertFresh(t);  // one node of 20
  RadixCache::MatchResult m = cache_->MatchPrefix(t);
  uint64_t id = 0;
  cache_->IncLockRef(m.last_node, &id);
  EXPECT_EQ(cache_->protected_size(), 20);
  EXPECT_EQ(cache_->swa_protected_size(), kWindow);
  EXPECT_EQ(cache_->num_nodes(), 2);
  EXPECT_EQ(cache_->EvictSwa(100, *pool_), 16);
  EXPECT_EQ(MatchLen(t), 20);
  Check();
  cache_->DecLockRef(m.last_node, id);
  Check();
}

TEST_P(SwaCacheTest, EvictSwaFirstKeepsTheLastWindowOfEachNode) {
  const Ids t = Range(380, 392);
  InsertFresh(t);  // one leaf of 12
  EXPECT_EQ(cache_->EvictSwa(1, *pool_), 8);
  EXPECT_EQ(cache_->TotalSize(), 12);
  EXPECT_EQ(cache_->swa_evictable_size(), kWindow);
  EXPECT_EQ(MatchLen(t), 12);  // a full hit with a third of the windowed KV
  EXPECT_EQ(MatchLen(Ids(t.begin(), t.begin() + 10)), 0);
  Check();
}

TEST_P(SwaCacheTest, UnlockAfterSplitsReleasesExactlyTheLockedWindow) {
  const Ids t = Range(400, 410);
  InsertFresh(Ids(t.begin(), t.begin() + 4));
  InsertFresh(t);  // [0, 4) and a leaf [4, 10)
  RadixCache::MatchResult m = cache_->MatchPrefix(t);
  uint64_t id = 0;
  cache_->IncLockRef(m.last_node, &id);  // splits the leaf: [4, 6) and locked [6, 10)
  EXPECT_EQ(cache_->swa_protected_size(), 4);
  // Split the lock's topmost node: the id must move to its upper half.
  EXPECT_EQ(MatchLen(Ids(t.begin(), t.begin() + 8)), 8);
  Check();
  // A second lock whose window overlaps the first's and reaches above it.
  RadixCache::MatchResult m2 = cache_->MatchPrefix(Ids(t.begin(), t.begin() + 8));
  uint64_t id2 = 0;
  cache_->IncLockRef(m2.last_node, &id2);
  EXPECT_EQ(cache_->swa_protected_size(), 6);
  Check();
  cache_->DecLockRef(m.last_node, id);
  Check();
  EXPECT_EQ(cache_->swa_protected_size(), 4);
  cache_->DecLockRef(m2.last_node, id2);
  EXPECT_EQ(cache_->swa_protected_size(), 0);
  EXPECT_EQ(cache_->protected_size(), 0);
  Check();
}

TEST_P(SwaCacheTest, InsertRevivesATombstoneWithTheCallersWindowedKv) {
  const Ids t = Range(500, 508);
  InsertFresh(t, /*released=*/4);  // tombstone [0, 4), live [4, 8)
  EXPECT_EQ(MatchLen(Ids(t.begin(), t.begin() + 4)), 0);
  InsertFresh(t);  // a request that recomputed all of it: [0, 4) gets windowed KV back
  EXPECT_EQ(cache_->swa_evictable_size(), 8);
  EXPECT_EQ(MatchLen(Ids(t.begin(), t.begin() + 4)), 4);
  Check();
}

TEST_P(SwaCacheTest, InsertRevivesTheTailOfATombstone) {
  const Ids t = Range(600, 612);
  InsertFresh(t, /*released=*/8);  // tombstone [0, 8), live [8, 12)
  InsertFresh(t, /*released=*/2);  // the caller has windowed KV from 2 on
  EXPECT_EQ(cache_->swa_evictable_size(), 10);
  EXPECT_EQ(MatchLen(Ids(t.begin(), t.begin() + 6)), 6);
  EXPECT_EQ(MatchLen(Ids(t.begin(), t.begin() + 4)), 0);  // 2 live tokens only
  Check();
}

TEST_P(SwaCacheTest, FinishedRequestStoresItsReleasedTokensAsATombstone) {
  ReqToTokenTable table =
      std::move(ReqToTokenTable::Create({.max_requests = 2, .max_context_len = 32})).value();
  const Ids t = Range(700, 712);
  CacheRequest req;
  req.req_pool_index = *table.Allocate();
  auto slots = pool_->Allocate(12);
  ASSERT_TRUE(slots.has_value());
  table.Write(req.req_pool_index, 0, *slots);
  pool_->FreeSwa(std::span<const int32_t>(*slots).first(6));  // fell out of its window
  req.swa_evicted_len = 6;
  cache_->CacheFinishedRequest(req, t, table, *pool_);
  EXPECT_EQ(req.swa_evicted_len, 0);
  EXPECT_EQ(cache_->TotalSize(), 12);
  EXPECT_EQ(cache_->swa_evictable_size(), 6);
  EXPECT_EQ(MatchLen(t), 12);
  EXPECT_EQ(MatchLen(Ids(t.begin(), t.begin() + 8)), 0);
  Check();
}

// Random inserts, matches, locks and both evictions: the invariants hold throughout and every
// match ends after `window` tokens that still have windowed KV (or a fully intact path).
TEST_P(SwaCacheTest, RandomOperationsKeepEveryMatchedWindowIntact) {
  std::mt19937 rng(7 + page_);
  struct Lock {
    RadixNode* node;
    uint64_t id;
  };
  std::vector<Lock> locks;
  int64_t matches_through_tombstones = 0;
  for (int step = 0; step < 1500; ++step) {
    Ids key;
    const int len = 2 * (1 + static_cast<int>(rng() % 10));
    const int32_t base = static_cast<int32_t>(rng() % 3);
    for (int i = 0; i < len; ++i)
      key.push_back(base * 10 + (i < 6 ? i : static_cast<int32_t>(rng() % 3)));
    const int op = static_cast<int>(rng() % 6);
    if (op <= 1) {
      const int64_t need = len;
      if (pool_->available() < need || pool_->swa_available() < need) {
        cache_->Evict(need, *pool_);
        cache_->EvictSwa(need, *pool_);
      }
      if (pool_->available() >= need && pool_->swa_available() >= need) {
        InsertFresh(key, (rng() % 3 == 0) ? (rng() % (len / 2)) / page_ * page_ : 0);
      }
    } else if (op == 2) {
      RadixCache::MatchResult m = cache_->MatchPrefix(key);
      const auto n = static_cast<int64_t>(m.slots.size());
      bool path_intact = true;
      for (int32_t s : m.slots) path_intact = path_intact && pool_->HasSwa(s);
      if (!path_intact) {
        ++matches_through_tombstones;
        ASSERT_GE(n, kWindow);
        for (int64_t i = n - kWindow; i < n; ++i) ASSERT_TRUE(pool_->HasSwa(m.slots[i])) << i;
      }
      if (m.last_node != cache_->root() && locks.size() < 4) {
        uint64_t id = 0;
        cache_->IncLockRef(m.last_node, &id);
        locks.push_back({m.last_node, id});
      }
    } else if (op == 3 && !locks.empty()) {
      const size_t i = rng() % locks.size();
      cache_->DecLockRef(locks[i].node, locks[i].id);
      locks.erase(locks.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (op == 4) {
      cache_->EvictSwa(1 + rng() % 8, *pool_);
    } else {
      cache_->Evict(1 + rng() % 8, *pool_);
    }
    Check();
    if (HasFatalFailure()) return;
  }
  for (const Lock& l : locks) cache_->DecLockRef(l.node, l.id);
  EXPECT_EQ(cache_->swa_protected_size(), 0);
  EXPECT_GT(matches_through_tombstones, 5);
  Check();
}

INSTANTIATE_TEST_SUITE_P(PageSizes, SwaCacheTest, ::testing::Values(1, 2));

}  // namespace
}  // namespace radixlm
