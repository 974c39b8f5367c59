// LoadReport: one data-parallel rank's entry of SGLang's load report (GET /v1/loads), built
// from an EngineStats snapshot. SGLang's model gateway (smg) polls it for its load-aware
// routing: least_load and power_of_two read the request counts, num_waiting_uncached_tokens and
// gen_throughput; cache_aware's --balance-token-usage-threshold and
// --overload-token-usage-threshold and the worker overload protection read token_usage.
//
// Fields follow SGLang's LoadSnapshot (sglang/srt/managers/load_snapshot.py) and mean what they
// mean there: token_usage = (pool - free - evictable tree tokens) / pool, i.e. KV that cannot
// be reclaimed; num_total_tokens adds the waiting requests' tokens. Fields radixlm does not
// measure (total_prefill_busy_us, decode_moments, the memory and lora sections) are left out
// rather than reported as zero; radixlm has one rank (dp_rank 0) and no disaggregation (mode
// "null").
#pragma once

#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/api.h"
#include "util/mutex.h"
#include "util/status.h"

namespace radixlm::server {

// Rates of the cumulative engine counters over a sliding window of snapshots: decode tokens per
// second (SGLang's gen_throughput) and the share of wall time spent in forward passes
// (utilization). The base of each rate is the newest snapshot at least `window_s` old, or the
// oldest one kept: with reports rarer than the window, the rate covers the time since the
// previous report. Thread-safe.
class LoadRateMeter {
 public:
  struct Rates {
    double gen_throughput = 0;  // decode tokens / s
    double utilization = 0;     // forward-pass seconds / wall seconds, in [0, 1]
  };

  explicit LoadRateMeter(double window_s = 10.0) : window_s_(window_s) {}

  // Records the counters as of `now_s` (any monotonic clock, in seconds) and returns the rates
  // since the window's base; zeros for the first snapshot.
  Rates Update(double now_s, int64_t decode_tokens, double forward_seconds);

 private:
  struct Sample {
    double t = 0;
    int64_t decode_tokens = 0;
    double forward_seconds = 0;
  };
  static constexpr size_t kMaxSamples = 256;  // bounds memory under very frequent polling

  const double window_s_;
  Mutex mu_;
  std::deque<Sample> samples_ GUARDED_BY(mu_);
};

// Sections of a report beyond the core scalars (SGLang's `include` values).
struct LoadSections {
  bool spec = true;    // "spec": accept_length / accept_rate, when speculation ran
  bool disagg = true;  // "disagg": mode "null", zero queues
  bool queues = true;  // "queues": waiting / grammar / paused / prealloc_ready
};

// Parses SGLang's comma-separated `include` ("" or absent: all). Valid: core, memory, spec,
// lora, disagg, queues, all (memory and lora are accepted; radixlm reports neither). Unknown
// names are InvalidArgument naming them and the valid set.
StatusOr<LoadSections> ParseLoadSections(std::string_view include);

struct LoadInputs {
  EngineStats stats;
  int32_t max_running_requests = 0;
  bool speculative = false;  // --speculative-algorithm set
  LoadRateMeter::Rates rates;
  double unix_time_s = 0;  // the snapshot's time
};

// One rank's entry ("loads"[i] of the report).
nlohmann::json LoadSnapshotJson(const LoadInputs& inputs, const LoadSections& sections);

// SGLang's `format=prometheus` rendering of a report's entries: one gauge per numeric scalar
// (`sglang_<name>`) and per numeric section field (`sglang_<section>_<name>`, spec and disagg
// abbreviated as SGLang does), labelled with dp_rank.
std::string LoadsPrometheusText(const nlohmann::json& loads);

// ISO 8601 UTC with microseconds, as Python's datetime.isoformat() writes it
// ("2026-12-02T03:31:11.520089+00:00").
std::string IsoUtcTimestamp(double unix_time_s);

}  // namespace radixlm::server
