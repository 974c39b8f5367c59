// Draft pacing: the kept share above which drafting pays, and the back-off it drives.
#include "spec/draft_pacing.h"

#include <gtest/gtest.h>

namespace radixlm::spec {
namespace {

TEST(DraftPacingTest, BreakEvenShareGrowsWithTheBatch) {
  EXPECT_NEAR(MinKeptShare(1), 1.0 / 9.0, 1e-12);
  EXPECT_NEAR(MinKeptShare(8), 0.5, 1e-12);
  EXPECT_LT(MinKeptShare(4), MinKeptShare(16));
  EXPECT_LT(MinKeptShare(64), 1.0);
}

// Runs `rounds` rounds in which every draft of `drafted` tokens keeps `kept`; returns the
// rounds that drafted.
int DraftingRounds(DraftPacer& pacer, int rounds, int32_t drafted, int32_t kept, int64_t batch) {
  int drafting = 0;
  for (int i = 0; i < rounds; ++i) {
    if (!pacer.MayDraft()) continue;
    ++drafting;
    pacer.OnVerified(drafted, kept, batch);
  }
  return drafting;
}

TEST(DraftPacingTest, OneSequenceKeepsDraftingWhenAFifthIsKept) {
  DraftPacer pacer;
  EXPECT_EQ(DraftingRounds(pacer, 100, 5, 1, 1), 100);
}

TEST(DraftPacingTest, EightSequencesBackOffWhenAFifthIsKept) {
  DraftPacer pacer;
  const int drafting = DraftingRounds(pacer, 200, 5, 1, 8);
  EXPECT_LT(drafting, 200 / 10);  // mostly skipping, 16 rounds at a time
  EXPECT_GT(drafting, 200 / 20);  // but probing again after each back-off
}

TEST(DraftPacingTest, DraftsThatKeepNothingBackOffEvenAlone) {
  DraftPacer pacer;
  EXPECT_LT(DraftingRounds(pacer, 170, 3, 0, 1), 170 / 10);
}

TEST(DraftPacingTest, AGoodDraftEndsTheBackOff) {
  DraftPacer pacer;
  DraftingRounds(pacer, 50, 4, 0, 4);  // backing off, share near 0
  while (!pacer.MayDraft()) {
  }
  pacer.OnVerified(4, 4, 4);  // share back over c(4) = 1/3
  EXPECT_EQ(pacer.backoff, 0);
  EXPECT_TRUE(pacer.MayDraft());
}

}  // namespace
}  // namespace radixlm::spec
