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

TEST(StepCostFitTest, FitsTheWeightPassOfTheStepsItSees) {
  StepCostFit fit;
  EXPECT_EQ(fit.WeightPassTokens(), kWeightPassTokens);  // nothing seen yet
  // t0 = 10 ms, t1 = 2.5 ms: r = 4.
  for (int i = 0; i < 40; ++i) {
    const int64_t tokens = 8 + i % 9;
    fit.Add(tokens, 0.010 + 0.0025 * static_cast<double>(tokens));
  }
  EXPECT_NEAR(fit.WeightPassTokens(), 4.0, 1e-6);
  // The threshold follows: at 8 sequences 8 / 12 of a draft must be kept, not half.
  EXPECT_NEAR(MinKeptShare(8, fit.WeightPassTokens()), 8.0 / 12.0, 1e-6);
}

TEST(StepCostFitTest, KeepsTheDefaultWithoutSpreadOrOnADegenerateFit) {
  StepCostFit same;
  for (int i = 0; i < 100; ++i) same.Add(8, 0.03);  // one batch size: t1 unknowable
  EXPECT_EQ(same.WeightPassTokens(), kWeightPassTokens);
  StepCostFit falling;
  for (int i = 0; i < 100; ++i) falling.Add(1 + i % 16, 0.05 - 0.001 * (i % 16));
  EXPECT_EQ(falling.WeightPassTokens(), kWeightPassTokens);
}

TEST(StepCostFitTest, ForgetsOldSteps) {
  StepCostFit fit;
  for (int i = 0; i < 400; ++i) fit.Add(1 + i % 16, 0.016 + 0.001 * (1 + i % 16));   // r = 16
  for (int i = 0; i < 2000; ++i) fit.Add(1 + i % 16, 0.004 + 0.001 * (1 + i % 16));  // r = 4
  EXPECT_NEAR(fit.WeightPassTokens(), 4.0, 0.1);
}

TEST(DraftPacingTest, AFittedRatioMovesTheBreakEven) {
  // Keeping 55 % of each draft pays at 8 sequences when r = 8 (c = 0.5), not when r = 4.
  DraftPacer at8, at4;
  int d8 = 0, d4 = 0;
  for (int i = 0; i < 200; ++i) {
    if (at8.MayDraft()) {
      ++d8;
      at8.OnVerified(20, 11, 8, 8.0);
    }
    if (at4.MayDraft()) {
      ++d4;
      at4.OnVerified(20, 11, 8, 4.0);
    }
  }
  EXPECT_GT(d8, 150);
  EXPECT_LT(d4, 40);
}

}  // namespace
}  // namespace radixlm::spec
