// FitPrompt (engine/request_validation.h): without --allow-auto-truncate a request that does
// not fit is refused with ValidatePromptFit's errors and left as it was; with it, the prompt
// keeps its first tokens and max_new_tokens (min_new_tokens, logprob_start_len) is lowered to
// what is left, against min(context length, pool tokens).
#include "engine/request_validation.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

namespace radixlm::fit_prompt_test {
namespace {

constexpr int64_t kContext = 64;

ValidationLimits Limits(bool truncate, int64_t pool_tokens = 4096) {
  return ValidationLimits{.vocab_size = 1000,
                          .context_length = kContext,
                          .pool_tokens = pool_tokens,
                          .allow_auto_truncate = truncate};
}

std::vector<int32_t> Ids(int n) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), 1);
  return ids;
}

GenerateRequest Request(std::optional<int32_t> max_new_tokens) {
  GenerateRequest r;
  r.rid = "r1";
  r.sampling_params.max_new_tokens = max_new_tokens;
  return r;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(FitPromptTest, WithoutTheFlagEveryMisfitIsStillAnErrorAndNothingChanges) {
  struct Case {
    int prompt;
    std::optional<int32_t> max_new;
    int64_t pool;
    const char* message;
  };
  const Case cases[] = {
      {64, 1, 4096, "is longer than the model's context length (64 tokens)"},
      {100, std::nullopt, 4096, "is longer than the model's context length"},
      {40, 100000, 4096, "exceeds the model's maximum context length of 64 tokens"},
      {20, 40, 50, "KV cache holds 50 tokens"},
  };
  for (const Case& c : cases) {
    std::vector<int32_t> ids = Ids(c.prompt);
    GenerateRequest request = Request(c.max_new);
    StatusOr<PromptCut> cut = FitPrompt(ids, request, Limits(false, c.pool));
    ASSERT_FALSE(cut.ok()) << c.prompt;
    EXPECT_EQ(cut.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(cut.status().message(), c.message)) << cut.status().ToString();
    // The same message ValidatePromptFit gives.
    EXPECT_EQ(cut.status().message(),
              ValidatePromptFit(ids, request, Limits(false, c.pool)).message());
    EXPECT_EQ(ids, Ids(c.prompt));
    EXPECT_EQ(request.sampling_params.max_new_tokens, c.max_new);
  }
}

TEST(FitPromptTest, ARequestThatFitsRunsAsAsked) {
  for (bool truncate : {false, true}) {
    std::vector<int32_t> ids = Ids(40);
    GenerateRequest request = Request(24);  // 40 + 24 = the context exactly
    StatusOr<PromptCut> cut = FitPrompt(ids, request, Limits(truncate));
    ASSERT_TRUE(cut.ok()) << cut.status().ToString();
    EXPECT_FALSE(cut->cut());
    EXPECT_EQ(ids, Ids(40));
    EXPECT_EQ(request.sampling_params.max_new_tokens, 24);
  }
}

TEST(FitPromptTest, ALongPromptKeepsItsFirstTokensAndMaxNewTokensWhatIsLeft) {
  std::vector<int32_t> ids = Ids(100);
  GenerateRequest request = Request(16);
  request.sampling_params.min_new_tokens = 8;
  StatusOr<PromptCut> cut = FitPrompt(ids, request, Limits(true));
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_TRUE(cut->cut());
  EXPECT_EQ(ids, Ids(kContext - 1));  // the first 63: the end is cut, as SGLang does
  EXPECT_EQ(cut->room, kContext);
  EXPECT_EQ(cut->prompt_tokens_asked, 100);
  EXPECT_EQ(cut->prompt_tokens, kContext - 1);
  EXPECT_EQ(cut->max_new_tokens_asked, 16);
  EXPECT_EQ(cut->max_new_tokens, 1);
  EXPECT_EQ(request.sampling_params.max_new_tokens, 1);
  EXPECT_EQ(request.sampling_params.min_new_tokens, 1);
  EXPECT_TRUE(ValidatePromptFit(ids, request, Limits(false)).ok());
}

TEST(FitPromptTest, APromptOfExactlyTheContextIsCutByOne) {
  std::vector<int32_t> ids = Ids(kContext);
  GenerateRequest request = Request(std::nullopt);
  StatusOr<PromptCut> cut = FitPrompt(ids, request, Limits(true));
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ(ids, Ids(kContext - 1));
  // An unset max_new_tokens stays unset: the engine stops at the context.
  EXPECT_FALSE(request.sampling_params.max_new_tokens.has_value());
  EXPECT_FALSE(cut->max_new_tokens_asked.has_value());
}

TEST(FitPromptTest, MaxNewTokensPastTheContextIsLoweredToWhatIsLeft) {
  std::vector<int32_t> ids = Ids(10);
  GenerateRequest request = Request(100000);
  request.sampling_params.min_new_tokens = 60;
  StatusOr<PromptCut> cut = FitPrompt(ids, request, Limits(true));
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ(ids, Ids(10));  // the prompt fits: untouched
  EXPECT_EQ(cut->prompt_tokens, 10);
  EXPECT_EQ(request.sampling_params.max_new_tokens, kContext - 10);
  EXPECT_EQ(request.sampling_params.min_new_tokens, kContext - 10);
  EXPECT_EQ(cut->max_new_tokens_asked, 100000);
}

TEST(FitPromptTest, APoolSmallerThanTheContextIsTheRoom) {
  // Its capacity, not what is free: a request that could never fit is cut to fit an empty pool.
  std::vector<int32_t> ids = Ids(30);
  GenerateRequest request = Request(40);
  StatusOr<PromptCut> cut = FitPrompt(ids, request, Limits(true, /*pool_tokens=*/50));
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ(cut->room, 50);
  EXPECT_EQ(ids, Ids(30));
  EXPECT_EQ(request.sampling_params.max_new_tokens, 20);

  ids = Ids(60);
  request = Request(5);
  cut = FitPrompt(ids, request, Limits(true, /*pool_tokens=*/50));
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ(ids, Ids(49));
  EXPECT_EQ(request.sampling_params.max_new_tokens, 1);
}

TEST(FitPromptTest, LogprobStartLenPastTheKeptPromptIsLoweredOutsideTheAskedOneRefused) {
  std::vector<int32_t> ids = Ids(100);
  GenerateRequest request = Request(4);
  request.return_logprob = true;
  request.logprob_start_len = 80;  // inside the prompt as sent, past the kept one
  StatusOr<PromptCut> cut = FitPrompt(ids, request, Limits(true));
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ(request.logprob_start_len, kContext - 2);  // the kept prompt's last position
  EXPECT_EQ(cut->logprob_start_len_asked, 80);
  EXPECT_EQ(cut->logprob_start_len, kContext - 2);

  ids = Ids(100);
  request = Request(4);
  request.return_logprob = true;
  request.logprob_start_len = 10;  // within the kept prompt: kept
  cut = FitPrompt(ids, request, Limits(true));
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ(request.logprob_start_len, 10);
  EXPECT_FALSE(cut->logprob_start_len_asked.has_value());

  ids = Ids(100);
  request = Request(4);
  request.return_logprob = true;
  request.logprob_start_len = 100;  // outside the prompt as sent: the request's own error
  cut = FitPrompt(ids, request, Limits(true));
  ASSERT_FALSE(cut.ok());
  EXPECT_TRUE(Contains(cut.status().message(), "logprob_start_len must be in [-1, 100)"))
      << cut.status().ToString();
  EXPECT_EQ(ids, Ids(100));  // refused before anything was cut
}

TEST(FitPromptTest, WhatCannotBeCutStaysAnError) {
  std::vector<int32_t> empty;
  GenerateRequest request = Request(4);
  StatusOr<PromptCut> cut = FitPrompt(empty, request, Limits(true));
  ASSERT_FALSE(cut.ok());
  EXPECT_TRUE(Contains(cut.status().message(), "empty"));

  // No room for one prompt token and one new token.
  std::vector<int32_t> ids = Ids(5);
  cut = FitPrompt(ids, request, Limits(true, /*pool_tokens=*/1));
  ASSERT_FALSE(cut.ok());
  EXPECT_TRUE(Contains(cut.status().message(), "KV cache")) << cut.status().ToString();
  EXPECT_EQ(ids, Ids(5));
}

TEST(FitPromptTest, TheWarningSaysWhatWasAskedAndWhatRuns) {
  std::vector<int32_t> ids = Ids(900);
  GenerateRequest request = Request(100000);
  StatusOr<PromptCut> cut = FitPrompt(ids, request, Limits(true));
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  const std::string line = cut->Describe("req-7");
  EXPECT_TRUE(Contains(line, "request req-7")) << line;
  EXPECT_TRUE(Contains(line, "fit 64 tokens")) << line;
  EXPECT_TRUE(Contains(line, "input 900 -> its first 63 tokens")) << line;
  EXPECT_TRUE(Contains(line, "max_new_tokens 100000 -> 1")) << line;
  EXPECT_TRUE(Contains(line, "--allow-auto-truncate")) << line;
  EXPECT_NE(line.back(), ';');
}

}  // namespace
}  // namespace radixlm::fit_prompt_test
