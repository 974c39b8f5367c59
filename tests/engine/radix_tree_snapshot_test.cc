// SnapshotRadixTree: the observer's copy of the tree (shape, counters, aggregation of large
// trees, version gating, evictions), and Engine::GetRadixTree end to end over the fake engine.
#include "engine/radix_tree_snapshot.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <vector>

#include "fake_engine.h"

namespace radixlm {
namespace {

using Ids = std::vector<int32_t>;

Ids Range(int32_t first, int32_t n) {
  Ids ids(n);
  std::iota(ids.begin(), ids.end(), first);
  return ids;
}

// Slots for `n` tokens starting at *next (distinct across inserts).
Ids Slots(int32_t n, int32_t* next) {
  Ids s = Range(*next, n);
  *next += n;
  return s;
}

// Every entry's parent comes before it; subtree totals of the root's children add up to the
// tree; nothing is shown twice.
void ExpectWellFormed(const RadixTreeSnapshot& snap, const RadixCache& cache) {
  ASSERT_FALSE(snap.entries.empty());
  EXPECT_EQ(snap.entries[0].parent, -1);
  EXPECT_EQ(snap.entries[0].subtree_tokens, cache.TotalSize());
  EXPECT_EQ(snap.entries[0].subtree_nodes, cache.num_nodes());
  std::set<uint64_t> ids;
  std::vector<int64_t> child_tokens(snap.entries.size(), 0);
  std::vector<int64_t> shown_children(snap.entries.size(), 0);
  for (size_t i = 1; i < snap.entries.size(); ++i) {
    const RadixTreeEntry& e = snap.entries[i];
    ASSERT_GE(e.parent, 0);
    ASSERT_LT(static_cast<size_t>(e.parent), i) << "a child before its parent";
    child_tokens[e.parent] += e.subtree_tokens;
    ++shown_children[e.parent];
    if (e.kind == RadixTreeEntry::Kind::kNode) {
      EXPECT_TRUE(ids.insert(e.id).second) << "node " << e.id << " shown twice";
      EXPECT_EQ(e.prefix_tokens, snap.entries[e.parent].prefix_tokens + e.tokens);
    }
  }
  for (size_t i = 0; i < snap.entries.size(); ++i) {
    const RadixTreeEntry& e = snap.entries[i];
    if (e.kind != RadixTreeEntry::Kind::kNode) continue;
    if (e.collapsed) {
      EXPECT_EQ(shown_children[i], 0) << "a collapsed node with children shown";
      EXPECT_GT(e.children, 0);
    } else {
      EXPECT_EQ(child_tokens[i] + (i == 0 ? 0 : e.tokens), e.subtree_tokens)
          << "entry " << i << ": children do not add up";
    }
  }
}

TEST(RadixTreeSnapshotTest, SmallTreeIsShownWhole) {
  RadixCache cache({});
  int32_t next = 100;
  cache.Insert(Range(1, 10), Slots(10, &next));
  cache.Insert(Ids{1, 2, 3, 4, 50, 51}, Slots(6, &next));  // splits after 4 tokens
  const RadixTreeSnapshot snap = SnapshotRadixTree(cache, RadixTreeQuery{.max_nodes = 100});
  ASSERT_EQ(snap.entries.size(), 4u);  // root, [1..4], [5..10], [50 51]
  EXPECT_FALSE(snap.truncated);
  EXPECT_EQ(snap.num_nodes, 3);
  EXPECT_EQ(snap.total_tokens, 12);
  const RadixTreeEntry& shared = snap.entries[1];
  EXPECT_EQ(shared.tokens, 4);
  EXPECT_EQ(shared.children, 2);
  EXPECT_EQ(shared.snippet_ids, (Ids{1, 2, 3, 4}));
  EXPECT_FALSE(shared.collapsed);
  // Larger subtree first among siblings.
  EXPECT_EQ(snap.entries[2].tokens, 6);
  EXPECT_EQ(snap.entries[3].tokens, 2);
  ExpectWellFormed(snap, cache);
}

TEST(RadixTreeSnapshotTest, MatchesCountHitsAndLocksShow) {
  RadixCache cache({});
  int32_t next = 0;
  cache.Insert(Range(1, 8), Slots(8, &next));
  RadixTreeSnapshot before = SnapshotRadixTree(cache, {});
  ASSERT_EQ(before.entries.size(), 2u);
  EXPECT_EQ(before.entries[1].hit_count, 0u);

  RadixCache::MatchResult m = cache.MatchPrefix(Range(1, 8));
  cache.IncLockRef(m.last_node);
  RadixTreeSnapshot after = SnapshotRadixTree(cache, {});
  EXPECT_EQ(after.entries[1].hit_count, 1u);
  EXPECT_EQ(after.entries[1].lock_ref, 1);
  EXPECT_EQ(after.entries[0].lock_ref, 0);  // the root's internal lock is not shown
  EXPECT_GT(after.entries[1].last_access, before.entries[1].last_access);
  EXPECT_EQ(after.protected_tokens, 8);
  EXPECT_NE(after.version, before.version);
  cache.DecLockRef(m.last_node);
}

TEST(RadixTreeSnapshotTest, UnchangedVersionAnswersCountersOnly) {
  RadixCache cache({});
  int32_t next = 0;
  cache.Insert(Range(1, 8), Slots(8, &next));
  const RadixTreeSnapshot first = SnapshotRadixTree(cache, {});
  const RadixTreeSnapshot again =
      SnapshotRadixTree(cache, RadixTreeQuery{.if_version_not = first.version});
  EXPECT_TRUE(again.unchanged);
  EXPECT_TRUE(again.entries.empty());
  EXPECT_EQ(again.total_tokens, 8);
  cache.MatchPrefix(Range(1, 3));  // a split and a hit: a new version
  const RadixTreeSnapshot changed =
      SnapshotRadixTree(cache, RadixTreeQuery{.if_version_not = first.version});
  EXPECT_FALSE(changed.unchanged);
  EXPECT_EQ(changed.entries.size(), 3u);
  // Counters only: no walk, whatever the version.
  const RadixTreeSnapshot counters =
      SnapshotRadixTree(cache, RadixTreeQuery{.counters_only = true});
  EXPECT_TRUE(counters.counters_only);
  EXPECT_FALSE(counters.unchanged);
  EXPECT_TRUE(counters.entries.empty());
  EXPECT_EQ(counters.num_nodes, 2);
  EXPECT_EQ(counters.version, changed.version);
}

TEST(RadixTreeSnapshotTest, EvictionsAreCountedAndLogged) {
  RadixCache cache({});
  int32_t next = 0;
  cache.Insert(Range(1, 8), Slots(8, &next));
  cache.Insert(Range(100, 5), Slots(5, &next));
  std::vector<int32_t> freed;
  EXPECT_EQ(
      cache.Evict(
          13, [&](std::span<const int32_t> s) { freed.insert(freed.end(), s.begin(), s.end()); }),
      13);
  const RadixTreeSnapshot snap = SnapshotRadixTree(cache, {});
  EXPECT_EQ(snap.evictions_total, 2u);
  EXPECT_EQ(snap.evicted_tokens_total, 13);
  ASSERT_EQ(snap.evictions.size(), 2u);
  EXPECT_EQ(snap.evictions[0].seq, 1u);
  EXPECT_EQ(snap.evictions[1].seq, 2u);
  int64_t tokens = snap.evictions[0].tokens + snap.evictions[1].tokens;
  EXPECT_EQ(tokens, 13);
  // The log keeps the run's leading ids for the snippet.
  for (const RadixTreeEvictionEntry& ev : snap.evictions) {
    ASSERT_FALSE(ev.snippet_ids.empty());
    EXPECT_TRUE(ev.snippet_ids[0] == 1 || ev.snippet_ids[0] == 100);
  }
  EXPECT_EQ(snap.entries.size(), 1u);  // only the root left
}

TEST(RadixTreeSnapshotTest, EvictionLogKeepsTheMostRecent) {
  RadixCache cache({});
  int32_t next = 0;
  const int n = static_cast<int>(RadixCache::kEvictionLogSize) + 10;
  for (int i = 0; i < n; ++i) cache.Insert(Ids{1000 + i, 1}, Slots(2, &next));
  cache.Evict(2 * n, [](std::span<const int32_t>) {});
  const RadixTreeSnapshot snap = SnapshotRadixTree(cache, {});
  EXPECT_EQ(snap.evictions_total, static_cast<uint64_t>(n));
  ASSERT_EQ(snap.evictions.size(), RadixCache::kEvictionLogSize);
  EXPECT_EQ(snap.evictions.front().seq,
            static_cast<uint64_t>(n) - RadixCache::kEvictionLogSize + 1);
  EXPECT_EQ(snap.evictions.back().seq, static_cast<uint64_t>(n));
}

// 10,000 leaves under a few shared prefixes: the answer stays within max_nodes, the largest
// subtrees are expanded, the rest is collapsed or merged, and totals are conserved.
TEST(RadixTreeSnapshotTest, LargeTreeCollapsesWithinTheBudget) {
  RadixCache cache({});
  int32_t next = 0;
  for (int p = 0; p < 10; ++p) {
    for (int i = 0; i < 1000; ++i) {
      Ids key = Range(10000 * (p + 1), 20 + p);  // prefix p: longer for larger p
      key.push_back(i + 1);
      key.push_back(7);
      cache.Insert(key, Slots(static_cast<int32_t>(key.size()), &next));
    }
  }
  ASSERT_EQ(cache.num_nodes(), 10 * 1001);
  for (int32_t budget : {1, 2, 5, 50, 500, 20000}) {
    SCOPED_TRACE(budget);
    const RadixTreeSnapshot snap = SnapshotRadixTree(cache, RadixTreeQuery{.max_nodes = budget});
    EXPECT_LE(snap.entries.size(), static_cast<size_t>(budget));
    ExpectWellFormed(snap, cache);
    if (budget >= 10 * 1001 + 1) {
      EXPECT_EQ(snap.entries.size(), static_cast<size_t>(10 * 1001 + 1));
      EXPECT_FALSE(snap.truncated);
    } else {
      EXPECT_TRUE(snap.truncated);
    }
  }
  // With room for the root and its ten children, the prefixes show and the leaves collapse.
  const RadixTreeSnapshot snap = SnapshotRadixTree(cache, RadixTreeQuery{.max_nodes = 50});
  ASSERT_GE(snap.entries.size(), 11u);
  EXPECT_EQ(snap.entries[1].tokens, 29);  // the largest subtree first
  bool merged = false;
  for (const RadixTreeEntry& e : snap.entries) {
    if (e.kind == RadixTreeEntry::Kind::kOthers) {
      merged = true;
      EXPECT_GT(e.merged_subtrees, 1);
      EXPECT_EQ(e.subtree_nodes, e.merged_subtrees);  // each merged leaf is one node
    }
  }
  EXPECT_TRUE(merged);
}

TEST(RadixTreeSnapshotTest, DisabledCacheIsJustTheRoot) {
  RadixCache cache(RadixCacheConfig{.disable = true});
  int32_t next = 0;
  cache.Insert(Range(1, 8), Slots(8, &next));
  const RadixTreeSnapshot snap = SnapshotRadixTree(cache, {});
  EXPECT_TRUE(snap.disabled);
  EXPECT_EQ(snap.entries.size(), 1u);
  EXPECT_EQ(snap.total_tokens, 0);
}

TEST(EngineRadixTreeTest, SharedPrefixShowsAHitAndPoolCounters) {
  engine_testing::FakeEngine fe = engine_testing::MakeEngine();
  Engine& engine = *fe.engine;
  const Ids prompt = engine_testing::Prompt(40);
  auto first = engine.Submit(engine_testing::Greedy(prompt, 4));
  ASSERT_TRUE(first.ok());
  (*first)->Collect();
  StatusOr<RadixTreeSnapshot> before = engine.GetRadixTree({});
  ASSERT_TRUE(before.ok());
  EXPECT_GT(before->num_nodes, 0);
  EXPECT_GT(before->pool_size, 0);
  EXPECT_LE(before->pool_free, before->pool_size);
  EXPECT_GE(before->pool_size - before->pool_free,
            before->total_tokens);  // the tree is in the pool
  uint64_t hits_before = before->entries[0].subtree_hits;

  Ids second_prompt = prompt;
  second_prompt.push_back(61);
  auto second = engine.Submit(engine_testing::Greedy(second_prompt, 4));
  ASSERT_TRUE(second.ok());
  (*second)->Collect();
  StatusOr<RadixTreeSnapshot> after = engine.GetRadixTree({});
  ASSERT_TRUE(after.ok());
  EXPECT_GT(after->entries[0].subtree_hits, hits_before);
  EXPECT_GE(after->cache_hit_tokens, 40);
  EXPECT_NE(after->version, before->version);

  StatusOr<RadixTreeSnapshot> same = engine.GetRadixTree({.if_version_not = after->version});
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->unchanged);
  EXPECT_EQ(same->cache_hit_tokens, after->cache_hit_tokens);

  engine.Shutdown();
  EXPECT_FALSE(engine.GetRadixTree({}).ok());
}

}  // namespace
}  // namespace radixlm
