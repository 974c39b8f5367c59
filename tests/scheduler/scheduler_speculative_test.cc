// Speculative decoding in the scheduler (n-gram drafts verified by the request's own sampler):
// outputs must equal those of the same workload without speculation — greedy, seeded sampling,
// penalties, logprobs, stop tokens, n > 1 style repeats, retraction — while repeated text is
// decoded in fewer forward passes.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "speculative_workloads.h"

namespace radixlm::testing {
namespace {

TEST(SchedulerSpeculativeTest, GreedyOutputsEqualPlainDecodingInFewerForwards) {
  const auto reqs = Workload(false);
  SpeculativeRun run = RunWithAndWithout(reqs, true);
  auto& got = run.outputs;
  SchedulerHarness probe(Options(Drafts::kNone));
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
  SchedulerHarness probe(Options(Drafts::kNone));
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

TEST(SchedulerSpeculativeTest, AFreelyRunningFillerLeavesOutputsUnchanged) {
  // The trie's filler not waited for (as when serving): drafts depend on how far it got.
  for (const bool grammars : {false, true}) {
    HarnessOptions options = Options(Drafts::kNgram, grammars ? 400 : 320);
    options.sync_ngram_fills = false;
    SchedulerHarness plain(Options(Drafts::kNone, grammars ? 400 : 320)), spec(options);
    const auto waves = grammars ? GrammarWaves() : Waves(Workload(false), true);
    auto want = RunWaves(plain, waves);
    auto got = RunWaves(spec, waves);
    ExpectSameOutputs(got, want);
  }
}

TEST(SchedulerSpeculativeTest, DraftsThatKeepNothingBackOff) {
  // Fresh prompts whose answers never repeat: drafts (from chance n-gram matches) keep
  // nothing, so requests stop drafting for longer and longer and few tokens are drafted.
  PromptGen gen(11);
  SchedulerHarness spec(Options(Drafts::kNgram));
  for (uint64_t id = 1; id <= 8; ++id) spec.Add(SchedulerHarness::Greedy(id, gen.Tokens(40), 120));
  spec.RunUntilIdle();
  const SchedulerStats stats = spec.scheduler().GetStats();
  EXPECT_GT(stats.spec_verify_steps, 800);
  EXPECT_GT(stats.spec_drafted_tokens, 0);
  EXPECT_LT(stats.spec_drafted_tokens * 4, stats.spec_verify_steps);
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

TEST(SchedulerSpeculativeTest, AFillerQueueThatDropsWindowsLeavesOutputsUnchanged) {
  // A queue of one token: nearly every round's windows are dropped (how many depends on the
  // filler thread's timing), so drafts come from whatever reached the trie.
  HarnessOptions options = Options(Drafts::kNgram);
  options.config.speculative_ngram_fill_queue_tokens = 1;
  options.sync_ngram_fills = false;
  SchedulerHarness plain(Options(Drafts::kNone)), spec(options);
  const auto waves = Waves(Workload(false), true);
  auto want = RunWaves(plain, waves);
  auto got = RunWaves(spec, waves);
  ExpectSameOutputs(got, want);
  EXPECT_EQ(plain.scheduler().GetStats().spec_ngram_dropped_tokens, 0);
}

// What Validate accepts of each speculative setting, edited onto SmallConfig() (n-gram drafts,
// draft-model chains and top-k trees alike).
TEST(SchedulerSpeculativeTest, ConfigChecksEverySpeculativeSetting) {
  struct Case {
    const char* what;
    void (*edit)(SchedulerConfig&);
    bool valid;
  };
  const Case cases[] = {
      {"n-gram", [](SchedulerConfig& c) { c.speculative_ngram = true; }, true},
      {"n-gram, paged pool",
       [](SchedulerConfig& c) {
         c.speculative_ngram = true;
         c.page_size = 4;
       },
       false},
      {"n-gram, 100-node trees",
       [](SchedulerConfig& c) {
         c.speculative_ngram = true;
         c.ngram.num_draft_tokens = 100;
       },
       false},
      {"n-gram, no filler queue",
       [](SchedulerConfig& c) {
         c.speculative_ngram = true;
         c.speculative_ngram_fill_queue_tokens = 0;
       },
       false},
      {"draft model, 0 steps",
       [](SchedulerConfig& c) {
         c.speculative_draft_model = true;
         c.speculative_num_steps = 0;
       },
       false},
      {"draft model and n-gram (one draft source at a time)",
       [](SchedulerConfig& c) { c.speculative_draft_model = c.speculative_ngram = true; }, false},
      {"draft model, paged pool",
       [](SchedulerConfig& c) {
         c.speculative_draft_model = true;
         c.page_size = 4;
       },
       false},
      {"draft trees, top 0",
       [](SchedulerConfig& c) {
         c.speculative_draft_model = true;
         c.speculative_eagle_topk = 0;
       },
       false},
      {"draft trees, top 4",
       [](SchedulerConfig& c) {
         c.speculative_draft_model = true;
         c.speculative_eagle_topk = 4;
       },
       true},
      {"draft trees, top 4 of 1 node",
       [](SchedulerConfig& c) {
         c.speculative_draft_model = true;
         c.speculative_eagle_topk = 4;
         c.speculative_num_draft_tokens = 1;
       },
       false},
      {"draft trees, top 4 of 65 nodes",
       [](SchedulerConfig& c) {
         c.speculative_draft_model = true;
         c.speculative_eagle_topk = 4;
         c.speculative_num_draft_tokens = 65;
       },
       false},
      {"draft chains (their size is speculative_num_steps + 1)",
       [](SchedulerConfig& c) {
         c.speculative_draft_model = true;
         c.speculative_num_draft_tokens = 65;
       },
       true},
  };
  EXPECT_TRUE(SmallConfig().Validate().ok());
  for (const Case& test : cases) {
    SchedulerConfig c = SmallConfig();
    test.edit(c);
    EXPECT_EQ(c.Validate().ok(), test.valid) << test.what;
  }
}

}  // namespace
}  // namespace radixlm::testing
