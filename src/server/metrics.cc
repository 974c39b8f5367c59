#include "server/metrics.h"

#include <algorithm>
#include <cstdio>

namespace radixlm::server {
namespace {

// SGLang's bucket bounds (seconds).
std::vector<double> TtftBounds() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,
          0.75,  1.0,   2.5,  5.0,  7.5,  10.0, 15.0, 20.0, 25.0, 30.0};
}
std::vector<double> ItlBounds() {
  return {0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04,
          0.06,  0.08,  0.1,   0.2,   0.3,  0.4,   0.5,  0.75,  1.0,  2.0};
}
std::vector<double> E2eBounds() {
  return {0.1, 0.25, 0.5, 1, 2, 5, 10, 15, 20, 30, 40, 50, 60, 90, 120, 150, 180, 240, 300};
}

std::string FormatDouble(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.15g", v);
  return buf;
}

class Writer {
 public:
  explicit Writer(const std::string& model_name)
      : label_("model_name=\"" + EscapeLabelValue(model_name) + "\"") {}

  void Header(const char* name, const char* type, const char* help) {
    out_ += "# HELP radixlm:";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE radixlm:";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  void Sample(const std::string& name, const std::string& extra_labels, const std::string& value) {
    out_ += "radixlm:" + name + "{" + label_ + extra_labels + "} " + value + "\n";
  }
  void Counter(const char* name, const char* help, int64_t value) {
    Header(name, "counter", help);
    Sample(name, "", std::to_string(value));
  }
  void SecondsCounter(const char* name, const char* help, double value) {
    Header(name, "counter", help);
    Sample(name, "", FormatDouble(value));
  }
  void Gauge(const char* name, const char* help, double value) {
    Header(name, "gauge", help);
    Sample(name, "", FormatDouble(value));
  }
  void Histo(const char* name, const char* help, const Histogram::Snapshot& h) {
    Header(name, "histogram", help);
    const std::string base = name;
    for (size_t i = 0; i < h.upper_bounds.size(); ++i) {
      Sample(base + "_bucket", ",le=\"" + FormatDouble(h.upper_bounds[i]) + "\"",
             std::to_string(h.cumulative[i]));
    }
    Sample(base + "_bucket", ",le=\"+Inf\"", std::to_string(h.count));
    Sample(base + "_sum", "", FormatDouble(h.sum));
    Sample(base + "_count", "", std::to_string(h.count));
  }
  std::string Take() { return std::move(out_); }

 private:
  const std::string label_;
  std::string out_;
};

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), buckets_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value, uint64_t times) {
  const size_t bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  MutexLock lock(&mu_);
  buckets_[bucket] += times;
  sum_ += value * static_cast<double>(times);
  count_ += times;
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.upper_bounds = bounds_;
  MutexLock lock(&mu_);
  uint64_t running = 0;
  for (uint64_t c : buckets_) {
    running += c;
    s.cumulative.push_back(running);
  }
  s.sum = sum_;
  s.count = count_;
  return s;
}

ServerMetrics::ServerMetrics() : ttft_(TtftBounds()), itl_(ItlBounds()), e2e_(E2eBounds()) {}

void ServerMetrics::OnInterTokenLatency(double seconds, int64_t tokens) {
  if (tokens <= 0) return;
  itl_.Observe(seconds / static_cast<double>(tokens), static_cast<uint64_t>(tokens));
}

void ServerMetrics::OnSampleFinished(const GenerateMeta& meta, bool aborted, double e2e_seconds) {
  finished_samples_.fetch_add(1, std::memory_order_relaxed);
  if (aborted) aborted_samples_.fetch_add(1, std::memory_order_relaxed);
  prompt_tokens_.fetch_add(meta.prompt_tokens, std::memory_order_relaxed);
  generation_tokens_.fetch_add(meta.completion_tokens, std::memory_order_relaxed);
  cached_tokens_.fetch_add(meta.cached_tokens, std::memory_order_relaxed);
  e2e_.Observe(e2e_seconds);
}

void ServerMetrics::OnHttpResponse(int status) {
  if (status >= 500) {
    http_5xx_.fetch_add(1, std::memory_order_relaxed);
  } else if (status >= 400) {
    http_4xx_.fetch_add(1, std::memory_order_relaxed);
  } else {
    http_2xx_.fetch_add(1, std::memory_order_relaxed);
  }
}

std::string ServerMetrics::Render(const EngineStats& stats, const std::string& model_name,
                                  const KvTransferTotals* kv_transfer) const {
  const SchedulerCounters& s = stats.scheduler;
  Writer w(model_name);
  auto load = [](const std::atomic<int64_t>& v) { return v.load(std::memory_order_relaxed); };
  w.Counter("prompt_tokens_total", "Prompt tokens of finished requests.", load(prompt_tokens_));
  w.Counter("generation_tokens_total", "Generated tokens of finished requests.",
            load(generation_tokens_));
  w.Counter("cached_tokens_total", "Prompt tokens served from the radix cache.",
            load(cached_tokens_));
  w.Counter("num_requests_total", "Generation requests received.", load(requests_));
  w.Counter("num_finished_samples_total", "Samples finished (any reason).",
            load(finished_samples_));
  w.Counter("num_aborted_requests_total", "Samples that ended aborted.", load(aborted_samples_));
  w.Header("http_responses_total", "counter", "HTTP responses by status class.");
  w.Sample("http_responses_total", ",code=\"2xx\"", std::to_string(load(http_2xx_)));
  w.Sample("http_responses_total", ",code=\"4xx\"", std::to_string(load(http_4xx_)));
  w.Sample("http_responses_total", ",code=\"5xx\"", std::to_string(load(http_5xx_)));
  w.Counter("num_retracted_reqs_total", "Requests retracted when the KV pool ran dry.",
            s.retractions);
  w.Counter("prefill_computed_tokens_total", "Prompt tokens computed by prefill.",
            s.prefill_tokens);
  w.Counter("cache_hit_tokens_total", "Prompt tokens supplied by the radix cache.",
            s.cache_hit_tokens);
  w.Gauge("cache_hit_rate", "Share of prefill tokens served by the radix cache.",
          stats.cache_hit_rate());
  if (stats.images.has_value()) {
    w.Counter("image_encodes_total", "Images the vision encoder ran on.", stats.images->encodes);
    w.Counter("image_cache_hits_total", "Images whose encoding came from the image cache.",
              stats.images->hits);
  }
  w.Gauge("num_running_reqs", "Requests holding KV (decoding or mid prefill).",
          static_cast<double>(s.running_requests + s.prefilling_requests));
  w.Gauge("num_queue_reqs", "Requests waiting to be scheduled.",
          static_cast<double>(s.waiting_requests));
  w.Gauge(
      "token_usage", "Share of the KV pool in use (including cached prefixes).",
      s.pool_size > 0 ? static_cast<double>(s.pool_used) / static_cast<double>(s.pool_size) : 0.0);
  w.Gauge("pool_size_tokens", "KV pool capacity in tokens.", static_cast<double>(s.pool_size));
  w.Gauge("pool_free_tokens", "Free KV pool slots.", static_cast<double>(s.pool_free));
  w.Gauge("tree_tokens", "Tokens held by the radix tree (evictable + protected).",
          static_cast<double>(s.evictable_tokens + s.protected_tokens));
  w.Gauge("evictable_tokens", "Radix tree tokens no request holds.",
          static_cast<double>(s.evictable_tokens));
  w.Gauge("swa_pool_size_tokens", "Sliding-window KV pool capacity in tokens (0: none).",
          static_cast<double>(s.swa_pool_size));
  w.Gauge("swa_pool_free_tokens", "Free sliding-window KV pool slots.",
          static_cast<double>(s.swa_pool_free));
  w.Gauge("swa_tree_tokens", "Radix tree tokens still holding sliding-window KV.",
          static_cast<double>(s.swa_evictable_tokens + s.swa_protected_tokens));
  w.Gauge("state_snapshots", "Hybrid models: linear-layer state snapshots in the radix tree.",
          static_cast<double>(s.state_snapshots));
  w.Gauge("state_snapshot_capacity", "Hybrid models: most state snapshots the tree may hold.",
          static_cast<double>(s.state_snapshot_capacity));
  w.Gauge("state_snapshot_bytes", "Hybrid models: bytes of the state snapshots in the tree.",
          static_cast<double>(s.state_snapshot_bytes));
  w.Counter("state_snapshots_taken_total", "Hybrid models: state snapshots taken.",
            s.state_snapshots_taken);
  w.Counter("state_snapshot_resumes_total",
            "Hybrid models: admissions that resumed the linear layers from a snapshot.",
            s.state_snapshot_resumes);
  const HiCacheCounters& h = s.hicache;
  w.Gauge("hicache_disk_tokens", "Tokens held by the disk KV tier.",
          static_cast<double>(h.disk_tokens));
  w.Gauge("hicache_disk_bytes", "Bytes of the disk KV tier's block files.",
          static_cast<double>(h.disk_bytes));
  w.Counter("hicache_disk_hit_tokens_total", "Prompt tokens matches gained from the disk tier.",
            h.disk_hit_tokens);
  w.Counter("hicache_ram_hit_tokens_total", "Prompt tokens supplied by the RAM radix tree.",
            std::max<int64_t>(0, s.cache_hit_tokens - h.disk_hit_tokens));
  w.Counter("hicache_loaded_bytes_total", "Bytes loaded from the disk tier.", h.bytes_loaded);
  w.Counter("hicache_stored_bytes_total", "Bytes written to the disk tier.", h.bytes_stored);
  w.Gauge("hicache_load_bandwidth_bytes_per_second", "Mean disk tier load bandwidth.",
          h.load_bandwidth());
  w.Gauge("hicache_store_bandwidth_bytes_per_second", "Mean disk tier store bandwidth.",
          h.store_bandwidth());
  w.Counter("hicache_load_failures_total",
            "Disk blocks found unusable (truncated, corrupt, foreign) and recomputed.",
            h.load_failures);
  w.Counter("hicache_write_failures_total", "Disk block writes that failed and were skipped.",
            h.write_failures);
  w.Counter("spec_draft_tokens_total", "Speculative draft tokens verified.", s.spec_drafted_tokens);
  w.Counter("spec_accepted_tokens_total", "Speculative draft tokens kept.", s.spec_accepted_tokens);
  w.Counter("spec_ngram_dropped_tokens_total",
            "New tokens whose n-gram windows were dropped from the trie filler's full queue.",
            s.spec_ngram_dropped_tokens);
  w.Gauge("spec_accept_length", "Mean tokens per speculative decode step (0: none).",
          s.spec_accept_length());
  const MemoryCounters& memory = stats.memory;
  w.Header("memory_bytes", "gauge",
           "Resident bytes by kind: the weights the forward pass reads, the KV pool as "
           "allocated, the forward-pass scratch, a hybrid model's linear-layer state slots "
           "(recurrent_state), and the process's resident set (rss).");
  for (const auto& [kind, bytes] :
       {std::pair{"weights", memory.weights_bytes}, std::pair{"kv_pool", memory.kv_pool_bytes},
        std::pair{"scratch", memory.scratch_bytes},
        std::pair{"recurrent_state", memory.recurrent_state_bytes},
        std::pair{"rss", memory.rss_bytes}}) {
    w.Sample("memory_bytes", std::string(",kind=\"") + kind + "\"", std::to_string(bytes));
  }
  if (kv_transfer != nullptr) {
    w.Counter("kv_transfers_total",
              "PD KV transfers completed (records sent by a prefill server, received by a "
              "decode server).",
              kv_transfer->transfers);
    w.Counter("kv_transfer_bytes_total", "Bytes of the completed PD KV transfers.",
              kv_transfer->bytes);
    w.SecondsCounter("kv_transfer_seconds_total",
                     "Seconds the completed PD KV transfers took (bytes_total / seconds_total: "
                     "the transfer bandwidth).",
                     kv_transfer->seconds);
  }
  w.Histo("time_to_first_token_seconds", "Time to first token.", ttft_.Read());
  w.Histo("inter_token_latency_seconds", "Time between output tokens.", itl_.Read());
  w.Histo("e2e_request_latency_seconds", "End-to-end latency of a sample.", e2e_.Read());
  return w.Take();
}

std::string EscapeLabelValue(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace radixlm::server
