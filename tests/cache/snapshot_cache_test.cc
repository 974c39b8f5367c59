// RadixCache with state snapshots (a hybrid model's): matches end at the deepest snapshot,
// splits keep a snapshot where it was, locks keep snapshots, evictions free them.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "cache/kv_pool.h"
#include "cache/radix_cache.h"

namespace radixlm {
namespace snapshot_cache_test {  // (named: this file shares a unity build with others)
namespace {

using Ids = std::vector<int32_t>;

Ids Range(int32_t first, int32_t n) {
  Ids ids(n);
  std::iota(ids.begin(), ids.end(), first);
  return ids;
}

Ids Concat(Ids a, const Ids& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

#define EXPECT_STATUS_OK(expr)             \
  do {                                     \
    const Status _st = (expr);             \
    EXPECT_TRUE(_st.ok()) << _st.ToString(); \
  } while (0)

class SnapshotCacheTest : public ::testing::Test {
 protected:
  static constexpr int32_t kSnapshots = 3;
  static constexpr int32_t kFirstId = 8;  // ids follow a runner's request slots

  SnapshotCacheTest()
      : pool_(*KvPool::Create({.size = 256})),
        cache_({.snapshot_slots = kSnapshots, .first_snapshot_id = kFirstId}) {}

  // Inserts ids with fresh pool slots; returns the node ending at ids' end.
  RadixNode* Put(const Ids& ids) {
    std::vector<int32_t> slots = *pool_.Allocate(static_cast<int64_t>(ids.size()));
    RadixNode* end = nullptr;
    const size_t present = cache_.Insert(ids, slots, 0, &pool_, &end);
    pool_.Free(std::span<const int32_t>(slots).first(present));
    return end;
  }
  int32_t Snap(RadixNode* node) {
    const std::optional<int32_t> id = cache_.AllocateSnapshot(pool_);
    EXPECT_TRUE(id.has_value());
    EXPECT_TRUE(cache_.WantsSnapshot(node));
    cache_.AttachSnapshot(node, *id);
    return *id;
  }
  Status Check() const { return cache_.CheckInvariants(pool_, 0); }

  KvPool pool_;
  RadixCache cache_;
};

TEST_F(SnapshotCacheTest, MatchEndsAtTheDeepestSnapshot) {
  const Ids a = Range(1, 30);
  RadixNode* n10 = Put(Ids(a.begin(), a.begin() + 10));
  RadixNode* n30 = Put(a);
  // KV for all 30 tokens, but no snapshot yet: nothing can resume.
  RadixCache::MatchResult m = cache_.MatchPrefix(a);
  EXPECT_TRUE(m.slots.empty());
  EXPECT_EQ(m.last_node, cache_.root());
  EXPECT_EQ(m.kv_match, 30) << "where a snapshot would let the match go";

  const int32_t id10 = Snap(n10);
  EXPECT_EQ(id10, kFirstId);
  m = cache_.MatchPrefix(a);
  EXPECT_EQ(m.slots.size(), 10u);
  EXPECT_EQ(m.last_node, n10);
  EXPECT_EQ(m.last_node->snapshot, id10);

  Snap(n30);
  EXPECT_EQ(cache_.MatchPrefix(a).slots.size(), 30u);
  // Diverging mid-way between the two snapshots resumes from the earlier one (the node the
  // match ends in is split, and the snapshot stays at the lower half's end).
  m = cache_.MatchPrefix(Concat(Ids(a.begin(), a.begin() + 20), Range(500, 5)));
  EXPECT_EQ(m.slots.size(), 10u);
  EXPECT_EQ(m.kv_match, 20);
  EXPECT_EQ(m.last_node, n10);
  EXPECT_EQ(n30->key.size(), 10u) << "split at 20";
  EXPECT_GE(n30->snapshot, 0);
  EXPECT_EQ(cache_.MatchPrefix(a).slots.size(), 30u);
  EXPECT_EQ(cache_.snapshot_count(), 2);
  EXPECT_STATUS_OK(Check());
}

TEST_F(SnapshotCacheTest, AttachIsRefusedWhereOneIsHeld) {
  RadixNode* n = Put(Range(1, 8));
  Snap(n);
  EXPECT_FALSE(cache_.WantsSnapshot(n));
  EXPECT_FALSE(cache_.WantsSnapshot(cache_.root()));
  EXPECT_STATUS_OK(Check());
}

TEST_F(SnapshotCacheTest, EvictionFreesSnapshotsAndLocksKeepThem) {
  // Three prompts, each with a snapshot at its end: the pool of snapshots is full.
  RadixNode* p1 = Put(Range(100, 8));
  Snap(p1);
  RadixNode* p2 = Put(Range(200, 8));
  Snap(p2);
  RadixNode* p3 = Put(Range(300, 8));
  Snap(p3);
  EXPECT_EQ(cache_.snapshot_count(), kSnapshots);
  cache_.IncLockRef(p1);
  EXPECT_EQ(cache_.protected_snapshots(), 1);
  // A fourth takes the least recently used unlocked one (p2's): its leaf goes with it, since
  // its KV could not be resumed any more.
  RadixNode* p4 = Put(Range(400, 8));
  const int64_t before = pool_.available();
  Snap(p4);
  EXPECT_EQ(cache_.snapshot_count(), kSnapshots);
  EXPECT_EQ(pool_.available(), before + 8);
  EXPECT_TRUE(cache_.MatchPrefix(Range(200, 8)).slots.empty());
  EXPECT_EQ(cache_.MatchPrefix(Range(100, 9)).slots.size(), 8u);
  EXPECT_STATUS_OK(Check());
  // With every snapshot locked, none can be had.
  cache_.IncLockRef(p3);
  cache_.IncLockRef(p4);
  EXPECT_FALSE(cache_.AllocateSnapshot(pool_).has_value());
  EXPECT_EQ(cache_.EvictSnapshots(3, pool_), 0);
  cache_.DecLockRef(p1);
  cache_.DecLockRef(p3);
  cache_.DecLockRef(p4);
  // KV eviction deletes the leaves and frees their snapshots.
  cache_.Evict(1000, pool_);
  EXPECT_EQ(cache_.TotalSize(), 0);
  EXPECT_EQ(cache_.snapshot_count(), 0);
  EXPECT_EQ(pool_.available(), pool_.size());
  EXPECT_STATUS_OK(Check());
}

TEST_F(SnapshotCacheTest, EvictingAnInnerSnapshotKeepsTheNodeAndItsDescendants) {
  const Ids a = Range(1, 24);
  RadixNode* n8 = Put(Ids(a.begin(), a.begin() + 8));
  Snap(n8);
  RadixNode* n16 = Put(Ids(a.begin(), a.begin() + 16));
  Snap(n16);
  RadixNode* n24 = Put(a);
  Snap(n24);
  // Ties in access time go to the oldest node: the top one, an inner node, loses only its
  // snapshot; a leaf without one above the deepest snapshot would go too.
  EXPECT_EQ(cache_.EvictSnapshots(1, pool_), 1);
  EXPECT_LT(n8->snapshot, 0);
  EXPECT_EQ(cache_.TotalSize(), 24);
  EXPECT_EQ(cache_.MatchPrefix(Concat(Ids(a.begin(), a.begin() + 12), Range(900, 4))).slots.size(),
            0u);
  EXPECT_EQ(cache_.MatchPrefix(a).slots.size(), 24u);
  EXPECT_STATUS_OK(Check());
  // The other two: once the leaf loses its snapshot, no node of the path keeps one, and the
  // whole path goes.
  EXPECT_EQ(cache_.EvictSnapshots(2, pool_), 2);
  EXPECT_EQ(cache_.TotalSize(), 0);
  EXPECT_EQ(pool_.available(), pool_.size());
  EXPECT_STATUS_OK(Check());
}

TEST_F(SnapshotCacheTest, ALockKeepsTheSnapshotWhereItEndsOnly) {
  const Ids a = Range(1, 16);
  RadixNode* n8 = Put(Ids(a.begin(), a.begin() + 8));
  Snap(n8);
  RadixNode* n16 = Put(a);
  Snap(n16);
  cache_.IncLockRef(n16);
  EXPECT_EQ(cache_.protected_snapshots(), 1);
  // The snapshot above the lock's end may go (the node stays: its KV is locked); the one at
  // the end may not.
  EXPECT_EQ(cache_.EvictSnapshots(5, pool_), 1);
  EXPECT_LT(n8->snapshot, 0);
  EXPECT_GE(n16->snapshot, 0);
  EXPECT_EQ(cache_.TotalSize(), 16);
  EXPECT_STATUS_OK(Check());
  // A split of the locked node keeps the lock's end (and the snapshot) on its lower half.
  const RadixCache::MatchResult m = cache_.MatchPrefix(Concat(Ids(a.begin(), a.begin() + 12),
                                                              Range(700, 4)));
  EXPECT_TRUE(m.slots.empty());
  EXPECT_EQ(cache_.EvictSnapshots(5, pool_), 0);
  cache_.DecLockRef(n16);
  EXPECT_EQ(cache_.protected_snapshots(), 0);
  EXPECT_EQ(cache_.EvictSnapshots(5, pool_), 1);
  EXPECT_EQ(cache_.TotalSize(), 0);
  EXPECT_STATUS_OK(Check());
}

TEST_F(SnapshotCacheTest, ResetFreesEverySnapshot) {
  Snap(Put(Range(1, 8)));
  Snap(Put(Range(50, 8)));
  cache_.Reset();
  pool_.Reset();
  EXPECT_EQ(cache_.snapshot_count(), 0);
  for (int i = 0; i < kSnapshots; ++i) EXPECT_TRUE(cache_.AllocateSnapshot(pool_).has_value());
  EXPECT_FALSE(cache_.AllocateSnapshot(pool_).has_value());
}

}  // namespace
}  // namespace snapshot_cache_test
}  // namespace radixlm
