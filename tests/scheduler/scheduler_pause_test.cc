// Pausing generation (abort / retract / in_place, then continue) and the waiting / running
// timeouts, over the fake model runner.
#include <gtest/gtest.h>

#include "scheduler_harness.h"

namespace radixlm::testing {
namespace {

using PauseMode = Scheduler::PauseMode;

struct Workload {
  std::vector<std::vector<int32_t>> prompts;
  int32_t max_new_tokens = 24;
};

Workload AddRequests(SchedulerHarness& h, int n, uint64_t seed) {
  Workload w;
  PromptGen gen(seed);
  for (int i = 0; i < n; ++i) {
    w.prompts.push_back(gen.Tokens(10 + i));
    h.Add(SchedulerHarness::Greedy(static_cast<uint64_t>(i), w.prompts.back(), w.max_new_tokens));
  }
  return w;
}

void ExpectReferenceOutputs(SchedulerHarness& h, const Workload& w) {
  for (size_t i = 0; i < w.prompts.size(); ++i) {
    EXPECT_EQ(h.result(i).ids, h.runner().ReferenceGreedy(w.prompts[i], w.max_new_tokens)) << i;
    ASSERT_TRUE(h.result(i).finish.has_value()) << i;
    EXPECT_EQ(*h.result(i).finish, FinishReason::Length(w.max_new_tokens)) << i;
  }
}

TEST(SchedulerPauseTest, InPlacePauseFreezesRequestsAndContinueFinishesThemUnchanged) {
  SchedulerHarness h;
  const Workload w = AddRequests(h, 6, 1);
  for (int i = 0; i < 5; ++i) h.Step();
  const SchedulerStats before = h.scheduler().GetStats();
  ASSERT_GT(before.running_requests, 0);
  std::vector<size_t> tokens_before;
  for (size_t i = 0; i < w.prompts.size(); ++i) tokens_before.push_back(h.result(i).ids.size());

  h.scheduler().Pause(PauseMode::kInPlace);
  EXPECT_TRUE(h.scheduler().paused());
  EXPECT_FALSE(h.scheduler().HasRunnableWork());
  // A request arriving while paused queues and does not run.
  PromptGen gen(99);
  const std::vector<int32_t> late_prompt = gen.Tokens(12);
  h.Add(SchedulerHarness::Greedy(100, late_prompt, w.max_new_tokens));
  const int64_t forwards = h.runner().forward_calls();
  for (int i = 0; i < 10; ++i) h.Step();
  EXPECT_EQ(h.runner().forward_calls(), forwards);
  for (size_t i = 0; i < w.prompts.size(); ++i) {
    EXPECT_EQ(h.result(i).ids.size(), tokens_before[i]) << i;
  }
  const SchedulerStats paused = h.scheduler().GetStats();
  EXPECT_TRUE(paused.paused);
  EXPECT_EQ(paused.running_requests, before.running_requests);  // KV kept, still running
  EXPECT_EQ(paused.retractions, 0);
  EXPECT_EQ(paused.waiting_requests, before.waiting_requests + 1);
  EXPECT_FALSE(h.finished(100));

  h.scheduler().Continue();
  EXPECT_FALSE(h.scheduler().paused());
  h.RunUntilIdle();
  ExpectReferenceOutputs(h, w);
  EXPECT_EQ(h.result(100).ids, h.runner().ReferenceGreedy(late_prompt, w.max_new_tokens));
  EXPECT_EQ(h.scheduler().GetStats().retractions, 0);
}

TEST(SchedulerPauseTest, RetractPauseReleasesKvAndContinueResumesWithUnchangedOutput) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.chunked_prefill_size = 16;  // a long prompt is mid chunked prefill when paused
  SchedulerHarness h(opt);
  Workload w = AddRequests(h, 4, 2);
  PromptGen gen(7);
  w.prompts.push_back(gen.Tokens(200));
  h.Add(SchedulerHarness::Greedy(4, w.prompts.back(), w.max_new_tokens));
  for (int i = 0; i < 4; ++i) h.Step();
  const SchedulerStats before = h.scheduler().GetStats();
  ASSERT_GT(before.running_requests, 0);
  ASSERT_EQ(before.prefilling_requests, 1);

  h.scheduler().Pause(PauseMode::kRetract);
  const SchedulerStats paused = h.scheduler().GetStats();
  EXPECT_EQ(paused.running_requests, 0);
  EXPECT_EQ(paused.prefilling_requests, 0);
  EXPECT_EQ(paused.waiting_requests, 5);
  EXPECT_EQ(paused.retractions, before.running_requests + 1);
  // Nothing holds KV: every slot is free or in the tree, none of it locked.
  h.CheckIdle();
  const int64_t forwards = h.runner().forward_calls();
  for (int i = 0; i < 5; ++i) h.Step();
  EXPECT_EQ(h.runner().forward_calls(), forwards);

  h.scheduler().Continue();
  h.RunUntilIdle();
  ExpectReferenceOutputs(h, w);
}

TEST(SchedulerPauseTest, CacheFlushesAfterARetractPauseButNotAnInPlaceOne) {
  SchedulerHarness h;
  const Workload w = AddRequests(h, 4, 6);
  for (int i = 0; i < 4; ++i) h.Step();
  h.scheduler().Pause(PauseMode::kInPlace);
  Status refused = h.scheduler().FlushCache();
  EXPECT_EQ(refused.code(), StatusCode::kAborted);
  EXPECT_NE(refused.message().find("requests are waiting or running"), std::string::npos);

  h.scheduler().Pause(PauseMode::kRetract);
  ASSERT_GT(h.scheduler().cache().TotalSize(), 0);
  const int64_t prefilled = h.scheduler().GetStats().prefill_tokens;
  ASSERT_TRUE(h.scheduler().FlushCache().ok());
  EXPECT_EQ(h.scheduler().cache().TotalSize(), 0);
  EXPECT_EQ(h.scheduler().pool().available(), h.scheduler().pool().size());
  h.scheduler().Continue();
  h.RunUntilIdle();
  ExpectReferenceOutputs(h, w);
  // Every request recomputed its prompt and its outputs so far.
  EXPECT_GT(h.scheduler().GetStats().prefill_tokens, prefilled);
}

TEST(SchedulerPauseTest, NoFlushWhileUnpausedRequestsWait) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.max_running_requests = 1;
  SchedulerHarness h(opt);
  AddRequests(h, 2, 8);
  EXPECT_FALSE(h.scheduler().FlushCache().ok());  // live, not paused
}

TEST(SchedulerPauseTest, AbortPauseFinishesEveryLiveRequestAndKeepsNewOnesQueued) {
  SchedulerHarness h;
  const Workload w = AddRequests(h, 5, 3);
  for (int i = 0; i < 3; ++i) h.Step();
  h.scheduler().Pause(PauseMode::kAbort);
  for (size_t i = 0; i < w.prompts.size(); ++i) {
    ASSERT_TRUE(h.finished(i)) << i;
    EXPECT_TRUE(h.result(i).finish->is_abort()) << i;
    EXPECT_EQ(h.result(i).finish->status_code, 0);
  }
  EXPECT_EQ(h.scheduler().GetStats().aborted_requests, 5);
  h.CheckIdle();

  PromptGen gen(5);
  const std::vector<int32_t> prompt = gen.Tokens(9);
  h.Add(SchedulerHarness::Greedy(50, prompt, 8));
  for (int i = 0; i < 5; ++i) h.Step();
  EXPECT_FALSE(h.finished(50));
  h.scheduler().Continue();
  h.RunUntilIdle();
  EXPECT_EQ(h.result(50).ids, h.runner().ReferenceGreedy(prompt, 8));
}

TEST(SchedulerPauseTest, InPlacePauseCanBeTurnedIntoAnAbort) {
  SchedulerHarness h;
  AddRequests(h, 3, 4);
  for (int i = 0; i < 3; ++i) h.Step();
  h.scheduler().Pause(PauseMode::kInPlace);
  h.scheduler().Pause(PauseMode::kAbort);
  for (uint64_t i = 0; i < 3; ++i) EXPECT_TRUE(h.result(i).finish->is_abort()) << i;
  EXPECT_TRUE(h.scheduler().paused());
  h.CheckIdle();
}

class SchedulerTimeoutTest : public ::testing::Test {
 protected:
  double now_ = 1000.0;
};

TEST_F(SchedulerTimeoutTest, WaitingTimeoutFinishesQueuedRequestsWith503) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.max_running_requests = 1;
  opt.config.waiting_timeout_s = 5;
  SchedulerHarness h(opt);
  h.scheduler().set_clock([this] { return now_; });
  PromptGen gen(11);
  const std::vector<int32_t> first = gen.Tokens(10);
  h.Add(SchedulerHarness::Greedy(1, first, 40));
  h.Add(SchedulerHarness::Greedy(2, gen.Tokens(10), 40));
  h.Step();  // 1 runs, 2 waits
  now_ += 4;
  h.Step();
  EXPECT_FALSE(h.finished(2));
  now_ += 2;  // 2 has waited 6 s
  h.Step();
  ASSERT_TRUE(h.finished(2));
  EXPECT_EQ(*h.result(2).finish, FinishReason::Abort("Request waiting timeout reached.", 503));
  EXPECT_TRUE(h.result(2).ids.empty());
  EXPECT_FALSE(h.finished(1));  // running: the waiting timeout does not apply
  h.RunUntilIdle();
  EXPECT_EQ(h.result(1).ids, h.runner().ReferenceGreedy(first, 40));
}

TEST_F(SchedulerTimeoutTest, RunningTimeoutAbortsRequestsThatRanTooLong) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.running_timeout_s = 3;
  SchedulerHarness h(opt);
  h.scheduler().set_clock([this] { return now_; });
  PromptGen gen(12);
  h.Add(SchedulerHarness::Greedy(1, gen.Tokens(10), 100));
  h.Step();
  h.Step();
  now_ += 2;
  h.Add(SchedulerHarness::Greedy(2, gen.Tokens(10), 100));
  h.Step();
  now_ += 1.5;  // 1 has run 3.5 s, 2 only 1.5 s
  h.Step();
  ASSERT_TRUE(h.finished(1));
  EXPECT_EQ(*h.result(1).finish, FinishReason::Abort("Request running timeout reached."));
  EXPECT_FALSE(h.result(1).ids.empty());  // what it produced was sent before the abort
  EXPECT_FALSE(h.finished(2));
  now_ += 10;
  h.Step();
  EXPECT_TRUE(h.result(2).finish->is_abort());
  h.CheckIdle();
}

TEST_F(SchedulerTimeoutTest, NoTimeoutFiresWhilePaused) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.waiting_timeout_s = 1;
  opt.config.running_timeout_s = 1;
  SchedulerHarness h(opt);
  h.scheduler().set_clock([this] { return now_; });
  PromptGen gen(13);
  h.Add(SchedulerHarness::Greedy(1, gen.Tokens(10), 50));
  h.Step();
  h.scheduler().Pause(PauseMode::kInPlace);
  h.Add(SchedulerHarness::Greedy(2, gen.Tokens(10), 50));
  now_ += 100;
  for (int i = 0; i < 3; ++i) h.Step();
  EXPECT_FALSE(h.finished(1));
  EXPECT_FALSE(h.finished(2));
  h.scheduler().Continue();  // the time spent paused counts, as in SGLang
  h.Step();
  EXPECT_TRUE(h.result(1).finish->is_abort());
  EXPECT_EQ(h.result(2).finish->status_code, 503);
}

TEST(SchedulerTimeoutConfigTest, NegativeTimeoutsAreRejected) {
  SchedulerConfig c = SmallConfig();
  c.waiting_timeout_s = -1;
  Status s = c.Validate();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("waiting_timeout_s"), std::string::npos) << s.message();
  c.waiting_timeout_s = 0;
  c.running_timeout_s = -0.5;
  s = c.Validate();
  EXPECT_NE(s.message().find("running_timeout_s"), std::string::npos) << s.message();
  c.running_timeout_s = 2.5;
  EXPECT_TRUE(c.Validate().ok());
}

}  // namespace
}  // namespace radixlm::testing
