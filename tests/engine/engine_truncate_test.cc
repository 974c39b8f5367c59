// --allow-auto-truncate through the engine (fake model): a prompt past the context runs on its
// first tokens and reports them in prompt_tokens, max_new_tokens is lowered to what is left,
// n > 1 samples share the cut prompt, a session turn's composed prompt is cut and remembered
// as cut, and each cut request is reported once to on_request_warning.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/engine.h"
#include "fake_engine.h"
#include "util/mutex.h"

namespace radixlm::engine_truncate_test {
namespace {

using engine_testing::FakeEngine;
using engine_testing::Greedy;
using engine_testing::MakeEngine;
using engine_testing::Prompt;

constexpr int64_t kContext = 128;  // the fake model's is 1024; --context-length lowers it

struct Warnings {
  Mutex mu;
  std::vector<std::string> lines GUARDED_BY(mu);

  std::vector<std::string> Take() {
    MutexLock lock(&mu);
    return std::move(lines);
  }
};

FakeEngine TruncatingEngine(Warnings* warnings, bool allow = true) {
  EngineConfig config;
  config.context_length = kContext;
  config.allow_auto_truncate = allow;
  config.on_request_warning = [warnings](const std::string& line) {
    MutexLock lock(&warnings->mu);
    warnings->lines.push_back(line);
  };
  return MakeEngine(config);
}

std::vector<int32_t> Head(const std::vector<int32_t>& ids, int64_t n) {
  return std::vector<int32_t>(ids.begin(), ids.begin() + n);
}

TEST(EngineTruncateTest, ALongPromptRunsOnItsFirstTokens) {
  Warnings warnings;
  FakeEngine fe = TruncatingEngine(&warnings);
  const std::vector<int32_t> prompt = Prompt(300);
  GenerateRequest req = Greedy(prompt, 16);
  req.rid = "long";
  auto stream = fe.engine->Submit(req);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  const std::vector<GenerateResult> results = (*stream)->Collect();
  ASSERT_EQ(results.size(), 1u);
  const GenerateResult& r = results[0];
  EXPECT_EQ(r.meta.prompt_tokens, kContext - 1);
  EXPECT_EQ(r.meta.completion_tokens, 1);
  EXPECT_EQ(*r.finish_reason, FinishReason::Length(1));
  EXPECT_EQ(r.output_ids, fe.runner->ReferenceGreedy(Head(prompt, kContext - 1), 1));
  const std::vector<std::string> lines = warnings.Take();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("request long"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("input 300 -> its first 127 tokens"), std::string::npos) << lines[0];
}

TEST(EngineTruncateTest, MaxNewTokensIsLoweredToWhatTheContextLeaves) {
  Warnings warnings;
  FakeEngine fe = TruncatingEngine(&warnings);
  const std::vector<int32_t> prompt = Prompt(40);
  auto stream = fe.engine->Submit(Greedy(prompt, 100000));
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  const GenerateResult r = (*stream)->Collect()[0];
  EXPECT_EQ(r.meta.prompt_tokens, 40);
  EXPECT_EQ(r.meta.completion_tokens, kContext - 40);
  EXPECT_EQ(*r.finish_reason, FinishReason::Length(kContext - 40));
  EXPECT_EQ(r.output_ids, fe.runner->ReferenceGreedy(prompt, kContext - 40));
  EXPECT_EQ(warnings.Take().size(), 1u);

  // A request that fits runs as asked, and nothing is logged.
  stream = fe.engine->Submit(Greedy(prompt, 8));
  ASSERT_TRUE(stream.ok());
  EXPECT_EQ((*stream)->Collect()[0].meta.completion_tokens, 8);
  EXPECT_TRUE(warnings.Take().empty());
}

TEST(EngineTruncateTest, SamplesShareTheCutPrompt) {
  Warnings warnings;
  FakeEngine fe = TruncatingEngine(&warnings);
  GenerateRequest req = Greedy(Prompt(500, 3), 50);
  req.sampling_params.n = 3;
  auto stream = fe.engine->Submit(req);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  const std::vector<GenerateResult> results = (*stream)->Collect();
  ASSERT_EQ(results.size(), 3u);
  for (const GenerateResult& r : results) {
    EXPECT_EQ(r.meta.prompt_tokens, kContext - 1);
    EXPECT_EQ(r.meta.completion_tokens, 1);
  }
  EXPECT_EQ(warnings.Take().size(), 1u);  // one line per request, not per sample
}

TEST(EngineTruncateTest, WithoutTheFlagTheRequestsAreRefused) {
  Warnings warnings;
  FakeEngine fe = TruncatingEngine(&warnings, /*allow=*/false);
  auto too_long = fe.engine->Submit(Greedy(Prompt(300), 16));
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.status().message().find("longer than the model's context length (128"),
            std::string::npos)
      << too_long.status().ToString();
  auto too_many = fe.engine->Submit(Greedy(Prompt(40), 100000));
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("maximum context length of 128"), std::string::npos)
      << too_many.status().ToString();
  EXPECT_TRUE(warnings.Take().empty());
}

TEST(EngineTruncateTest, ASessionTurnIsCutAndTheSessionContinuesFromTheCutPrompt) {
  Warnings warnings;
  FakeEngine fe = TruncatingEngine(&warnings);
  OpenSessionRequest options;
  options.streaming = true;
  StatusOr<std::string> session = fe.engine->OpenSession(options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto run_turn = [&](std::vector<int32_t> own, int32_t max_new) {
    GenerateRequest req = Greedy(std::move(own), max_new);
    req.session_params.emplace();
    req.session_params->id = *session;
    auto stream = fe.engine->Submit(req);
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    return (*stream)->Collect()[0];
  };
  // Turn 0 fits: 100 + 10.
  std::vector<int32_t> history = Prompt(100, 1);
  GenerateResult r = run_turn(history, 10);
  ASSERT_FALSE(r.finish_reason->is_abort()) << r.finish_reason->matched_text;
  EXPECT_EQ(r.meta.completion_tokens, 10);
  history.insert(history.end(), r.output_ids.begin(), r.output_ids.end());
  EXPECT_TRUE(warnings.Take().empty());

  // Turn 1 composes 110 + 40 tokens: it runs on the first 127 with one new token.
  const std::vector<int32_t> own = Prompt(40, 2);
  history.insert(history.end(), own.begin(), own.end());
  r = run_turn(own, 10);
  ASSERT_FALSE(r.finish_reason->is_abort()) << r.finish_reason->matched_text;
  EXPECT_EQ(r.meta.prompt_tokens, kContext - 1);
  EXPECT_EQ(r.meta.completion_tokens, 1);
  const std::vector<int32_t> turn1_prompt = Head(history, kContext - 1);
  EXPECT_EQ(r.output_ids, fe.runner->ReferenceGreedy(turn1_prompt, 1));
  EXPECT_EQ(warnings.Take().size(), 1u);

  // Turn 2 continues from turn 1's cut prompt and its output (128 tokens), so it is cut back
  // to turn 1's prompt, whose KV the session kept.
  r = run_turn(Prompt(5, 3), 10);
  ASSERT_FALSE(r.finish_reason->is_abort()) << r.finish_reason->matched_text;
  EXPECT_EQ(r.meta.prompt_tokens, kContext - 1);
  EXPECT_EQ(r.output_ids, fe.runner->ReferenceGreedy(turn1_prompt, 1));
  EXPECT_GE(r.meta.cached_tokens, kContext - 2);
  EXPECT_EQ(warnings.Take().size(), 1u);
  ASSERT_TRUE(fe.engine->CloseSession(*session).ok());
}

}  // namespace
}  // namespace radixlm::engine_truncate_test
