// Randomized workloads (random_workload.h) against the fake model: whatever the policy, paging,
// chunking, cache setting or memory pressure, every greedy output equals the unbatched, uncached
// reference, the invariants hold after every step, and the idle pool is all free or in the tree.
#include <gtest/gtest.h>

#include <tuple>

#include "random_workload.h"
#include "scheduler_harness.h"

namespace radixlm::testing {
namespace {

struct WorkloadParams {
  SchedulePolicyKind policy;
  int32_t page_size;
  bool disable_radix;
  int64_t chunk;        // chunked_prefill_size
  int64_t pool_tokens;  // max_total_tokens (small => retraction)
};

std::string Name(const ::testing::TestParamInfo<WorkloadParams>& info) {
  const WorkloadParams& p = info.param;
  std::string s = SchedulePolicyName(p.policy);
  for (char& c : s) c = c == '-' ? '_' : c;
  return s + "_page" + std::to_string(p.page_size) + (p.disable_radix ? "_nocache" : "") +
         "_chunk" + (p.chunk > 0 ? std::to_string(p.chunk) : std::string("off")) + "_pool" +
         std::to_string(p.pool_tokens);
}

class WorkloadTest : public ::testing::TestWithParam<WorkloadParams> {};

TEST_P(WorkloadTest, GreedyOutputsMatchReference) {
  const WorkloadParams& wp = GetParam();
  int64_t total_retractions = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    HarnessOptions opt;
    opt.config = SmallConfig();
    opt.config.schedule_policy = wp.policy;
    opt.config.page_size = wp.page_size;
    opt.config.disable_radix_cache = wp.disable_radix;
    opt.config.chunked_prefill_size = wp.chunk;
    opt.config.max_total_tokens = wp.pool_tokens;
    opt.config.max_running_requests = 8;
    opt.config.random_seed = seed;
    opt.config.starvation_max_skips = 8;
    // With a tiny pool, admit optimistically so decodes run dry and retract.
    if (wp.pool_tokens <= 400) opt.config.init_new_token_ratio = 0.05;
    SchedulerHarness h(opt);
    PromptGen gen(seed);
    const std::map<uint64_t, WorkloadRequest> expected =
        RunRandomWorkload(h, gen, RandomWorkload{});
    if (HasFatalFailure()) return;
    ExpectReferenceOutputs(h, expected);
    if (HasFatalFailure()) return;
    for (const auto& [id, e] : expected) {
      const Collected& c = h.result(id);
      EXPECT_EQ(*c.finish, FinishReason::Length(e.max_new_tokens)) << id;
      EXPECT_EQ(c.text, h.codec().Decode(c.ids)) << id;
      EXPECT_EQ(c.prompt_tokens, static_cast<int64_t>(e.prompt.size()));
    }
    EXPECT_EQ(h.scheduler().GetStats().finished_requests, static_cast<int64_t>(expected.size()));
    total_retractions += h.scheduler().GetStats().retractions;
  }
  if (wp.pool_tokens <= 400) {
    EXPECT_GT(total_retractions, 0) << "tiny pool should retract";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, WorkloadTest,
    ::testing::Values(WorkloadParams{SchedulePolicyKind::kLpm, 1, false, 64, 4096},
                      WorkloadParams{SchedulePolicyKind::kLpm, 4, false, 64, 4096},
                      WorkloadParams{SchedulePolicyKind::kLpm, 1, true, 64, 4096},
                      WorkloadParams{SchedulePolicyKind::kLpm, 1, false, -1, 4096},
                      WorkloadParams{SchedulePolicyKind::kLpm, 1, false, 32, 300},
                      WorkloadParams{SchedulePolicyKind::kLpm, 4, false, 48, 320},
                      WorkloadParams{SchedulePolicyKind::kFcfs, 1, false, 64, 4096},
                      WorkloadParams{SchedulePolicyKind::kFcfs, 1, true, 32, 300},
                      WorkloadParams{SchedulePolicyKind::kDfsWeight, 1, false, 64, 4096},
                      WorkloadParams{SchedulePolicyKind::kDfsWeight, 2, false, 32, 320},
                      WorkloadParams{SchedulePolicyKind::kLof, 1, false, 64, 4096},
                      WorkloadParams{SchedulePolicyKind::kRandom, 1, false, 64, 300},
                      WorkloadParams{SchedulePolicyKind::kPriority, 4, false, 64, 4096}),
    Name);

}  // namespace
}  // namespace radixlm::testing
