#include "benchclient/bench_driver.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

namespace radixlm::benchclient {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::pair<std::string, std::string> RequestFor(const DriverOptions& o, const BenchPrompt& p) {
  json body;
  switch (o.backend) {
    case Backend::kRadixlm:
      body = {
          {"text", p.text},
          {"sampling_params",
           {{"max_new_tokens", p.output_len}, {"temperature", 0.0}, {"ignore_eos", o.ignore_eos}}},
          {"stream", true}};
      return {"/generate", body.dump()};
    case Backend::kOpenAI:
      body = {
          {"model", o.model},   {"prompt", p.text}, {"max_tokens", p.output_len},
          {"temperature", 0.0}, {"stream", true},   {"stream_options", {{"include_usage", true}}}};
      break;
    case Backend::kOpenAIChat:
      body = {{"model", o.model},
              {"messages", json::array({{{"role", "user"}, {"content", p.text}}})},
              {"max_tokens", p.output_len},
              {"temperature", 0.0},
              {"stream", true},
              {"stream_options", {{"include_usage", true}}}};
      break;
  }
  if (o.ignore_eos) body["ignore_eos"] = true;
  return {o.backend == Backend::kOpenAI ? "/v1/completions" : "/v1/chat/completions", body.dump()};
}

// Tracks one streamed response: token arrivals and the server's counts.
class StreamState {
 public:
  StreamState(Backend backend, Clock::time_point start) : backend_(backend), start_(start) {}

  // One SSE payload. Returns false on a malformed event or a server error event.
  bool OnEvent(std::string_view payload, RequestResult* r) {
    if (payload == "[DONE]") return true;
    const json ev = json::parse(payload, nullptr, /*allow_exceptions=*/false);
    if (ev.is_discarded() || !ev.is_object()) {
      r->error = "malformed event: " + std::string(payload.substr(0, 200));
      return false;
    }
    if (ev.contains("error")) {
      r->error = ev["error"].dump();
      return false;
    }
    int64_t new_tokens = 0;
    if (backend_ == Backend::kRadixlm) {
      const json& meta = ev.value("meta_info", json::object());
      const int64_t completion = meta.value("completion_tokens", int64_t{0});
      new_tokens = completion - r->output_tokens;
      r->output_tokens = std::max(r->output_tokens, completion);
      r->prompt_tokens = meta.value("prompt_tokens", r->prompt_tokens);
      r->cached_tokens = meta.value("cached_tokens", r->cached_tokens);
    } else {
      const json& choices = ev.value("choices", json::array());
      if (!choices.empty()) {
        const json& c = choices[0];
        std::string piece;
        if (backend_ == Backend::kOpenAI) {
          if (c.contains("text") && c["text"].is_string()) piece = c["text"];
        } else if (c.contains("delta") && c["delta"].contains("content") &&
                   c["delta"]["content"].is_string()) {
          piece = c["delta"]["content"];
        }
        if (!piece.empty()) {
          new_tokens = 1;  // a chunk; the usage block corrects the total
          ++chunks_;
        }
      }
      if (ev.contains("usage") && ev["usage"].is_object()) {
        const json& u = ev["usage"];
        usage_output_ = u.value("completion_tokens", int64_t{-1});
        r->prompt_tokens = u.value("prompt_tokens", int64_t{0});
        if (u.contains("prompt_tokens_details") && u["prompt_tokens_details"].is_object()) {
          r->cached_tokens = u["prompt_tokens_details"].value("cached_tokens", int64_t{0});
        }
      }
      r->output_tokens = usage_output_ >= 0 ? usage_output_ : chunks_;
    }
    if (new_tokens > 0) {
      const auto now = Clock::now();
      if (!seen_token_) {
        r->ttft_s = Seconds(start_, now);
        seen_token_ = true;
      } else {
        r->itl_s.push_back(Seconds(last_, now));
      }
      last_ = now;
    }
    return true;
  }

 private:
  const Backend backend_;
  const Clock::time_point start_;
  Clock::time_point last_;
  bool seen_token_ = false;
  int64_t chunks_ = 0;
  int64_t usage_output_ = -1;
};

}  // namespace

bool ParseBackend(const std::string& name, Backend* backend) {
  if (name == "radixlm" || name == "sglang") {
    *backend = Backend::kRadixlm;
  } else if (name == "openai") {
    *backend = Backend::kOpenAI;
  } else if (name == "openai-chat") {
    *backend = Backend::kOpenAIChat;
  } else {
    return false;
  }
  return true;
}

RequestResult SendOne(const DriverOptions& options, const BenchPrompt& prompt) {
  RequestResult r;
  const auto [path, body] = RequestFor(options, prompt);
  net::HttpCall call;
  call.path = path;
  call.body = body;
  call.api_key = options.api_key;
  call.timeout_s = options.request_timeout_s;
  call.user_agent = "radixlm-bench";
  const auto start = Clock::now();
  StreamState state(options.backend, start);
  net::SseSplitter sse;
  std::string raw;  // kept only for error reports
  bool events_ok = true;
  StatusOr<int> status = net::Fetch(options.target, call, [&](std::string_view data) {
    if (raw.size() < 2000) raw.append(data.substr(0, 2000 - raw.size()));
    sse.Feed(data, [&](std::string_view ev) {
      if (events_ok) events_ok = state.OnEvent(ev, &r);
    });
  });
  r.e2e_s = Seconds(start, Clock::now());
  if (!status.ok()) {
    r.error = status.status().ToString();
  } else if (*status != 200) {
    r.error = "HTTP " + std::to_string(*status) + ": " + raw;
  } else if (events_ok && r.output_tokens == 0 && prompt.output_len > 0) {
    r.error = "no tokens in the response: " + raw.substr(0, 300);
  } else {
    r.ok = events_ok;
  }
  return r;
}

RunResult RunBench(const DriverOptions& options, const std::vector<BenchPrompt>& prompts) {
  RunResult result;
  result.requests.resize(prompts.size());
  std::mt19937_64 rng(options.seed);
  std::exponential_distribution<double> gap(
      std::isfinite(options.request_rate) && options.request_rate > 0 ? options.request_rate : 1.0);
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;  // guarded by mu
  std::vector<std::thread> threads;
  threads.reserve(prompts.size());
  const auto start = Clock::now();
  double arrival = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    if (std::isfinite(options.request_rate) && options.request_rate > 0) {
      std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(arrival)));
      arrival += gap(rng);
    }
    {
      std::unique_lock<std::mutex> lock(mu);
      if (options.max_concurrency > 0) {
        cv.wait(lock, [&] { return in_flight < options.max_concurrency; });
      }
      ++in_flight;
    }
    threads.emplace_back([&, i] {
      const double begin = Seconds(start, Clock::now());
      RequestResult r = SendOne(options, prompts[i]);
      r.start_s = begin;
      result.requests[i] = std::move(r);
      {
        std::lock_guard<std::mutex> lock(mu);
        --in_flight;
      }
      cv.notify_all();
    });
  }
  for (std::thread& t : threads) t.join();
  result.duration_s = Seconds(start, Clock::now());
  return result;
}

}  // namespace radixlm::benchclient
