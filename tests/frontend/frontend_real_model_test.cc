// The frontend on the real default model (gemma-3-270m): a forked program prefills its shared
// prefix exactly once (engine stats), and roles render with the model's chat template.
//
// Runs only when RADIXLM_DEFAULT_MODEL names an existing file; skipped under the sanitizers.
#include <gtest/gtest.h>

#include "frontend/frontend.h"
#include "support/real_model.h"

namespace radixlm::frontend {
namespace {

class FrontendRealModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = testing::RealModelSkipReason(); !why.empty()) GTEST_SKIP() << why;
    EngineConfig c;
    c.model_path = testing::RealModelPath();
    c.max_total_tokens = 8192;
    c.context_length = 2048;
    auto e = Engine::Create(c);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    auto b = EngineBackend::Create(engine_.get());
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    backend_ = std::move(b).value();
  }

  std::unique_ptr<Engine> engine_;
  std::unique_ptr<EngineBackend> backend_;
};

TEST_F(FrontendRealModelTest, AForkedProgramPrefillsItsSharedPrefixExactlyOnce) {
  const std::string question =
      "A farmer has 17 sheep. All but 9 run away. Then he buys twice as many as he has left. "
      "How many sheep does he have now? Think about it step by step, carefully, and explain.";
  int64_t prefix_tokens = 0;
  std::vector<GenerateReply> replies;
  ProgramResult r = frontend::Run(*backend_, {.default_gen = {.temperature = 0.0f}}, [&](State& s) {
    s += system("You are a careful reasoner.");
    s += user(question);
    ForkGroup branches = s.fork(3);
    for (size_t i = 0; i < branches.size(); ++i) {
      branches[i] +=
          assistant("Approach " + std::to_string(i + 1) + ":" + gen("idea", {.max_tokens = 12}));
    }
    for (State& b : branches) replies.push_back(*b.gen_reply("idea"));
    join(branches);
  });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.text.find("<start_of_turn>user\nYou are a careful reasoner.\n\n"), 0u);
  const BackendCounters c = backend_->counters();
  ASSERT_EQ(c.commit_calls, 1);
  prefix_tokens = c.prompt_tokens -
                  (replies[0].prompt_tokens + replies[1].prompt_tokens + replies[2].prompt_tokens);
  ASSERT_GT(prefix_tokens, 50);
  const EngineStats stats = engine_->GetStats();
  int64_t branch_computed = 0;
  for (const GenerateReply& reply : replies) {
    // Every branch found the whole committed prefix cached (all but a boundary token).
    EXPECT_GE(reply.cached_tokens, prefix_tokens - 1);
    branch_computed += reply.prompt_tokens - reply.cached_tokens;
  }
  // The prefix was computed by the commit alone: prefill = prefix + each branch's own tail.
  EXPECT_EQ(stats.scheduler.prefill_tokens, prefix_tokens + branch_computed);
  EXPECT_LT(branch_computed, prefix_tokens);
  EXPECT_EQ(stats.scheduler.protected_tokens, 0);  // unpinned at join
}

}  // namespace
}  // namespace radixlm::frontend
