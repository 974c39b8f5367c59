// The Engine over the fake runner and codec: submission and validation, streaming, aborts,
// n > 1, flush, stats, shutdown, JSON shape, concurrent callers.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "engine/result_json.h"
#include "engine/scheduler_bridge.h"
#include "fake_engine.h"
#include "testing/fake_model_runner.h"
#include "testing/fake_token_text.h"

namespace radixlm {
namespace {

using engine_testing::FakeEngine;
using engine_testing::Greedy;
using engine_testing::MakeEngine;
using engine_testing::Prompt;

TEST(EngineTest, GreedyGenerationMatchesTheReference) {
  FakeEngine fe = MakeEngine();
  auto stream = fe.engine->Submit(Greedy(Prompt(40), 12));
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  std::vector<GenerateResult> results = (*stream)->Collect();
  ASSERT_EQ(results.size(), 1u);
  const GenerateResult& r = results[0];
  EXPECT_EQ(r.output_ids, fe.runner->ReferenceGreedy(Prompt(40), 12));
  EXPECT_EQ(r.text, FakeTokenTextCodec().Decode(r.output_ids));
  EXPECT_EQ(*r.finish_reason, FinishReason::Length(12));
  EXPECT_EQ(r.meta.prompt_tokens, 40);
  EXPECT_EQ(r.meta.completion_tokens, 12);
  EXPECT_EQ(r.meta.id, (*stream)->rid());
  EXPECT_FALSE((*stream)->rid().empty());
  EXPECT_TRUE((*stream)->ended());
}

TEST(EngineTest, TextPromptsAreTokenizedAndStreamedIncrementally) {
  FakeEngine fe = MakeEngine();
  GenerateRequest req;
  req.rid = "my-request";
  req.text = "the cat sat";
  req.sampling_params.temperature = 0;
  req.sampling_params.max_new_tokens = 10;
  req.sampling_params.ignore_eos = true;
  req.stream = true;
  auto stream = fe.engine->Submit(req);
  ASSERT_TRUE(stream.ok());
  GenerateResult all;
  int chunks = 0;
  while (auto chunk = (*stream)->Next()) {
    EXPECT_EQ(chunk->meta.id, "my-request");
    ++chunks;
    all.Append(std::move(*chunk));
  }
  EXPECT_EQ(chunks, 10);  // one chunk per token
  const auto prompt = *FakeTokenTextCodec().Encode("the cat sat");
  EXPECT_EQ(all.output_ids, fe.runner->ReferenceGreedy(prompt, 10));
  EXPECT_EQ(all.meta.prompt_tokens, static_cast<int64_t>(prompt.size()));
}

TEST(EngineTest, InvalidRequestsAreRejectedWithClearMessages) {
  EngineConfig config;
  config.max_total_tokens = 512;
  // 5 ms per step: the 500-token request below must still be live when its duplicate arrives.
  FakeEngine fe = MakeEngine(config, std::chrono::milliseconds(5));
  auto expect_error = [&](GenerateRequest req, StatusCode code, const std::string& needle) {
    auto s = fe.engine->Submit(std::move(req));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), code) << s.status().ToString();
    EXPECT_NE(s.status().message().find(needle), std::string::npos) << s.status().ToString();
  };
  GenerateRequest neither;
  expect_error(neither, StatusCode::kInvalidArgument, "Either text or input_ids");
  GenerateRequest both = Greedy(Prompt(3), 1);
  both.text = "hi";
  expect_error(both, StatusCode::kInvalidArgument, "Only one of");
  expect_error(Greedy({}, 1), StatusCode::kInvalidArgument, "empty");
  expect_error(Greedy({3, 64}, 1), StatusCode::kInvalidArgument, "input_ids[1] = 64");
  expect_error(Greedy(Prompt(1100), 1), StatusCode::kInvalidArgument, "context length");
  expect_error(Greedy(Prompt(1000), 100), StatusCode::kInvalidArgument,
               "maximum context length of 1024");
  expect_error(Greedy(Prompt(400), 200), StatusCode::kInvalidArgument, "KV cache");
  GenerateRequest bad_temp = Greedy(Prompt(3), 1);
  bad_temp.sampling_params.temperature = -1;
  expect_error(bad_temp, StatusCode::kInvalidArgument, "temperature");
  GenerateRequest bad_lp = Greedy(Prompt(3), 1);
  bad_lp.return_logprob = true;
  bad_lp.logprob_start_len = 3;
  expect_error(bad_lp, StatusCode::kInvalidArgument, "logprob_start_len");
  GenerateRequest regex = Greedy(Prompt(3), 1);
  regex.sampling_params.regex = "a(b";
  expect_error(regex, StatusCode::kInvalidArgument, "invalid regex");
  GenerateRequest schema = Greedy(Prompt(3), 1);
  schema.sampling_params.json_schema = R"({"type": "object", "frobnicate": 1})";
  expect_error(schema, StatusCode::kInvalidArgument, "frobnicate");
  GenerateRequest two = Greedy(Prompt(3), 1);
  two.sampling_params.regex = "a+";
  two.sampling_params.ebnf = "root ::= \"a\"";
  expect_error(two, StatusCode::kInvalidArgument, "Only one of");
  GenerateRequest bad_text;
  bad_text.text = "~~~";
  expect_error(bad_text, StatusCode::kInvalidArgument, "cannot encode");

  GenerateRequest dup = Greedy(Prompt(5), 500);
  dup.rid = "same";
  auto first = fe.engine->Submit(dup);
  ASSERT_TRUE(first.ok());
  dup.sampling_params.max_new_tokens = 1;
  expect_error(dup, StatusCode::kInvalidArgument, "Duplicate request ID");
  EXPECT_TRUE(fe.engine->Abort("same"));
  (*first)->Collect();
  EXPECT_TRUE(fe.engine->Submit(dup).ok());  // the rid is free again once it ended
}

// Constrained decoding through the engine: every output matches its grammar and ends with EOS
// where the grammar ends, greedy and sampled, n > 1 included; the grammar is compiled once.
TEST(EngineTest, GrammarsConstrainTheOutput) {
  FakeEngine fe = MakeEngine({});
  struct Case {
    const char* regex;
    float temperature;
    int32_t n;
  };
  const Case cases[] = {{"[0-9]{3},[a-z]{2,4}", 0.0f, 1},
                        {"(yes|no|maybe)\\.", 0.0f, 1},
                        {"[0-9]{3},[a-z]{2,4}", 1.0f, 3},
                        {"the (cat|dog)s?", 0.8f, 2}};
  for (const Case& c : cases) {
    GenerateRequest req = Greedy(Prompt(4), 20);
    req.sampling_params.regex = c.regex;
    req.sampling_params.temperature = c.temperature;
    req.sampling_params.n = c.n;
    auto stream = fe.engine->Submit(req);
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    const auto outputs = (*stream)->Collect();
    ASSERT_EQ(outputs.size(), static_cast<size_t>(c.n));
    for (const auto& out : outputs) {
      EXPECT_TRUE(std::regex_match(out.text, std::regex(c.regex))) << c.regex << " -> " << out.text;
      ASSERT_TRUE(out.finish_reason.has_value());
      EXPECT_EQ(out.finish_reason->kind, FinishReason::Kind::kStopToken)
          << out.text << " " << out.finish_reason->matched_text;
      EXPECT_EQ(out.finish_reason->matched_token, FakeTokenTextCodec::kEos);
    }
  }
  GenerateRequest json = Greedy(Prompt(4), 40);
  json.sampling_params.json_schema =
      R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]})";
  auto stream = fe.engine->Submit(json);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  const auto outputs = (*stream)->Collect();
  ASSERT_EQ(outputs.size(), 1u);
  // The fake vocabulary has no '{': the grammar cannot start, so the request ends clearly.
  ASSERT_TRUE(outputs[0].finish_reason.has_value());
  EXPECT_TRUE(outputs[0].finish_reason->is_abort()) << outputs[0].text;
}

// Grammars compile on the engine's pool: Submit only parses. A grammar that parses but cannot
// be compiled (its DFA exceeds the cap) finishes its request with a clear abort while other
// requests go on; the cached failure makes a later identical request a bad request at once.
// A repeated grammar is a cache hit (one compilation).
TEST(EngineTest, GrammarsCompileOffTheSubmittingThread) {
  FakeEngine fe = MakeEngine({});
  const char* too_big = "(a|b)*a(a|b){16}";  // 2^17 DFA states > the 20000 cap
  GenerateRequest bad = Greedy(Prompt(4), 20);
  bad.sampling_params.regex = too_big;
  auto bad_stream = fe.engine->Submit(bad);
  ASSERT_TRUE(bad_stream.ok()) << bad_stream.status().ToString();
  auto plain = fe.engine->Submit(Greedy(Prompt(5, 1), 8));
  ASSERT_TRUE(plain.ok());
  const auto plain_out = (*plain)->Collect();
  ASSERT_EQ(plain_out.size(), 1u);
  EXPECT_EQ(plain_out[0].output_ids.size(), 8u);
  const auto bad_out = (*bad_stream)->Collect();
  ASSERT_EQ(bad_out.size(), 1u);
  ASSERT_TRUE(bad_out[0].finish_reason.has_value());
  EXPECT_TRUE(bad_out[0].finish_reason->is_abort());
  EXPECT_NE(bad_out[0].finish_reason->matched_text.find("grammar compilation failed (regex)"),
            std::string::npos)
      << bad_out[0].finish_reason->matched_text;
  EXPECT_EQ(bad_out[0].finish_reason->status_code, 400);
  EXPECT_TRUE(bad_out[0].output_ids.empty());
  auto again = fe.engine->Submit(bad);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kInvalidArgument);

  const char* regex = "[0-9]{3},[a-z]{2,4}";
  for (int i = 0; i < 2; ++i) {
    GenerateRequest req = Greedy(Prompt(4, i), 20);
    req.sampling_params.regex = regex;
    auto stream = fe.engine->Submit(req);
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    const auto outputs = (*stream)->Collect();
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_TRUE(std::regex_match(outputs[0].text, std::regex(regex))) << outputs[0].text;
  }
  const EngineStats stats = fe.engine->GetStats();
  EXPECT_EQ(stats.grammar.compiles, 2);  // too_big once, regex once
  EXPECT_EQ(stats.grammar.lookups, 4);
  EXPECT_EQ(stats.scheduler.grammar_queue_requests, 0);
  EXPECT_EQ(stats.live_requests, 0);
}

// Aborting (or shutting down) while a grammar compiles ends the stream and does not hang.
TEST(EngineTest, AbortAndShutdownWhileAGrammarCompiles) {
  FakeEngine fe = MakeEngine({});
  GenerateRequest req = Greedy(Prompt(4), 20);
  req.rid = "compiling";
  req.sampling_params.regex = "(a|b)*b(a|b){16}";
  auto stream = fe.engine->Submit(req);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  fe.engine->Abort("compiling");  // false only if it already finished
  const auto outputs = (*stream)->Collect();
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_TRUE(outputs[0].finish_reason.has_value());
  EXPECT_TRUE(outputs[0].finish_reason->is_abort());

  GenerateRequest other = Greedy(Prompt(4), 20);
  other.sampling_params.regex = "(b|a)*a(b|a){16}";  // also 2^17 states
  auto pending = fe.engine->Submit(other);
  ASSERT_TRUE(pending.ok()) << pending.status().ToString();
  fe.engine->Shutdown();
  const auto ended = (*pending)->Collect();
  ASSERT_EQ(ended.size(), 1u);
  ASSERT_TRUE(ended[0].finish_reason.has_value());
  EXPECT_TRUE(ended[0].finish_reason->is_abort())
      << static_cast<int>(ended[0].finish_reason->kind) << " "
      << ended[0].finish_reason->matched_text << " " << ended[0].text;
}

// Jump-forward is on by default and --disable-jump-forward turns it off; meta reports it.
TEST(EngineTest, JumpForwardFlagAndMeta) {
  const char* regex = "[0-9]{2}, the thing is (on|off)\\.";
  for (bool disable : {false, true}) {
    EngineConfig config;
    config.disable_jump_forward = disable;
    FakeEngine fe = MakeEngine(config);
    EXPECT_EQ(fe.engine->settings().enable_jump_forward, !disable);
    GenerateRequest req = Greedy(Prompt(4), 40);
    req.sampling_params.regex = regex;
    auto stream = fe.engine->Submit(req);
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    const auto outputs = (*stream)->Collect();
    ASSERT_EQ(outputs.size(), 1u);
    const GenerateResult& out = outputs[0];
    EXPECT_TRUE(std::regex_match(out.text, std::regex(regex))) << out.text;
    if (disable) {
      EXPECT_EQ(out.meta.jump_forward_tokens, 0);
      EXPECT_EQ(out.meta.forward_passes_saved, 0);
      EXPECT_EQ(out.meta.forward_passes, out.meta.completion_tokens);
    } else {
      EXPECT_GT(out.meta.jump_forward_tokens, 0);
      EXPECT_GT(out.meta.forward_passes_saved, 0);
      EXPECT_EQ(out.meta.forward_passes + out.meta.forward_passes_saved,
                out.meta.completion_tokens);
    }
    const nlohmann::json j = ResultToJson(out, false, nullptr);
    EXPECT_EQ(j["meta_info"]["jump_forward_tokens"], out.meta.jump_forward_tokens);
    EXPECT_EQ(j["meta_info"]["forward_passes_saved"], out.meta.forward_passes_saved);
  }
}

TEST(EngineTest, AbortEndsTheStreamAndFreesEverything) {
  // 1 ms per step: the abort lands long before the 970 steps could finish.
  FakeEngine fe = MakeEngine({}, std::chrono::milliseconds(1));
  GenerateRequest req = Greedy(Prompt(30), 1000 - 30);
  req.rid = "long";
  auto stream = fe.engine->Submit(req);
  ASSERT_TRUE(stream.ok());
  auto first = (*stream)->Next();  // it is running
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(fe.engine->Abort("long"));
  GenerateResult r;
  r.Append(std::move(*first));
  while (auto chunk = (*stream)->Next()) r.Append(std::move(*chunk));
  ASSERT_TRUE(r.finish_reason.has_value());
  EXPECT_TRUE(r.finish_reason->is_abort());
  EXPECT_LT(r.output_ids.size(), 970u);
  EXPECT_FALSE(fe.engine->Abort("long"));
  EXPECT_FALSE(fe.engine->Abort("never-existed"));
  const EngineStats stats = fe.engine->GetStats();
  EXPECT_EQ(stats.live_requests, 0);
  EXPECT_EQ(stats.scheduler.protected_tokens, 0);
  EXPECT_EQ(stats.scheduler.pool_free + stats.scheduler.evictable_tokens,
            stats.scheduler.pool_size);
  EXPECT_EQ(stats.scheduler.aborted_requests, 1);
}

TEST(EngineTest, ParallelSamplesShareThePrefill) {
  FakeEngine fe = MakeEngine();
  GenerateRequest req = Greedy(Prompt(50), 8);
  req.sampling_params.n = 3;
  req.sampling_params.temperature = 0.9f;
  req.sampling_params.sampling_seed = 5;
  auto stream = fe.engine->Submit(req);
  ASSERT_TRUE(stream.ok());
  std::vector<GenerateResult> results = (*stream)->Collect();
  ASSERT_EQ(results.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(results[i].index, i);
    EXPECT_EQ(results[i].output_ids.size(), 8u);
  }
  EXPECT_EQ(results[1].meta.cached_tokens, 49);
  EXPECT_EQ(fe.engine->GetStats().scheduler.prefill_tokens, 50 + 2);
  // Same seed, same samples.
  auto again = fe.engine->Submit(req);
  std::vector<GenerateResult> results2 = (*again)->Collect();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(results2[i].output_ids, results[i].output_ids);
}

TEST(EngineTest, FlushCacheOnlyWhenIdleAndStatsAddUp) {
  // 1 ms per forward pass: the busy request below must still run when FlushCache arrives
  // (without a delay the fake model can finish its 990 tokens first on a loaded machine).
  FakeEngine fe = MakeEngine({}, std::chrono::milliseconds(1));
  auto a = fe.engine->Submit(Greedy(Prompt(60, 1), 5));
  (*a)->Collect();
  auto b = fe.engine->Submit(Greedy(Prompt(60, 1), 5));
  std::vector<GenerateResult> rb = (*b)->Collect();
  EXPECT_EQ(rb[0].meta.cached_tokens, 59);
  EngineStats stats = fe.engine->GetStats();
  EXPECT_EQ(stats.scheduler.cache_hit_tokens, 59);
  EXPECT_EQ(stats.scheduler.prefill_tokens, 61);
  EXPECT_NEAR(stats.cache_hit_rate(), 59.0 / 120.0, 1e-9);
  EXPECT_GT(stats.scheduler.evictable_tokens, 0);

  auto busy = fe.engine->Submit(Greedy(Prompt(10, 2), 1000 - 10));
  (*busy)->Next();
  EXPECT_EQ(fe.engine->FlushCache().code(), StatusCode::kAborted);
  fe.engine->Abort((*busy)->rid());
  (*busy)->Collect();
  EXPECT_TRUE(fe.engine->FlushCache().ok());
  stats = fe.engine->GetStats();
  EXPECT_EQ(stats.scheduler.evictable_tokens, 0);
  EXPECT_EQ(stats.scheduler.pool_free, stats.scheduler.pool_size);
}

TEST(EngineTest, ConcurrentSubmittersGetCorrectOutputs) {
  FakeEngine fe = MakeEngine();
  constexpr int kThreads = 4, kPerThread = 25;
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0}, failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const auto prompt = Prompt(20 + (i % 7) * 5, t * 100 + i % 3);
        auto s = fe.engine->Submit(Greedy(prompt, 6));
        if (!s.ok()) {
          ++failures;
          continue;
        }
        if (i % 5 == 4) fe.engine->Abort((*s)->rid());
        auto results = (*s)->Collect();
        if (!results[0].finish_reason->is_abort() &&
            results[0].output_ids != fe.runner->ReferenceGreedy(prompt, 6)) {
          ++mismatches;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
  const EngineStats stats = fe.engine->GetStats();
  EXPECT_EQ(stats.live_requests, 0);
  EXPECT_EQ(stats.scheduler.protected_tokens, 0);
}

TEST(EngineTest, ShutdownEndsLiveStreams) {
  // 1 ms per step: the 990-token request is still running when Shutdown comes.
  FakeEngine fe = MakeEngine({}, std::chrono::milliseconds(1));
  auto s = fe.engine->Submit(Greedy(Prompt(10), 1000 - 10));
  ASSERT_TRUE(s.ok());
  (*s)->Next();
  fe.engine->Shutdown();
  auto results = (*s)->Collect();
  EXPECT_TRUE(results[0].finish_reason->is_abort());
  EXPECT_EQ(fe.engine->Submit(Greedy(Prompt(10), 1)).status().code(), StatusCode::kAborted);
  EXPECT_EQ(fe.engine->FlushCache().code(), StatusCode::kAborted);
}

TEST(EngineTest, ResultJsonHasSglangShape) {
  FakeEngine fe = MakeEngine();
  GenerateRequest req = Greedy(Prompt(8), 3);
  req.rid = "j1";
  req.return_logprob = true;
  req.logprob_start_len = 0;
  req.top_logprobs_num = 2;
  auto s = fe.engine->Submit(req);
  auto r = (*s)->Collect()[0];
  const FakeTokenTextCodec codec;
  nlohmann::json j = ResultToJson(r, true, &codec);
  EXPECT_EQ(j["text"], r.text);
  EXPECT_EQ(j["output_ids"].size(), 3u);
  const nlohmann::json& meta = j["meta_info"];
  EXPECT_EQ(meta["id"], "j1");
  EXPECT_EQ(meta["finish_reason"]["type"], "length");
  EXPECT_EQ(meta["finish_reason"]["length"], 3);
  EXPECT_EQ(meta["prompt_tokens"], 8);
  EXPECT_EQ(meta["completion_tokens"], 3);
  EXPECT_EQ(meta["cached_tokens"], 0);
  ASSERT_EQ(meta["input_token_logprobs"].size(), 8u);
  EXPECT_TRUE(meta["input_token_logprobs"][0][0].is_null());
  EXPECT_EQ(meta["input_token_logprobs"][1][1], Prompt(8)[1]);
  ASSERT_EQ(meta["output_token_logprobs"].size(), 3u);
  EXPECT_EQ(meta["output_token_logprobs"][0][1], r.output_ids[0]);
  EXPECT_TRUE(meta["output_token_logprobs"][0][2].is_string());
  EXPECT_EQ(meta["output_top_logprobs"][0].size(), 2u);
  EXPECT_EQ(FinishReason::StopString("\n").ToJson(),
            nlohmann::json::parse(R"({"type":"stop","matched":"\n"})"));
  EXPECT_EQ(FinishReason::StopToken(1).ToJson(),
            nlohmann::json::parse(R"({"type":"stop","matched":1})"));
  EXPECT_EQ(FinishReason::Abort("x").ToJson(),
            nlohmann::json::parse(R"({"type":"abort","message":"x"})"));
}

TEST(EngineTest, RetractionThroughTheEngineKeepsOutputs) {
  EngineConfig config;
  config.max_total_tokens = 256;
  config.schedule_conservativeness = 0.05;
  // A slow forward pass keeps the 8 requests in flight together even when the submitting
  // thread is descheduled between submissions (on a loaded machine an instant fake model
  // could finish each request before the next arrives, and nothing would need retracting).
  FakeEngine fe = MakeEngine(config, std::chrono::microseconds(2000));
  std::vector<std::shared_ptr<GenerateStream>> streams;
  for (int i = 0; i < 8; ++i) streams.push_back(*fe.engine->Submit(Greedy(Prompt(20, i), 60)));
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(streams[i]->Collect()[0].output_ids, fe.runner->ReferenceGreedy(Prompt(20, i), 60));
  }
  EXPECT_GT(fe.engine->GetStats().scheduler.retractions, 0);
}

TEST(EngineConfigTest, FlagsMapToTheSchedulerConfig) {
  EngineConfig c;
  c.schedule_policy = "dfs-weight";
  c.radix_eviction_policy = "lfu";
  c.page_size = 4;
  auto sc = ToSchedulerConfig(c, 1 << 14, 2048);
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(sc->schedule_policy, SchedulePolicyKind::kDfsWeight);
  EXPECT_EQ(sc->radix_eviction_policy, EvictionPolicy::kLfu);
  EXPECT_EQ(sc->max_running_requests, 256);
  c.schedule_policy = "shortest";
  EXPECT_NE(ToSchedulerConfig(c, 1 << 14, 2048).status().message().find("fcfs, lpm"),
            std::string::npos);
}

}  // namespace
}  // namespace radixlm
