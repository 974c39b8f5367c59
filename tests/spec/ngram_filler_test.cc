#include "spec/ngram_filler.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace radixlm::spec {
namespace {

std::vector<int32_t> Tokens(const DraftTree& t) { return {t.tokens().begin(), t.tokens().end()}; }

NgramWindows Windows(std::span<const int32_t> all, size_t old_len, int depth = 18) {
  NgramWindows w;
  w.Append(all, old_len, depth);
  return w;
}

TEST(NgramFillerTest, SubmittedWindowsAreDraftableAfterAFlush) {
  NgramFiller filler(NgramConfig{}, 1 << 20);
  const std::vector<int32_t> seq = {1, 2, 3, 4, 5, 1, 2};
  filler.Submit(Windows(seq, 0));
  filler.Flush();
  DraftTree t;
  filler.Draft(seq, 12, &t);
  EXPECT_EQ(Tokens(t), (std::vector<int32_t>{2, 3, 4, 5, 1, 2}));
  const NgramFiller::Stats s = filler.stats();
  EXPECT_EQ(s.submitted_tokens, 7);
  EXPECT_EQ(s.inserted_tokens, 7);
  EXPECT_EQ(s.dropped_tokens, 0);
}

TEST(NgramFillerTest, NothingIsVisibleWhileTheFillerIsHeld) {
  NgramFiller filler(NgramConfig{}, 1 << 20);
  filler.Pause();
  const std::vector<int32_t> seq = {1, 2, 3, 4, 5, 1, 2};
  filler.Submit(Windows(seq, 0));
  DraftTree t;
  filler.Draft(seq, 12, &t);
  EXPECT_EQ(Tokens(t), (std::vector<int32_t>{2}));  // only the root: the trie is empty
  EXPECT_EQ(filler.trie_nodes(), 0);
  filler.Resume();
  filler.Flush();
  filler.Draft(seq, 12, &t);
  EXPECT_EQ(t.size(), 6u);
}

// Windows handed over in growing steps, in batches of several sequences and inserted in
// kInsertStep pieces, build the trie that adding each whole sequence at once builds.
TEST(NgramFillerTest, StepwiseBatchesBuildTheSameTrieAsWholeSequences) {
  std::mt19937 rng(3);
  NgramConfig config;
  config.match_type = NgramMatchType::kProb;  // reads the counts
  std::vector<std::vector<int32_t>> seqs(3, std::vector<int32_t>(400));
  for (auto& s : seqs) {
    for (auto& t : s) t = static_cast<int32_t>(rng() % 7);
  }
  NgramCache whole(config);
  for (const auto& s : seqs) whole.Add(s, 0);
  NgramFiller filler(config, 1 << 20);
  std::vector<size_t> added(seqs.size(), 0);
  for (size_t n = 150; n <= 400; n += 1 + n % 5) {  // the first batch has 150-token prompts
    NgramWindows batch;
    for (size_t i = 0; i < seqs.size(); ++i) {
      batch.Append(std::span<const int32_t>(seqs[i]).first(n), added[i], config.max_trie_depth);
      added[i] = n;
    }
    for (const auto& part : batch.sequences) EXPECT_LE(part.old, 17u);  // context kept short
    filler.Submit(std::move(batch));
  }
  for (size_t i = 0; i < seqs.size(); ++i) {
    NgramWindows rest;
    rest.Append(seqs[i], added[i], config.max_trie_depth);
    filler.Submit(std::move(rest));
  }
  filler.Flush();
  EXPECT_EQ(filler.trie_nodes(), whole.nodes());
  EXPECT_EQ(filler.stats().inserted_tokens, 1200);
  for (const auto& s : seqs) {
    for (size_t n = 5; n <= s.size(); n += 29) {
      DraftTree a, b;
      whole.Draft(std::span<const int32_t>(s).first(n), 12, &a);
      filler.Draft(std::span<const int32_t>(s).first(n), 12, &b);
      EXPECT_EQ(Tokens(a), Tokens(b)) << n;
    }
  }
}

TEST(NgramFillerTest, AFullQueueDropsTheOldestBatchesInsteadOfBlocking) {
  NgramFiller filler(NgramConfig{}, 10);
  filler.Pause();  // nothing is inserted: the queue fills
  const std::vector<int32_t> old_seq = {1, 2, 3, 4, 5, 1, 2};
  const std::vector<int32_t> new_seq = {7, 8, 9, 7, 8};
  filler.Submit(Windows(old_seq, 0));  // 7 new tokens
  filler.Submit(Windows(new_seq, 0));  // 5 more: 12 > 10, so the first batch goes
  NgramFiller::Stats s = filler.stats();
  EXPECT_EQ(s.submitted_tokens, 12);
  EXPECT_EQ(s.dropped_tokens, 7);
  filler.Resume();
  filler.Flush();
  s = filler.stats();
  EXPECT_EQ(s.inserted_tokens, 5);
  DraftTree t;
  filler.Draft(old_seq, 12, &t);
  EXPECT_EQ(t.size(), 1u);  // its windows never arrived
  filler.Draft(new_seq, 12, &t);
  EXPECT_EQ(Tokens(t), (std::vector<int32_t>{8, 9, 7, 8}));
}

TEST(NgramFillerTest, AppendKeepsOnlyTheContextTheNewWindowsSpan) {
  std::vector<int32_t> seq(50);
  for (size_t i = 0; i < seq.size(); ++i) seq[i] = static_cast<int32_t>(i);
  NgramWindows w;
  w.Append(seq, 40, 18);
  ASSERT_EQ(w.sequences.size(), 1u);
  EXPECT_EQ(w.sequences[0].old, 17u);  // the 17 tokens before the new ones
  EXPECT_EQ(w.tokens.front(), 23);
  EXPECT_EQ(w.new_tokens(), 10u);
  w.Append(seq, 50, 18);  // nothing new
  EXPECT_EQ(w.sequences.size(), 1u);
}

TEST(NgramFillerTest, DestroyingWithWorkQueuedJoinsTheThread) {
  std::vector<int32_t> seq(5000);
  for (size_t i = 0; i < seq.size(); ++i) seq[i] = static_cast<int32_t>(i % 97);
  for (bool paused : {false, true}) {
    NgramFiller filler(NgramConfig{}, 1 << 20);
    if (paused) filler.Pause();
    for (int i = 0; i < 20; ++i) filler.Submit(Windows(seq, 0));
    // The destructor stops the thread (mid-queue, or held) and joins it.
  }
  SUCCEED();
}

}  // namespace
}  // namespace radixlm::spec
