// PenaltyState, the penalties, min_new_tokens, logit_bias and the allowed-token bitmask.
#include "sampling/penalties.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "sampling/penalty_state.h"
#include "sampling/token_bitmask.h"

namespace radixlm {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::vector<float> Row(std::initializer_list<float> values) { return std::vector<float>(values); }

TEST(PenaltyStateTest, CountsDistinctTokensInFirstSeenOrder) {
  PenaltyState state;
  for (int32_t t : {5, 3, 5, 9, 5, 3}) state.AddOutputToken(t);
  EXPECT_EQ(state.num_output_tokens(), 6);
  EXPECT_EQ(state.OutputCount(5), 3);
  EXPECT_EQ(state.OutputCount(3), 2);
  EXPECT_EQ(state.OutputCount(9), 1);
  EXPECT_EQ(state.OutputCount(4), 0);
  ASSERT_EQ(state.output_counts().size(), 3u);
  EXPECT_EQ(state.output_counts()[0].token, 5);
  EXPECT_EQ(state.output_counts()[1].token, 3);
  EXPECT_EQ(state.output_counts()[2].token, 9);
  state.Clear();
  EXPECT_EQ(state.num_output_tokens(), 0);
  EXPECT_EQ(state.OutputCount(5), 0);
  EXPECT_TRUE(state.output_counts().empty());
}

TEST(PenaltyStateTest, GrowsPastReserveAndKeepsCounts) {
  PenaltyState state;
  state.Reserve(4);
  for (int round = 0; round < 3; ++round) {
    for (int32_t t = 0; t < 5000; ++t) state.AddOutputToken(t * 7919 % 262144);
  }
  EXPECT_EQ(state.num_output_tokens(), 15000);
  EXPECT_EQ(state.output_counts().size(), 5000u);
  for (int32_t t = 0; t < 5000; ++t) EXPECT_EQ(state.OutputCount(t * 7919 % 262144), 3);
}

TEST(PenaltyStateTest, PromptTokensSortedUnique) {
  PenaltyState state;
  const std::vector<int32_t> prompt = {9, 2, 9, 4, 2};
  state.SetPromptTokens(prompt);
  EXPECT_EQ(std::vector<int32_t>(state.prompt_tokens().begin(), state.prompt_tokens().end()),
            (std::vector<int32_t>{2, 4, 9}));
  EXPECT_TRUE(state.InPrompt(4));
  EXPECT_FALSE(state.InPrompt(3));
  EXPECT_EQ(state.num_output_tokens(), 0);  // the prompt is not output
}

TEST(PenaltiesTest, FrequencyAndPresence) {
  PenaltyState state;
  for (int32_t t : {1, 1, 1, 2}) state.AddOutputToken(t);
  std::vector<float> logits = Row({1.0f, 1.0f, 1.0f, 1.0f});
  ApplyFrequencyPresencePenalties(logits, state, 0.5f, 0.25f);
  EXPECT_FLOAT_EQ(logits[0], 1.0f);                     // unseen
  EXPECT_FLOAT_EQ(logits[1], 1.0f - 0.5f * 3 - 0.25f);  // count 3
  EXPECT_FLOAT_EQ(logits[2], 1.0f - 0.5f * 1 - 0.25f);  // count 1
  EXPECT_FLOAT_EQ(logits[3], 1.0f);
  // Negative penalties encourage repetition.
  logits = Row({0.0f, 0.0f, 0.0f, 0.0f});
  ApplyFrequencyPresencePenalties(logits, state, -1.0f, 0.0f);
  EXPECT_FLOAT_EQ(logits[1], 3.0f);
  EXPECT_FLOAT_EQ(logits[2], 1.0f);
}

TEST(PenaltiesTest, RepetitionDividesPositiveMultipliesNegative) {
  PenaltyState state;
  state.AddOutputToken(0);
  state.AddOutputToken(1);
  state.AddOutputToken(1);  // counted once, whatever the count
  std::vector<float> logits = Row({2.0f, -2.0f, 2.0f, 0.0f});
  ApplyRepetitionPenalty(logits, state, 2.0f);
  EXPECT_FLOAT_EQ(logits[0], 1.0f);
  EXPECT_FLOAT_EQ(logits[1], -4.0f);
  EXPECT_FLOAT_EQ(logits[2], 2.0f);  // unseen
  EXPECT_FLOAT_EQ(logits[3], 0.0f);
  // penalty < 1 encourages.
  logits = Row({2.0f, -2.0f, 2.0f, 0.0f});
  ApplyRepetitionPenalty(logits, state, 0.5f);
  EXPECT_FLOAT_EQ(logits[0], 4.0f);
  EXPECT_FLOAT_EQ(logits[1], -1.0f);
}

TEST(PenaltiesTest, RepetitionIncludesPromptOnce) {
  PenaltyState state;
  const std::vector<int32_t> prompt = {2, 3, 3};
  state.SetPromptTokens(prompt);
  state.AddOutputToken(3);  // in both prompt and output: penalized once
  state.AddOutputToken(0);
  std::vector<float> logits = Row({4.0f, 4.0f, 4.0f, 4.0f});
  ApplyRepetitionPenalty(logits, state, 2.0f);
  EXPECT_FLOAT_EQ(logits[0], 2.0f);
  EXPECT_FLOAT_EQ(logits[1], 4.0f);
  EXPECT_FLOAT_EQ(logits[2], 2.0f);
  EXPECT_FLOAT_EQ(logits[3], 2.0f);
  // Frequency / presence ignore the prompt.
  logits = Row({4.0f, 4.0f, 4.0f, 4.0f});
  ApplyFrequencyPresencePenalties(logits, state, 1.0f, 0.0f);
  EXPECT_FLOAT_EQ(logits[2], 4.0f);
  EXPECT_FLOAT_EQ(logits[3], 3.0f);
}

TEST(PenaltiesTest, MinNewTokensMasksEosAndStopIdsUntilReached) {
  const std::vector<int32_t> eos = {3};
  const std::vector<int32_t> stop_ids = {1, 99};  // 99 is out of range: ignored
  for (int32_t produced = 0; produced <= 3; ++produced) {
    std::vector<float> logits = Row({0.5f, 0.5f, 0.5f, 0.5f});
    ApplyMinNewTokens(logits, produced, 2, eos, stop_ids);
    const bool masked = produced < 2;
    EXPECT_EQ(logits[3], masked ? kNegInf : 0.5f) << produced;
    EXPECT_EQ(logits[1], masked ? kNegInf : 0.5f) << produced;
    EXPECT_EQ(logits[0], 0.5f);
    EXPECT_EQ(logits[2], 0.5f);
  }
}

TEST(PenaltiesTest, LogitBiasAdds) {
  std::vector<float> logits = Row({0.0f, 1.0f, 2.0f});
  ApplyLogitBias(logits, {{0, 5.0f}, {2, -100.0f}, {7, 1.0f}});
  EXPECT_FLOAT_EQ(logits[0], 5.0f);
  EXPECT_FLOAT_EQ(logits[1], 1.0f);
  EXPECT_FLOAT_EQ(logits[2], -98.0f);
}

TEST(TokenBitmaskTest, LayoutAndApply) {
  constexpr int32_t kVocab = 70;  // 3 words, the last partly used
  EXPECT_EQ(BitmaskWords(kVocab), 3);
  EXPECT_EQ(BitmaskWords(64), 2);
  std::vector<int32_t> mask(BitmaskWords(kVocab));
  FillBitmask(mask, false);
  for (int32_t t : {0, 31, 32, 63, 69}) SetTokenAllowed(mask, t, true);
  EXPECT_EQ(static_cast<uint32_t>(mask[0]), 0x80000001u);  // bit b of word w is token 32w + b
  EXPECT_TRUE(IsTokenAllowed(mask, 31));
  EXPECT_FALSE(IsTokenAllowed(mask, 30));

  std::vector<float> logits(kVocab, 1.0f);
  ApplyTokenBitmask(logits, mask);
  for (int32_t t = 0; t < kVocab; ++t) {
    const bool allowed = t == 0 || t == 31 || t == 32 || t == 63 || t == 69;
    EXPECT_EQ(logits[t], allowed ? 1.0f : kNegInf) << t;
  }
  // All-allowed leaves the row alone; all-disallowed masks everything.
  std::vector<float> all(kVocab, 2.0f);
  FillBitmask(mask, true);
  ApplyTokenBitmask(all, mask);
  for (float x : all) EXPECT_EQ(x, 2.0f);
  FillBitmask(mask, false);
  ApplyTokenBitmask(all, mask);
  for (float x : all) EXPECT_EQ(x, kNegInf);
  // Clearing a bit again.
  FillBitmask(mask, true);
  SetTokenAllowed(mask, 40, false);
  EXPECT_FALSE(IsTokenAllowed(mask, 40));
  EXPECT_TRUE(IsTokenAllowed(mask, 41));
}

TEST(ProcessLogitsTest, AppliesEverythingInOrder) {
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  params.frequency_penalty = 1.0f;
  params.presence_penalty = 0.5f;
  params.min_new_tokens = 5;
  params.stop_token_ids = {4};
  params.logit_bias = {{0, 10.0f}, {1, 3.0f}};
  PenaltyState state;
  state.AddOutputToken(1);
  state.AddOutputToken(1);
  const std::vector<int32_t> eos = {5};
  std::vector<int32_t> mask(BitmaskWords(6));
  FillBitmask(mask, true);
  SetTokenAllowed(mask, 2, false);

  std::vector<float> logits = Row({1.0f, 8.0f, 1.0f, 1.0f, 1.0f, 1.0f});
  ProcessLogits(logits, params, {&state, eos, mask.data()});
  EXPECT_FLOAT_EQ(logits[0], 11.0f);                              // bias only
  EXPECT_FLOAT_EQ(logits[1], 8.0f / 2 - 2 * 1.0f - 0.5f + 3.0f);  // repetition first
  EXPECT_EQ(logits[2], kNegInf);                                  // bitmask
  EXPECT_FLOAT_EQ(logits[3], 1.0f);
  EXPECT_EQ(logits[4], kNegInf);  // stop id before min_new_tokens
  EXPECT_EQ(logits[5], kNegInf);  // EOS before min_new_tokens

  // No history, defaults: a no-op apart from min_new_tokens at step 0.
  SamplingParams plain;
  logits = Row({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f});
  ProcessLogits(logits, plain, {nullptr, eos, nullptr});
  EXPECT_EQ(logits, Row({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}));
}

}  // namespace
}  // namespace radixlm
