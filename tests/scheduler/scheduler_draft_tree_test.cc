// Draft-model speculation with top-k trees (STANDALONE, speculative_eagle_topk > 1): the draft
// model expands each node into its 3 likeliest tokens, and the target verifies the tree. The
// fake runner checks every prefix slot it is given (position and hash chain), so each draft
// step's prefix — the request's row, the root and the node's ancestors in their scratch slots
// — is checked; the harness checks the pool's accounting after every step. Outputs must equal
// those without speculation. What trees share with chains (a disagreeing draft model, grammars,
// retraction, a failing draft forward) runs for both in scheduler_draft_model_test.cc
// (DraftModelKindTest); the tree shape's config checks are in scheduler_speculative_test.cc.
#include <gtest/gtest.h>

#include <vector>

#include "speculative_workloads.h"

namespace radixlm::testing {
namespace {

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

}  // namespace
}  // namespace radixlm::testing
