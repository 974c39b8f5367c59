// Statistics of a `radixlm bench` run, named as SGLang's bench_serving reports them:
// throughputs, and mean / median / P99 of TTFT, TPOT ((e2e - ttft) / (output tokens - 1)),
// ITL (every gap between streamed chunks) and end-to-end latency, in milliseconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchclient/bench_driver.h"

namespace radixlm::benchclient {

struct Distribution {
  double mean_ms = 0, median_ms = 0, p99_ms = 0;
};

// Of values in seconds; zeros when empty.
Distribution Summarize(std::vector<double> seconds);

struct BenchSummary {
  int64_t completed = 0, failed = 0;
  double duration_s = 0;
  int64_t total_input_tokens = 0;  // the workload's prompt lengths of completed requests
  int64_t total_output_tokens = 0;  // as the server reported
  int64_t total_cached_tokens = 0;  // as the server reported
  double request_throughput = 0;   // completed / s
  double input_throughput = 0;     // tokens / s
  double output_throughput = 0;    // tokens / s
  Distribution ttft, tpot, itl, e2e;
  std::vector<std::string> first_errors;  // up to 5
};

BenchSummary Summarize(const RunResult& run, const std::vector<BenchPrompt>& prompts);

nlohmann::json ToJson(const BenchSummary& s);
// The human-readable report (SGLang's layout).
std::string FormatReport(const BenchSummary& s, const std::string& title);

}  // namespace radixlm::benchclient
