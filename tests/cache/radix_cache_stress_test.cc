// Randomized stress test: thousands of request-shaped operations (start, decode, chunk, finish,
// raw insert, query, evict) on a RadixCache over a small KvPool, against a reference model —
// the set of every cached page-aligned prefix, with the slots of its last page. After every
// operation: CheckInvariants(pool, in-flight), and every match equals the longest cached prefix.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/radix_cache.h"

namespace radixlm {
namespace {

using Ids = std::vector<int32_t>;

struct StressParam {
  int32_t page_size;
  EvictionPolicy policy;
};

struct Active {
  CacheRequest req;
  Ids tokens;  // every token of the row has KV
};

class RadixCacheStressTest : public ::testing::TestWithParam<StressParam> {
 protected:
  static constexpr int64_t kPoolSize = 256;
  static constexpr int32_t kMaxContext = 96;
  static constexpr int32_t kMaxActive = 4;

  void SetUp() override {
    ps_ = GetParam().page_size;
    pool_ = std::make_unique<KvPool>(
        std::move(KvPool::Create({.size = kPoolSize, .page_size = ps_})).value());
    table_ = std::make_unique<ReqToTokenTable>(
        std::move(
            ReqToTokenTable::Create({.max_requests = kMaxActive, .max_context_len = kMaxContext}))
            .value());
    cache_ = std::make_unique<RadixCache>(
        RadixCacheConfig{.page_size = ps_, .eviction_policy = GetParam().policy});
  }

  int64_t Aligned(size_t n) const { return static_cast<int64_t>(n) / ps_ * ps_; }
  int Rand(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  // Token sequences over a 3-letter alphabet, mostly grown from earlier ones: lots of sharing,
  // divergence mid-node and mid-page.
  Ids RandomSequence(int max_len) {
    Ids ids;
    if (!history_.empty() && Rand(0, 9) < 7) {
      const Ids& base = history_[Rand(0, static_cast<int>(history_.size()) - 1)];
      // Half the time all of it (a follow-up turn), else a cut anywhere (mid-node, mid-page).
      const int keep =
          Rand(0, 1) ? static_cast<int>(base.size()) : Rand(0, static_cast<int>(base.size()));
      ids.assign(base.begin(), base.begin() + keep);
    }
    const int extra = Rand(ids.empty() ? 1 : 0, 12);
    for (int i = 0; i < extra; ++i) ids.push_back(Rand(0, 2));
    if (static_cast<int>(ids.size()) > max_len) ids.resize(max_len);
    if (ids.empty()) ids.push_back(Rand(0, 2));
    history_.push_back(ids);
    if (history_.size() > 64) history_.erase(history_.begin());
    return ids;
  }

  // Reference: slots of the longest cached prefix of key (whole pages).
  Ids ExpectedMatch(const Ids& key) const {
    Ids slots;
    for (int64_t end = ps_; end <= static_cast<int64_t>(key.size()); end += ps_) {
      auto it = ref_.find(Ids(key.begin(), key.begin() + end));
      if (it == ref_.end()) break;
      slots.insert(slots.end(), it->second.begin(), it->second.end());
    }
    return slots;
  }

  // Records that the tree now holds key[0, aligned) with the given slots where it did not yet.
  void RecordInsert(const Ids& key, std::span<const int32_t> slots) {
    for (int64_t end = ps_; end <= static_cast<int64_t>(key.size()); end += ps_) {
      Ids prefix(key.begin(), key.begin() + end);
      Ids page(slots.begin() + end - ps_, slots.begin() + end);
      if (ref_.emplace(prefix, page).second) {
        for (const int32_t slot : page) by_slot_[slot] = prefix;
      }
    }
  }

  int64_t Evict(int64_t n) {
    return cache_->Evict(n, [this](std::span<const int32_t> slots) {
      for (const int32_t slot : slots) {
        auto it = by_slot_.find(slot);
        ASSERT_NE(it, by_slot_.end()) << "evicted slot " << slot << " was never cached";
        ref_.erase(it->second);  // a page's slots all name the same prefix
        by_slot_.erase(it);
      }
      pool_->Free(slots);
      ++counters_.evicted_nodes;
      if (!first_evicted_) first_evicted_ = Ids(slots.begin(), slots.end());
    });
  }

  // Allocation with eviction on shortage, as the scheduler does it.
  std::optional<std::vector<int32_t>> AllocateExtend(int32_t last_slot, int64_t n) {
    const int64_t need = pool_->PagesNeededForExtend(last_slot, n) * ps_;
    if (need > pool_->available()) Evict(need - pool_->available());
    return pool_->AllocateExtend(last_slot, n);
  }

  int32_t LastSlot(const Active& a) const {
    return a.tokens.empty() ? -1 : table_->Row(a.req.req_pool_index)[a.tokens.size() - 1];
  }

  int64_t InFlight() const {
    int64_t total = 0;
    for (const Active& a : active_) {
      const int64_t own = static_cast<int64_t>(a.tokens.size() - a.req.prefix_slots.size());
      total += (own + ps_ - 1) / ps_ * ps_;
    }
    return total;
  }

  void CheckMatch(const Ids& key) {
    const Ids expected = ExpectedMatch(key);
    RadixCache::MatchResult m = cache_->MatchPrefix(key);
    ASSERT_EQ(m.slots, expected) << cache_->DebugString();
    counters_.nonempty_matches += m.slots.empty() ? 0 : 1;
  }

  void OpStart() {
    if (static_cast<int>(active_.size()) >= kMaxActive) return;
    Active a;
    Ids prompt = RandomSequence(48);
    const Ids expected = ExpectedMatch(prompt);
    RadixCache::MatchResult m = cache_->MatchPrefix(prompt);
    ASSERT_EQ(m.slots, expected);
    cache_->IncLockRef(m.last_node);
    a.req.req_pool_index = *table_->Allocate();
    a.req.priority = Rand(-2, 2);
    a.req.last_node = m.last_node;
    a.tokens.assign(prompt.begin(), prompt.begin() + m.slots.size());
    table_->Write(a.req.req_pool_index, 0, m.slots);
    a.req.prefix_slots = std::move(m.slots);
    active_.push_back(std::move(a));
    Active& added = active_.back();
    // The prefix is locked: eviction for the rest cannot take it away.
    const int64_t rest = static_cast<int64_t>(prompt.size() - added.tokens.size());
    auto slots = AllocateExtend(LastSlot(added), rest);
    if (!slots.has_value()) {  // pool too small even after eviction: give the request up
      cache_->DecLockRef(added.req.last_node);
      table_->Free(added.req.req_pool_index);
      active_.pop_back();
      return;
    }
    table_->Write(added.req.req_pool_index, added.tokens.size(), *slots);
    ++counters_.started;
    counters_.prefix_hits += added.tokens.empty() ? 0 : 1;
    added.tokens = prompt;
  }

  void OpDecode(Active& a) {
    const int n = Rand(1, 6);
    if (static_cast<int>(a.tokens.size()) + n > kMaxContext) return;
    auto slots = AllocateExtend(LastSlot(a), n);
    if (!slots.has_value()) return;
    table_->Write(a.req.req_pool_index, a.tokens.size(), *slots);
    for (int i = 0; i < n; ++i) a.tokens.push_back(Rand(0, 2));
  }

  void OpUnfinished(Active& a) {
    cache_->CacheUnfinishedRequest(a.req, a.tokens, *table_, *pool_);
    RecordInsert(a.tokens, table_->Row(a.req.req_pool_index));
    ASSERT_EQ(static_cast<int64_t>(a.req.prefix_slots.size()), Aligned(a.tokens.size()));
  }

  void OpFinish(size_t index) {
    Active& a = active_[index];
    const auto row = table_->Row(a.req.req_pool_index);
    const Ids kv(row.begin(), row.begin() + a.tokens.size());
    cache_->CacheFinishedRequest(a.req, a.tokens, *table_, *pool_);
    RecordInsert(a.tokens, kv);
    active_.erase(active_.begin() + index);
    ++counters_.finished;
  }

  // A bare Insert: the caller frees the duplicate head and the unaligned tail itself.
  void OpRawInsert() {
    const Ids key = RandomSequence(40);
    auto slots = AllocateExtend(-1, static_cast<int64_t>(key.size()));
    if (!slots.has_value()) return;
    const int64_t expected_present = static_cast<int64_t>(ExpectedMatch(key).size());
    const auto present = static_cast<int64_t>(cache_->Insert(key, *slots, Rand(-2, 2)));
    ASSERT_EQ(present, expected_present);
    RecordInsert(key, *slots);
    const std::span<const int32_t> all(*slots);
    pool_->Free(all.first(present));
    pool_->Free(all.subspan(Aligned(key.size())));
  }

  // The unlocked leaf the policy must evict first, by brute force over the whole tree.
  const RadixNode* FirstVictim() const {
    const RadixNode* best = nullptr;
    std::vector<const RadixNode*> stack = {cache_->root()};
    while (!stack.empty()) {
      const RadixNode* node = stack.back();
      stack.pop_back();
      for (const auto& [page, child] : node->children) stack.push_back(child.get());
      if (node == cache_->root() || !node->is_leaf() || node->lock_ref > 0) continue;
      if (best == nullptr ||
          MakeEvictionKey(GetParam().policy, *node) < MakeEvictionKey(GetParam().policy, *best)) {
        best = node;
      }
    }
    return best;
  }

  void OpEvict() {
    const int64_t want = Rand(1, 24);
    const RadixNode* victim = FirstVictim();
    const Ids victim_slots = victim ? victim->value : Ids{};
    first_evicted_.reset();
    const int64_t evicted = Evict(want);
    ASSERT_EQ(first_evicted_.value_or(Ids{}), victim_slots) << "policy order broken";
    ASSERT_TRUE(evicted >= want || cache_->evictable_size() == 0)
        << "evicted " << evicted << " of " << want << " with " << cache_->evictable_size()
        << " evictable";
  }

  void CheckAll() {
    Status st = cache_->CheckInvariants(*pool_, InFlight());
    ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << cache_->DebugString();
    ASSERT_EQ(static_cast<int64_t>(ref_.size()) * ps_, cache_->TotalSize());
    counters_.max_nodes = std::max<int>(counters_.max_nodes, cache_->num_nodes());
    int64_t locked = 0;
    for (const Active& a : active_) locked = std::max<int64_t>(locked, a.req.prefix_slots.size());
    ASSERT_GE(cache_->protected_size(), locked);
  }

  void CheckLockedPrefixesSurvive() {
    for (const Active& a : active_) {
      const Ids prefix(a.tokens.begin(), a.tokens.begin() + a.req.prefix_slots.size());
      ASSERT_EQ(cache_->MatchPrefix(prefix).slots, a.req.prefix_slots);
    }
  }

  struct Counters {
    int started = 0;      // requests admitted
    int prefix_hits = 0;  // admitted with a non-empty cached prefix
    int finished = 0;
    int evicted_nodes = 0;
    int nonempty_matches = 0;
    int max_nodes = 0;
  };

  int32_t ps_ = 1;
  Counters counters_;
  std::mt19937 rng_{12345};
  std::unique_ptr<KvPool> pool_;
  std::unique_ptr<ReqToTokenTable> table_;
  std::unique_ptr<RadixCache> cache_;
  std::vector<Active> active_;
  std::optional<Ids> first_evicted_;  // slots of the first node the last Evict freed
  std::vector<Ids> history_;
  std::map<Ids, Ids> ref_;  // every cached page-aligned prefix → slots of its last page
  std::unordered_map<int32_t, Ids> by_slot_;
};

TEST_P(RadixCacheStressTest, RandomOperationsKeepInvariants) {
  constexpr int kOps = 3000;
  for (int op = 0; op < kOps; ++op) {
    const int kind = Rand(0, 99);
    SCOPED_TRACE("op " + std::to_string(op) + " kind " + std::to_string(kind));
    if (kind < 15) {
      OpStart();
    } else if (kind < 30 && !active_.empty()) {
      OpDecode(active_[Rand(0, static_cast<int>(active_.size()) - 1)]);
    } else if (kind < 40 && !active_.empty()) {
      OpUnfinished(active_[Rand(0, static_cast<int>(active_.size()) - 1)]);
    } else if (kind < 55 && !active_.empty()) {
      OpFinish(Rand(0, static_cast<int>(active_.size()) - 1));
    } else if (kind < 65) {
      OpRawInsert();
    } else if (kind < 92) {
      CheckMatch(RandomSequence(48));
    } else {
      OpEvict();
    }
    if (HasFatalFailure()) return;
    CheckAll();
    if (HasFatalFailure()) return;
    if (op % 100 == 0) CheckLockedPrefixesSurvive();
    if (HasFatalFailure()) return;
  }
  // The run exercised what it claims to (sharing, eviction, a tree of some size).
  std::printf("started %d (with prefix %d), finished %d, evicted nodes %d, hits %d, max nodes %d\n",
              counters_.started, counters_.prefix_hits, counters_.finished, counters_.evicted_nodes,
              counters_.nonempty_matches, counters_.max_nodes);
  EXPECT_GT(counters_.started, 100);
  EXPECT_GT(counters_.prefix_hits, 50);
  EXPECT_GT(counters_.finished, 100);
  EXPECT_GT(counters_.evicted_nodes, 100);
  EXPECT_GT(counters_.nonempty_matches, 100);
  EXPECT_GT(counters_.max_nodes, 10);
  // Drain: finish everything, evict everything, the pool is whole again.
  while (!active_.empty()) OpFinish(active_.size() - 1);
  CheckAll();
  EXPECT_EQ(cache_->protected_size(), 0);
  Evict(kPoolSize);
  EXPECT_EQ(cache_->TotalSize(), 0);
  EXPECT_EQ(pool_->available(), pool_->size());
  EXPECT_TRUE(ref_.empty());
  EXPECT_TRUE(cache_->CheckInvariants(*pool_, 0).ok());
}

std::vector<StressParam> AllParams() {
  std::vector<StressParam> params;
  for (int32_t ps : {1, 2, 4}) {
    for (EvictionPolicy policy : {EvictionPolicy::kLru, EvictionPolicy::kLfu, EvictionPolicy::kFifo,
                                  EvictionPolicy::kPriority}) {
      params.push_back({ps, policy});
    }
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(PagesAndPolicies, RadixCacheStressTest, ::testing::ValuesIn(AllParams()),
                         [](const auto& info) {
                           return std::string(EvictionPolicyName(info.param.policy)) + "_page" +
                                  std::to_string(info.param.page_size);
                         });

}  // namespace
}  // namespace radixlm
