// radixlm bench's pieces that need no server: workloads and the statistics. (The whole command
// runs against the real server in tests/e2e/test_bench.py.)
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "benchclient/bench_stats.h"
#include "benchclient/workload.h"

namespace radixlm::benchclient {
namespace {

TEST(Workload, RandomLengthsWithinRange) {
  RandomWorkloadOptions o;
  o.num_prompts = 50;
  o.input_len = 40;
  o.output_len = 10;
  o.range_ratio = 0.5;
  const auto prompts = MakeRandomWorkload(o, nullptr, 7);
  ASSERT_EQ(prompts.size(), 50u);
  std::set<int64_t> lens;
  for (const auto& p : prompts) {
    EXPECT_GE(p.prompt_len, 20);
    EXPECT_LE(p.prompt_len, 40);
    EXPECT_GE(p.output_len, 5);
    EXPECT_LE(p.output_len, 10);
    // Without a tokenizer a length is a word count.
    EXPECT_EQ(static_cast<int64_t>(std::count(p.text.begin(), p.text.end(), ' ')) + 1,
              p.prompt_len);
    lens.insert(p.prompt_len);
  }
  EXPECT_GT(lens.size(), 5u);  // lengths vary
  // Same seed, same workload; another seed, another.
  EXPECT_EQ(MakeRandomWorkload(o, nullptr, 7)[3].text, prompts[3].text);
  EXPECT_NE(MakeRandomWorkload(o, nullptr, 8)[3].text, prompts[3].text);
}

TEST(Workload, SharedPrefixGroupsShareTheirSystemPrompt) {
  SharedPrefixWorkloadOptions o;
  o.groups = 3;
  o.prompts_per_group = 4;
  o.system_len = 30;
  o.question_len = 5;
  o.output_len = 8;
  const auto prompts = MakeSharedPrefixWorkload(o, nullptr, 1);
  ASSERT_EQ(prompts.size(), 12u);
  std::map<std::string, int> per_system;
  std::set<std::string> texts;
  for (const auto& p : prompts) {
    EXPECT_EQ(p.prompt_len, 35);
    EXPECT_EQ(p.output_len, 8);
    ++per_system[p.text.substr(0, p.text.find('\n'))];
    texts.insert(p.text);
  }
  EXPECT_EQ(per_system.size(), 3u);
  for (const auto& [system, n] : per_system) EXPECT_EQ(n, 4) << system;
  EXPECT_EQ(texts.size(), 12u);  // questions differ
  // Shuffled: the first four prompts are not all of one group.
  std::set<std::string> first;
  for (int i = 0; i < 4; ++i) first.insert(prompts[i].text.substr(0, prompts[i].text.find('\n')));
  EXPECT_GT(first.size(), 1u);
}

TEST(Stats, PercentilesAndThroughput) {
  const Distribution d = Summarize(std::vector<double>{0.004, 0.001, 0.003, 0.002});
  EXPECT_DOUBLE_EQ(d.mean_ms, 2.5);
  EXPECT_DOUBLE_EQ(d.median_ms, 2.5);
  EXPECT_NEAR(d.p99_ms, 3.97, 1e-9);  // numpy.percentile([1, 2, 3, 4], 99)
  EXPECT_EQ(Summarize(std::vector<double>{}).p99_ms, 0.0);

  RunResult run;
  run.duration_s = 2.0;
  RequestResult ok;
  ok.ok = true;
  ok.ttft_s = 0.1;
  ok.e2e_s = 1.1;
  ok.output_tokens = 11;
  ok.itl_s = {0.1, 0.1};
  ok.cached_tokens = 5;
  RequestResult bad;
  bad.error = "HTTP 400: nope";
  run.requests = {ok, bad, ok};
  std::vector<BenchPrompt> prompts(3);
  for (auto& p : prompts) p.prompt_len = 20;
  const BenchSummary s = Summarize(run, prompts);
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.total_input_tokens, 40);
  EXPECT_EQ(s.total_output_tokens, 22);
  EXPECT_EQ(s.total_cached_tokens, 10);
  EXPECT_DOUBLE_EQ(s.request_throughput, 1.0);
  EXPECT_DOUBLE_EQ(s.output_throughput, 11.0);
  EXPECT_NEAR(s.tpot.mean_ms, 100.0, 1e-9);  // (1.1 - 0.1) / 10
  EXPECT_NEAR(s.ttft.median_ms, 100.0, 1e-9);
  ASSERT_EQ(s.first_errors.size(), 1u);
  EXPECT_NE(FormatReport(s, "t").find("Successful requests:"), std::string::npos);
  EXPECT_EQ(ToJson(s)["failed"], 1);
}

}  // namespace
}  // namespace radixlm::benchclient
