// The frontend on the real default model (gemma-3-270m): a forked program prefills its shared
// prefix exactly once (engine stats), roles render with the model's chat template, and image()
// reaches the model through a projector.
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

// image() on the default model with the tests' tiny gemma3 projector (output width 640, 4 tokens
// per image; tests/vision/testdata): the image reaches the model, encoded once per content, and
// a repeat of the program finds it cached through the image and beyond.
TEST(FrontendRealModelImageTest, AnImageReachesTheModelAndARepeatIsCached) {
  if (std::string why = testing::RealModelSkipReason(); !why.empty()) GTEST_SKIP() << why;
  const std::string testdata = RADIXLM_SOURCE_DIR "/tests/vision/testdata/";
  EngineConfig c;
  c.model_path = testing::RealModelPath();
  c.mmproj_path = testdata + "tiny_gemma3_mmproj.gguf";
  c.max_total_tokens = 4096;
  c.context_length = 1024;
  auto e = Engine::Create(c);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto b = EngineBackend::Create(e->get());
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  auto describe = [&](const std::string& file, GenerateReply* reply) {
    return frontend::Run(**b, {.default_gen = {.temperature = 0.0f}}, [&](State& s) {
      s += user(image(testdata + file) + "Describe the picture.");
      s += assistant(gen("answer", {.max_tokens = 8}));
      *reply = s.gen_reply("answer").value_or(GenerateReply{});
    });
  };
  GenerateReply first, again, other;
  const ProgramResult r1 = describe("gemma3_golden_24x24.png", &first);
  ASSERT_TRUE(r1.status.ok()) << r1.status.ToString();
  EXPECT_EQ(r1.text.find("<start_of_turn>user\n"), 0u);
  const ProgramResult r2 = describe("gemma3_golden_24x24.png", &again);
  ASSERT_TRUE(r2.status.ok()) << r2.status.ToString();
  EXPECT_EQ(r2.variables.at("answer"), r1.variables.at("answer"));
  EXPECT_EQ(again.prompt_tokens, first.prompt_tokens);
  EXPECT_EQ(again.cached_tokens, again.prompt_tokens - 1);
  ASSERT_TRUE((*e)->image_counters().has_value());
  EXPECT_EQ((*e)->image_counters()->encodes, 1);
  EXPECT_EQ((*e)->image_counters()->hits, 1);
  // Another picture (of another size, resized by the projector) gives the same token count and
  // no cache hit past the text before it.
  const ProgramResult r3 = describe("gemma3_golden_45x29.png", &other);
  ASSERT_TRUE(r3.status.ok()) << r3.status.ToString();
  EXPECT_EQ(other.prompt_tokens, first.prompt_tokens);
  const StatusOr<int64_t> before = (*b)->CountPromptTokens("<start_of_turn>user\n<start_of_image>");
  ASSERT_TRUE(before.ok());
  EXPECT_LE(other.cached_tokens, *before);
  EXPECT_GT(first.prompt_tokens, *before + 4);
  EXPECT_EQ((*e)->image_counters()->encodes, 2);
}

}  // namespace
}  // namespace radixlm::frontend
