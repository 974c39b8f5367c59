// Prefill deferral (scheduler/prefill_deferral.h): the estimator, the rule, and the scheduler
// running short decodes to completion before a long prefill, on a clock that the fake runner's
// work advances (10 ms a forward pass plus 2 ms a token), so every decision is deterministic.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "scheduler/prefill_deferral.h"
#include "scheduler_harness.h"

namespace radixlm::testing {
namespace {

TEST(StepTimes, AveragesPrefillPerTokenAndDecodeSteps) {
  StepTimes t;
  EXPECT_FALSE(t.PrefillSeconds(100).has_value());
  EXPECT_FALSE(t.DecodeSeconds(10).has_value());
  t.Observe(/*prefill_tokens=*/32, /*decode_rows=*/0, 1.0);  // too short to count
  EXPECT_FALSE(t.PrefillSeconds(100).has_value());
  t.Observe(200, 0, 0.4);
  EXPECT_DOUBLE_EQ(*t.PrefillSeconds(100), 0.2);
  // Before a decode-only step: a step costs kDecodeStepPrefillTokens prefill tokens.
  EXPECT_DOUBLE_EQ(*t.DecodeSeconds(10), 10 * StepTimes::kDecodeStepPrefillTokens * 0.002);
  t.Observe(0, 3, 0.05);
  EXPECT_DOUBLE_EQ(*t.DecodeSeconds(10), 0.5);
  t.Observe(0, 3, 0.09);  // moves a quarter of the way
  EXPECT_DOUBLE_EQ(*t.decode_step_seconds(), 0.06);
  t.Observe(400, 2, 0.4);
  EXPECT_DOUBLE_EQ(*t.prefill_token_seconds(), 0.002 + 0.25 * (0.001 - 0.002));
  t.Observe(0, 0, 5.0);  // nothing ran: no sample
  t.Observe(0, 1, -1.0);
  EXPECT_DOUBLE_EQ(*t.decode_step_seconds(), 0.06);
}

TEST(ShouldDeferPrefill, OnlyLongPrefillsBehindShorterDecodes) {
  StepTimes t;
  EXPECT_FALSE(ShouldDeferPrefill(t, 1000, 5, 1.0));    // nothing timed yet
  t.Observe(1000, 0, 1.0);                              // 1 ms a prompt token
  t.Observe(0, 1, 0.02);                                // 20 ms a decode step
  EXPECT_TRUE(ShouldDeferPrefill(t, 2000, 50, 1.0));    // 1 s of decodes before 2 s of prefill
  EXPECT_FALSE(ShouldDeferPrefill(t, 2000, 150, 1.0));  // 3 s of decodes: the prefill goes first
  EXPECT_FALSE(ShouldDeferPrefill(t, 900, 5, 1.0));     // 0.9 s: not long
  EXPECT_TRUE(ShouldDeferPrefill(t, 900, 5, 0.5));
  EXPECT_FALSE(ShouldDeferPrefill(t, 2000, 50, 0.0));  // disabled
  EXPECT_FALSE(ShouldDeferPrefill(t, 2000, 0, 1.0));   // no decode runs
}

// The scheduler's clock advances with the fake runner's work: 10 ms a forward pass plus 2 ms a
// token.
void UseWorkClock(SchedulerHarness& h) {
  const FakeModelRunner& runner = h.runner();
  h.scheduler().set_clock([&runner] {
    return 0.010 * static_cast<double>(runner.forward_calls()) +
           0.002 * static_cast<double>(runner.tokens_computed());
  });
}

struct RunOrder {
  int64_t short_finish_step = -1;      // the decoding request's last token
  int64_t long_first_token_step = -1;  // the long prompt's first token
  int64_t deferred_steps = 0;
};

// Request 1 (300-token prompt, `decode_tokens` outputs) decodes; once it has its first token,
// request 2 (`long_prompt` tokens) arrives, or with `together` both arrive at once (request 2's
// first chunk then shares request 1's last one, so request 2 waits mid-prefill). Both outputs
// must be the reference's.
RunOrder RunTwoRequests(double defer_s, int64_t long_prompt, int32_t decode_tokens,
                        bool together = false) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.defer_long_prefill_s = defer_s;
  SchedulerHarness h(opt);
  const FakeModelRunner& runner = h.runner();
  UseWorkClock(h);
  PromptGen gen(5);
  const std::vector<int32_t> p1 = gen.Tokens(300), p2 = gen.Tokens(long_prompt);
  h.Add(SchedulerHarness::Greedy(1, p1, decode_tokens));
  if (together) h.Add(SchedulerHarness::Greedy(2, p2, 4));
  RunOrder order;
  bool added = together;
  for (int64_t step = 0; step < 10000 && h.scheduler().HasWork(); ++step) {
    h.Step();
    if (::testing::Test::HasFatalFailure()) return order;
    if (!added && !h.result(1).ids.empty()) {
      h.Add(SchedulerHarness::Greedy(2, p2, 4));
      added = true;
    }
    if (order.short_finish_step < 0 && h.finished(1)) order.short_finish_step = step;
    if (order.long_first_token_step < 0 && !h.result(2).ids.empty()) {
      order.long_first_token_step = step;
    }
  }
  EXPECT_FALSE(h.scheduler().HasWork());
  EXPECT_EQ(h.result(1).ids, runner.ReferenceGreedy(p1, decode_tokens));
  EXPECT_EQ(h.result(2).ids, runner.ReferenceGreedy(p2, 4));
  order.deferred_steps = h.scheduler().GetStats().deferred_prefill_steps;
  return order;
}

TEST(SchedulerDeferral, ShortDecodesFinishBeforeALongPrefill) {
  // 1,500 prompt tokens: about 3 s of prefill against 19 decode steps of about 12 ms.
  const RunOrder deferred = RunTwoRequests(/*defer_s=*/1.0, 1500, 20);
  EXPECT_GT(deferred.deferred_steps, 0);
  EXPECT_LT(deferred.short_finish_step, deferred.long_first_token_step);
  // Without deferral the decodes ride along in the prefill's chunks and finish after it.
  const RunOrder riding = RunTwoRequests(0.0, 1500, 20);
  EXPECT_EQ(riding.deferred_steps, 0);
  EXPECT_GT(riding.short_finish_step, riding.long_first_token_step);
}

TEST(SchedulerDeferral, AMidPrefillRequestWaitsAndResumes) {
  const RunOrder deferred = RunTwoRequests(1.0, 1500, 20, /*together=*/true);
  EXPECT_GT(deferred.deferred_steps, 0);
  EXPECT_LT(deferred.short_finish_step, deferred.long_first_token_step);
}

TEST(SchedulerDeferral, ShortPromptsAndLongDecodesAreNotDeferred) {
  const RunOrder short_prompt = RunTwoRequests(1.0, 200, 20);  // 0.4 s of prefill: not long
  EXPECT_EQ(short_prompt.deferred_steps, 0);
  EXPECT_GT(short_prompt.short_finish_step, short_prompt.long_first_token_step);
  const RunOrder long_decode =
      RunTwoRequests(1.0, 1500, 400);  // 4.8 s of decodes: the prefill goes first
  EXPECT_EQ(long_decode.deferred_steps, 0);
  EXPECT_GT(long_decode.short_finish_step, long_decode.long_first_token_step);
}

// Request 1 (300-token prompt, 20 outputs) decodes; once it has its first token, request 2
// (1,500 tokens: about 3 s of prefill, deferred) arrives, and then one step apart the short
// requests 3, 4, ... (100-token prompts, `short_new` outputs each). First-token steps by id.
struct BypassRun {
  int64_t decode_finish_step = -1;
  std::vector<int64_t> first_token_step;  // by request id
};

BypassRun RunBehindDeferredHead(int32_t short_new, int n_short, int32_t max_skips) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.defer_long_prefill_s = 1.0;
  opt.config.schedule_policy = SchedulePolicyKind::kFcfs;  // request 2 stays the head
  opt.config.starvation_max_skips = max_skips;
  SchedulerHarness h(opt);
  const FakeModelRunner& runner = h.runner();
  UseWorkClock(h);
  PromptGen gen(7);
  std::vector<std::vector<int32_t>> prompts = {{}, gen.Tokens(300), gen.Tokens(1500)};
  for (int i = 0; i < n_short; ++i) prompts.push_back(gen.Tokens(100));
  auto max_new = [&](size_t id) { return id == 1 ? 20 : id == 2 ? 4 : short_new; };
  h.Add(SchedulerHarness::Greedy(1, prompts[1], max_new(1)));
  BypassRun run;
  run.first_token_step.assign(prompts.size(), -1);
  size_t next = 0;  // the next request to add (0: request 1 has no token yet)
  for (int64_t step = 0; step < 20000 && h.scheduler().HasWork(); ++step) {
    h.Step();
    if (::testing::Test::HasFatalFailure()) return run;
    if (next == 0 && !h.result(1).ids.empty()) next = 2;
    if (next >= 2 && next < prompts.size()) {
      h.Add(SchedulerHarness::Greedy(next, prompts[next], max_new(next)));
      ++next;
    }
    for (size_t id = 1; id < prompts.size(); ++id) {
      if (run.first_token_step[id] < 0 && !h.result(id).ids.empty()) {
        run.first_token_step[id] = step;
      }
    }
    if (run.decode_finish_step < 0 && h.finished(1)) run.decode_finish_step = step;
  }
  EXPECT_FALSE(h.scheduler().HasWork());
  for (size_t id = 1; id < prompts.size(); ++id) {
    EXPECT_EQ(h.result(id).ids, runner.ReferenceGreedy(prompts[id], max_new(id))) << id;
  }
  EXPECT_GT(h.scheduler().GetStats().deferred_prefill_steps, 0);
  return run;
}

TEST(SchedulerDeferral, ShorterWorkPassesADeferredHead) {
  // 8 outputs after a 0.2 s prefill: less work than the head's 3 s prefill.
  const BypassRun run = RunBehindDeferredHead(/*short_new=*/8, /*n_short=*/2, /*max_skips=*/128);
  for (size_t id : {3, 4}) {
    EXPECT_LT(run.first_token_step[id], run.decode_finish_step) << id;
    EXPECT_LT(run.first_token_step[id], run.first_token_step[2]) << id;
  }
  EXPECT_LT(run.decode_finish_step, run.first_token_step[2]);
}

TEST(SchedulerDeferral, LongerWorkWaitsBehindADeferredHead) {
  // 400 outputs (about 4.8 s of decoding) are more work than the head's prefill.
  const BypassRun run = RunBehindDeferredHead(/*short_new=*/400, /*n_short=*/1, /*max_skips=*/128);
  EXPECT_GT(run.first_token_step[3], run.decode_finish_step);
}

TEST(SchedulerDeferral, AStarvedHeadIsPassedByNobody) {
  // One skip starves the head: request 3 passes it, request 4 (a step later) does not.
  const BypassRun run = RunBehindDeferredHead(/*short_new=*/8, /*n_short=*/2, /*max_skips=*/1);
  EXPECT_LT(run.first_token_step[3], run.decode_finish_step);
  EXPECT_GT(run.first_token_step[4], run.decode_finish_step);
}

// Requests 1 and 2 arrive together, so request 2 (1,500 tokens) waits mid-prefill while
// request 1 (20 outputs) decodes; request 3 (`short_prompt` tokens, 8 outputs) arrives then.
// The steps of request 1's last token and of requests 2's and 3's first.
struct ChunkedRun {
  int64_t decode_finish = -1, first2 = -1, first3 = -1;
};

ChunkedRun RunBehindDeferredChunked(int64_t short_prompt) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.defer_long_prefill_s = 1.0;
  SchedulerHarness h(opt);
  const FakeModelRunner& runner = h.runner();
  UseWorkClock(h);
  PromptGen gen(9);
  const std::vector<int32_t> p1 = gen.Tokens(300), p2 = gen.Tokens(1500),
                             p3 = gen.Tokens(short_prompt);
  h.Add(SchedulerHarness::Greedy(1, p1, 20));
  h.Add(SchedulerHarness::Greedy(2, p2, 4));
  ChunkedRun run;
  bool added = false;
  for (int64_t step = 0; step < 10000 && h.scheduler().HasWork(); ++step) {
    h.Step();
    if (::testing::Test::HasFatalFailure()) return run;
    if (!added && !h.result(1).ids.empty()) {
      h.Add(SchedulerHarness::Greedy(3, p3, 8));
      added = true;
    }
    if (run.decode_finish < 0 && h.finished(1)) run.decode_finish = step;
    if (run.first2 < 0 && !h.result(2).ids.empty()) run.first2 = step;
    if (run.first3 < 0 && !h.result(3).ids.empty()) run.first3 = step;
  }
  EXPECT_FALSE(h.scheduler().HasWork());
  EXPECT_GT(h.scheduler().GetStats().deferred_prefill_steps, 0);
  EXPECT_LT(run.decode_finish, run.first2);
  EXPECT_EQ(h.result(1).ids, runner.ReferenceGreedy(p1, 20));
  EXPECT_EQ(h.result(2).ids, runner.ReferenceGreedy(p2, 4));
  EXPECT_EQ(h.result(3).ids, runner.ReferenceGreedy(p3, 8));
  return run;
}

TEST(SchedulerDeferral, ShorterWorkPassesADeferredChunkedPrefillWhole) {
  const ChunkedRun fits = RunBehindDeferredChunked(100);  // one chunk: passes
  EXPECT_LT(fits.first3, fits.decode_finish);
  // 400 tokens (0.8 s, not long) need two chunks of 256: admitting them would make a second
  // request mid-prefill, so they wait.
  const ChunkedRun two_chunks = RunBehindDeferredChunked(400);
  EXPECT_GT(two_chunks.first3, two_chunks.decode_finish);
}

}  // namespace
}  // namespace radixlm::testing
