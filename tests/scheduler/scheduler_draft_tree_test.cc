// Draft-model speculation with top-k trees (STANDALONE, speculative_eagle_topk > 1): the draft
// model expands each node into its 3 likeliest tokens, and the target verifies the tree. The
// fake runner checks every prefix slot it is given (position and hash chain), so each draft
// step's prefix — the request's row, the root and the node's ancestors in their scratch slots
// — is checked; the harness checks the pool's accounting after every step. Outputs must equal
// those without speculation.
#include <gtest/gtest.h>

#include <vector>

#include "speculative_workloads.h"

namespace radixlm::testing {
namespace {

constexpr uint64_t kOtherModel = 0x5A17;  // a draft model that disagrees on some contexts

TEST(SchedulerDraftTreeTest, TheTargetAsItsOwnDraftKeepsTheWholeGreedyChain) {
  const auto reqs = Workload(false);
  // Every request drafts whole trees (no per-batch cap), chains and trees alike.
  HarnessOptions chain_options = Options(Drafts::kDraftModel),
                 tree_options = Options(Drafts::kDraftTree);
  chain_options.config.speculative_max_draft_tokens_per_batch = 4096;
  tree_options.config.speculative_max_draft_tokens_per_batch = 4096;
  // Whole trees every round: no pacing by kept share (side branches lower it).
  chain_options.config.speculative_pacing = false;
  tree_options.config.speculative_pacing = false;
  SchedulerHarness chain(chain_options), tree(tree_options), probe(Options(Drafts::kNone));
  auto chain_out = RunWaves(chain, {reqs});
  auto tree_out = RunWaves(tree, {reqs});
  for (const auto& r : reqs) {
    EXPECT_EQ(tree_out[r.id].ids,
              probe.runner().ReferenceGreedy(r.input_ids, *r.params.max_new_tokens))
        << "request " << r.id;
    // The tree holds the chain, which the target keeps whole: the same forward passes.
    EXPECT_EQ(tree_out[r.id].forward_passes, chain_out[r.id].forward_passes) << r.id;
    EXPECT_EQ(tree_out[r.id].spec_accepted_tokens, chain_out[r.id].spec_accepted_tokens) << r.id;
  }
  const SchedulerStats c = chain.scheduler().GetStats(), t = tree.scheduler().GetStats();
  EXPECT_EQ(c.spec_accepted_tokens, c.spec_drafted_tokens);
  EXPECT_GT(t.spec_accepted_tokens, 200);
  EXPECT_EQ(t.spec_accepted_tokens, c.spec_accepted_tokens);
  // Side branches were drafted (and rejected) beside the chain.
  EXPECT_GT(t.spec_drafted_tokens, c.spec_drafted_tokens + 200);
}

TEST(SchedulerDraftTreeTest, ADisagreeingDraftModelLeavesOutputsUnchanged) {
  for (bool sampled : {false, true}) {
    SCOPED_TRACE(sampled ? "seeded sampling, penalties, logprobs" : "greedy");
    SpeculativeRun tree =
        RunWithAndWithout(Workload(sampled), false, 4096, Drafts::kDraftTree, kOtherModel);
    EXPECT_GT(tree.stats.spec_accepted_tokens, sampled ? 10 : 50);
    EXPECT_GT(tree.stats.spec_drafted_tokens, tree.stats.spec_accepted_tokens + 50);
  }
}

TEST(SchedulerDraftTreeTest, GrammarsAndJumpForwardComposeWithDraftTrees) {
  SpeculativeRun run = RunWithAndWithout(GrammarWaves(), 4096, Drafts::kDraftTree, kOtherModel);
  EXPECT_GT(run.stats.spec_accepted_tokens, 100);
  EXPECT_GT(run.stats.jump_forwards, 0);
}

TEST(SchedulerDraftTreeTest, RetractionUnderATinyPoolStaysExact) {
  std::vector<RequestInput> all = Workload(false);
  for (const auto& wave : GrammarWaves()) all.insert(all.end(), wave.begin(), wave.end());
  for (size_t i = 0; i < all.size(); ++i) all[i].id = i + 1;
  SpeculativeRun run = RunWithAndWithout(all, false, 400, Drafts::kDraftTree, kOtherModel);
  EXPECT_GT(run.stats.retractions, 0);
  EXPECT_GT(run.stats.spec_accepted_tokens, 0);
}

TEST(SchedulerDraftTreeTest, ADraftForwardFailureMidTreeFreesEverySlot) {
  SchedulerHarness h(Options(Drafts::kDraftTree));
  PromptGen gen(9);
  for (uint64_t id = 1; id <= 4; ++id) h.Add(SchedulerHarness::Greedy(id, gen.Tokens(12), 30));
  for (int i = 0; i < 3; ++i) h.Step();  // prefilled and drafting
  // The roots' draft step succeeds; the next one, over frontier nodes holding scratch slots,
  // fails: those slots must go back to the pool (the invariants count every slot).
  h.draft_runner()->FailNextForward(/*skip=*/1);
  EXPECT_FALSE(h.scheduler().Step().ok());
  const Status invariants = h.scheduler().CheckInvariants();
  ASSERT_TRUE(invariants.ok()) << invariants.ToString();
  h.RunUntilIdle();
  for (uint64_t id = 1; id <= 4; ++id) {
    ASSERT_TRUE(h.result(id).finish.has_value());
    EXPECT_TRUE(h.result(id).finish->is_abort()) << id;
  }
}

TEST(SchedulerDraftTreeTest, ConfigChecksTheTreeShape) {
  SchedulerConfig c = SmallConfig();
  c.speculative_draft_model = true;
  c.speculative_eagle_topk = 0;
  EXPECT_FALSE(c.Validate().ok());
  c.speculative_eagle_topk = 4;
  EXPECT_TRUE(c.Validate().ok());
  c.speculative_num_draft_tokens = 1;
  EXPECT_FALSE(c.Validate().ok());
  c.speculative_num_draft_tokens = 65;
  EXPECT_FALSE(c.Validate().ok());
  c.speculative_eagle_topk = 1;  // chains: the size is speculative_num_steps + 1
  EXPECT_TRUE(c.Validate().ok());
}

}  // namespace
}  // namespace radixlm::testing
