// Request lifecycle through the scheduler: chunking, retraction, aborts, forward failures,
// flush, cached_tokens.
#include <gtest/gtest.h>

#include "scheduler_harness.h"

namespace radixlm::testing {
namespace {

TEST(SchedulerLifecycleTest, ChunkedPrefillRespectsChunkSize) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.chunked_prefill_size = 64;
  SchedulerHarness h(opt);
  PromptGen gen(3);
  const auto prompt = gen.Tokens(300);
  h.Add(SchedulerHarness::Greedy(1, prompt, 8));
  h.RunUntilIdle();
  EXPECT_LE(h.runner().max_chunk_tokens(), 64);
  EXPECT_EQ(h.result(1).ids, h.runner().ReferenceGreedy(prompt, 8));
  EXPECT_EQ(h.scheduler().GetStats().prefill_tokens, 300);
  // 300 tokens in chunks of 64: the prompt took 5 rounds.
  EXPECT_GE(h.runner().forward_calls(), 5 + 7);
}

TEST(SchedulerLifecycleTest, RunnerBatchCapChunksEvenWhenChunkingIsOff) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.chunked_prefill_size = -1;
  opt.max_batch_tokens = 100;
  SchedulerHarness h(opt);
  PromptGen gen(4);
  const auto prompt = gen.Tokens(450);
  h.Add(SchedulerHarness::Greedy(1, prompt, 4));
  h.Add(SchedulerHarness::Greedy(2, gen.Tokens(20), 4));
  h.RunUntilIdle();
  EXPECT_LE(h.runner().max_tokens_per_batch(), 100);
  EXPECT_EQ(h.result(1).ids, h.runner().ReferenceGreedy(prompt, 4));
}

TEST(SchedulerLifecycleTest, RetractedRequestsResumeWithUnchangedOutput) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.max_total_tokens = 256;
  opt.config.retract_decode_steps = 4;
  opt.config.init_new_token_ratio = 0.05;  // optimistic admission, so decode runs dry
  SchedulerHarness h(opt);
  PromptGen gen(5);
  std::vector<std::vector<int32_t>> prompts;
  for (uint64_t i = 0; i < 8; ++i) {
    prompts.push_back(gen.Tokens(20));
    h.Add(SchedulerHarness::Greedy(i, prompts.back(), 60));
  }
  h.RunUntilIdle();
  EXPECT_GT(h.scheduler().GetStats().retractions, 0);
  for (uint64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(h.result(i).ids, h.runner().ReferenceGreedy(prompts[i], 60)) << i;
    EXPECT_EQ(*h.result(i).finish, FinishReason::Length(60));
  }
}

TEST(SchedulerLifecycleTest, SampledRequestsResumeWithUnchangedOutputToo) {
  // Sampling draws depend only on (seed, step), so a retracted request replays identically.
  std::vector<int32_t> out_pressure, out_roomy;
  for (int64_t pool : {4096, 256}) {
    HarnessOptions opt{.config = SmallConfig()};
    opt.config.max_total_tokens = pool;
    opt.config.init_new_token_ratio = 0.05;
    SchedulerHarness h(opt);
    PromptGen gen(6);
    for (uint64_t i = 0; i < 8; ++i) {
      RequestInput in = SchedulerHarness::Greedy(i, gen.Tokens(20), 60);
      in.params.temperature = 0.8f;
      in.params.top_p = 0.9f;
      in.params.frequency_penalty = 0.5f;
      in.seed = 1000 + i;
      h.Add(std::move(in));
    }
    h.RunUntilIdle();
    std::vector<int32_t>& out = pool == 256 ? out_pressure : out_roomy;
    for (uint64_t i = 0; i < 8; ++i) out = Concat(out, h.result(i).ids);
    if (pool == 256) {
      EXPECT_GT(h.scheduler().GetStats().retractions, 0);
    }
  }
  EXPECT_EQ(out_pressure, out_roomy);
}

TEST(SchedulerLifecycleTest, AbortAtEveryStageFreesEverything) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.chunked_prefill_size = 32;
  opt.config.max_running_requests = 2;
  SchedulerHarness h(opt);
  PromptGen gen(7);
  h.Add(SchedulerHarness::Greedy(2, gen.Tokens(10), 50));   // will be decoding
  h.Add(SchedulerHarness::Greedy(1, gen.Tokens(200), 50));  // will be mid chunked prefill
  h.Add(SchedulerHarness::Greedy(3, gen.Tokens(10), 50));   // stays waiting (max running 2)
  h.Step();
  h.Step();
  ASSERT_FALSE(h.finished(1));
  const SchedulerStats s = h.scheduler().GetStats();
  EXPECT_EQ(s.prefilling_requests + s.running_requests, 2);
  EXPECT_EQ(s.waiting_requests, 1);
  EXPECT_EQ(s.waiting_tokens, 10);
  EXPECT_EQ(s.waiting_uncached_tokens, 10);  // nothing of request 3 is in the tree
  EXPECT_TRUE(h.scheduler().Abort(3, "user gave up"));
  EXPECT_TRUE(h.scheduler().Abort(1));
  ASSERT_TRUE(h.scheduler().CheckInvariants().ok());
  for (int i = 0; i < 3; ++i) h.Step();
  EXPECT_TRUE(h.scheduler().Abort(2));
  EXPECT_FALSE(h.scheduler().Abort(2));
  EXPECT_FALSE(h.scheduler().Abort(99));
  for (uint64_t id : {1, 2, 3}) {
    ASSERT_TRUE(h.finished(id));
    EXPECT_TRUE(h.result(id).finish->is_abort());
  }
  EXPECT_EQ(h.result(3).finish->matched_text, "user gave up");
  EXPECT_GT(h.result(2).ids.size(), 0u);
  EXPECT_FALSE(h.scheduler().HasWork());
  h.CheckIdle();
  EXPECT_EQ(h.scheduler().GetStats().aborted_requests, 3);
}

TEST(SchedulerLifecycleTest, WaitingUncachedTokensDiscountTheCachedPrefix) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.schedule_policy = SchedulePolicyKind::kLpm;
  opt.config.max_running_requests = 1;
  SchedulerHarness h(opt);
  PromptGen gen(8);
  const auto shared = gen.Tokens(40);
  h.Add(SchedulerHarness::Greedy(1, Concat(shared, gen.Tokens(3)), 2));
  h.RunUntilIdle();                                        // the tree now holds `shared`
  h.Add(SchedulerHarness::Greedy(2, gen.Tokens(10), 50));  // runs, and holds the only slot
  h.Step();
  h.Add(SchedulerHarness::Greedy(3, Concat(shared, gen.Tokens(5)), 4));  // must wait
  h.Step();
  const SchedulerStats s = h.scheduler().GetStats();
  ASSERT_EQ(s.waiting_requests, 1);
  EXPECT_EQ(s.waiting_tokens, 45);
  EXPECT_EQ(s.waiting_uncached_tokens, 5);
  h.RunUntilIdle();
  EXPECT_EQ(h.scheduler().GetStats().waiting_tokens, 0);
}

TEST(SchedulerLifecycleTest, AbortsInterleavedWithWorkLeaveNoLeaks) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    HarnessOptions opt{.config = SmallConfig()};
    opt.config.chunked_prefill_size = 16;
    opt.config.max_total_tokens = 300;
    opt.config.init_new_token_ratio = 0.05;
    opt.config.page_size = seed % 3 == 0 ? 4 : 1;
    SchedulerHarness h(opt);
    PromptGen gen(seed);
    const auto shared = gen.Tokens(40);
    for (uint64_t i = 0; i < 12; ++i) {
      h.Add(SchedulerHarness::Greedy(i, Concat(shared, gen.Tokens(gen.Uniform(1, 60))),
                                     static_cast<int32_t>(gen.Uniform(1, 50))));
    }
    for (int step = 0; step < 400 && h.scheduler().HasWork(); ++step) {
      if (gen.Uniform(0, 3) == 0) h.scheduler().Abort(gen.Uniform(0, 11));
      h.Step();
      if (HasFatalFailure()) return;
    }
    h.RunUntilIdle();
    if (HasFatalFailure()) return;
    for (uint64_t i = 0; i < 12; ++i) EXPECT_TRUE(h.finished(i));
  }
}

// Requests that can never run are refused before they reach the scheduler (the engine's
// validator, tests/engine); a request with no max_new_tokens can still outgrow the pool.
TEST(SchedulerLifecycleTest, UnlimitedRequestEndsWhenThePoolIsExhausted) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.max_total_tokens = 200;
  opt.context_length = 256;
  SchedulerHarness h(opt);
  PromptGen gen(8);
  const auto ok_prompt = gen.Tokens(20);
  h.Add(SchedulerHarness::Greedy(6, ok_prompt, 5));
  h.RunUntilIdle();
  EXPECT_EQ(h.result(6).ids, h.runner().ReferenceGreedy(ok_prompt, 5));
  // Unlimited max_new_tokens in a pool smaller than the context: it runs until the pool is
  // exhausted, then ends with an abort that says so (keeping what it generated).
  RequestInput unlimited = SchedulerHarness::Greedy(7, gen.Tokens(100), 1);
  unlimited.params.max_new_tokens.reset();
  h.Add(std::move(unlimited));
  h.RunUntilIdle();
  ASSERT_TRUE(h.result(7).finish->is_abort());
  EXPECT_NE(h.result(7).finish->matched_text.find("exhausted"), std::string::npos);
  EXPECT_EQ(h.result(7).ids.size(), 101u);
}

TEST(SchedulerLifecycleTest, UnlimitedMaxNewTokensStopsAtTheContextLength) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.context_length = 64;
  SchedulerHarness h(opt);
  PromptGen gen(8);
  RequestInput unlimited = SchedulerHarness::Greedy(1, gen.Tokens(48), 1);
  unlimited.params.max_new_tokens.reset();
  h.Add(std::move(unlimited));
  h.RunUntilIdle();
  EXPECT_EQ(*h.result(1).finish, FinishReason::Length(16));
}

TEST(SchedulerLifecycleTest, ForwardFailureAbortsTheBatchAndFreesItsSlots) {
  for (int32_t page : {1, 4}) {
    HarnessOptions opt{.config = SmallConfig()};
    opt.config.page_size = page;
    opt.config.chunked_prefill_size = 16;
    SchedulerHarness h(opt);
    PromptGen gen(9);
    h.Add(SchedulerHarness::Greedy(1, gen.Tokens(10), 20));
    h.Add(SchedulerHarness::Greedy(2, gen.Tokens(50), 20));
    h.Step();
    h.Step();
    h.runner().FailNextForward();
    Status s = h.scheduler().Step();
    EXPECT_EQ(s.code(), StatusCode::kInternal);
    ASSERT_TRUE(h.scheduler().CheckInvariants().ok());
    EXPECT_TRUE(h.result(1).finish->is_abort());
    EXPECT_TRUE(h.result(2).finish->is_abort());
    const auto prompt = gen.Tokens(30);
    h.Add(SchedulerHarness::Greedy(3, prompt, 5));
    h.RunUntilIdle();
    EXPECT_EQ(h.result(3).ids, h.runner().ReferenceGreedy(prompt, 5));
  }
}

TEST(SchedulerLifecycleTest, FlushCacheOnlyWhenIdle) {
  SchedulerHarness h;
  PromptGen gen(10);
  h.Add(SchedulerHarness::Greedy(1, gen.Tokens(50), 5));
  EXPECT_EQ(h.scheduler().FlushCache().code(), StatusCode::kAborted);
  h.RunUntilIdle();
  EXPECT_GT(h.scheduler().cache().TotalSize(), 0);
  EXPECT_TRUE(h.scheduler().FlushCache().ok());
  EXPECT_EQ(h.scheduler().cache().TotalSize(), 0);
  EXPECT_EQ(h.scheduler().pool().available(), h.scheduler().pool().size());
  h.Add(SchedulerHarness::Greedy(2, gen.Tokens(50), 5));
  h.RunUntilIdle();
  EXPECT_TRUE(h.finished(2));
}

TEST(SchedulerLifecycleTest, CachedTokensIsThePageAlignedSharedPrefix) {
  for (int32_t page : {1, 8}) {
    HarnessOptions opt{.config = SmallConfig()};
    opt.config.page_size = page;
    SchedulerHarness h(opt);
    PromptGen gen(11);
    const auto shared = gen.Tokens(45);
    const auto first = Concat(shared, gen.Tokens(10));
    const auto second = Concat(shared, {60, 61, 62});
    h.Add(SchedulerHarness::Greedy(1, first, 5));
    h.RunUntilIdle();
    h.Add(SchedulerHarness::Greedy(2, second, 5));
    h.RunUntilIdle();
    EXPECT_EQ(h.result(1).cached_tokens, 0);
    EXPECT_EQ(h.result(2).cached_tokens, 45 / page * page);
    EXPECT_EQ(h.result(2).ids, h.runner().ReferenceGreedy(second, 5));
    // The same prompt again: everything but the last token comes from the cache.
    h.Add(SchedulerHarness::Greedy(3, second, 5));
    h.RunUntilIdle();
    EXPECT_EQ(h.result(3).cached_tokens, (48 - 1) / page * page);
    EXPECT_EQ(h.result(3).ids, h.result(2).ids);
  }
}

}  // namespace
}  // namespace radixlm::testing
