// The request driver of `radixlm bench`: sends a workload to a server the way SGLang's
// bench_serving does (Poisson arrivals at --request-rate, or all at once, optionally capped at
// --max-concurrency in flight), streaming every response and timing each token's arrival.
//
// Backends (what is sent; all stream):
//   radixlm      POST /generate {text, sampling_params{max_new_tokens, temperature 0,
//                ignore_eos}, stream}; tokens counted from meta_info.completion_tokens
//   openai       POST /v1/completions {model, prompt, max_tokens, temperature 0, stream,
//                stream_options.include_usage, ignore_eos}; tokens from usage (else chunks)
//   openai-chat  POST /v1/chat/completions, the prompt as one user message; likewise
// `ignore_eos` is an SGLang/vLLM extension that fixes output lengths; servers that do not know
// it ignore it (outputs may then be shorter, which the report shows).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "benchclient/workload.h"
#include "net/http_client.h"

namespace radixlm::benchclient {

enum class Backend { kRadixlm, kOpenAI, kOpenAIChat };

// "radixlm" | "openai" | "openai-chat"; false for anything else.
bool ParseBackend(const std::string& name, Backend* backend);

struct DriverOptions {
  net::HttpTarget target;
  Backend backend = Backend::kRadixlm;
  std::string model;                                              // the OpenAI "model" field
  std::string api_key;                                            // Bearer token, if any
  double request_rate = std::numeric_limits<double>::infinity();  // requests/s (Poisson)
  int max_concurrency = 0;                                        // 0 = no cap
  uint64_t seed = 1;
  bool ignore_eos = true;
  double request_timeout_s = 1800;
};

struct RequestResult {
  bool ok = false;
  std::string error;
  double start_s = 0;         // since the run began
  double ttft_s = 0;          // to the first streamed token
  double e2e_s = 0;           // to the end of the response
  std::vector<double> itl_s;  // gaps between later token arrivals
  int64_t prompt_tokens = 0;  // as the server reports (0 if it does not)
  int64_t output_tokens = 0;
  int64_t cached_tokens = 0;  // as the server reports (0 if it does not)
};

struct RunResult {
  std::vector<RequestResult> requests;  // in workload order
  double duration_s = 0;
};

RunResult RunBench(const DriverOptions& options, const std::vector<BenchPrompt>& prompts);

// One request (exposed for tests): sends prompt, parses the stream.
RequestResult SendOne(const DriverOptions& options, const BenchPrompt& prompt);

}  // namespace radixlm::benchclient
