// CacheFinishedRequest / CacheUnfinishedRequest against a real KvPool and ReqToTokenTable,
// checking the pool accounting (free + in tree + in flight == size) at every step.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "cache/radix_cache.h"

namespace radixlm {
namespace {

using Ids = std::vector<int32_t>;

Ids Concat(const Ids& a, const Ids& b) {
  Ids out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

class CacheRequestTest : public ::testing::TestWithParam<int32_t> {
 protected:
  void SetUp() override { Init(GetParam(), /*disable=*/false); }

  void Init(int32_t page_size, bool disable) {
    page_size_ = page_size;
    pool_ = std::make_unique<KvPool>(
        std::move(KvPool::Create({.size = 256, .page_size = page_size})).value());
    table_ = std::make_unique<ReqToTokenTable>(
        std::move(ReqToTokenTable::Create({.max_requests = 4, .max_context_len = 64})).value());
    cache_ =
        std::make_unique<RadixCache>(RadixCacheConfig{.page_size = page_size, .disable = disable});
  }

  // Scheduling a request: match its prompt, lock the prefix, take a row, allocate the rest.
  CacheRequest Start(const Ids& tokens, int32_t key_namespace = 0) {
    CacheRequest req;
    req.key_namespace = key_namespace;
    RadixCache::MatchResult m = cache_->MatchPrefix(tokens, key_namespace);
    cache_->IncLockRef(m.last_node);
    req.req_pool_index = *table_->Allocate();
    table_->Write(req.req_pool_index, 0, m.slots);
    req.prefix_slots = std::move(m.slots);
    req.last_node = m.last_node;
    Extend(req, static_cast<int64_t>(req.prefix_slots.size()), static_cast<int64_t>(tokens.size()));
    return req;
  }

  // Allocates slots for positions [from, to) of the request's row.
  void Extend(const CacheRequest& req, int64_t from, int64_t to) {
    const int32_t last = from == 0 ? -1 : table_->Row(req.req_pool_index)[from - 1];
    auto slots = pool_->AllocateExtend(last, to - from);
    ASSERT_TRUE(slots.has_value());
    table_->Write(req.req_pool_index, from, *slots);
  }

  // Slots requests hold outside the tree: whole pages from the end of their prefix.
  int64_t InFlight(const std::vector<std::pair<const CacheRequest*, int64_t>>& reqs) const {
    int64_t total = 0;
    for (const auto& [req, len] : reqs) {
      const int64_t own = len - static_cast<int64_t>(req->prefix_slots.size());
      total += (own + page_size_ - 1) / page_size_ * page_size_;
    }
    return total;
  }

  void ExpectConsistent(int64_t in_flight) {
    Status st = cache_->CheckInvariants(*pool_, in_flight);
    EXPECT_TRUE(st.ok()) << st.ToString() << "\n" << cache_->DebugString();
  }

  int32_t page_size_ = 1;
  std::unique_ptr<KvPool> pool_;
  std::unique_ptr<ReqToTokenTable> table_;
  std::unique_ptr<RadixCache> cache_;
};

TEST_P(CacheRequestTest, FinishedRequestsShareTheirPrefix) {
  const Ids system = {1, 2, 3, 4, 5, 6, 7, 8};
  const Ids a_tokens = Concat(system, {11, 12, 13, 14, 15});
  const Ids b_tokens = Concat(system, {21, 22, 23, 24});

  CacheRequest a = Start(a_tokens);
  EXPECT_TRUE(a.prefix_slots.empty());
  ExpectConsistent(InFlight({{&a, a_tokens.size()}}));
  cache_->CacheFinishedRequest(a, a_tokens, *table_, *pool_);
  EXPECT_EQ(a.req_pool_index, -1);
  EXPECT_EQ(table_->available(), 4);
  EXPECT_EQ(cache_->TotalSize(), static_cast<int64_t>(a_tokens.size()) / page_size_ * page_size_);
  EXPECT_EQ(cache_->protected_size(), 0);
  ExpectConsistent(0);

  CacheRequest b = Start(b_tokens);
  EXPECT_EQ(b.prefix_slots.size(), system.size());  // 8 is a multiple of every page size here
  EXPECT_EQ(cache_->protected_size(), static_cast<int64_t>(system.size()));
  ExpectConsistent(InFlight({{&b, b_tokens.size()}}));
  cache_->CacheFinishedRequest(b, b_tokens, *table_, *pool_);
  EXPECT_EQ(cache_->protected_size(), 0);
  ExpectConsistent(0);
  EXPECT_EQ(cache_->MatchPrefix(b_tokens).slots.size(), b_tokens.size() / page_size_ * page_size_);
}

// LoRA namespaces: KV cached under one adapter (or the base) is never matched by another;
// prefixes are shared within a namespace.
TEST_P(CacheRequestTest, NamespacesShareNothingAcrossAndPrefixesWithin) {
  const Ids system = {1, 2, 3, 4, 5, 6, 7, 8};
  const Ids a_tokens = Concat(system, {11, 12, 13, 14});
  const Ids b_tokens = Concat(system, {21, 22, 23, 24});
  CacheRequest a = Start(a_tokens, /*key_namespace=*/1);
  cache_->CacheFinishedRequest(a, a_tokens, *table_, *pool_);
  ExpectConsistent(0);
  EXPECT_EQ(cache_->MatchPrefix(a_tokens, 1).slots.size(), a_tokens.size() / page_size_ * page_size_);
  EXPECT_TRUE(cache_->MatchPrefix(a_tokens, 0).slots.empty());
  EXPECT_TRUE(cache_->MatchPrefix(a_tokens, 2).slots.empty());

  // Another adapter computes the same prompt itself: its own nodes, its own slots.
  CacheRequest other = Start(a_tokens, /*key_namespace=*/2);
  EXPECT_TRUE(other.prefix_slots.empty());
  cache_->CacheFinishedRequest(other, a_tokens, *table_, *pool_);
  ExpectConsistent(0);
  const auto in_one = cache_->MatchPrefix(a_tokens, 1).slots;
  const auto in_two = cache_->MatchPrefix(a_tokens, 2).slots;
  ASSERT_EQ(in_one.size(), in_two.size());
  for (size_t i = 0; i < in_one.size(); ++i) EXPECT_NE(in_one[i], in_two[i]) << i;

  // Within namespace 1, a second prompt reuses the system prefix.
  CacheRequest b = Start(b_tokens, /*key_namespace=*/1);
  EXPECT_EQ(b.prefix_slots.size(), system.size());
  cache_->CacheUnfinishedRequest(b, b_tokens, *table_, *pool_);
  EXPECT_EQ(b.prefix_slots.size(), b_tokens.size() / page_size_ * page_size_);
  cache_->CacheFinishedRequest(b, b_tokens, *table_, *pool_);
  ExpectConsistent(0);
  EXPECT_TRUE(cache_->MatchPrefix(b_tokens, 0).slots.empty());
  EXPECT_EQ(cache_->MatchPrefix(b_tokens, 2).slots.size(), system.size());  // its own system
}

TEST_P(CacheRequestTest, ConcurrentDuplicatesAreFreed) {
  const Ids tokens = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
  CacheRequest a = Start(tokens);
  CacheRequest b = Start(tokens);  // started before a finished: computes the same KV again
  ExpectConsistent(InFlight({{&a, tokens.size()}, {&b, tokens.size()}}));
  cache_->CacheFinishedRequest(a, tokens, *table_, *pool_);
  ExpectConsistent(InFlight({{&b, tokens.size()}}));
  const int64_t in_tree = cache_->TotalSize();
  cache_->CacheFinishedRequest(b, tokens, *table_, *pool_);  // all of b's KV is a duplicate
  EXPECT_EQ(cache_->TotalSize(), in_tree);
  EXPECT_EQ(pool_->available(), pool_->size() - in_tree);
  ExpectConsistent(0);
}

TEST_P(CacheRequestTest, ChunkedPrefillCachesEachChunk) {
  const Ids tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};
  const Ids chunk1(tokens.begin(), tokens.begin() + 7);
  CacheRequest req = Start(chunk1);
  cache_->CacheUnfinishedRequest(req, chunk1, *table_, *pool_);
  const size_t aligned1 = 7 / page_size_ * page_size_;
  EXPECT_EQ(req.prefix_slots.size(), aligned1);
  EXPECT_EQ(cache_->protected_size(), static_cast<int64_t>(aligned1));
  EXPECT_EQ(Ids(table_->Row(req.req_pool_index).begin(),
                table_->Row(req.req_pool_index).begin() + aligned1),
            req.prefix_slots);
  ExpectConsistent(InFlight({{&req, 7}}));

  // A second request finds the first chunk already.
  CacheRequest other = Start(chunk1);
  EXPECT_EQ(other.prefix_slots, req.prefix_slots);
  cache_->CacheFinishedRequest(other, chunk1, *table_, *pool_);
  ExpectConsistent(InFlight({{&req, 7}}));

  Extend(req, 7, static_cast<int64_t>(tokens.size()));  // the next chunk continues the page
  ExpectConsistent(InFlight({{&req, tokens.size()}}));
  cache_->CacheUnfinishedRequest(req, tokens, *table_, *pool_);
  EXPECT_EQ(req.prefix_slots.size(), tokens.size() / page_size_ * page_size_);
  ExpectConsistent(InFlight({{&req, tokens.size()}}));
  cache_->CacheFinishedRequest(req, tokens, *table_, *pool_);
  EXPECT_EQ(cache_->protected_size(), 0);
  ExpectConsistent(0);
}

TEST_P(CacheRequestTest, UnfinishedRequestAdoptsSlotsInsertedMeanwhile) {
  const Ids tokens = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
  CacheRequest slow = Start(tokens);
  CacheRequest fast = Start(tokens);
  cache_->CacheFinishedRequest(fast, tokens, *table_, *pool_);
  // slow computed the same tokens: its copies are freed and its row now points at the tree.
  cache_->CacheUnfinishedRequest(slow, tokens, *table_, *pool_);
  const auto tree = cache_->MatchPrefix(tokens).slots;
  EXPECT_EQ(slow.prefix_slots, tree);
  EXPECT_EQ(Ids(table_->Row(slow.req_pool_index).begin(),
                table_->Row(slow.req_pool_index).begin() + tree.size()),
            tree);
  ExpectConsistent(InFlight({{&slow, tokens.size()}}));
  cache_->CacheFinishedRequest(slow, tokens, *table_, *pool_);
  ExpectConsistent(0);
}

INSTANTIATE_TEST_SUITE_P(PageSizes, CacheRequestTest, ::testing::Values(1, 2, 4),
                         [](const auto& info) { return "page" + std::to_string(info.param); });

TEST(CacheRequestDisabledTest, DisabledCacheFreesEverything) {
  auto pool = std::move(KvPool::Create({.size = 64, .page_size = 1})).value();
  auto table =
      std::move(ReqToTokenTable::Create({.max_requests = 2, .max_context_len = 16})).value();
  RadixCache cache({.disable = true});
  const Ids tokens = {1, 2, 3, 4, 5};
  CacheRequest req;
  req.req_pool_index = *table.Allocate();
  req.last_node = cache.MatchPrefix(tokens).last_node;
  table.Write(req.req_pool_index, 0, *pool.Allocate(5));
  cache.CacheUnfinishedRequest(req, tokens, table, pool);  // no-op
  EXPECT_EQ(pool.available(), 59);
  EXPECT_TRUE(req.prefix_slots.empty());
  cache.CacheFinishedRequest(req, tokens, table, pool);
  EXPECT_EQ(pool.available(), 64);
  EXPECT_EQ(table.available(), 2);
  EXPECT_EQ(cache.TotalSize(), 0);
  EXPECT_TRUE(cache.CheckInvariants(pool, 0).ok());
}

}  // namespace
}  // namespace radixlm
