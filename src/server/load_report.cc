#include "server/load_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

namespace radixlm::server {
namespace {

using json = nlohmann::json;

// SGLang rounds ratios to 4 decimals and throughput to 2.
double Round(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

double Ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0.0;
}

}  // namespace

LoadRateMeter::Rates LoadRateMeter::Update(double now_s, int64_t decode_tokens,
                                           double forward_seconds) {
  MutexLock lock(&mu_);
  samples_.push_back(Sample{now_s, decode_tokens, forward_seconds});
  // Keep the newest sample at or before the window's start as the base.
  while (samples_.size() > 2 && samples_[1].t <= now_s - window_s_) samples_.pop_front();
  while (samples_.size() > kMaxSamples) samples_.pop_front();
  const Sample& base = samples_.front();
  const double span = now_s - base.t;
  Rates rates;
  if (samples_.size() < 2 || span <= 0) return rates;
  rates.gen_throughput = static_cast<double>(decode_tokens - base.decode_tokens) / span;
  rates.utilization = std::clamp((forward_seconds - base.forward_seconds) / span, 0.0, 1.0);
  return rates;
}

StatusOr<LoadSections> ParseLoadSections(std::string_view include) {
  static const std::set<std::string> kValid = {"core",   "memory", "spec", "lora",
                                               "disagg", "queues", "all"};
  if (include.empty()) return LoadSections{};
  std::set<std::string> names;
  std::string unknown;
  std::stringstream stream{std::string(include)};
  for (std::string name; std::getline(stream, name, ',');) {
    const size_t first = name.find_first_not_of(" \t");
    const size_t last = name.find_last_not_of(" \t");
    name = first == std::string::npos ? "" : name.substr(first, last - first + 1);
    if (kValid.count(name) == 0) {
      unknown += (unknown.empty() ? "'" : ", '") + name + "'";
      continue;
    }
    names.insert(name);
  }
  if (!unknown.empty()) {
    return InvalidArgument("invalid include sections: " + unknown +
                           "; valid: all, core, disagg, lora, memory, queues, spec");
  }
  if (names.count("all") != 0) return LoadSections{};
  return LoadSections{.spec = names.count("spec") != 0,
                      .disagg = names.count("disagg") != 0,
                      .queues = names.count("queues") != 0};
}

json LoadSnapshotJson(const LoadInputs& in, const LoadSections& sections) {
  const SchedulerCounters& s = in.stats.scheduler;
  const int64_t running = s.running_requests + s.prefilling_requests;
  // SGLang's num_used_tokens: KV that cannot be reclaimed (evictable tree tokens count as free).
  const int64_t used = std::max<int64_t>(0, s.pool_size - s.pool_free - s.evictable_tokens);
  const int64_t total = used + s.waiting_tokens;
  json load = {
      {"timestamp", in.unix_time_s},
      {"dp_rank", 0},
      {"num_running_reqs", running},
      {"num_waiting_reqs", s.waiting_requests},
      {"num_waiting_uncached_tokens", s.waiting_uncached_tokens},
      {"num_used_tokens", used},
      {"num_total_tokens", total},
      {"num_active_tokens", total},  // no KV awaits a transfer without disaggregation
      {"num_prealloc_ready_tokens", 0},
      {"max_total_num_tokens", s.pool_size},
      {"max_running_requests", in.max_running_requests},
      {"token_usage", Round(Ratio(static_cast<double>(used), static_cast<double>(s.pool_size)), 4)},
      {"gen_throughput", Round(in.rates.gen_throughput, 2)},
      {"cache_hit_rate", Round(in.stats.cache_hit_rate(), 4)},
      {"utilization", Round(in.rates.utilization, 4)},
      {"total_prefill_uncached_tokens", s.prefill_tokens},
  };
  if (sections.spec && in.speculative && s.spec_verify_steps > 0) {
    load["speculative"] = {
        {"accept_length", s.spec_accept_length()},
        {"accept_rate", Ratio(static_cast<double>(s.spec_accepted_tokens),
                              static_cast<double>(s.spec_drafted_tokens))},
    };
  }
  if (sections.disagg) {
    load["disaggregation"] = {
        {"mode", "null"},
        {"prefill_bootstrap_queue_reqs", 0},
        {"prefill_inflight_queue_reqs", 0},
        {"decode_prealloc_queue_reqs", 0},
        {"decode_transfer_queue_reqs", 0},
        {"decode_retracted_queue_reqs", 0},
        {"kv_transfer_speed_gb_s", 0.0},
        {"kv_transfer_latency_ms", 0.0},
    };
  }
  if (sections.queues) {
    load["queues"] = {
        {"waiting", s.waiting_requests},
        {"grammar", s.grammar_queue_requests},
        {"paused", s.paused ? running : 0},  // held in place by pause_generation
        {"prealloc_ready", 0},
    };
  }
  return load;
}

std::string LoadsPrometheusText(const json& loads) {
  // name -> lines "name{dp_rank="r"} value", in first-seen order.
  std::vector<std::pair<std::string, std::vector<std::string>>> metrics;
  auto add = [&metrics](const std::string& name, const std::string& rank, const json& value) {
    if (!value.is_number()) return;
    auto it = std::find_if(metrics.begin(), metrics.end(),
                           [&name](const auto& m) { return m.first == name; });
    if (it == metrics.end()) it = metrics.emplace(metrics.end(), name, std::vector<std::string>{});
    it->second.push_back(name + "{dp_rank=\"" + rank + "\"} " + value.dump());
  };
  for (const json& load : loads) {
    const std::string rank = load.value("dp_rank", json(0)).dump();
    for (const auto& [key, value] : load.items()) {
      if (key == "dp_rank") continue;
      if (value.is_object()) {
        const std::string prefix = key == "speculative"      ? "spec"
                                   : key == "disaggregation" ? "disagg"
                                                             : key;
        for (const auto& [sub_key, sub_value] : value.items()) {
          add("sglang_" + prefix + "_" + sub_key, rank, sub_value);
        }
      } else {
        add("sglang_" + key, rank, value);
      }
    }
  }
  std::string text;
  for (const auto& [name, lines] : metrics) {
    text += "# TYPE " + name + " gauge\n";
    for (const std::string& line : lines) text += line + "\n";
  }
  return text;
}

std::string IsoUtcTimestamp(double unix_time_s) {
  const auto whole = static_cast<std::time_t>(std::floor(unix_time_s));
  const auto micros =
      static_cast<int>(std::floor((unix_time_s - static_cast<double>(whole)) * 1e6));
  std::tm tm{};
  gmtime_r(&whole, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06d+00:00", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, micros);
  return buf;
}

}  // namespace radixlm::server
