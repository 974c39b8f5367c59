// ServerMetrics: what GET /metrics reports, in the Prometheus text format (version 0.0.4).
//
// Counters and histograms are fed by the server as requests progress (thread-safe: any IO
// thread may record); gauges (running / queued requests, pool usage, cache hit rate,
// retractions, resident bytes by kind) come from an EngineStats snapshot taken at scrape
// time. Names mirror SGLang's (`sglang:prompt_tokens_total` → `radixlm:prompt_tokens_total`),
// labelled with model_name.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/server_config.h"
#include "util/mutex.h"

namespace radixlm::server {

// A cumulative histogram with fixed upper bounds (plus +Inf).
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);

  void Observe(double value, uint64_t times = 1);

  struct Snapshot {
    std::vector<double> upper_bounds;
    std::vector<uint64_t> cumulative;  // per bound, then +Inf (== count)
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Read() const;

 private:
  const std::vector<double> bounds_;
  mutable Mutex mu_;
  std::vector<uint64_t> buckets_ GUARDED_BY(mu_);  // bounds_.size() + 1 (last: +Inf)
  double sum_ GUARDED_BY(mu_) = 0;
  uint64_t count_ GUARDED_BY(mu_) = 0;
};

class ServerMetrics {
 public:
  ServerMetrics();

  // --- fed by the server ---
  void OnRequest() { requests_.fetch_add(1, std::memory_order_relaxed); }
  void OnTimeToFirstToken(double seconds) { ttft_.Observe(seconds); }
  // `tokens` arrived `seconds` after the previous ones: each counts seconds / tokens.
  void OnInterTokenLatency(double seconds, int64_t tokens);
  void OnSampleFinished(const GenerateMeta& meta, bool aborted, double e2e_seconds);
  void OnHttpResponse(int status);

  // The whole exposition text; `stats` is a fresh engine snapshot. A PD server passes its KV
  // transfer totals (kv_transfer_*); others pass none and those counters are left out.
  std::string Render(const EngineStats& stats, const std::string& model_name,
                     const KvTransferTotals* kv_transfer = nullptr) const;

 private:
  std::atomic<int64_t> requests_{0};
  std::atomic<int64_t> finished_samples_{0};
  std::atomic<int64_t> aborted_samples_{0};
  std::atomic<int64_t> prompt_tokens_{0};
  std::atomic<int64_t> generation_tokens_{0};
  std::atomic<int64_t> cached_tokens_{0};
  std::atomic<int64_t> http_2xx_{0};
  std::atomic<int64_t> http_4xx_{0};
  std::atomic<int64_t> http_5xx_{0};
  Histogram ttft_;
  Histogram itl_;
  Histogram e2e_;
};

// Prometheus label-value escaping (backslash, double quote, newline).
std::string EscapeLabelValue(const std::string& value);

}  // namespace radixlm::server
