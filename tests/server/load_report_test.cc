// The /v1/loads report: SGLang's field meanings from an EngineStats snapshot, the include
// sections, the rate meter's window, the Prometheus rendering, and the query-string parser the
// route reads its parameters with.
#include "server/load_report.h"

#include <gtest/gtest.h>

#include "server/http_message.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

LoadInputs BusyEngine() {
  LoadInputs in;
  SchedulerCounters& s = in.stats.scheduler;
  s.running_requests = 3;
  s.prefilling_requests = 1;
  s.waiting_requests = 2;
  s.waiting_tokens = 300;
  s.waiting_uncached_tokens = 120;
  s.grammar_queue_requests = 1;
  s.pool_size = 1000;
  s.pool_free = 500;
  s.evictable_tokens = 100;  // cached, reclaimable: not "used"
  s.protected_tokens = 250;
  s.cache_hit_tokens = 600;
  s.prefill_tokens = 400;
  in.max_running_requests = 64;
  in.rates = {.gen_throughput = 12.345, .utilization = 0.51234};
  in.unix_time_s = 1.5e9;
  return in;
}

TEST(LoadReportTest, CoreFieldsMeanWhatSglangsMean) {
  const json load = LoadSnapshotJson(BusyEngine(), LoadSections{});
  EXPECT_EQ(load["dp_rank"], 0);
  EXPECT_EQ(load["num_running_reqs"], 4);  // decoding + mid chunked prefill
  EXPECT_EQ(load["num_waiting_reqs"], 2);
  EXPECT_EQ(load["num_waiting_uncached_tokens"], 120);
  EXPECT_EQ(load["num_used_tokens"], 400);  // 1000 - 500 free - 100 evictable
  EXPECT_EQ(load["num_total_tokens"], 700);
  EXPECT_EQ(load["max_total_num_tokens"], 1000);
  EXPECT_EQ(load["max_running_requests"], 64);
  EXPECT_DOUBLE_EQ(load["token_usage"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(load["gen_throughput"].get<double>(), 12.35);
  EXPECT_DOUBLE_EQ(load["utilization"].get<double>(), 0.5123);
  EXPECT_DOUBLE_EQ(load["cache_hit_rate"].get<double>(), 0.6);
  EXPECT_EQ(load["total_prefill_uncached_tokens"], 400);
  EXPECT_EQ(load["disaggregation"]["mode"], "null");
  EXPECT_EQ(load["queues"]["waiting"], 2);
  EXPECT_EQ(load["queues"]["grammar"], 1);
  EXPECT_EQ(load["queues"]["paused"], 0);
  EXPECT_FALSE(load.contains("speculative"));  // no speculation configured
  EXPECT_FALSE(load.contains("memory"));       // not measured: left out, not zero
}

TEST(LoadReportTest, EmptyPoolAndPausedAndSpeculation) {
  LoadInputs in;
  const json idle = LoadSnapshotJson(in, LoadSections{});
  EXPECT_EQ(idle["token_usage"], 0.0);
  EXPECT_EQ(idle["num_used_tokens"], 0);

  in = BusyEngine();
  in.stats.scheduler.paused = true;
  in.speculative = true;
  in.stats.scheduler.spec_verify_steps = 10;
  in.stats.scheduler.spec_drafted_tokens = 40;
  in.stats.scheduler.spec_accepted_tokens = 10;
  const json load = LoadSnapshotJson(in, LoadSections{});
  EXPECT_EQ(load["queues"]["paused"], 4);
  EXPECT_DOUBLE_EQ(load["speculative"]["accept_length"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(load["speculative"]["accept_rate"].get<double>(), 0.25);
}

TEST(LoadReportTest, IncludeSelectsSectionsAndRefusesUnknownNames) {
  auto all = ParseLoadSections("");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->disagg && all->queues && all->spec);
  auto core = ParseLoadSections("core");
  ASSERT_TRUE(core.ok());
  const json load = LoadSnapshotJson(BusyEngine(), *core);
  EXPECT_FALSE(load.contains("queues") || load.contains("disaggregation"));
  EXPECT_TRUE(load.contains("token_usage"));
  auto gateway = ParseLoadSections("core,disagg, queues,memory");  // what smg asks for
  ASSERT_TRUE(gateway.ok());
  EXPECT_TRUE(gateway->disagg && gateway->queues);
  EXPECT_FALSE(gateway->spec);
  auto everything = ParseLoadSections("core,all");
  ASSERT_TRUE(everything.ok());
  EXPECT_TRUE(everything->spec);
  auto bad = ParseLoadSections("core,gpu,,x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'gpu', '', 'x'"), std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("valid:"), std::string::npos);
}

TEST(LoadReportTest, RateMeterUsesTheWindowsBaseSnapshot) {
  LoadRateMeter meter(10.0);
  LoadRateMeter::Rates r = meter.Update(100.0, 0, 0.0);
  EXPECT_EQ(r.gen_throughput, 0.0);  // one snapshot: no rate yet
  r = meter.Update(102.0, 50, 1.0);
  EXPECT_DOUBLE_EQ(r.gen_throughput, 25.0);
  EXPECT_DOUBLE_EQ(r.utilization, 0.5);
  r = meter.Update(105.0, 80, 1.0);
  EXPECT_DOUBLE_EQ(r.gen_throughput, 16.0);  // base still t=100
  // t=112: t=102 is the newest snapshot at least 10 s old, so it becomes the base.
  r = meter.Update(112.0, 130, 4.0);
  EXPECT_DOUBLE_EQ(r.gen_throughput, 8.0);
  EXPECT_DOUBLE_EQ(r.utilization, 0.3);
  // A rare poller: the rate covers the time since the previous report.
  r = meter.Update(212.0, 230, 100.0);
  EXPECT_DOUBLE_EQ(r.gen_throughput, 1.0);
  EXPECT_DOUBLE_EQ(r.utilization, 0.96);
}

TEST(LoadReportTest, PrometheusNamesFollowSglang) {
  const json loads = json::array({LoadSnapshotJson(BusyEngine(), LoadSections{})});
  const std::string text = LoadsPrometheusText(loads);
  EXPECT_NE(text.find("# TYPE sglang_token_usage gauge\nsglang_token_usage{dp_rank=\"0\"} 0.4\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sglang_queues_waiting{dp_rank=\"0\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("sglang_disagg_prefill_bootstrap_queue_reqs{dp_rank=\"0\"} 0\n"),
            std::string::npos);
  EXPECT_EQ(text.find("sglang_disagg_mode"), std::string::npos);  // strings are not gauges
  EXPECT_EQ(text.find("sglang_dp_rank"), std::string::npos);
}

TEST(LoadReportTest, IsoTimestampLikePythons) {
  EXPECT_EQ(IsoUtcTimestamp(0.25), "1970-01-01T00:00:00.250000+00:00");
  EXPECT_EQ(IsoUtcTimestamp(1796181071.5), "2026-12-02T03:11:11.500000+00:00");
}

TEST(ParseQueryTest, DecodesNamesAndValues) {
  auto q = ParseQuery("include=core%2Cdisagg&format=json&flag&x=a+b&x=last&&=v");
  EXPECT_EQ(q["include"], "core,disagg");
  EXPECT_EQ(q["format"], "json");
  EXPECT_EQ(q["flag"], "");
  EXPECT_EQ(q["x"], "last");
  EXPECT_EQ(q[""], "v");
  EXPECT_TRUE(ParseQuery("").empty());
  EXPECT_EQ(ParseQuery("bad=%zz%4")["bad"], "%zz%4");  // malformed escapes kept as written
  EXPECT_EQ(ParseQuery("model=%2Froot%2Fm.gguf")["model"], "/root/m.gguf");
}

}  // namespace
}  // namespace radixlm::server
