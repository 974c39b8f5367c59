// Workloads and runners shared by the speculative decoding tests: each runs a workload with
// and without speculation (n-gram or draft-model drafts) over the fake model and expects the
// same outputs.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "scheduler_harness.h"

namespace radixlm::testing {

// kDraftTree: a draft model drafting top-3 trees of up to 10 nodes (chains otherwise).
enum class Drafts { kNone, kNgram, kDraftModel, kDraftTree };

// SmallConfig with speculation from `drafts`; with kDraftModel / kDraftTree the draft is a
// second fake model, the target itself when draft_salt is 0 (FakeModelConfig::logits_salt).
inline HarnessOptions Options(Drafts drafts, int64_t pool_tokens = 4096, uint64_t draft_salt = 0) {
  HarnessOptions o{.config = SmallConfig()};
  o.config.max_total_tokens = pool_tokens;
  o.config.speculative_ngram = drafts == Drafts::kNgram;
  o.config.speculative_draft_model = drafts == Drafts::kDraftModel || drafts == Drafts::kDraftTree;
  if (drafts == Drafts::kDraftTree) {
    o.config.speculative_eagle_topk = 3;
    o.config.speculative_num_draft_tokens = 10;
  }
  o.draft_logits_salt = draft_salt;
  if (pool_tokens < 1000) o.config.init_new_token_ratio = 0.05;  // admit optimistically
  return o;
}

// A workload with much repetition: each prompt is asked twice (the second time its answer is
// in the n-gram trie), plus a prompt that repeats one phrase.
inline std::vector<RequestInput> Workload(bool sampled) {
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

// Runs each wave to completion before adding the next, then waits for the n-gram trie's
// background filler (so the next wave's drafts see the earlier answers whatever the timing).
// Within a wave, drafts depend on how far the filler got; outputs must not.
inline std::map<uint64_t, Collected> RunWaves(SchedulerHarness& h,
                                              const std::vector<std::vector<RequestInput>>& waves) {
  for (const auto& wave : waves) {
    for (const auto& r : wave) h.Add(r);
    h.RunUntilIdle();
    h.scheduler().FlushNgramFills();
  }
  return h.results();
}

// The workload in one wave, or in two: the first copy of each prompt, then the second.
inline std::vector<std::vector<RequestInput>> Waves(const std::vector<RequestInput>& reqs,
                                                    bool waves) {
  if (!waves) return {reqs};
  std::vector<std::vector<RequestInput>> out(2);
  for (size_t i = 0; i < reqs.size(); ++i) out[i % 2].push_back(reqs[i]);
  return out;
}

inline void ExpectSameOutputs(std::map<uint64_t, Collected>& a, std::map<uint64_t, Collected>& b) {
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

inline SpeculativeRun RunWithAndWithout(const std::vector<std::vector<RequestInput>>& waves,
                                        int64_t pool_tokens = 4096, Drafts drafts = Drafts::kNgram,
                                        uint64_t draft_salt = 0) {
  SchedulerHarness plain(Options(Drafts::kNone, pool_tokens)),
      spec(Options(drafts, pool_tokens, draft_salt));
  auto want = RunWaves(plain, waves);
  SpeculativeRun run{RunWaves(spec, waves), spec.scheduler().GetStats(),
                     plain.scheduler().GetStats()};
  ExpectSameOutputs(run.outputs, want);
  return run;
}

inline SpeculativeRun RunWithAndWithout(const std::vector<RequestInput>& reqs, bool waves,
                                        int64_t pool_tokens = 4096, Drafts drafts = Drafts::kNgram,
                                        uint64_t draft_salt = 0) {
  return RunWithAndWithout(Waves(reqs, waves), pool_tokens, drafts, draft_salt);
}

// Grammar-constrained requests draft too: regex, JSON schema and EBNF grammars, one regex with
// forced text (jump-forward). Three waves: each prompt unconstrained (its answer fills the trie
// with tokens the grammars forbid, so drafts must be cut), then constrained, then constrained
// again (now the trie holds the constrained answers, so drafts are kept).
inline constexpr const char* kLowerRegex = "[a-z ]{0,200}";
inline constexpr const char* kJumpRegex = "([a-z]+ the end ){1,8}[0-9]";

inline std::vector<std::vector<RequestInput>> GrammarWaves() {
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

}  // namespace radixlm::testing
