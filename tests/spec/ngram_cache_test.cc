#include "spec/ngram_cache.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace radixlm::spec {
namespace {

std::vector<int32_t> Chain(const DraftTree& t) {
  std::vector<int32_t> out(t.tokens().begin(), t.tokens().end());
  return out;
}

TEST(NgramCacheTest, DraftsTheContinuationOfTheLongestMatchedSuffix) {
  NgramCache cache(NgramConfig{});
  const std::vector<int32_t> seq = {1, 2, 3, 4, 5, 1, 2};
  cache.Add(seq, 0);
  DraftTree t;
  cache.Draft(seq, 12, &t);
  // "1 2" occurred before, followed by 3 4 5 1 2 (the window from position 0).
  EXPECT_EQ(Chain(t), (std::vector<int32_t>{2, 3, 4, 5, 1, 2}));
  for (size_t i = 1; i < t.size(); ++i) EXPECT_EQ(t.parent(static_cast<int32_t>(i)), i - 1);
}

TEST(NgramCacheTest, NothingToDraftWithoutAnEarlierOccurrence) {
  NgramCache cache(NgramConfig{});
  const std::vector<int32_t> seq = {1, 2, 3, 4};
  cache.Add(seq, 0);
  DraftTree t;
  cache.Draft(seq, 12, &t);
  EXPECT_EQ(Chain(t), (std::vector<int32_t>{4}));
}

TEST(NgramCacheTest, GrowingASequenceCountsEachWindowOnce) {
  std::mt19937 rng(5);
  std::vector<int32_t> seq(300);
  for (auto& t : seq) t = static_cast<int32_t>(rng() % 6);
  NgramConfig config;
  config.match_type = NgramMatchType::kProb;  // uses the counts
  NgramCache whole(config);
  whole.Add(seq, 0);
  // Growing by 1-3 tokens at a time with the right old length never double counts.
  NgramCache step(config);
  for (size_t n = 0; n < seq.size();) {
    const size_t next = std::min(seq.size(), n + 1 + n % 3);
    step.Add(std::span<const int32_t>(seq).first(next), n);
    n = next;
  }
  EXPECT_EQ(step.nodes(), whole.nodes());
  for (size_t n = 2; n <= seq.size(); n += 17) {
    DraftTree a, b;
    whole.Draft(std::span<const int32_t>(seq).first(n), 12, &a);
    step.Draft(std::span<const int32_t>(seq).first(n), 12, &b);
    EXPECT_EQ(Chain(a), Chain(b)) << n;
  }
}

TEST(NgramCacheTest, BfsTakesTheMostFrequentChildrenFirst) {
  NgramConfig config;
  config.max_bfs_breadth = 3;
  config.min_bfs_breadth = 1;
  NgramCache cache(config);
  // After 9: 5 three times, 6 twice, 7 once, 8 once.
  const std::vector<int32_t> seq = {9, 5, 0, 9, 6, 0, 9, 5, 0, 9, 7, 0, 9, 6, 0, 9, 8, 0, 9, 5};
  cache.Add(seq, 0);
  DraftTree t;
  const std::vector<int32_t> ctx = {1, 9};  // matches only "9": a 1-token match, full breadth
  cache.Draft(ctx, 12, &t);
  ASSERT_GE(t.size(), 4u);
  EXPECT_EQ(t.token(1), 5);
  EXPECT_EQ(t.token(2), 6);
  EXPECT_TRUE(t.token(3) == 7 || t.token(3) == 8);
  EXPECT_EQ(t.Child(0, 5), 1);
  for (size_t i = 1; i <= 3; ++i) EXPECT_EQ(t.parent(static_cast<int32_t>(i)), 0);
}

TEST(NgramCacheTest, ProbFollowsTheLikeliestPathFirst) {
  NgramConfig config;
  config.match_type = NgramMatchType::kProb;
  NgramCache cache(config);
  const std::vector<int32_t> seq = {9, 5, 1, 9, 5, 1, 9, 5, 2, 9, 6, 3};
  cache.Add(seq, 0);
  DraftTree t;
  const std::vector<int32_t> ctx = {4, 9};
  cache.Draft(ctx, 3, &t);
  // P(5) = 3/4, then P(5 1) = 3/4 * 2/3 = 1/2 beats P(6) = 1/4.
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.token(1), 5);
  EXPECT_EQ(t.token(2), 1);
  EXPECT_EQ(t.parent(2), 1);
}

TEST(NgramCacheTest, CapacityEvictsTheLeastRecentlyUsedAndKeepsRecentWindows) {
  NgramConfig config;
  config.capacity = 200;
  config.max_trie_depth = 8;
  NgramCache cache(config);
  std::mt19937 rng(1);
  std::vector<int32_t> seq;
  for (int i = 0; i < 2000; ++i) {
    seq.push_back(static_cast<int32_t>(rng() % 1000));
    cache.Add(seq, seq.size() - 1);
    ASSERT_LE(cache.nodes(), config.capacity);
  }
  // A recent stretch repeated is still drafted.
  std::vector<int32_t> ctx(seq.end() - 6, seq.end() - 3);
  DraftTree t;
  cache.Draft(ctx, 4, &t);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t.token(1), *(seq.end() - 3));
  EXPECT_EQ(t.token(2), *(seq.end() - 2));
  EXPECT_EQ(t.token(3), *(seq.end() - 1));
}

TEST(NgramCacheTest, ConfigValidation) {
  NgramConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.num_draft_tokens = 65;
  EXPECT_FALSE(c.Validate().ok());
  c = NgramConfig{};
  c.min_bfs_breadth = 4;
  c.max_bfs_breadth = 2;
  EXPECT_FALSE(c.Validate().ok());
  c = NgramConfig{};
  c.capacity = 10;
  EXPECT_FALSE(c.Validate().ok());
  EXPECT_TRUE(ParseNgramMatchType("PROB").ok());
  EXPECT_FALSE(ParseNgramMatchType("prob").ok());
}

}  // namespace
}  // namespace radixlm::spec
