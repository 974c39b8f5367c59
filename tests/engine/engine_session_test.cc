// Sessions through the engine (fake model): prompts composed from earlier turns, their KV
// reused and pinned while the session is open, refusals, rollback on abort, eviction pressure.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/engine.h"
#include "fake_engine.h"

namespace radixlm {
namespace {

using engine_testing::FakeEngine;
using engine_testing::Greedy;
using engine_testing::MakeEngine;
using engine_testing::Prompt;

OpenSessionRequest Options(bool streaming, std::optional<std::string> id = std::nullopt) {
  OpenSessionRequest r;
  r.streaming = streaming;
  r.session_id = std::move(id);
  return r;
}

SessionParams Params(const std::string& session, std::optional<std::string> rid = std::nullopt) {
  SessionParams p;
  p.id = session;
  p.rid = std::move(rid);
  return p;
}

GenerateResult RunTurn(Engine& engine, const std::string& session, std::vector<int32_t> ids,
                       int32_t max_new, std::optional<std::string> rid = std::nullopt) {
  GenerateRequest req = Greedy(std::move(ids), max_new);
  req.session_params = Params(session, std::move(rid));
  auto stream = engine.Submit(req);
  EXPECT_TRUE(stream.ok()) << stream.status().ToString();
  std::vector<GenerateResult> results = (*stream)->Collect();
  EXPECT_EQ(results.size(), 1u);
  return results.front();
}

TEST(EngineSessionTest, TurnsReuseThePreviousTurnsKv) {
  FakeEngine fe = MakeEngine();
  StatusOr<std::string> id = fe.engine->OpenSession(Options(true));
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  std::vector<int32_t> history;
  int64_t previous_total = 0;
  for (int turn = 0; turn < 5; ++turn) {
    const std::vector<int32_t> own = Prompt(10 + turn, turn + 1);
    GenerateResult r = RunTurn(*fe.engine, *id, own, 6);
    ASSERT_FALSE(r.finish_reason->is_abort()) << r.finish_reason->matched_text;
    EXPECT_EQ(r.meta.prompt_tokens, previous_total + static_cast<int64_t>(own.size()));
    // Everything before this turn had KV except the previous turn's last output token.
    EXPECT_EQ(r.meta.cached_tokens, turn == 0 ? 0 : previous_total - 1) << "turn " << turn;
    // The same tokens as one request with the whole history as its prompt.
    history.insert(history.end(), own.begin(), own.end());
    GenerateRequest plain = Greedy(history, 6);
    std::vector<GenerateResult> direct = (*fe.engine->Submit(plain))->Collect();
    EXPECT_EQ(direct[0].output_ids, r.output_ids);
    history.insert(history.end(), r.output_ids.begin(), r.output_ids.end());
    previous_total = static_cast<int64_t>(history.size());
  }
  EXPECT_GT(fe.engine->GetStats().scheduler.protected_tokens, 0);
  EXPECT_EQ(fe.engine->FlushCache().code(), StatusCode::kAborted);  // the session pins KV
  ASSERT_TRUE(fe.engine->CloseSession(*id).ok());
  EngineStats stats = fe.engine->GetStats();
  EXPECT_EQ(stats.scheduler.protected_tokens, 0);
  EXPECT_EQ(stats.scheduler.pool_free + stats.scheduler.evictable_tokens,
            stats.scheduler.pool_size);
  EXPECT_TRUE(fe.engine->FlushCache().ok());
  EXPECT_EQ(fe.engine->CloseSession(*id).code(), StatusCode::kNotFound);
}

TEST(EngineSessionTest, RefusedTurnsEndWithAStatus400Abort) {
  FakeEngine fe = MakeEngine();
  GenerateResult unknown = RunTurn(*fe.engine, "no-such-session", Prompt(5), 3);
  ASSERT_TRUE(unknown.finish_reason->is_abort());
  EXPECT_EQ(unknown.finish_reason->status_code, 400);
  EXPECT_NE(unknown.finish_reason->matched_text.find("no-such-session is not open"),
            std::string::npos);
  StatusOr<std::string> id = fe.engine->OpenSession(Options(false, "s"));
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "s");
  EXPECT_EQ(fe.engine->OpenSession(Options(false, "s")).status().code(),
            StatusCode::kInvalidArgument);
  GenerateResult bad_rid = RunTurn(*fe.engine, "s", Prompt(5), 3, "ghost");
  EXPECT_EQ(bad_rid.finish_reason->status_code, 400);
  // The composed prompt must fit the context (1024) with max_new_tokens.
  GenerateResult first = RunTurn(*fe.engine, "s", Prompt(600), 10);
  GenerateResult too_long = RunTurn(*fe.engine, "s", Prompt(420), 10, first.meta.id);
  EXPECT_EQ(too_long.finish_reason->status_code, 400);
  EXPECT_NE(too_long.finish_reason->matched_text.find("context length"), std::string::npos);
  EXPECT_EQ(fe.engine->GetStats().live_requests, 0);
  // n > 1 is refused at Submit.
  GenerateRequest n2 = Greedy(Prompt(5), 3);
  n2.sampling_params.n = 2;
  n2.sampling_params.temperature = 0.5f;
  n2.session_params = Params("s");
  EXPECT_EQ(fe.engine->Submit(n2).status().code(), StatusCode::kInvalidArgument);
}

TEST(EngineSessionTest, SessionsAreBounded) {
  EngineConfig config;
  config.max_open_sessions = 2;
  FakeEngine fe = MakeEngine(config);
  ASSERT_TRUE(fe.engine->OpenSession(Options(false)).ok());
  StatusOr<std::string> second = fe.engine->OpenSession(Options(false));
  ASSERT_TRUE(second.ok());
  StatusOr<std::string> third = fe.engine->OpenSession(Options(false));
  EXPECT_EQ(third.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(third.status().message().find("--max-open-sessions"), std::string::npos);
  ASSERT_TRUE(fe.engine->CloseSession(*second).ok());
  EXPECT_TRUE(fe.engine->OpenSession(Options(false)).ok());
}

TEST(EngineSessionTest, AnAbortedTurnRollsTheSessionBack) {
  // 1 ms per step: the abort lands while the long turn runs.
  FakeEngine fe = MakeEngine({}, std::chrono::milliseconds(1));
  StatusOr<std::string> id = fe.engine->OpenSession(Options(true));
  ASSERT_TRUE(id.ok());
  GenerateResult first = RunTurn(*fe.engine, *id, Prompt(20), 4);
  GenerateRequest long_turn = Greedy(Prompt(8, 3), 900);
  long_turn.rid = "long";
  long_turn.session_params = Params(*id);
  auto stream = fe.engine->Submit(long_turn);
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE((*stream)->Next().has_value());  // it runs
  EXPECT_TRUE(fe.engine->Abort("long"));
  std::vector<GenerateResult> aborted = (*stream)->Collect();
  // The next turn continues from the first one: the aborted turn left no trace.
  GenerateResult next = RunTurn(*fe.engine, *id, Prompt(6, 4), 3);
  EXPECT_EQ(next.meta.prompt_tokens, 20 + 4 + 6);
  // The history (the aborted turn computed its last token's KV too, unpinned) came from the tree.
  EXPECT_GE(next.meta.cached_tokens, 20 + 4 - 1);
}

TEST(EngineSessionTest, PinnedSessionKvSurvivesEvictionPressure) {
  EngineConfig config;
  config.max_total_tokens = 600;
  FakeEngine fe = MakeEngine(config);
  StatusOr<std::string> id = fe.engine->OpenSession(Options(true));
  ASSERT_TRUE(id.ok());
  GenerateResult first = RunTurn(*fe.engine, *id, Prompt(100, 9), 4);
  // Unrelated requests that need most of the pool evict everything unpinned.
  for (int i = 0; i < 4; ++i) (*fe.engine->Submit(Greedy(Prompt(400, 20 + i), 4)))->Collect();
  GenerateResult next = RunTurn(*fe.engine, *id, Prompt(5, 5), 3);
  EXPECT_EQ(next.meta.cached_tokens, 100 + 4 - 1);
}

}  // namespace
}  // namespace radixlm
