#include "spec/topk_tree_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace radixlm::spec {
namespace {

constexpr int32_t kVocab = 8;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Logits whose softmax gives token t probability probs[t] (0: -inf).
std::vector<float> Logits(const std::vector<double>& probs) {
  std::vector<float> l(kVocab, kNegInf);
  for (size_t t = 0; t < probs.size(); ++t) {
    if (probs[t] > 0) l[t] = static_cast<float>(std::log(probs[t]));
  }
  return l;
}

std::vector<int32_t> Tokens(const DraftTree& t) { return {t.tokens().begin(), t.tokens().end()}; }
std::vector<int32_t> Parents(const DraftTree& t) {
  std::vector<int32_t> p;
  for (size_t i = 0; i < t.size(); ++i) p.push_back(t.parent(static_cast<int32_t>(i)));
  return p;
}

// Root -> A (token 1, p .5), B (token 2, p .4); A is unsure of what follows (uniform), B sure
// of two tokens (4, 5, p .5 each), so B's children outscore A's.
class TopKTreeBuilderTest : public ::testing::Test {
 protected:
  void GrowTwoLevels(int32_t max_depth) {
    b.Reset(/*root_token=*/7, /*topk=*/2, max_depth);
    ASSERT_EQ(std::vector<int32_t>(b.frontier().begin(), b.frontier().end()),
              std::vector<int32_t>{TopKTreeBuilder::kRoot});
    const auto root = Logits({0, 0.5, 0.4, 0.1});
    b.Expand(TopKTreeBuilder::kRoot, root.data(), kVocab, nullptr);
    b.NextStep();
    ASSERT_EQ(std::vector<int32_t>(b.frontier().begin(), b.frontier().end()),
              (std::vector<int32_t>{0, 1}));  // A, B (C is not in the top 2)
    const std::vector<float> uniform(kVocab, 0.0f);
    const auto sure = Logits({0, 0, 0, 0, 0.5, 0.5});
    b.Expand(0, uniform.data(), kVocab, nullptr);  // candidates 2, 3: tokens 0, 1
    b.Expand(1, sure.data(), kVocab, nullptr);     // candidates 4, 5: tokens 4, 5
    b.NextStep();
  }
  TopKTreeBuilder b;
};

TEST_F(TopKTreeBuilderTest, ScoresAreCumulativeLogProbabilities) {
  GrowTwoLevels(3);
  ASSERT_EQ(b.candidates(), 6u);
  EXPECT_NEAR(b.score(0), std::log(0.5), 1e-5);
  EXPECT_NEAR(b.score(1), std::log(0.4), 1e-5);
  EXPECT_NEAR(b.score(2), std::log(0.5) + std::log(1.0 / 8), 1e-5);
  EXPECT_NEAR(b.score(4), std::log(0.4) + std::log(0.5), 1e-5);
  EXPECT_EQ(b.token(2), 0);  // equal logits: the lower ids first
  EXPECT_EQ(b.token(3), 1);
  EXPECT_EQ(b.depth(5), 2);
  std::vector<int32_t> path;
  b.Path(4, &path);
  EXPECT_EQ(path, (std::vector<int32_t>{2, 4}));
}

TEST_F(TopKTreeBuilderTest, TheFrontierKeepsTheGreedyNodeThenTheBestOthers) {
  GrowTwoLevels(3);
  // A's top child (greedy) scores below both of B's, but stays; B's best comes next.
  EXPECT_EQ(std::vector<int32_t>(b.frontier().begin(), b.frontier().end()),
            (std::vector<int32_t>{2, 4}));
}

TEST_F(TopKTreeBuilderTest, NoFrontierPastTheMaximumDepth) {
  GrowTwoLevels(2);
  EXPECT_TRUE(b.frontier().empty());
}

TEST_F(TopKTreeBuilderTest, BuildTakesTheGreedyChainThenTheBestScores) {
  GrowTwoLevels(3);
  DraftTree t;
  b.Build(4, &t);  // root, A, A's first child (the greedy chain), then B
  EXPECT_EQ(Tokens(t), (std::vector<int32_t>{7, 1, 2, 0}));
  EXPECT_EQ(Parents(t), (std::vector<int32_t>{-1, 0, 0, 1}));
  b.Build(6, &t);  // and B's two children
  EXPECT_EQ(Tokens(t), (std::vector<int32_t>{7, 1, 2, 0, 4, 5}));
  EXPECT_EQ(Parents(t), (std::vector<int32_t>{-1, 0, 0, 1, 2, 2}));
  b.Build(1, &t);
  EXPECT_EQ(t.size(), 1u);
  b.Build(64, &t);  // every candidate
  EXPECT_EQ(t.size(), 7u);
}

TEST(TopKTreeBuilderMaskTest, MaskedAndNonFiniteTokensAreNeverDrafted) {
  TopKTreeBuilder b;
  b.Reset(7, 3, 1);
  auto logits = Logits({0, 0.5, 0.4, 0.1});
  logits[6] = std::numeric_limits<float>::quiet_NaN();
  const int32_t mask = (1 << 2) | (1 << 3) | (1 << 6);  // tokens 2, 3 and the NaN one
  b.Expand(TopKTreeBuilder::kRoot, logits.data(), kVocab, &mask);
  ASSERT_EQ(b.candidates(), 2u);
  EXPECT_EQ(b.token(0), 2);
  EXPECT_EQ(b.token(1), 3);
  EXPECT_NEAR(b.score(0), std::log(0.8), 1e-5);  // normalized over the allowed tokens
  b.NextStep();
  EXPECT_TRUE(b.frontier().empty());  // depth 1 reached
  const int32_t none = 1 << 0;        // only token 0, whose logit is -inf
  TopKTreeBuilder c;
  c.Reset(7, 3, 2);
  c.Expand(TopKTreeBuilder::kRoot, logits.data(), kVocab, &none);
  EXPECT_EQ(c.candidates(), 0u);
}

TEST(TopKTreeBuilderChainTest, TopOneIsTheGreedyChain) {
  TopKTreeBuilder b;
  b.Reset(7, 1, 3);
  for (int step = 0; step < 3; ++step) {
    ASSERT_EQ(b.frontier().size(), 1u);
    std::vector<double> probs(kVocab, 0.05);
    probs[static_cast<size_t>(step + 3)] = 0.65;
    const auto l = Logits(probs);
    b.Expand(b.frontier()[0], l.data(), kVocab, nullptr);
    b.NextStep();
  }
  EXPECT_TRUE(b.frontier().empty());
  DraftTree t;
  b.Build(12, &t);
  EXPECT_EQ(Tokens(t), (std::vector<int32_t>{7, 3, 4, 5}));
}

}  // namespace
}  // namespace radixlm::spec
