#include "benchclient/bench_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace radixlm::benchclient {

Distribution Summarize(std::vector<double> seconds) {
  Distribution d;
  if (seconds.empty()) return d;
  std::sort(seconds.begin(), seconds.end());
  const size_t n = seconds.size();
  d.mean_ms = 1000.0 * std::accumulate(seconds.begin(), seconds.end(), 0.0) / n;
  d.median_ms =
      1000.0 * (n % 2 == 1 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]));
  // P99 with linear interpolation between closest ranks (as numpy.percentile).
  const double rank = 0.99 * static_cast<double>(n - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(n - 1, lo + 1);
  d.p99_ms = 1000.0 * (seconds[lo] + (rank - lo) * (seconds[hi] - seconds[lo]));
  return d;
}

BenchSummary Summarize(const RunResult& run, const std::vector<BenchPrompt>& prompts) {
  BenchSummary s;
  s.duration_s = run.duration_s;
  std::vector<double> ttft, tpot, itl, e2e;
  for (size_t i = 0; i < run.requests.size(); ++i) {
    const RequestResult& r = run.requests[i];
    if (!r.ok) {
      ++s.failed;
      if (s.first_errors.size() < 5) s.first_errors.push_back(r.error.substr(0, 300));
      continue;
    }
    ++s.completed;
    s.total_input_tokens += r.prompt_tokens > 0 ? r.prompt_tokens : prompts[i].prompt_len;
    s.total_output_tokens += r.output_tokens;
    s.total_cached_tokens += r.cached_tokens;
    ttft.push_back(r.ttft_s);
    e2e.push_back(r.e2e_s);
    itl.insert(itl.end(), r.itl_s.begin(), r.itl_s.end());
    if (r.output_tokens > 1) tpot.push_back((r.e2e_s - r.ttft_s) / (r.output_tokens - 1));
  }
  if (s.duration_s > 0) {
    s.request_throughput = s.completed / s.duration_s;
    s.input_throughput = s.total_input_tokens / s.duration_s;
    s.output_throughput = s.total_output_tokens / s.duration_s;
  }
  s.ttft = Summarize(std::move(ttft));
  s.tpot = Summarize(std::move(tpot));
  s.itl = Summarize(std::move(itl));
  s.e2e = Summarize(std::move(e2e));
  return s;
}

namespace {
nlohmann::json DistJson(const Distribution& d) {
  return {{"mean_ms", d.mean_ms}, {"median_ms", d.median_ms}, {"p99_ms", d.p99_ms}};
}
}  // namespace

nlohmann::json ToJson(const BenchSummary& s) {
  return {{"completed", s.completed},
          {"failed", s.failed},
          {"duration_s", s.duration_s},
          {"total_input_tokens", s.total_input_tokens},
          {"total_output_tokens", s.total_output_tokens},
          {"total_cached_tokens", s.total_cached_tokens},
          {"request_throughput", s.request_throughput},
          {"input_throughput", s.input_throughput},
          {"output_throughput", s.output_throughput},
          {"total_token_throughput", s.input_throughput + s.output_throughput},
          {"ttft", DistJson(s.ttft)},
          {"tpot", DistJson(s.tpot)},
          {"itl", DistJson(s.itl)},
          {"e2e_latency", DistJson(s.e2e)},
          {"errors", s.first_errors}};
}

std::string FormatReport(const BenchSummary& s, const std::string& title) {
  std::string out;
  char line[160];
  auto add = [&](const char* name, double v, const char* fmt) {
    std::snprintf(line, sizeof(line), fmt, name, v);
    out += line;
  };
  std::snprintf(line, sizeof(line), "============ %s ============\n", title.c_str());
  out += line;
  add("Successful requests:", static_cast<double>(s.completed), "%-36s %12.0f\n");
  add("Failed requests:", static_cast<double>(s.failed), "%-36s %12.0f\n");
  add("Benchmark duration (s):", s.duration_s, "%-36s %12.2f\n");
  add("Total input tokens:", static_cast<double>(s.total_input_tokens), "%-36s %12.0f\n");
  add("Total generated tokens:", static_cast<double>(s.total_output_tokens), "%-36s %12.0f\n");
  add("Total cached tokens (server):", static_cast<double>(s.total_cached_tokens),
      "%-36s %12.0f\n");
  add("Request throughput (req/s):", s.request_throughput, "%-36s %12.2f\n");
  add("Input token throughput (tok/s):", s.input_throughput, "%-36s %12.2f\n");
  add("Output token throughput (tok/s):", s.output_throughput, "%-36s %12.2f\n");
  add("Total token throughput (tok/s):", s.input_throughput + s.output_throughput,
      "%-36s %12.2f\n");
  const std::pair<const char*, const Distribution*> dists[] = {
      {"TTFT", &s.ttft}, {"TPOT", &s.tpot}, {"ITL", &s.itl}, {"E2E Latency", &s.e2e}};
  for (const auto& [name, d] : dists) {
    std::snprintf(line, sizeof(line), "---- %s ----\n", name);
    out += line;
    std::snprintf(line, sizeof(line), "%-36s %12.2f\n%-36s %12.2f\n%-36s %12.2f\n",
                  (std::string("Mean ") + name + " (ms):").c_str(), d->mean_ms,
                  (std::string("Median ") + name + " (ms):").c_str(), d->median_ms,
                  (std::string("P99 ") + name + " (ms):").c_str(), d->p99_ms);
    out += line;
  }
  for (const std::string& e : s.first_errors) out += "error: " + e + "\n";
  return out;
}

}  // namespace radixlm::benchclient
