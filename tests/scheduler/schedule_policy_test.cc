// The policies as functors over hand-built waiting lists.
#include "scheduler/schedule_policy.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

namespace radixlm {
namespace {

class PolicyTest : public ::testing::Test {
 protected:
  Request* Make(uint64_t arrival, int64_t match_len = 0, int32_t priority = 0,
                int64_t max_new = 16) {
    RequestInput in;
    in.id = arrival;
    in.input_ids = {3, 4, 5};
    in.priority = priority;
    auto req = std::make_unique<Request>(std::move(in), max_new, 0);
    req->arrival_seq = arrival;
    req->match_len = match_len;
    owned_.push_back(std::move(req));
    return owned_.back().get();
  }
  static std::vector<uint64_t> Ids(const std::vector<Request*>& v) {
    std::vector<uint64_t> ids;
    for (const Request* r : v) ids.push_back(r->in.id);
    return ids;
  }
  std::vector<std::unique_ptr<Request>> owned_;
};

TEST_F(PolicyTest, FcfsIsArrivalOrder) {
  std::vector<Request*> w = {Make(3), Make(1), Make(2)};
  FcfsPolicy{}(w);
  EXPECT_EQ(Ids(w), (std::vector<uint64_t>{1, 2, 3}));
}

TEST_F(PolicyTest, LpmLongestMatchFirstThenArrival) {
  std::vector<Request*> w = {Make(0, 5), Make(1, 50), Make(2, 5), Make(3, 0), Make(4, 50)};
  LongestPrefixMatchPolicy{}(w);
  EXPECT_EQ(Ids(w), (std::vector<uint64_t>{1, 4, 0, 2, 3}));
}

TEST_F(PolicyTest, LofLongestOutputFirst) {
  std::vector<Request*> w = {Make(0, 0, 0, 10), Make(1, 0, 0, 100), Make(2, 0, 0, 10)};
  LongestOutputFirstPolicy{}(w);
  EXPECT_EQ(Ids(w), (std::vector<uint64_t>{1, 0, 2}));
}

TEST_F(PolicyTest, PriorityHigherFirstThenArrival) {
  std::vector<Request*> w = {Make(0, 0, 1), Make(1, 0, 5), Make(2, 0, 1), Make(3, 0, -2)};
  PriorityPolicy{}(w);
  EXPECT_EQ(Ids(w), (std::vector<uint64_t>{1, 0, 2, 3}));
}

TEST_F(PolicyTest, RandomIsAPermutationDeterminedByTheRng) {
  std::vector<Request*> a, b;
  for (uint64_t i = 0; i < 20; ++i) a.push_back(Make(i));
  b = a;
  std::reverse(b.begin(), b.end());  // input order must not matter
  std::mt19937_64 r1(7), r2(7);
  RandomPolicy{}(a, r1);
  RandomPolicy{}(b, r2);
  EXPECT_EQ(Ids(a), Ids(b));
  std::vector<uint64_t> sorted = Ids(a);
  std::sort(sorted.begin(), sorted.end());
  for (uint64_t i = 0; i < 20; ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_NE(Ids(a), sorted);  // 1 in 20! chance to be wrong
}

TEST_F(PolicyTest, StarvationBoundMovesStarvedToFrontOldestFirst) {
  std::vector<Request*> w = {Make(0, 90), Make(1, 80), Make(2, 0), Make(3, 0)};
  w[3]->skipped_passes = 10;  // starved by skips
  w[2]->arrival_time = 0;     // starved by time
  for (int i : {0, 1, 3}) w[i]->arrival_time = 95;
  StarvationBound bound{.max_skips = 10, .max_wait_s = 50};
  std::mt19937_64 rng(1);
  OrderWaitingQueue(SchedulePolicyKind::kLpm, bound, /*now=*/100, rng, w);
  EXPECT_EQ(Ids(w), (std::vector<uint64_t>{2, 3, 0, 1}));
  // fcfs and priority ignore it.
  w = {owned_[0].get(), owned_[3].get()};
  owned_[0]->in.priority = 1;
  OrderWaitingQueue(SchedulePolicyKind::kPriority, bound, 100, rng, w);
  EXPECT_EQ(Ids(w), (std::vector<uint64_t>{0, 3}));
}

// dfs-weight over a real tree: prefixes A (heavy: 3 requests under it) and B (1 request).
TEST_F(PolicyTest, DfsWeightDrainsHeavierSubtreeFirst) {
  KvPool pool = std::move(KvPool::Create({.size = 256, .page_size = 1})).value();
  RadixCache cache(RadixCacheConfig{});
  auto insert = [&](std::vector<int32_t> key) {
    auto slots = pool.Allocate(static_cast<int64_t>(key.size()));
    const size_t present = cache.Insert(key, *slots);
    pool.Free(std::span<const int32_t>(*slots).first(present));
  };
  const std::vector<int32_t> b = {9, 9, 9, 9};
  const std::vector<int32_t> a = {5, 6, 7, 8};
  const std::vector<int32_t> a1 = {5, 6, 7, 8, 1, 1};
  const std::vector<int32_t> a2 = {5, 6, 7, 8, 2, 2};
  insert(b);  // older than A: a tie would favour it
  insert(a1);
  insert(a2);
  auto at = [&](uint64_t arrival, const std::vector<int32_t>& key) {
    Request* r = Make(arrival);
    r->match_node = cache.MatchPrefix(key).last_node;
    return r;
  };
  std::vector<Request*> w = {at(0, b), at(1, a1), at(2, a), at(3, a2), at(4, {42})};
  DfsWeightPolicy{}(w);
  // Root subtree: A (weight 3) before B (1); within A: a1 (older node) then a2, then A's own
  // request; the root's own request (no match) last.
  EXPECT_EQ(Ids(w), (std::vector<uint64_t>{1, 3, 2, 0, 4}));
}

}  // namespace
}  // namespace radixlm
