// Sessions through the engine (fake model): prompts composed from earlier turns, their KV
// reused and pinned while the session is open, refusals, rollback on abort, eviction pressure.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
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
  EXPECT_EQ(fe.engine->GetStats().open_sessions, 1);
  ASSERT_TRUE(fe.engine->CloseSession(*id).ok());
  EngineStats stats = fe.engine->GetStats();
  EXPECT_EQ(stats.open_sessions, 0);
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

TEST(EngineSessionTest, ASessionWithATimeoutClosesItselfAndReleasesItsKv) {
  FakeEngine fe = MakeEngine();
  OpenSessionRequest bad = Options(false);
  bad.timeout = -1;
  EXPECT_EQ(fe.engine->OpenSession(bad).status().code(), StatusCode::kInvalidArgument);
  OpenSessionRequest timed = Options(true, "timed");
  timed.timeout = 0.05;
  ASSERT_TRUE(fe.engine->OpenSession(timed).ok());
  GenerateResult first = RunTurn(*fe.engine, "timed", Prompt(30, 1), 4);
  ASSERT_FALSE(first.finish_reason->is_abort());
  // Closed by the engine (no request wakes it) once the timeout has passed: polled, with a
  // generous bound, as a client would.
  EngineStats stats;
  for (int i = 0; i < 2000; ++i) {
    stats = fe.engine->GetStats();
    if (stats.open_sessions == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(stats.open_sessions, 0);
  EXPECT_EQ(stats.scheduler.protected_tokens, 0);
  EXPECT_EQ(fe.engine->CloseSession("timed").code(), StatusCode::kNotFound);
  GenerateResult late = RunTurn(*fe.engine, "timed", Prompt(5, 2), 2);
  EXPECT_EQ(late.finish_reason->status_code, 400);
}

TEST(EngineSessionTest, AFlushDropsSessionKvAndTheNextTurnRecomputesIt) {
  FakeEngine fe = MakeEngine();
  StatusOr<std::string> id = fe.engine->OpenSession(Options(true));
  ASSERT_TRUE(id.ok());
  GenerateResult first = RunTurn(*fe.engine, *id, Prompt(50, 2), 5);
  ASSERT_TRUE(fe.engine->FlushCache().ok());  // as SGLang: session KV is cache
  EngineStats stats = fe.engine->GetStats();
  EXPECT_EQ(stats.scheduler.pool_free, stats.scheduler.pool_size);
  EXPECT_EQ(stats.scheduler.reclaimed_session_pins, 1);
  GenerateResult next = RunTurn(*fe.engine, *id, Prompt(7, 3), 4);
  EXPECT_EQ(next.meta.prompt_tokens, 50 + 5 + 7);
  EXPECT_EQ(next.meta.cached_tokens, 0);
  std::vector<int32_t> history = Prompt(50, 2);
  history.insert(history.end(), first.output_ids.begin(), first.output_ids.end());
  const std::vector<int32_t> own = Prompt(7, 3);
  history.insert(history.end(), own.begin(), own.end());
  EXPECT_EQ((*fe.engine->Submit(Greedy(history, 4)))->Collect()[0].output_ids, next.output_ids);
  ASSERT_TRUE(fe.engine->CloseSession(*id).ok());
}

TEST(EngineSessionTest, AStreamingSessionRunsOneTurnAtATime) {
  FakeEngine fe = MakeEngine({}, std::chrono::milliseconds(1));
  StatusOr<std::string> id = fe.engine->OpenSession(Options(true, "live"));
  ASSERT_TRUE(id.ok());
  GenerateResult first = RunTurn(*fe.engine, *id, Prompt(20), 4);
  GenerateRequest long_turn = Greedy(Prompt(8, 3), 900);
  long_turn.rid = "long";
  long_turn.session_params = Params(*id);
  auto stream = fe.engine->Submit(long_turn);
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE((*stream)->Next().has_value());  // it runs
  // SGLang's rule and message; the running turn goes on.
  GenerateResult second = RunTurn(*fe.engine, *id, Prompt(6, 4), 3);
  ASSERT_TRUE(second.finish_reason->is_abort());
  EXPECT_EQ(second.finish_reason->status_code, 400);
  EXPECT_NE(second.finish_reason->matched_text.find(
                "Streaming session live already has an active request (turn long"),
            std::string::npos)
      << second.finish_reason->matched_text;
  EXPECT_TRUE(fe.engine->Abort("long"));
  (*stream)->Collect();
  // Once the running turn has ended, the next continues from the last complete turn.
  GenerateResult third = RunTurn(*fe.engine, *id, Prompt(6, 4), 3);
  ASSERT_FALSE(third.finish_reason->is_abort()) << third.finish_reason->matched_text;
  EXPECT_EQ(third.meta.prompt_tokens, 20 + 4 + 6);
  // A non-streaming session runs concurrent turns.
  ASSERT_TRUE(fe.engine->OpenSession(Options(false, "tree")).ok());
  GenerateRequest a = Greedy(Prompt(8, 5), 300);
  a.rid = "a";
  a.session_params = Params("tree");
  auto a_stream = fe.engine->Submit(a);
  ASSERT_TRUE(a_stream.ok());
  ASSERT_TRUE((*a_stream)->Next().has_value());
  GenerateResult b = RunTurn(*fe.engine, "tree", Prompt(5, 6), 2);
  EXPECT_FALSE(b.finish_reason->is_abort()) << b.finish_reason->matched_text;
  EXPECT_TRUE(fe.engine->Abort("a"));
  (*a_stream)->Collect();
}

TEST(EngineSessionTest, ANonStreamingSessionKeepsAnAbortedTurnToContinueFrom) {
  FakeEngine fe = MakeEngine({}, std::chrono::milliseconds(1));
  ASSERT_TRUE(fe.engine->OpenSession(Options(false, "s")).ok());
  GenerateRequest long_turn = Greedy(Prompt(12, 3), 900);
  long_turn.rid = "cut";
  long_turn.session_params = Params("s");
  auto stream = fe.engine->Submit(long_turn);
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE((*stream)->Next().has_value());
  EXPECT_TRUE(fe.engine->Abort("cut"));
  std::vector<GenerateResult> aborted = (*stream)->Collect();
  ASSERT_TRUE(aborted.front().finish_reason->is_abort());
  const int64_t partial = aborted.front().meta.completion_tokens;
  ASSERT_GT(partial, 0);
  ASSERT_LT(partial, 900);
  // As SGLang's tree sessions: the aborted turn's partial output is history to continue from.
  GenerateResult next = RunTurn(*fe.engine, "s", Prompt(4, 7), 3, "cut");
  ASSERT_FALSE(next.finish_reason->is_abort()) << next.finish_reason->matched_text;
  EXPECT_EQ(next.meta.prompt_tokens, 12 + partial + 4);
  ASSERT_TRUE(fe.engine->CloseSession("s").ok());
  EngineStats stats = fe.engine->GetStats();
  EXPECT_EQ(stats.scheduler.protected_tokens, 0);
  EXPECT_EQ(stats.scheduler.pool_free + stats.scheduler.evictable_tokens,
            stats.scheduler.pool_size);
}

TEST(EngineSessionTest, SessionKvLargerThanThePoolNeverBlocksATurn) {
  // 8 sessions x 3 turns of ~130-token prompts against a 600-token pool: the pins held would
  // be several pools; every turn completes, with the output of the same prompt sent plainly.
  EngineConfig config;
  config.max_total_tokens = 600;
  FakeEngine fe = MakeEngine(config);
  constexpr int kSessions = 8;
  std::vector<std::string> ids;
  std::vector<std::vector<int32_t>> histories(kSessions);
  for (int i = 0; i < kSessions; ++i) {
    StatusOr<std::string> id = fe.engine->OpenSession(Options(i % 2 == 0));
    ASSERT_TRUE(id.ok());
    ids.push_back(*id);
  }
  std::vector<std::string> last(kSessions);
  for (int turn = 0; turn < 3; ++turn) {
    for (int i = 0; i < kSessions; ++i) {
      const std::vector<int32_t> own = Prompt(40 + 5 * turn, 10 * i + turn);
      const bool streaming = i % 2 == 0;
      GenerateResult r =
          RunTurn(*fe.engine, ids[i], own, 6,
                  streaming || last[i].empty() ? std::nullopt : std::optional(last[i]));
      ASSERT_FALSE(r.finish_reason->is_abort()) << r.finish_reason->matched_text;
      histories[i].insert(histories[i].end(), own.begin(), own.end());
      EXPECT_EQ(r.meta.prompt_tokens, static_cast<int64_t>(histories[i].size()));
      EXPECT_EQ((*fe.engine->Submit(Greedy(histories[i], 6)))->Collect()[0].output_ids,
                r.output_ids)
          << "session " << i << " turn " << turn;
      histories[i].insert(histories[i].end(), r.output_ids.begin(), r.output_ids.end());
      last[i] = r.meta.id;
    }
  }
  EngineStats stats = fe.engine->GetStats();
  EXPECT_GT(stats.scheduler.reclaimed_session_pins, 0);
  EXPECT_EQ(stats.scheduler.aborted_requests, 0);
  EXPECT_EQ(stats.open_sessions, kSessions);
  for (const std::string& id : ids) ASSERT_TRUE(fe.engine->CloseSession(id).ok());
  stats = fe.engine->GetStats();
  EXPECT_EQ(stats.open_sessions, 0);
  EXPECT_EQ(stats.scheduler.protected_tokens, 0);
  EXPECT_EQ(stats.scheduler.pool_free + stats.scheduler.evictable_tokens,
            stats.scheduler.pool_size);
  EXPECT_TRUE(fe.engine->FlushCache().ok());
  EXPECT_EQ(fe.engine->GetStats().scheduler.pool_free, stats.scheduler.pool_size);
}

}  // namespace
}  // namespace radixlm
