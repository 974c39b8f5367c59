// Reclaimable (session) pins: a finished request's pin_on_finish keeps its KV in the tree, but
// the scheduler releases such pins, oldest first, when admission or a decode needs the memory,
// so session KV never makes a request wait, retract or fail. Hard pins (PinPrefix) stay.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "scheduler_harness.h"

namespace radixlm::testing {
namespace {

HarnessOptions SmallPool(int64_t tokens) {
  HarnessOptions o{.config = SmallConfig()};
  o.config.max_total_tokens = tokens;
  return o;
}

// Steps until nothing is left to do (pins may remain, so not RunUntilIdle's idle check).
void Drain(SchedulerHarness& h, int64_t max_steps = 20000) {
  for (int64_t i = 0; i < max_steps && h.scheduler().HasWork(); ++i) {
    h.Step();
    if (::testing::Test::HasFatalFailure()) return;
  }
  ASSERT_FALSE(h.scheduler().HasWork()) << "did not finish in " << max_steps << " steps";
}

// Runs `n_turns` session-like requests of `prompt_len` tokens (ids 1.., pins 1..), one after the
// other, each pinned on finish. Returns their prompts.
std::vector<std::vector<int32_t>> RunPinnedTurns(SchedulerHarness& h, PromptGen& gen, int n_turns,
                                                 int64_t prompt_len, int32_t max_new) {
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < n_turns; ++i) {
    RequestInput in = SchedulerHarness::Greedy(i + 1, gen.Tokens(prompt_len), max_new);
    in.pin_on_finish = static_cast<uint64_t>(i + 1);
    prompts.push_back(in.input_ids);
    h.Add(std::move(in));
    Drain(h);
    EXPECT_FALSE(h.result(i + 1).finish->is_abort());
  }
  return prompts;
}

// The output of one request on a fresh scheduler (the reference for a request that ran under
// memory pressure).
std::vector<int32_t> Reference(std::vector<int32_t> prompt, int32_t max_new) {
  SchedulerHarness fresh;
  fresh.Add(SchedulerHarness::Greedy(1, std::move(prompt), max_new));
  fresh.RunUntilIdle();
  return fresh.result(1).ids;
}

TEST(SchedulerSessionPinsTest, AdmissionReleasesTheOldestPinsItNeeds) {
  SchedulerHarness h(SmallPool(512));
  PromptGen gen(1);
  RunPinnedTurns(h, gen, 3, 100, 4);  // ~312 tokens pinned, ~200 free
  Scheduler& s = h.scheduler();
  EXPECT_EQ(s.reclaimable_pins(), 3u);
  EXPECT_EQ(s.cache().evictable_size(), 0);
  // Needs 304 tokens: more than is free, less than free + the oldest turn's KV.
  const std::vector<int32_t> big = gen.Tokens(300);
  h.Add(SchedulerHarness::Greedy(10, big, 4));
  Drain(h);
  ASSERT_FALSE(h.result(10).finish->is_abort());
  EXPECT_EQ(h.result(10).ids, Reference(big, 4));
  EXPECT_EQ(s.GetStats().retractions, 0);
  EXPECT_GE(s.GetStats().reclaimed_pins, 1);
  EXPECT_FALSE(s.UnpinPrefix(1));  // the oldest went first
  EXPECT_TRUE(s.UnpinPrefix(3));   // the newest was not needed
  EXPECT_EQ(static_cast<int64_t>(s.reclaimable_pins()), 2 - s.GetStats().reclaimed_pins);
}

TEST(SchedulerSessionPinsTest, ADecodeReleasesSessionPinsRatherThanFailing) {
  SchedulerHarness h(SmallPool(512));
  PromptGen gen(2);
  RunPinnedTurns(h, gen, 4, 70, 4);  // ~292 tokens pinned, ~220 free
  // A lone request (admitted: it fits the pool) whose decode outgrows what is free: without
  // the pins giving way it would be aborted as the pool's last resort.
  const std::vector<int32_t> prompt = gen.Tokens(40);
  h.Add(SchedulerHarness::Greedy(10, prompt, 300));
  Drain(h);
  Scheduler& s = h.scheduler();
  ASSERT_FALSE(h.result(10).finish->is_abort()) << h.result(10).finish->matched_text;
  EXPECT_EQ(h.result(10).ids, Reference(prompt, 300));
  EXPECT_EQ(s.GetStats().retractions, 0);
  EXPECT_GE(s.GetStats().reclaimed_pins, 1);
  EXPECT_FALSE(s.UnpinPrefix(1));  // oldest first
}

TEST(SchedulerSessionPinsTest, ManyPinsLargerThanThePoolNeverBlockRequests) {
  // 12 turns of 120 tokens: three pools' worth of pins, each turn admitted and completed.
  SchedulerHarness h(SmallPool(512));
  PromptGen gen(3);
  RunPinnedTurns(h, gen, 12, 120, 6);
  Scheduler& s = h.scheduler();
  for (uint64_t id = 1; id <= 12; ++id) ASSERT_TRUE(h.finished(id));
  EXPECT_GE(s.GetStats().reclaimed_pins, 8);
  EXPECT_EQ(s.GetStats().aborted_requests, 0);
  EXPECT_EQ(s.GetStats().retractions, 0);
  // Releasing the pins still held (a session close) leaves nothing protected.
  for (uint64_t pin = 1; pin <= 12; ++pin) s.UnpinPrefix(pin);
  EXPECT_EQ(s.reclaimable_pins(), 0u);
  h.CheckIdle();
}

TEST(SchedulerSessionPinsTest, UnpinnedCacheIsEvictedBeforeSessionPins) {
  SchedulerHarness h(SmallPool(512));
  PromptGen gen(4);
  RunPinnedTurns(h, gen, 1, 100, 4);
  // Unpinned cache: a request without a pin.
  h.Add(SchedulerHarness::Greedy(5, gen.Tokens(150), 4));
  Drain(h);
  // Needs what is free plus the unpinned cache, not the pinned turn.
  h.Add(SchedulerHarness::Greedy(6, gen.Tokens(300), 4));
  Drain(h);
  EXPECT_EQ(h.scheduler().GetStats().reclaimed_pins, 0);
  EXPECT_TRUE(h.scheduler().UnpinPrefix(1));
}

TEST(SchedulerSessionPinsTest, HardPinsStayAndRefuseAFlushReclaimablePinsDoNot) {
  SchedulerHarness h(SmallPool(512));
  PromptGen gen(5);
  const std::vector<std::vector<int32_t>> prompts = RunPinnedTurns(h, gen, 3, 100, 4);
  Scheduler& s = h.scheduler();
  // Pin 2's prefix again under a hard pin: it stays when memory is short.
  ASSERT_EQ(*s.PinPrefix(100, prompts[1]), 100);
  h.Add(SchedulerHarness::Greedy(10, gen.Tokens(350), 4));
  Drain(h);
  ASSERT_FALSE(h.result(10).finish->is_abort());
  EXPECT_EQ(s.pinned_prefixes(), s.reclaimable_pins() + 1);
  EXPECT_EQ(s.FlushCache().code(), StatusCode::kAborted);  // the hard pin
  EXPECT_TRUE(s.UnpinPrefix(100));
  EXPECT_TRUE(s.FlushCache().ok());  // reclaimable pins go with the cache
  EXPECT_EQ(s.pinned_prefixes(), 0u);
  EXPECT_EQ(s.pool().available(), s.pool().size());
}

}  // namespace
}  // namespace radixlm::testing
