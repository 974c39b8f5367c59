// Engine::PauseGeneration / ContinueGeneration and the timeout flags, over the fake runner: the
// commands reach the scheduler thread, streams see the effects, the flags are validated.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "engine/engine.h"
#include "engine/scheduler_bridge.h"
#include "fake_engine.h"
#include "testing/fake_model_runner.h"
#include "testing/fake_token_text.h"

namespace radixlm {
namespace {

using engine_testing::FakeEngine;
using engine_testing::Greedy;
using engine_testing::Prompt;

// Every forward takes at least 200 us, so requests are still running when a test acts.
FakeEngine MakeEngine(EngineConfig config = {}) {
  return engine_testing::MakeEngine(config, std::chrono::microseconds(200));
}

TEST(EnginePauseTest, InPlacePauseHoldsStreamsUntilContinue) {
  FakeEngine fe = MakeEngine();
  std::vector<std::shared_ptr<GenerateStream>> streams;
  for (int i = 0; i < 4; ++i) {
    auto s = fe.engine->Submit(Greedy(Prompt(20, i), 200));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    streams.push_back(*s);
  }
  // Wait for a first token, so the requests are running when the pause lands.
  bool timed_out = false;
  ASSERT_TRUE(streams[0]->NextFor(std::chrono::seconds(10), &timed_out).has_value());
  ASSERT_TRUE(fe.engine->PauseGeneration(PauseMode::kInPlace).ok());
  EXPECT_TRUE(fe.engine->GetStats().scheduler.paused);
  // Submitting while paused works; the request queues.
  auto late = fe.engine->Submit(Greedy(Prompt(20, 9), 10));
  ASSERT_TRUE(late.ok());
  // Drain what was produced before the pause, then nothing more arrives.
  while (streams[0]->TryNext().has_value()) {
  }
  const int64_t forwards = fe.engine->GetStats().scheduler.forward_passes;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(fe.engine->GetStats().scheduler.forward_passes, forwards);
  EXPECT_FALSE(streams[0]->TryNext().has_value());
  EXPECT_FALSE((*late)->ended());

  ASSERT_TRUE(fe.engine->ContinueGeneration().ok());
  EXPECT_FALSE(fe.engine->GetStats().scheduler.paused);
  for (int i = 1; i < 4; ++i) {
    std::vector<GenerateResult> r = streams[i]->Collect();
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].output_ids, fe.runner->ReferenceGreedy(Prompt(20, i), 200)) << i;
  }
  std::vector<GenerateResult> r = (*late)->Collect();
  EXPECT_EQ(r[0].output_ids, fe.runner->ReferenceGreedy(Prompt(20, 9), 10));
}

TEST(EnginePauseTest, AbortPauseEndsEveryStreamBeforeItAnswers) {
  FakeEngine fe = MakeEngine();
  std::vector<std::shared_ptr<GenerateStream>> streams;
  for (int i = 0; i < 3; ++i) streams.push_back(*fe.engine->Submit(Greedy(Prompt(20, i), 500)));
  ASSERT_TRUE(fe.engine->PauseGeneration(PauseMode::kAbort).ok());
  for (auto& s : streams) {
    EXPECT_TRUE(s->ended());
    std::vector<GenerateResult> r = s->Collect();
    ASSERT_TRUE(r[0].finish_reason.has_value());
    EXPECT_TRUE(r[0].finish_reason->is_abort());
  }
  EXPECT_EQ(fe.engine->GetStats().live_requests, 0);
  ASSERT_TRUE(fe.engine->ContinueGeneration().ok());
}

TEST(EnginePauseTest, TimeoutFlagsReachTheSchedulerAndNegativeOnesAreRejected) {
  EngineConfig c;
  c.waiting_timeout_s = 1.5;
  c.running_timeout_s = 30;
  auto sc = ToSchedulerConfig(c, 1 << 14, 2048);
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_EQ(sc->waiting_timeout_s, 1.5);
  EXPECT_EQ(sc->running_timeout_s, 30);
  EXPECT_EQ(ToEngineSettings(*sc).waiting_timeout_s, 1.5);
  c.running_timeout_s = -1;
  EXPECT_NE(ToSchedulerConfig(c, 1 << 14, 2048).status().message().find("--running-timeout"),
            std::string::npos);
}

TEST(EnginePauseTest, WaitingTimeoutEndsAQueuedRequestWithStatus503) {
  EngineConfig c;
  c.max_running_requests = 1;
  c.waiting_timeout_s = 0.05;
  FakeEngine fe = MakeEngine(c);
  auto running = fe.engine->Submit(Greedy(Prompt(20, 1), 1000));  // 1000 forwards of >= 200 us
  auto queued = fe.engine->Submit(Greedy(Prompt(20, 2), 5));
  ASSERT_TRUE(running.ok() && queued.ok());
  std::vector<GenerateResult> r = (*queued)->Collect();
  ASSERT_TRUE(r[0].finish_reason.has_value());
  EXPECT_EQ(*r[0].finish_reason, FinishReason::Abort("Request waiting timeout reached.", 503));
  fe.engine->Abort((*running)->rid());
}

}  // namespace
}  // namespace radixlm
