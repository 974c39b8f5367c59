// Draft-model speculation (STANDALONE) in the scheduler: a second fake model drafts chains (and,
// in DraftModelKindTest, top-k trees too) that the target verifies. The fake runner checks every
// prefix slot it is given (position and hash chain of the whole sequence), so the draft model's KV
// cache — kept slot for slot with the target's by mirroring its forwards — is checked on every
// draft step. Outputs must equal those without speculation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "speculative_workloads.h"

namespace radixlm::testing {
namespace {

constexpr uint64_t kOtherModel = 0x5A17;  // a draft model that disagrees on some contexts

TEST(SchedulerDraftModelTest, TheTargetAsItsOwnDraftHasEveryDraftKept) {
  const auto reqs = Workload(false);
  SpeculativeRun run = RunWithAndWithout(reqs, false, 4096, Drafts::kDraftModel);
  SchedulerHarness probe(Options(Drafts::kNone));
  for (const auto& r : reqs) {
    EXPECT_EQ(run.outputs[r.id].ids,
              probe.runner().ReferenceGreedy(r.input_ids, *r.params.max_new_tokens))
        << "request " << r.id;
  }
  EXPECT_GT(run.stats.spec_drafted_tokens, 200);
  EXPECT_EQ(run.stats.spec_accepted_tokens, run.stats.spec_drafted_tokens);
  // Three drafted tokens and the bonus token per verify forward.
  const Collected& c = run.outputs[1];
  EXPECT_LT(c.forward_passes * 3, static_cast<int64_t>(c.ids.size())) << c.forward_passes;
}

TEST(SchedulerDraftModelTest, StopTokensInsideAChainEndTheOutputThere) {
  PromptGen gen(3);
  const auto prompt = gen.Tokens(30);
  SchedulerHarness probe(Options(Drafts::kNone));
  const auto answer = probe.runner().ReferenceGreedy(prompt, 50);
  RequestInput in = SchedulerHarness::Greedy(1, prompt, 50);
  in.params.stop_token_ids = {answer[20]};
  SpeculativeRun run = RunWithAndWithout({in}, false, 4096, Drafts::kDraftModel);
  EXPECT_LE(run.outputs[1].ids.size(), 21u);
}

// Chains (speculative_eagle_topk 1) and top-k trees (scheduler_draft_tree_test.cc) alike.
class DraftModelKindTest : public ::testing::TestWithParam<Drafts> {};

TEST_P(DraftModelKindTest, ADisagreeingDraftModelLeavesOutputsUnchanged) {
  for (bool sampled : {false, true}) {
    SCOPED_TRACE(sampled ? "seeded sampling, penalties, logprobs" : "greedy");
    SpeculativeRun run = RunWithAndWithout(Workload(sampled), false, 4096, GetParam(), kOtherModel);
    // Greedy drafts agree less often with sampled tokens, but they still do.
    EXPECT_GT(run.stats.spec_accepted_tokens, sampled ? 10 : 50);
    EXPECT_GT(run.stats.spec_drafted_tokens, run.stats.spec_accepted_tokens + 50);
  }
}

TEST_P(DraftModelKindTest, GrammarsAndJumpForwardCompose) {
  SpeculativeRun run = RunWithAndWithout(GrammarWaves(), 4096, GetParam(), kOtherModel);
  EXPECT_GT(run.stats.spec_accepted_tokens, 100);
  EXPECT_GT(run.stats.jump_forwards, 0);
}

TEST_P(DraftModelKindTest, RetractionUnderATinyPoolStaysExact) {
  std::vector<RequestInput> all = Workload(false);
  for (const auto& wave : GrammarWaves()) all.insert(all.end(), wave.begin(), wave.end());
  for (size_t i = 0; i < all.size(); ++i) all[i].id = i + 1;
  SpeculativeRun run = RunWithAndWithout(all, false, 400, GetParam(), kOtherModel);
  EXPECT_GT(run.stats.retractions, 0);
  EXPECT_GT(run.stats.spec_accepted_tokens, 0);
}

TEST_P(DraftModelKindTest, ADraftForwardFailureAbortsTheBatchAndFreesItsSlots) {
  // The first draft step fails, or the second: then a chain's node 1 holds a slot, a tree's
  // frontier nodes scratch slots, and all must go back to the pool (the invariants count
  // every slot).
  for (int64_t skip : {0, 1}) {
    SCOPED_TRACE("draft forwards before the failing one: " + std::to_string(skip));
    SchedulerHarness h(Options(GetParam()));
    PromptGen gen(9);
    for (uint64_t id = 1; id <= 4; ++id) h.Add(SchedulerHarness::Greedy(id, gen.Tokens(12), 30));
    for (int i = 0; i < 3; ++i) h.Step();  // prefilled and drafting
    h.draft_runner()->FailNextForward(skip);
    EXPECT_FALSE(h.scheduler().Step().ok());
    const Status invariants = h.scheduler().CheckInvariants();
    ASSERT_TRUE(invariants.ok()) << invariants.ToString();
    h.RunUntilIdle();
    for (uint64_t id = 1; id <= 4; ++id) {
      ASSERT_TRUE(h.result(id).finish.has_value());
      EXPECT_TRUE(h.result(id).finish->is_abort()) << id;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ChainsAndTrees, DraftModelKindTest,
                         ::testing::Values(Drafts::kDraftModel, Drafts::kDraftTree),
                         [](const ::testing::TestParamInfo<Drafts>& info) {
                           return info.param == Drafts::kDraftTree ? "Trees" : "Chains";
                         });

TEST(SchedulerDraftModelTest, CreateChecksTheDraftModel) {
  SchedulerConfig c = SmallConfig();
  FakeModelRunner target({.kv_slots = c.max_total_tokens + 1});
  FakeModelRunner other_vocab({.vocab_size = 32, .kv_slots = c.max_total_tokens + 1});
  FakeModelRunner small_kv({.kv_slots = 8});
  auto create = [&](const SchedulerConfig& config, ModelRunner* draft) {
    return Scheduler::Create(config, &target, nullptr, nullptr, draft).status();
  };
  EXPECT_FALSE(create(c, &target).ok());  // a draft model without speculative_draft_model
  c.speculative_draft_model = true;
  EXPECT_FALSE(create(c, nullptr).ok());
  const Status vocab = create(c, &other_vocab);
  EXPECT_EQ(vocab.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(vocab.message().find("vocabulary"), std::string::npos) << vocab.message();
  EXPECT_FALSE(create(c, &small_kv).ok());
  EXPECT_TRUE(create(c, &target).ok());
  // The config's own checks: SchedulerSpeculativeTest.ConfigChecksEverySpeculativeSetting.
}

}  // namespace
}  // namespace radixlm::testing
