// `radixlm bench`: an online serving benchmark in the manner of SGLang's bench_serving. Sends
// a workload (random lengths, or SGLang's generated-shared-prefix groups) to any server that
// speaks radixlm/SGLang's /generate or OpenAI's API, streams every response, and reports
// request and token throughput with mean / median / P99 TTFT, TPOT, ITL and end-to-end latency.
// --output-file appends one JSON line per run.
//
//   radixlm bench --base-url http://127.0.0.1:30000 --backend radixlm
//       --dataset-name generated-shared-prefix --gsp-num-groups 4 --gsp-prompts-per-group 8
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "benchclient/bench_driver.h"
#include "benchclient/bench_stats.h"
#include "benchclient/workload.h"
#include "gguf/gguf_file.h"
#include "hf/model_file.h"
#include "net/http_client.h"
#include "tokenizer/tokenizer.h"
#include "util/model_path.h"

namespace radixlm::apps {
namespace {

using benchclient::BenchPrompt;
using nlohmann::json;

struct BenchFlags {
  std::string base_url = "http://127.0.0.1:30000";
  std::string backend = "radixlm";
  std::string model;
  std::string api_key;
  std::string dataset = "random";
  std::string tokenizer = "default";
  std::string output_file;
  benchclient::RandomWorkloadOptions random;
  benchclient::SharedPrefixWorkloadOptions gsp;
  double request_rate = std::numeric_limits<double>::infinity();
  int max_concurrency = 0;
  uint64_t seed = 1;
  bool disable_ignore_eos = false;
  bool flush_cache = false;
  int warmup_requests = 1;
};

// The first model id of GET /v1/models, or "default".
std::string DiscoverModel(const net::HttpTarget& target, const std::string& api_key) {
  net::HttpCall call;
  call.method = "GET";
  call.path = "/v1/models";
  call.api_key = api_key;
  call.timeout_s = 30;
  call.user_agent = "radixlm-bench";
  std::string body;
  StatusOr<int> status = net::Fetch(target, call, [&](std::string_view d) { body.append(d); });
  if (status.ok() && *status == 200) {
    const json j = json::parse(body, nullptr, false);
    if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty() &&
        j["data"][0].contains("id") && j["data"][0]["id"].is_string()) {
      return j["data"][0]["id"];
    }
  }
  return "default";
}

Status RunBenchCommand(const BenchFlags& f) {
  benchclient::DriverOptions o;
  RADIXLM_ASSIGN_OR_RETURN(o.target, net::ParseBaseUrl(f.base_url));
  if (!benchclient::ParseBackend(f.backend, &o.backend)) {
    return InvalidArgument("--backend must be radixlm, openai or openai-chat");
  }
  o.api_key = f.api_key;
  if (o.api_key.empty()) {
    if (const char* env = std::getenv("OPENAI_API_KEY")) o.api_key = env;
  }
  if (!(f.request_rate > 0)) return InvalidArgument("--request-rate must be > 0 (or inf)");
  if (f.max_concurrency < 0) return InvalidArgument("--max-concurrency must be >= 0");
  o.request_rate = f.request_rate;
  o.max_concurrency = f.max_concurrency;
  o.seed = f.seed;
  o.ignore_eos = !f.disable_ignore_eos;

  // Token lengths: exact in the tokenizer of a GGUF or a Hugging Face folder, or in words with
  // --tokenizer none.
  std::unique_ptr<gguf::GgufFile> file;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;
  if (f.tokenizer != "none") {
    RADIXLM_ASSIGN_OR_RETURN(std::string path, ResolveModelPath(f.tokenizer));
    RADIXLM_ASSIGN_OR_RETURN(file, hf::OpenModelFile(path, {}));  // a GGUF or an HF folder
    RADIXLM_ASSIGN_OR_RETURN(tokenizer, tokenizer::Tokenizer::FromGguf(*file));
  }
  std::vector<BenchPrompt> prompts;
  if (f.dataset == "random") {
    prompts = benchclient::MakeRandomWorkload(f.random, tokenizer.get(), f.seed);
  } else if (f.dataset == "generated-shared-prefix") {
    prompts = benchclient::MakeSharedPrefixWorkload(f.gsp, tokenizer.get(), f.seed);
  } else {
    return InvalidArgument("--dataset-name must be random or generated-shared-prefix");
  }
  if (prompts.empty()) return InvalidArgument("the workload has no prompts");
  o.model = f.model.empty() ? DiscoverModel(o.target, o.api_key) : f.model;

  if (f.flush_cache) {
    net::HttpCall call;
    call.path = "/flush_cache";
    call.api_key = o.api_key;
    call.user_agent = "radixlm-bench";
    StatusOr<int> st = net::Fetch(o.target, call, [](std::string_view) {});
    if (!st.ok() || *st != 200) std::cerr << "radixlm bench: warning: /flush_cache failed\n";
  }
  // Warm-up: short requests that do not share the workload's prefixes.
  for (int i = 0; i < f.warmup_requests; ++i) {
    BenchPrompt warm{"Warm-up request number " + std::to_string(i) + ".", 6, 4};
    benchclient::RequestResult r = benchclient::SendOne(o, warm);
    if (!r.ok) return IoError("warm-up request failed: " + r.error);
  }

  std::cerr << "radixlm bench: " << prompts.size() << " prompts (" << f.dataset << ") to "
            << f.base_url << " (" << f.backend << ", model " << o.model << ")\n";
  const benchclient::RunResult run = benchclient::RunBench(o, prompts);
  const benchclient::BenchSummary summary = benchclient::Summarize(run, prompts);
  std::cout << benchclient::FormatReport(summary, "Serving Benchmark Result");

  if (!f.output_file.empty()) {
    json record = benchclient::ToJson(summary);
    record["backend"] = f.backend;
    record["base_url"] = f.base_url;
    record["model"] = o.model;
    record["dataset_name"] = f.dataset;
    record["num_prompts"] = prompts.size();
    record["request_rate"] = std::isfinite(f.request_rate) ? json(f.request_rate) : json("inf");
    record["max_concurrency"] = f.max_concurrency;
    record["seed"] = f.seed;
    if (f.dataset == "generated-shared-prefix") {
      record["gsp"] = {{"num_groups", f.gsp.groups},
                       {"prompts_per_group", f.gsp.prompts_per_group},
                       {"system_prompt_len", f.gsp.system_len},
                       {"question_len", f.gsp.question_len},
                       {"output_len", f.gsp.output_len}};
    } else {
      record["random"] = {{"input_len", f.random.input_len},
                          {"output_len", f.random.output_len},
                          {"range_ratio", f.random.range_ratio}};
    }
    std::ofstream out(f.output_file, std::ios::app);
    out << record.dump() << "\n";
    if (!out) return IoError("cannot write " + f.output_file);
  }
  return summary.completed > 0 ? Status::Ok() : IoError("every request failed");
}

const bool kBenchRegistered = RegisterCommand("bench", [](CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Online serving benchmark against a radixlm/SGLang or OpenAI-compatible server");
  cmd->add_option("--base-url", f->base_url, "Server URL (http only)");
  cmd->add_option("--backend", f->backend, "radixlm | openai | openai-chat");
  cmd->add_option("--model", f->model, "OpenAI model name (default: first of /v1/models)");
  cmd->add_option("--api-key", f->api_key, "Bearer token (default: $OPENAI_API_KEY)");
  cmd->add_option("--dataset-name", f->dataset, "random | generated-shared-prefix");
  cmd->add_option("--tokenizer", f->tokenizer,
                  "GGUF file or Hugging Face folder whose tokenizer measures prompt lengths "
                  "('default', a path, or 'none' to count words)");
  cmd->add_option("--num-prompts", f->random.num_prompts, "random: number of prompts");
  cmd->add_option("--random-input-len", f->random.input_len, "random: prompt tokens");
  cmd->add_option("--random-output-len", f->random.output_len, "random: output tokens");
  cmd->add_option("--random-range-ratio", f->random.range_ratio,
                  "random: lengths uniform in [len * ratio, len]")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--gsp-num-groups", f->gsp.groups, "shared prefix: groups")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--gsp-prompts-per-group", f->gsp.prompts_per_group,
                  "shared prefix: prompts per group")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--gsp-system-prompt-len", f->gsp.system_len, "shared prefix: system tokens");
  cmd->add_option("--gsp-question-len", f->gsp.question_len, "shared prefix: question tokens");
  cmd->add_option("--gsp-output-len", f->gsp.output_len, "shared prefix: output tokens");
  cmd->add_option("--request-rate", f->request_rate, "Requests/s, Poisson (default inf)");
  cmd->add_option("--max-concurrency", f->max_concurrency, "Cap on requests in flight (0: none)");
  cmd->add_option("--seed", f->seed, "Workload and arrival seed");
  cmd->add_option("--output-file", f->output_file, "Append the results as one JSON line");
  cmd->add_option("--warmup-requests", f->warmup_requests, "Short requests sent first");
  cmd->add_flag("--disable-ignore-eos", f->disable_ignore_eos,
                "Let outputs stop at EOS (lengths then vary)");
  cmd->add_flag("--flush-cache", f->flush_cache, "POST /flush_cache before the run");
  cmd->callback([f]() {
    Status st = RunBenchCommand(*f);
    if (!st.ok()) {
      std::cerr << "radixlm bench: " << st.ToString() << "\n";
      SetExitCode(1);
    }
  });
});

}  // namespace
}  // namespace radixlm::apps
