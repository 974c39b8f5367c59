// Speculative decoding in the scheduler (n-gram drafts verified by the request's own sampler):
// outputs must equal those of the same workload without speculation — greedy, seeded sampling,
// penalties, logprobs, stop tokens, n > 1 style repeats, retraction — while repeated text is
// decoded in fewer forward passes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "scheduler_harness.h"

namespace radixlm::testing {
namespace {

HarnessOptions Options(bool speculate, int64_t pool_tokens = 4096) {
  HarnessOptions o{.config = SmallConfig()};
  o.config.max_total_tokens = pool_tokens;
  o.config.speculative_ngram = speculate;
  if (pool_tokens < 1000) o.config.init_new_token_ratio = 0.05;  // admit optimistically
  return o;
}

// A workload with much repetition: each prompt is asked twice (the second time its answer is
// in the n-gram trie), plus a prompt that repeats one phrase.
std::vector<RequestInput> Workload(bool sampled) {
  PromptGen gen(7);
  std::vector<RequestInput> reqs;
  uint64_t id = 1;
  for (int p = 0; p < 4; ++p) {
    const auto prompt = gen.Tokens(20 + 7 * p);
    for (int rep = 0; rep < 2; ++rep) {
      RequestInput in = SchedulerHarness::Greedy(id++, prompt, 40 + 5 * p);
      if (sampled) {
        in.params.temperature = 0.9f;
        in.params.top_k = 20;
        in.params.top_p = 0.95f;
        in.params.frequency_penalty = 0.3f;
        in.seed = 1000 + p;  // the same seed both times: same sampled answer
        in.return_logprob = true;
        in.top_logprobs_num = 2;
      }
      reqs.push_back(std::move(in));
    }
  }
  std::vector<int32_t> phrase = gen.Tokens(6), periodic;
  for (int i = 0; i < 8; ++i) periodic.insert(periodic.end(), phrase.begin(), phrase.end());
  reqs.push_back(SchedulerHarness::Greedy(id++, periodic, 60));
  return reqs;
}

// Runs each wave to completion before adding the next (so the n-gram trie has seen the
// earlier answers).
std::map<uint64_t, Collected> RunWaves(SchedulerHarness& h,
                                       const std::vector<std::vector<RequestInput>>& waves) {
  for (const auto& wave : waves) {
    for (const auto& r : wave) h.Add(r);
    h.RunUntilIdle();
  }
  return h.results();
}

// The workload in one wave, or in two: the first copy of each prompt, then the second.
std::vector<std::vector<RequestInput>> Waves(const std::vector<RequestInput>& reqs, bool waves) {
  if (!waves) return {reqs};
  std::vector<std::vector<RequestInput>> out(2);
  for (size_t i = 0; i < reqs.size(); ++i) out[i % 2].push_back(reqs[i]);
  return out;
}

void ExpectSameOutputs(std::map<uint64_t, Collected>& a, std::map<uint64_t, Collected>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (auto& [id, ca] : a) {
    const Collected& cb = b[id];
    EXPECT_EQ(ca.ids, cb.ids) << "request " << id;
    EXPECT_EQ(ca.text, cb.text) << "request " << id;
    ASSERT_TRUE(ca.finish.has_value() && cb.finish.has_value());
    EXPECT_EQ(ca.finish->ToJson().dump(), cb.finish->ToJson().dump()) << "request " << id;
    ASSERT_EQ(ca.output_logprobs.size(), cb.output_logprobs.size()) << "request " << id;
    for (size_t i = 0; i < ca.output_logprobs.size(); ++i) {
      EXPECT_EQ(ca.output_logprobs[i].token, cb.output_logprobs[i].token);
      EXPECT_EQ(ca.output_logprobs[i].logprob, cb.output_logprobs[i].logprob);
      EXPECT_EQ(ca.output_logprobs[i].top.size(), cb.output_logprobs[i].top.size());
    }
  }
}

// The workload run without and then with speculation (same pool); expects equal outputs.
struct SpeculativeRun {
  std::map<uint64_t, Collected> outputs;  // with speculation
  SchedulerStats stats, plain_stats;      // with / without
};

SpeculativeRun RunWithAndWithout(const std::vector<std::vector<RequestInput>>& waves,
                                 int64_t pool_tokens = 4096) {
  SchedulerHarness plain(Options(false, pool_tokens)), spec(Options(true, pool_tokens));
  auto want = RunWaves(plain, waves);
  SpeculativeRun run{RunWaves(spec, waves), spec.scheduler().GetStats(),
                     plain.scheduler().GetStats()};
  ExpectSameOutputs(run.outputs, want);
  return run;
}

SpeculativeRun RunWithAndWithout(const std::vector<RequestInput>& reqs, bool waves,
                                 int64_t pool_tokens = 4096) {
  return RunWithAndWithout(Waves(reqs, waves), pool_tokens);
}

TEST(SchedulerSpeculativeTest, GreedyOutputsEqualPlainDecodingInFewerForwards) {
  const auto reqs = Workload(false);
  SpeculativeRun run = RunWithAndWithout(reqs, true);
  auto& got = run.outputs;
  SchedulerHarness probe(Options(false));
  for (const auto& r : reqs) {
    EXPECT_EQ(got[r.id].ids, probe.runner().ReferenceGreedy(r.input_ids, *r.params.max_new_tokens))
        << "request " << r.id;
  }
  const SchedulerStats& stats = run.stats;
  EXPECT_GT(stats.spec_accepted_tokens, 100);
  EXPECT_GT(stats.spec_drafted_tokens, stats.spec_accepted_tokens);
  // A repeated prompt's answer comes in far fewer forward passes than tokens.
  EXPECT_LT(got[2].forward_passes * 2, static_cast<int64_t>(got[2].ids.size()));
  EXPECT_EQ(run.plain_stats.spec_drafted_tokens, 0);
}

TEST(SchedulerSpeculativeTest, SeededSamplingPenaltiesAndLogprobsAreUnchanged) {
  EXPECT_GT(RunWithAndWithout(Workload(true), true).stats.spec_accepted_tokens, 20);
}

TEST(SchedulerSpeculativeTest, StopTokensInsideAnAcceptedDraftEndTheOutputThere) {
  PromptGen gen(3);
  const auto prompt = gen.Tokens(30);
  SchedulerHarness probe(Options(false));
  const auto answer = probe.runner().ReferenceGreedy(prompt, 50);
  std::vector<RequestInput> reqs;
  for (uint64_t id = 1; id <= 2; ++id) {
    RequestInput in = SchedulerHarness::Greedy(id, prompt, 50);
    in.params.stop_token_ids = {answer[30]};  // reached inside the second run's drafts
    reqs.push_back(in);
  }
  // Without the stop the second run would accept long drafts past answer[30].
  SpeculativeRun run = RunWithAndWithout(reqs, true);
  EXPECT_LE(run.outputs[2].ids.size(), 31u);
}

TEST(SchedulerSpeculativeTest, ConcurrentRequestsUnderRetractionStayExact) {
  // A pool too small for everyone: requests are retracted and resumed while drafting.
  EXPECT_GT(RunWithAndWithout(Workload(false), false, 320).stats.retractions, 0);
}

TEST(SchedulerSpeculativeTest, DraftsThatKeepNothingBackOff) {
  // Fresh prompts whose answers never repeat: drafts (from chance n-gram matches) keep
  // nothing, so requests stop drafting for longer and longer and few tokens are drafted.
  PromptGen gen(11);
  SchedulerHarness spec(Options(true));
  for (uint64_t id = 1; id <= 8; ++id) spec.Add(SchedulerHarness::Greedy(id, gen.Tokens(40), 120));
  spec.RunUntilIdle();
  const SchedulerStats stats = spec.scheduler().GetStats();
  EXPECT_GT(stats.spec_verify_steps, 800);
  EXPECT_GT(stats.spec_drafted_tokens, 0);
  EXPECT_LT(stats.spec_drafted_tokens * 4, stats.spec_verify_steps);
}

// Grammar-constrained requests draft too: regex, JSON schema and EBNF grammars, one regex with
// forced text (jump-forward). Three waves: each prompt unconstrained (its answer fills the trie
// with tokens the grammars forbid, so drafts must be cut), then constrained, then constrained
// again (now the trie holds the constrained answers, so drafts are kept).
constexpr const char* kLowerRegex = "[a-z ]{0,200}";
constexpr const char* kJumpRegex = "([a-z]+ the end ){1,8}[0-9]";

std::vector<std::vector<RequestInput>> GrammarWaves() {
  const std::vector<std::shared_ptr<const grammar::CompiledGrammar>> grammars = {
      CompileForFakeVocab(grammar::GrammarKind::kRegex, kLowerRegex),
      CompileForFakeVocab(grammar::GrammarKind::kRegex, kJumpRegex),
      CompileForFakeVocab(grammar::GrammarKind::kJsonSchema, R"({"type": "integer"})"),
      CompileForFakeVocab(grammar::GrammarKind::kEbnf,
                          R"(root ::= word (" " word)* "."
word ::= [a-z]+ | [0-9]+)"),
  };
  PromptGen gen(5);
  std::vector<std::vector<RequestInput>> waves(3);
  uint64_t id = 1;
  for (int p = 0; p < 4; ++p) {
    const auto prompt = gen.Tokens(15 + 4 * p);
    waves[0].push_back(SchedulerHarness::Greedy(id++, prompt, 60));
    for (int rep = 1; rep <= 2; ++rep) {
      for (const auto& g : grammars) {
        RequestInput in = SchedulerHarness::Greedy(id++, prompt, 60, /*ignore_eos=*/false);
        in.grammar = g;
        waves[rep].push_back(std::move(in));
      }
    }
  }
  return waves;
}

TEST(SchedulerSpeculativeTest, GrammarConstrainedDraftsAreCutAndOutputsUnchanged) {
  const auto waves = GrammarWaves();
  SpeculativeRun run = RunWithAndWithout(waves);
  EXPECT_GT(run.stats.spec_grammar_pruned_tokens, 0);
  EXPECT_GT(run.stats.jump_forwards, 0);
  int64_t constrained_accepted = 0;
  for (size_t w = 1; w < waves.size(); ++w) {
    for (const RequestInput& in : waves[w]) {
      const Collected& c = run.outputs[in.id];
      EXPECT_GT(c.spec_verify_ct, 0) << "request " << in.id;
      if (w == 2) constrained_accepted += c.spec_accepted_tokens;
    }
  }
  // The second constrained wave repeats the first: most of it comes from kept drafts.
  EXPECT_GT(constrained_accepted, 100);
  // Outputs still match their grammars (the regex ones checked here; all equal plain decoding).
  for (const RequestInput& in : waves[2]) {
    const Collected& c = run.outputs[in.id];
    if (c.finish->kind != FinishReason::Kind::kStopToken) continue;
    if (in.grammar == waves[1][0].grammar) {
      EXPECT_TRUE(std::regex_match(c.text, std::regex(kLowerRegex))) << c.text;
    } else if (in.grammar == waves[1][1].grammar) {
      EXPECT_TRUE(std::regex_match(c.text, std::regex(kJumpRegex))) << c.text;
    }
  }
}

TEST(SchedulerSpeculativeTest, GrammarRequestsUnderRetractionStayExact) {
  // Every wave at once in a pool too small for them: constrained requests are retracted and
  // resumed (their matchers kept) while drafting.
  std::vector<RequestInput> all;
  for (const auto& wave : GrammarWaves()) all.insert(all.end(), wave.begin(), wave.end());
  EXPECT_GT(RunWithAndWithout(all, false, 400).stats.retractions, 0);
}

TEST(SchedulerSpeculativeTest, RefusesPagedPools) {
  SchedulerConfig c = SmallConfig();
  c.speculative_ngram = true;
  c.page_size = 4;
  EXPECT_FALSE(c.Validate().ok());
  c.page_size = 1;
  EXPECT_TRUE(c.Validate().ok());
  c.ngram.num_draft_tokens = 100;
  EXPECT_FALSE(c.Validate().ok());
}

}  // namespace
}  // namespace radixlm::testing
