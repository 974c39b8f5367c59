// Hybrid sliding-window memory in the scheduler (a second pool for windowed layers, an
// SWA-aware radix tree): against the fake model, whose windowed rows are checked for every key
// a window can see, greedy outputs equal the unbatched reference under memory pressure,
// chunking, paging and speculation, while the tree keeps far more prefix tokens than the
// windowed pool could hold.
#include <gtest/gtest.h>

#include <string>

#include "random_workload.h"
#include "scheduler_harness.h"

namespace radixlm::testing {
namespace {

constexpr int64_t kWindow = 16;

struct SwaParams {
  int32_t page_size;
  int64_t chunk;        // chunked_prefill_size
  int64_t pool_tokens;  // full-attention pool
  int64_t swa_tokens;   // windowed pool
  bool disable_radix;
  bool speculative;
};

std::string Name(const ::testing::TestParamInfo<SwaParams>& info) {
  const SwaParams& p = info.param;
  return "page" + std::to_string(p.page_size) + "_chunk" +
         (p.chunk > 0 ? std::to_string(p.chunk) : std::string("off")) + "_pool" +
         std::to_string(p.pool_tokens) + "_swa" + std::to_string(p.swa_tokens) +
         (p.disable_radix ? "_nocache" : "") + (p.speculative ? "_ngram" : "");
}

SchedulerConfig SwaConfig(const SwaParams& p) {
  SchedulerConfig c = SmallConfig();
  c.page_size = p.page_size;
  c.chunked_prefill_size = p.chunk;
  c.max_total_tokens = p.pool_tokens;
  c.swa_max_total_tokens = p.swa_tokens;
  c.sliding_window = kWindow;
  c.disable_radix_cache = p.disable_radix;
  c.speculative_ngram = p.speculative;
  c.max_running_requests = 8;
  c.starvation_max_skips = 8;
  return c;
}

class SwaWorkloadTest : public ::testing::TestWithParam<SwaParams> {};

TEST_P(SwaWorkloadTest, GreedyOutputsMatchReference) {
  const SwaParams& sp = GetParam();
  int64_t hits = 0, tombstoned_max = 0, released_by_decode = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    HarnessOptions opt;
    opt.config = SwaConfig(sp);
    opt.config.random_seed = seed;
    SchedulerHarness h(opt);
    PromptGen gen(seed);
    RandomWorkload workload;
    workload.min_system_tokens = 20;
    workload.min_requests = 8;
    workload.max_arrival_steps = 20000;
    // Some outputs run well past the window, so decodes release windowed KV.
    workload.max_new_tokens = [](PromptGen& g) {
      return static_cast<int32_t>(g.Uniform(1, 3) == 1 ? g.Uniform(30, 70) : g.Uniform(1, 20));
    };
    workload.after_step = [&] {
      const SchedulerStats s = h.scheduler().GetStats();
      tombstoned_max =
          std::max(tombstoned_max, s.evictable_tokens + s.protected_tokens -
                                       s.swa_evictable_tokens - s.swa_protected_tokens);
      released_by_decode =
          std::max(released_by_decode, s.pool_used - (s.swa_pool_size - s.swa_pool_free));
    };
    const std::map<uint64_t, WorkloadRequest> expected = RunRandomWorkload(h, gen, workload);
    if (HasFatalFailure()) return;
    ExpectReferenceOutputs(h, expected);
    if (HasFatalFailure()) return;
    const SchedulerStats s = h.scheduler().GetStats();
    EXPECT_EQ(s.finished_requests, static_cast<int64_t>(expected.size()));
    hits += s.cache_hit_tokens;
    EXPECT_EQ(s.swa_pool_size, sp.swa_tokens / sp.page_size * sp.page_size);
  }
  // Full-layer KV outlived windowed KV (tombstones, or tokens a decode released).
  EXPECT_GT(std::max(tombstoned_max, released_by_decode), 0);
  if (!sp.disable_radix) {
    EXPECT_GT(hits, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, SwaWorkloadTest,
                         ::testing::Values(SwaParams{1, 64, 4096, 160, false, false},
                                           SwaParams{4, 64, 4096, 160, false, false},
                                           SwaParams{1, -1, 4096, 400, false, false},
                                           SwaParams{1, 32, 300, 120, false, false},
                                           SwaParams{4, 48, 320, 120, false, false},
                                           SwaParams{1, 64, 4096, 160, true, false},
                                           SwaParams{1, 64, 4096, 160, false, true}),
                         Name);

// Same memory, two layouts. A Gemma-3-like model has 3 full-attention and 15 windowed layers:
// U layer-token units hold U / 18 tokens in one pool, or F full-layer tokens and S windowed
// ones with 3 F + 15 S = U. Long prefixes then keep their full KV and only their last window
// of windowed KV, so the tree holds over 4x the tokens — each still a full hit for the
// conversation that continues it.
TEST(SwaMemoryTest, TheTreeHoldsFourTimesTheTokensOfTheOnePoolLayoutAndHitsThemAll) {
  constexpr int kDocs = 16;
  constexpr int64_t kDocLen = 320;  // 20 windows
  constexpr int64_t kFull = kDocs * (kDocLen + 4) + 128;
  constexpr int64_t kSwa = kDocs * kWindow + 64;
  constexpr int64_t kOnePool = (3 * kFull + 15 * kSwa) / 18;
  struct Run {
    int64_t held = 0;
    int64_t hits = 0;  // continuations whose whole conversation came from the tree
  };
  auto run = [](SchedulerConfig c) {
    c.max_running_requests = 4;
    c.chunked_prefill_size = 32;
    HarnessOptions opt;
    opt.config = c;
    SchedulerHarness h(opt);
    PromptGen gen(5);
    std::vector<std::vector<int32_t>> docs;
    Run r;
    for (uint64_t id = 0; id < kDocs; ++id) {
      docs.push_back(gen.Tokens(kDocLen));
      h.Add(SchedulerHarness::Greedy(id, docs.back(), 4));
      h.RunUntilIdle();
      if (::testing::Test::HasFatalFailure()) return r;
      EXPECT_EQ(h.result(id).ids, h.runner().ReferenceGreedy(docs.back(), 4));
    }
    r.held = h.scheduler().cache().TotalSize();
    for (uint64_t i = 0; i < kDocs; ++i) {
      const uint64_t id = 100 + i;
      const std::vector<int32_t> next = Concat(Concat(docs[i], h.result(i).ids), {7});
      h.Add(SchedulerHarness::Greedy(id, next, 2));
      h.RunUntilIdle();
      if (::testing::Test::HasFatalFailure()) return r;
      EXPECT_EQ(h.result(id).ids, h.runner().ReferenceGreedy(next, 2))
          << (h.result(id).finish ? h.result(id).finish->matched_text : "unfinished");
      if (h.result(id).cached_tokens == kDocLen + 3) ++r.hits;  // prompt + outputs with KV
    }
    return r;
  };
  SchedulerConfig one = SmallConfig();
  one.max_total_tokens = kOnePool;
  SchedulerConfig hybrid = SmallConfig();
  hybrid.max_total_tokens = kFull;
  hybrid.swa_max_total_tokens = kSwa;
  hybrid.sliding_window = kWindow;
  const Run one_run = run(one);
  const Run hybrid_run = run(hybrid);
  EXPECT_LE(one_run.held, kOnePool);
  EXPECT_GE(hybrid_run.held, 4 * kOnePool) << "one pool: " << one_run.held;
  EXPECT_LE(one_run.hits, 3);
  EXPECT_EQ(hybrid_run.hits, kDocs);
}

TEST(SwaMemoryTest, AMatchEndsWhereTheWindowBeforeItIsIntact) {
  SchedulerConfig c = SmallConfig();
  c.max_total_tokens = 2048;
  c.swa_max_total_tokens = 128;
  c.sliding_window = kWindow;
  HarnessOptions opt;
  opt.config = c;
  SchedulerHarness h(opt);
  PromptGen gen(11);
  const std::vector<int32_t> doc = gen.Tokens(100);
  const std::vector<int32_t> first = Concat(doc, {5, 6});
  h.Add(SchedulerHarness::Greedy(0, first, 3));
  h.RunUntilIdle();
  // Other documents push most of the first one's windowed KV out (its full KV stays).
  for (uint64_t id = 1; id <= 3; ++id) {
    h.Add(SchedulerHarness::Greedy(id, gen.Tokens(40), 3));
    h.RunUntilIdle();
  }
  const SchedulerStats before = h.scheduler().GetStats();
  EXPECT_GT(before.evictable_tokens, before.swa_evictable_tokens + 60);  // tombstones
  // The conversation continues: its last window is intact, the whole of it is a hit.
  const std::vector<int32_t> next = Concat(Concat(first, h.result(0).ids), {9});
  h.Add(SchedulerHarness::Greedy(4, next, 5));
  h.RunUntilIdle();
  EXPECT_EQ(h.result(4).ids, h.runner().ReferenceGreedy(next, 5));
  EXPECT_EQ(h.result(4).cached_tokens, 104);
  // Another question on the document: the window before the document's end was released, so
  // the match stops earlier and the rest is recomputed — with the same output.
  const std::vector<int32_t> other = Concat(doc, {7, 8});
  h.Add(SchedulerHarness::Greedy(5, other, 5));
  h.RunUntilIdle();
  EXPECT_EQ(h.result(5).ids, h.runner().ReferenceGreedy(other, 5));
  EXPECT_LT(h.result(5).cached_tokens, 100);
}

}  // namespace
}  // namespace radixlm::testing
