// Prometheus exposition: histogram buckets, counters, label escaping.
#include "server/metrics.h"

#include <gtest/gtest.h>

namespace radixlm::server {
namespace {

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(MetricsTest, HistogramIsCumulative) {
  Histogram h({0.1, 1.0});
  h.Observe(0.05);
  h.Observe(0.5, 2);
  h.Observe(5.0);
  Histogram::Snapshot s = h.Read();
  ASSERT_EQ(s.cumulative.size(), 3u);
  EXPECT_EQ(s.cumulative[0], 1u);
  EXPECT_EQ(s.cumulative[1], 3u);
  EXPECT_EQ(s.cumulative[2], 4u);
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.sum, 0.05 + 1.0 + 5.0);
}

TEST(MetricsTest, BoundaryValueFallsInItsBucket) {
  Histogram h({0.1, 1.0});
  h.Observe(1.0);
  EXPECT_EQ(h.Read().cumulative[1], 1u);  // le="1" includes 1
}

TEST(MetricsTest, KvTransferCountersOnlyWhenAPdServerPassesThem) {
  ServerMetrics m;
  EngineStats stats;
  EXPECT_FALSE(Contains(m.Render(stats, "m"), "kv_transfer"));
  const KvTransferTotals totals{.transfers = 3, .bytes = 12345678, .seconds = 0.25};
  const std::string text = m.Render(stats, "m", &totals);
  EXPECT_TRUE(Contains(text, "# TYPE radixlm:kv_transfers_total counter\n"));
  EXPECT_TRUE(Contains(text, "radixlm:kv_transfers_total{model_name=\"m\"} 3\n"));
  EXPECT_TRUE(Contains(text, "radixlm:kv_transfer_bytes_total{model_name=\"m\"} 12345678\n"));
  EXPECT_TRUE(Contains(text, "# TYPE radixlm:kv_transfer_seconds_total counter\n"));
  EXPECT_TRUE(Contains(text, "radixlm:kv_transfer_seconds_total{model_name=\"m\"} 0.25\n"));
}

TEST(MetricsTest, RenderHasCountersGaugesAndHistograms) {
  ServerMetrics m;
  m.OnRequest();
  GenerateMeta meta;
  meta.prompt_tokens = 10;
  meta.completion_tokens = 4;
  meta.cached_tokens = 6;
  m.OnSampleFinished(meta, /*aborted=*/false, 0.3);
  m.OnTimeToFirstToken(0.02);
  m.OnInterTokenLatency(0.03, 3);
  m.OnHttpResponse(200);
  m.OnHttpResponse(404);
  EngineStats stats;
  stats.scheduler.pool_size = 100;
  stats.scheduler.pool_used = 25;
  stats.scheduler.pool_free = 75;
  stats.scheduler.waiting_requests = 2;
  stats.scheduler.running_requests = 3;
  stats.scheduler.cache_hit_tokens = 30;
  stats.scheduler.prefill_tokens = 70;
  stats.memory = {
      .weights_bytes = 250, .kv_pool_bytes = 1024, .scratch_bytes = 64, .rss_bytes = 4096};
  const std::string text = m.Render(stats, "my\"model");
  EXPECT_TRUE(Contains(text, "# TYPE radixlm:prompt_tokens_total counter\n"));
  EXPECT_TRUE(Contains(text, "radixlm:prompt_tokens_total{model_name=\"my\\\"model\"} 10\n"));
  EXPECT_TRUE(Contains(text, "radixlm:generation_tokens_total{model_name=\"my\\\"model\"} 4\n"));
  EXPECT_TRUE(Contains(text, "radixlm:cached_tokens_total{model_name=\"my\\\"model\"} 6\n"));
  EXPECT_TRUE(Contains(text, "radixlm:num_queue_reqs{model_name=\"my\\\"model\"} 2\n"));
  EXPECT_TRUE(Contains(text, "radixlm:num_running_reqs{model_name=\"my\\\"model\"} 3\n"));
  EXPECT_TRUE(Contains(text, "radixlm:token_usage{model_name=\"my\\\"model\"} 0.25\n"));
  EXPECT_TRUE(Contains(text, "radixlm:cache_hit_rate{model_name=\"my\\\"model\"} 0.3\n"));
  EXPECT_TRUE(Contains(text, "# TYPE radixlm:time_to_first_token_seconds histogram\n"));
  EXPECT_TRUE(Contains(
      text,
      "radixlm:time_to_first_token_seconds_bucket{model_name=\"my\\\"model\",le=\"0.02\"} 1"));
  EXPECT_TRUE(
      Contains(text, "radixlm:inter_token_latency_seconds_count{model_name=\"my\\\"model\"} 3\n"));
  EXPECT_TRUE(Contains(
      text,
      "radixlm:e2e_request_latency_seconds_bucket{model_name=\"my\\\"model\",le=\"+Inf\"} 1"));
  EXPECT_TRUE(Contains(text, "code=\"4xx\"} 1\n"));
  EXPECT_TRUE(Contains(text, "# TYPE radixlm:memory_bytes gauge\n"));
  for (const char* sample : {"kind=\"weights\"} 250\n", "kind=\"kv_pool\"} 1024\n",
                             "kind=\"scratch\"} 64\n", "kind=\"rss\"} 4096\n"}) {
    EXPECT_TRUE(
        Contains(text, std::string("radixlm:memory_bytes{model_name=\"my\\\"model\",") + sample))
        << sample;
  }
  // Every non-comment line is "name{labels} value".
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t end = text.find('\n', begin);
    ASSERT_NE(end, std::string::npos);
    const std::string line = text.substr(begin, end - begin);
    if (line[0] != '#') {
      EXPECT_EQ(line.rfind("radixlm:", 0), 0u) << line;
      EXPECT_NE(line.find("} "), std::string::npos) << line;
    }
    begin = end + 1;
  }
}

TEST(MetricsTest, LabelEscaping) { EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd"); }

}  // namespace
}  // namespace radixlm::server
