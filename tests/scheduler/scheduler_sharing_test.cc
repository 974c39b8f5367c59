// Prefix sharing and policy behaviour through the scheduler: in-batch dedup, n > 1, LPM
// ordering and starvation bound, many waiting requests, logprobs, stop strings.
#include <gtest/gtest.h>

#include <cmath>

#include "sampling/logprobs.h"
#include "scheduler_harness.h"

namespace radixlm::testing {
namespace {

int64_t PrefillTokensFor(int32_t dedup_threshold) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.in_batch_prefix_threshold = dedup_threshold;
  opt.config.chunked_prefill_size = 1024;  // all four fit one round
  opt.config.max_prefill_tokens = 1024;
  SchedulerHarness h(opt);
  PromptGen gen(21);
  const auto shared = gen.Tokens(100);
  for (uint64_t i = 0; i < 4; ++i) {
    h.Add(SchedulerHarness::Greedy(i, Concat(shared, gen.Tokens(10)), 3));
  }
  h.RunUntilIdle();
  return h.scheduler().GetStats().prefill_tokens;
}

TEST(SchedulerSharingTest, InBatchDedupLetsTheFirstFillTheTree) {
  EXPECT_EQ(PrefillTokensFor(0), 4 * 110);        // all four computed the shared part
  EXPECT_EQ(PrefillTokensFor(32), 110 + 3 * 10);  // the siblings waited a round
}

// The runtime issue's nested-sharing example, scaled down: an instruction block, two documents,
// four questions per document, all submitted at once. Each level is computed once: the
// instruction + doc 1 + question 1 first; then the three other doc-1 questions and doc 2 with
// its first question; then the remaining doc-2 questions.
TEST(SchedulerSharingTest, NestedSharingComputesEachLevelOnce) {
  auto prefill_tokens = [](bool radix) {
    HarnessOptions opt{.config = SmallConfig()};
    opt.config.chunked_prefill_size = 2048;
    opt.config.max_prefill_tokens = 2048;
    opt.config.disable_radix_cache = !radix;
    SchedulerHarness h(opt);
    PromptGen gen(31);
    const auto instruction = gen.Tokens(90);
    const std::vector<std::vector<int32_t>> docs = {gen.Tokens(60), gen.Tokens(60)};
    uint64_t rid = 0;
    for (const auto& doc : docs) {
      for (int q = 0; q < 4; ++q) {
        h.Add(SchedulerHarness::Greedy(rid++, Concat(Concat(instruction, doc), gen.Tokens(12)), 2));
      }
    }
    h.RunUntilIdle();
    return h.scheduler().GetStats().prefill_tokens;
  };
  EXPECT_EQ(prefill_tokens(true), 90 + 2 * 60 + 8 * 12);  // 306
  EXPECT_EQ(prefill_tokens(false), 8 * (90 + 60 + 12));   // 1296
}

TEST(SchedulerSharingTest, CacheOperationsAreCountedAndTimed) {
  SchedulerHarness h;
  EXPECT_EQ(h.scheduler().GetStats().cache_ops, 0);
  PromptGen gen(23);
  const auto shared = gen.Tokens(50);
  for (uint64_t i = 0; i < 3; ++i) {
    h.Add(SchedulerHarness::Greedy(i, Concat(shared, gen.Tokens(5)), 4));
  }
  h.RunUntilIdle();
  const SchedulerStats s = h.scheduler().GetStats();
  // Per request at least: a match, a lock, the insert after prefill and the final insert.
  EXPECT_GE(s.cache_ops, 3 * 4);
  EXPECT_GE(s.cache_op_seconds, 0.0);  // a duration; its size is a benchmark's business
}

TEST(SchedulerSharingTest, ParallelSamplesPrefillThePromptOnce) {
  SchedulerHarness h;
  PromptGen gen(22);
  const auto prompt = gen.Tokens(20);  // short: in-batch dedup alone would not catch it
  for (uint64_t i = 0; i < 4; ++i) {
    RequestInput in = SchedulerHarness::Greedy(i, prompt, 10);
    in.params.temperature = 1.0f;
    in.seed = 77 + i;
    if (i > 0) in.prefill_after = 0;
    h.Add(std::move(in));
  }
  h.RunUntilIdle();
  // The prompt once, then each sibling only recomputes the last token (its logits are needed).
  EXPECT_EQ(h.scheduler().GetStats().prefill_tokens, 20 + 3 * 1);
  for (uint64_t i = 1; i < 4; ++i) EXPECT_EQ(h.result(i).cached_tokens, 19);
  EXPECT_NE(h.result(1).ids, h.result(2).ids);  // different seeds
}

TEST(SchedulerSharingTest, LpmPrefersCachedPrefixes) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.max_running_requests = 1;  // one admission per round makes the order visible
  SchedulerHarness h(opt);
  PromptGen gen(23);
  const auto hot = gen.Tokens(60);
  h.Add(SchedulerHarness::Greedy(0, Concat(hot, {5}), 1));
  h.RunUntilIdle();
  h.Add(SchedulerHarness::Greedy(1, gen.Tokens(30), 1));  // cold, arrived first
  h.Add(SchedulerHarness::Greedy(2, Concat(hot, {6}), 1));
  h.Add(SchedulerHarness::Greedy(3, Concat(hot, {7}), 1));
  std::vector<uint64_t> order;
  while (h.scheduler().HasWork()) {
    h.Step();
    for (uint64_t id : {1, 2, 3}) {
      if (h.finished(id) && std::find(order.begin(), order.end(), id) == order.end()) {
        order.push_back(id);
      }
    }
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{2, 3, 1}));
}

// A steady stream of hot requests must not starve a cold one forever.
int64_t ColdRequestFinishStep(int32_t max_skips) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.max_running_requests = 1;
  opt.config.starvation_max_skips = max_skips;
  opt.config.starvation_max_wait_s = 0;
  SchedulerHarness h(opt);
  PromptGen gen(24);
  const auto hot = gen.Tokens(60);
  h.Add(SchedulerHarness::Greedy(0, Concat(hot, {5}), 1));
  h.RunUntilIdle();
  h.Add(SchedulerHarness::Greedy(1, gen.Tokens(30), 1));
  uint64_t next = 2;
  for (int64_t step = 0; step < 200; ++step) {
    h.Add(SchedulerHarness::Greedy(next, Concat(hot, gen.Tokens(3)), 1));
    ++next;
    h.Step();
    if (h.finished(1)) return step;
  }
  return -1;
}

TEST(SchedulerSharingTest, LpmStarvationIsBounded) {
  EXPECT_EQ(ColdRequestFinishStep(0), -1);  // without the bound, hot requests always win
  const int64_t step = ColdRequestFinishStep(5);
  EXPECT_GE(step, 0);
  EXPECT_LE(step, 8);
}

TEST(SchedulerSharingTest, ThousandsWaitingUnderLpm) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.max_running_requests = 64;
  opt.config.max_total_tokens = 1 << 15;
  opt.config.lpm_rematch_max_requests = 64;
  SchedulerHarness h(opt);
  PromptGen gen(25);
  std::vector<std::vector<int32_t>> systems;
  for (int i = 0; i < 8; ++i) systems.push_back(gen.Tokens(40));
  std::map<uint64_t, std::vector<int32_t>> prompts;
  for (uint64_t i = 0; i < 2000; ++i) {
    prompts[i] = Concat(systems[gen.Uniform(0, 7)], gen.Tokens(gen.Uniform(1, 8)));
    h.Add(SchedulerHarness::Greedy(i, prompts[i], 2));
  }
  h.RunUntilIdle();
  for (const auto& [id, p] : prompts) {
    ASSERT_EQ(h.result(id).ids, h.runner().ReferenceGreedy(p, 2)) << id;
  }
  // Sharing worked: far fewer prefill tokens than 2000 full prompts.
  EXPECT_LT(h.scheduler().GetStats().prefill_tokens, 2000 * 20);
}

// LPM's matching work per pass is bounded however many wait: each MatchPrefix through the
// shared prefix bumps its node's hit count, so the count's growth per step measures it.
TEST(SchedulerSharingTest, LpmRematchingIsBoundedPerPass) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.max_running_requests = 2;
  opt.config.max_total_tokens = 1 << 15;
  opt.config.lpm_rematch_max_requests = 16;
  opt.config.in_batch_prefix_threshold = 0;
  SchedulerHarness h(opt);
  PromptGen gen(29);
  const auto system = gen.Tokens(40);
  h.Add(SchedulerHarness::Greedy(0, Concat(system, {7}), 1));
  h.RunUntilIdle();  // the system prompt is cached now
  for (uint64_t i = 1; i <= 1000; ++i) {
    h.Add(SchedulerHarness::Greedy(i, Concat(system, gen.Tokens(4)), 50));
  }
  h.Step();  // splits the cached prompt at the shared 40 tokens
  const RadixNode* shared = nullptr;
  for (const auto& [key, child] : h.scheduler().cache().root()->children) shared = child.get();
  ASSERT_NE(shared, nullptr);
  ASSERT_EQ(shared->size(), 40);
  for (int i = 0; i < 20; ++i) {
    const uint64_t before = shared->hit_count;
    h.Step();
    // At most the re-match budget plus the admission matches of this pass.
    EXPECT_LE(shared->hit_count - before, 16u + 2u + 2u) << "step " << i;
  }
}

TEST(SchedulerSharingTest, PromptLogprobsWithoutGeneration) {
  SchedulerHarness h;
  PromptGen gen(26);
  const auto prompt = gen.Tokens(40);
  auto make = [&](uint64_t id, int32_t start) {
    RequestInput in = SchedulerHarness::Greedy(id, prompt, 0);
    in.return_logprob = true;
    in.logprob_start_len = start;
    in.top_logprobs_num = 3;
    return in;
  };
  h.Add(make(1, 0));
  h.RunUntilIdle();
  h.Add(make(2, 25));  // the prompt is cached now, but only up to position 24 may be used
  h.RunUntilIdle();
  const Collected& a = h.result(1);
  const Collected& b = h.result(2);
  EXPECT_EQ(*a.finish, FinishReason::Length(0));
  EXPECT_TRUE(a.ids.empty());
  ASSERT_EQ(a.input_logprobs.size(), 40u);
  EXPECT_FALSE(a.input_logprobs[0].logprob.has_value());
  // Reference: log_softmax of the fake logits after each prefix.
  std::vector<float> logits(FakeTokenTextCodec::kVocabSize);
  uint64_t hash = FakeModelRunner::InitialHash();
  for (size_t p = 1; p < prompt.size(); ++p) {
    hash = FakeModelRunner::ExtendHash(hash, prompt[p - 1], static_cast<int64_t>(p - 1));
    h.runner().FillLogits(hash, logits.data());
    const float expected = TokenLogprobOf(logits, prompt[p]);
    ASSERT_TRUE(a.input_logprobs[p].logprob.has_value());
    EXPECT_NEAR(*a.input_logprobs[p].logprob, expected, 1e-5) << p;
    EXPECT_EQ(a.input_logprobs[p].token, prompt[p]);
    ASSERT_EQ(a.input_logprobs[p].top.size(), 3u);
  }
  ASSERT_EQ(b.input_logprobs.size(), 15u);
  for (size_t i = 0; i < 15; ++i) {
    EXPECT_NEAR(*b.input_logprobs[i].logprob, *a.input_logprobs[25 + i].logprob, 1e-5);
  }
  EXPECT_EQ(b.cached_tokens, 24);
}

TEST(SchedulerSharingTest, OutputLogprobsChunkedInputLogprobs) {
  HarnessOptions opt{.config = SmallConfig()};
  opt.config.max_logprob_rows_per_batch = 16;  // forces the prompt into 16-row chunks
  SchedulerHarness h(opt);
  PromptGen gen(27);
  const auto prompt = gen.Tokens(70);
  RequestInput in = SchedulerHarness::Greedy(1, prompt, 6);
  in.return_logprob = true;
  in.logprob_start_len = 3;
  in.top_logprobs_num = 2;
  h.Add(std::move(in));
  h.RunUntilIdle();
  const Collected& c = h.result(1);
  EXPECT_LE(h.runner().max_chunk_tokens(), 16);
  EXPECT_EQ(c.input_logprobs.size(), 67u);
  EXPECT_EQ(c.input_logprobs.front().token, prompt[3]);
  ASSERT_EQ(c.output_logprobs.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(c.output_logprobs[i].token, c.ids[i]);
    ASSERT_EQ(c.output_logprobs[i].top.size(), 2u);
    EXPECT_EQ(c.output_logprobs[i].top[0].token, c.ids[i]);  // greedy = the top token
    EXPECT_FLOAT_EQ(*c.output_logprobs[i].logprob, c.output_logprobs[i].top[0].logprob);
  }
  EXPECT_EQ(c.ids, h.runner().ReferenceGreedy(prompt, 6));
}

TEST(SchedulerSharingTest, StopStringsAndEos) {
  SchedulerHarness h;
  PromptGen gen(28);
  // Find a prompt whose greedy output contains a 2-character substring after position 3.
  std::vector<int32_t> prompt;
  std::string ref_text, stop;
  for (int attempt = 0; attempt < 100 && stop.empty(); ++attempt) {
    prompt = gen.Tokens(12);
    const auto ref = h.runner().ReferenceGreedy(prompt, 30);
    if (std::find(ref.begin(), ref.end(), FakeTokenTextCodec::kEos) != ref.end()) continue;
    ref_text = h.codec().Decode(ref);
    if (ref_text.size() > 8) stop = ref_text.substr(5, 2);
  }
  ASSERT_FALSE(stop.empty());
  RequestInput in = SchedulerHarness::Greedy(1, prompt, 30);
  in.params.stop = {stop};
  h.Add(std::move(in));
  h.RunUntilIdle();
  const Collected& c = h.result(1);
  EXPECT_EQ(*c.finish, FinishReason::StopString(stop));
  EXPECT_EQ(c.text, ref_text.substr(0, ref_text.find(stop)));
  // EOS via stop_token_ids: stop at the first output token.
  const auto first = h.runner().ReferenceGreedy(prompt, 1)[0];
  RequestInput in2 = SchedulerHarness::Greedy(2, prompt, 30);
  in2.params.stop_token_ids = {first};
  h.Add(std::move(in2));
  h.RunUntilIdle();
  EXPECT_EQ(*h.result(2).finish, FinishReason::StopToken(first));
  EXPECT_EQ(h.result(2).ids.size(), 1u);
  EXPECT_EQ(h.result(2).text, "");
}

}  // namespace
}  // namespace radixlm::testing
