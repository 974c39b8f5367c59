// `bench_runtime <scenario>` (built to <build>/bench/bench_runtime): runtime benchmarks of the
// radix cache and the scheduler (issue 4). Every run prints one JSON object per line on stdout;
// the last line of a scenario is its summary (the ratio it is judged by).
// bench/bench_runtime.py runs all four. A tool of its own, not a radixlm subcommand, because
// lpm-vs-fcfs runs on the test double FakeModelRunner (radixlm_testing), which the radixlm
// binary does not link.
//
//   nested-sharing  instruction + one of D documents + one of Q questions per request: prefill
//                   tokens and wall time with the tree vs --disable-radix-cache (real model;
//                   the Scheduler is driven directly so "all at once" is exact).
//   shared-prefix   SGLang bench_serving's generated-shared-prefix workload (G groups, each a
//                   system prompt shared by P questions) through the Engine: throughput, tree
//                   on vs off (real model).
//   lpm-vs-fcfs     G groups of long shared prefixes, >= 1,000 requests queued at once, a KV pool
//                   too small for all prefixes: prefill tokens and per-pass scheduling time,
//                   lpm vs fcfs (fake model runner: this is a scheduling metric).
//   radix-overhead  unique prompts (no sharing): share of wall time spent in radix-cache
//                   operations, SchedulerStats::cache_op_seconds / wall (real model).
//   tree-view       what the web page's tree view costs the scheduler thread: the time of one
//                   snapshot of a 10,000-node tree (SnapshotRadixTree, as the engine answers
//                   GET /radix_tree and each /radix_tree/events poll) and of an unchanged
//                   poll, against the real model's mean step time; the share assumes the
//                   feed's worst case, a changed tree at every 200 ms poll.
//
// Prompts are random token ids (seeded), so token counts are exact.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/model_backed_runner.h"
#include "engine/radix_tree_snapshot.h"
#include "engine/scheduler_bridge.h"
#include "gguf/gguf_file.h"
#include "model/model.h"
#include "scheduler/scheduler.h"
#include "testing/fake_model_runner.h"
#include "util/model_path.h"

namespace radixlm::bench {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void Print(const Json& j, bool human) { std::cout << (human ? j.dump(2) : j.dump()) << std::endl; }

// Random token ids in [lo, hi). For gemma-3 ids 1000..200000 are ordinary text pieces.
class TokenGen {
 public:
  TokenGen(uint64_t seed, int32_t lo, int32_t hi) : rng_(seed), dist_(lo, hi - 1) {}
  std::vector<int32_t> Tokens(int64_t n) {
    std::vector<int32_t> out(static_cast<size_t>(n));
    for (int32_t& t : out) t = dist_(rng_);
    return out;
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int32_t> dist_;
};

std::vector<int32_t> Concat(std::initializer_list<std::span<const int32_t>> parts) {
  std::vector<int32_t> out;
  for (auto p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

struct Prompt {
  std::vector<int32_t> ids;
  int32_t max_new_tokens = 8;
};

int64_t PromptTokens(const std::vector<Prompt>& prompts) {
  int64_t n = 0;
  for (const Prompt& p : prompts) n += static_cast<int64_t>(p.ids.size());
  return n;
}

// Times every Forward() of the runner it wraps (so a pass's scheduling time is its Step() time
// minus its forward time).
class TimedRunner final : public ModelRunner {
 public:
  explicit TimedRunner(ModelRunner* inner) : inner_(inner) {}
  int32_t vocab_size() const override { return inner_->vocab_size(); }
  int64_t context_length() const override { return inner_->context_length(); }
  int64_t max_batch_tokens() const override { return inner_->max_batch_tokens(); }
  int64_t kv_slots() const override { return inner_->kv_slots(); }
  ThreadPool* thread_pool() override { return inner_->thread_pool(); }
  Status Forward(const model::ForwardBatch& batch, model::ForwardOutput* out) override {
    const Clock::time_point start = Clock::now();
    Status status = inner_->Forward(batch, out);
    forward_seconds_ += SecondsSince(start);
    return status;
  }
  double forward_seconds() const { return forward_seconds_; }

 private:
  ModelRunner* inner_;
  double forward_seconds_ = 0;
};

struct Percentiles {
  double mean = 0, p50 = 0, p99 = 0, max = 0;
};

Percentiles Summarize(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  p.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  auto at = [&](double q) { return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))]; };
  p.p50 = at(0.5);
  p.p99 = at(0.99);
  p.max = v.back();
  return p;
}

enum class Submission { kAllAtOnce, kSequential };

struct SchedulerRun {
  SchedulerStats stats;
  double wall_s = 0;
  double forward_s = 0;
  int64_t passes = 0;
  int64_t max_waiting = 0;
  int64_t output_tokens = 0;
  int64_t aborted = 0;
  std::vector<double> pass_sched_s;  // per Step(): its wall time minus its forward time
};

// Runs the prompts to completion on a fresh Scheduler over `runner` (greedy, ignore_eos, so
// every request makes exactly max_new_tokens). kAllAtOnce queues every prompt before the first
// Step(); kSequential runs each to completion before queueing the next.
StatusOr<SchedulerRun> RunOnScheduler(const SchedulerConfig& config, ModelRunner* runner,
                                      const std::vector<Prompt>& prompts, Submission submission) {
  TimedRunner timed(runner);
  SchedulerRun run;
  auto sink = [&run](RequestOutput&& out) {
    run.output_tokens += static_cast<int64_t>(out.chunk.output_ids.size());
    const std::optional<FinishReason>& finish = out.chunk.finish_reason;
    if (finish.has_value() && finish->kind == FinishReason::Kind::kAbort) ++run.aborted;
  };
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler,
                           Scheduler::Create(config, &timed, nullptr, sink));
  auto add = [&](size_t i) -> Status {
    RequestInput in;
    in.id = i + 1;
    in.input_ids = prompts[i].ids;
    in.params.temperature = 0.0f;
    in.params.max_new_tokens = prompts[i].max_new_tokens;
    in.params.ignore_eos = true;
    return scheduler->AddRequest(std::move(in));
  };
  auto drain = [&]() -> Status {
    while (scheduler->HasWork()) {
      run.max_waiting = std::max(run.max_waiting, scheduler->GetStats().waiting_requests);
      const double forward_before = timed.forward_seconds();
      const Clock::time_point start = Clock::now();
      RADIXLM_RETURN_IF_ERROR(scheduler->Step());
      run.pass_sched_s.push_back(SecondsSince(start) - (timed.forward_seconds() - forward_before));
      ++run.passes;
    }
    return Status::Ok();
  };
  const Clock::time_point start = Clock::now();
  if (submission == Submission::kAllAtOnce) {
    for (size_t i = 0; i < prompts.size(); ++i) RADIXLM_RETURN_IF_ERROR(add(i));
    RADIXLM_RETURN_IF_ERROR(drain());
  } else {
    for (size_t i = 0; i < prompts.size(); ++i) {
      RADIXLM_RETURN_IF_ERROR(add(i));
      RADIXLM_RETURN_IF_ERROR(drain());
    }
  }
  run.wall_s = SecondsSince(start);
  run.forward_s = timed.forward_seconds();
  run.stats = scheduler->GetStats();
  RADIXLM_RETURN_IF_ERROR(scheduler->CheckInvariants());
  return run;
}

Json RunToJson(const SchedulerRun& r) {
  const Percentiles p = Summarize(r.pass_sched_s);
  return {
      {"prefill_tokens", r.stats.prefill_tokens},
      {"cache_hit_tokens", r.stats.cache_hit_tokens},
      {"decode_tokens", r.stats.decode_tokens},
      {"output_tokens", r.output_tokens},
      {"finished", r.stats.finished_requests},
      {"aborted", r.aborted},
      {"retractions", r.stats.retractions},
      {"passes", r.passes},
      {"max_waiting", r.max_waiting},
      {"wall_s", r.wall_s},
      {"forward_s", r.forward_s},
      {"cache_op_s", r.stats.cache_op_seconds},
      {"cache_ops", r.stats.cache_ops},
      {"sched_per_pass_ms",
       {{"mean", p.mean * 1e3}, {"p50", p.p50 * 1e3}, {"p99", p.p99 * 1e3}, {"max", p.max * 1e3}}}};
}

// --- the real model, loaded once per scenario, shared by its runs ---

struct CommonFlags {
  std::string model_path = "default";
  int threads = 0;
  uint64_t seed = 1;
  bool human = false;
};

struct RealModel {
  std::unique_ptr<ModelBackedRunner> runner;
  SchedulerConfig config;  // from EngineConfig defaults (lpm, chunked prefill 8192, ...)
};

// As Engine::Create, without the tokenizer and the scheduler thread.
StatusOr<RealModel> LoadRealModel(const CommonFlags& flags, int64_t pool_tokens) {
  RADIXLM_ASSIGN_OR_RETURN(std::string path, ResolveModelPath(flags.model_path));
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::Open(path));
  RADIXLM_ASSIGN_OR_RETURN(model::ModelConfig mc, model::ModelConfig::FromGguf(*file));
  EngineConfig ec;
  ec.threads = flags.threads;
  RADIXLM_ASSIGN_OR_RETURN(SchedulerConfig sc,
                           ToSchedulerConfig(ec, pool_tokens, mc.context_length));
  model::ModelOptions mo;
  mo.n_threads = flags.threads;
  mo.max_batch_tokens = sc.chunked_prefill_size + sc.max_running_requests + sc.page_size;
  mo.max_context = mc.context_length;
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<model::Model> model,
                           model::Model::FromGguf(std::move(file), mo));
  const int64_t kv_slots = (pool_tokens / sc.page_size + 1) * sc.page_size;
  RealModel real;
  RADIXLM_ASSIGN_OR_RETURN(real.runner, ModelBackedRunner::Create(std::move(model), kv_slots));
  real.config = sc;
  return real;
}

// Warms the thread pool and caches with one short request (not measured).
Status WarmUp(const RealModel& real, ModelRunner* runner, TokenGen& gen) {
  std::vector<Prompt> warm = {{gen.Tokens(64), 4}};
  SchedulerConfig c = real.config;
  c.disable_radix_cache = true;
  return RunOnScheduler(c, runner, warm, Submission::kAllAtOnce).status();
}

// --- 1. nested sharing ---

struct NestedFlags {
  int64_t instruction_tokens = 900;
  int64_t docs = 2;
  int64_t doc_tokens = 600;
  int64_t questions = 4;
  int64_t question_tokens = 120;
  int32_t max_new_tokens = 8;
  std::string submit = "both";  // all | sequential | both
};

Status RunNested(const CommonFlags& common, const NestedFlags& f) {
  TokenGen gen(common.seed, 1000, 200000);
  std::vector<int32_t> instruction = gen.Tokens(f.instruction_tokens);
  instruction[0] = 2;  // <bos>
  std::vector<std::vector<int32_t>> docs, questions;
  for (int64_t d = 0; d < f.docs; ++d) docs.push_back(gen.Tokens(f.doc_tokens));
  for (int64_t q = 0; q < f.questions; ++q) questions.push_back(gen.Tokens(f.question_tokens));
  std::vector<Prompt> prompts;
  for (const auto& doc : docs) {
    for (const auto& question : questions) {
      prompts.push_back({Concat({instruction, doc, question}), f.max_new_tokens});
    }
  }
  const int64_t expected_tree =
      f.instruction_tokens + f.docs * f.doc_tokens + f.docs * f.questions * f.question_tokens;
  const int64_t prompt_tokens = PromptTokens(prompts);
  const int64_t pool = std::max<int64_t>(16384, 2 * prompt_tokens);
  RADIXLM_ASSIGN_OR_RETURN(RealModel real, LoadRealModel(common, pool));
  RADIXLM_RETURN_IF_ERROR(WarmUp(real, real.runner.get(), gen));

  std::vector<std::pair<std::string, Submission>> modes;
  if (f.submit == "all" || f.submit == "both") modes.push_back({"all", Submission::kAllAtOnce});
  if (f.submit == "sequential" || f.submit == "both") {
    modes.push_back({"sequential", Submission::kSequential});
  }
  if (modes.empty()) return InvalidArgument("--submit must be all, sequential or both");
  Json summary = {{"scenario", "nested-sharing"},
                  {"summary", true},
                  {"requests", prompts.size()},
                  {"prompt_tokens", prompt_tokens},
                  {"expected_prefill_tree", expected_tree},
                  {"expected_prefill_no_tree", prompt_tokens}};
  for (const auto& [name, submission] : modes) {
    for (bool tree : {true, false}) {
      SchedulerConfig c = real.config;
      c.disable_radix_cache = !tree;
      RADIXLM_ASSIGN_OR_RETURN(SchedulerRun r,
                               RunOnScheduler(c, real.runner.get(), prompts, submission));
      Json j = RunToJson(r);
      j["scenario"] = "nested-sharing";
      j["submit"] = name;
      j["radix_cache"] = tree;
      j["policy"] = SchedulePolicyName(c.schedule_policy);
      Print(j, common.human);
      summary[name][tree ? "tree" : "no_tree"] = {{"prefill_tokens", r.stats.prefill_tokens},
                                                  {"wall_s", r.wall_s}};
    }
    Json& s = summary[name];
    s["prefill_ratio"] = static_cast<double>(s["no_tree"]["prefill_tokens"].get<int64_t>()) /
                         static_cast<double>(s["tree"]["prefill_tokens"].get<int64_t>());
    s["wall_ratio"] = s["no_tree"]["wall_s"].get<double>() / s["tree"]["wall_s"].get<double>();
  }
  Print(summary, common.human);
  return Status::Ok();
}

// --- 2. generated shared prefix, through the Engine ---

struct SharedPrefixFlags {
  int64_t groups = 4;
  int64_t prompts_per_group = 8;
  int64_t system_prompt_tokens = 512;
  int64_t question_tokens = 32;
  int32_t output_tokens = 16;
  int64_t max_total_tokens = 0;  // 0: the engine's default (kv_cache_memory_mb)
};

struct EngineRun {
  double wall_s = 0;
  int64_t output_tokens = 0;
  int64_t aborted = 0;
  EngineStats stats;
};

StatusOr<EngineRun> RunOnEngine(Engine& engine, const std::vector<Prompt>& prompts) {
  RADIXLM_RETURN_IF_ERROR(engine.FlushCache());
  const EngineStats before = engine.GetStats();
  EngineRun run;
  const Clock::time_point start = Clock::now();
  std::vector<std::shared_ptr<GenerateStream>> streams;
  for (const Prompt& p : prompts) {
    GenerateRequest req;
    req.input_ids = p.ids;
    req.sampling_params.temperature = 0.0f;
    req.sampling_params.max_new_tokens = p.max_new_tokens;
    req.sampling_params.ignore_eos = true;
    RADIXLM_ASSIGN_OR_RETURN(std::shared_ptr<GenerateStream> stream, engine.Submit(std::move(req)));
    streams.push_back(std::move(stream));
  }
  for (auto& stream : streams) {
    for (const GenerateResult& r : stream->Collect()) {
      run.output_tokens += static_cast<int64_t>(r.output_ids.size());
      if (r.finish_reason.has_value() && r.finish_reason->kind == FinishReason::Kind::kAbort) {
        ++run.aborted;
      }
    }
  }
  run.wall_s = SecondsSince(start);
  run.stats = engine.GetStats();
  run.stats.scheduler.prefill_tokens -= before.scheduler.prefill_tokens;
  run.stats.scheduler.cache_hit_tokens -= before.scheduler.cache_hit_tokens;
  run.stats.scheduler.forward_passes -= before.scheduler.forward_passes;
  return run;
}

Status RunSharedPrefix(const CommonFlags& common, const SharedPrefixFlags& f) {
  TokenGen gen(common.seed, 1000, 200000);
  std::vector<Prompt> prompts;
  for (int64_t g = 0; g < f.groups; ++g) {
    std::vector<int32_t> system = gen.Tokens(f.system_prompt_tokens);
    system[0] = 2;  // <bos>
    for (int64_t q = 0; q < f.prompts_per_group; ++q) {
      prompts.push_back({Concat({system, gen.Tokens(f.question_tokens)}), f.output_tokens});
    }
  }
  // bench_serving sends the requests in a random order at request rate inf.
  std::shuffle(prompts.begin(), prompts.end(), gen.rng());
  const int64_t prompt_tokens = PromptTokens(prompts);
  Json summary = {{"scenario", "shared-prefix"},
                  {"summary", true},
                  {"requests", prompts.size()},
                  {"prompt_tokens", prompt_tokens}};
  for (bool tree : {true, false}) {
    EngineConfig ec;
    ec.model_path = common.model_path;
    ec.threads = common.threads;
    ec.max_total_tokens = f.max_total_tokens;
    ec.disable_radix_cache = !tree;
    RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Create(ec));
    {  // warm-up, not measured
      std::vector<Prompt> warm = {{gen.Tokens(64), 4}};
      RADIXLM_RETURN_IF_ERROR(RunOnEngine(*engine, warm).status());
    }
    RADIXLM_ASSIGN_OR_RETURN(EngineRun r, RunOnEngine(*engine, prompts));
    const double total_tokens = static_cast<double>(prompt_tokens + r.output_tokens);
    Json j = {{"scenario", "shared-prefix"},
              {"radix_cache", tree},
              {"policy", engine->config().schedule_policy},
              {"max_total_tokens", engine->max_total_tokens()},
              {"prefill_tokens", r.stats.scheduler.prefill_tokens},
              {"cache_hit_tokens", r.stats.scheduler.cache_hit_tokens},
              {"forward_passes", r.stats.scheduler.forward_passes},
              {"output_tokens", r.output_tokens},
              {"aborted", r.aborted},
              {"wall_s", r.wall_s},
              {"request_throughput", static_cast<double>(prompts.size()) / r.wall_s},
              {"output_throughput", static_cast<double>(r.output_tokens) / r.wall_s},
              {"total_token_throughput", total_tokens / r.wall_s}};
    Print(j, common.human);
    summary[tree ? "tree" : "no_tree"] = j;
  }
  summary["throughput_ratio"] = summary["tree"]["total_token_throughput"].get<double>() /
                                summary["no_tree"]["total_token_throughput"].get<double>();
  summary.erase("tree");
  summary.erase("no_tree");
  Print(summary, common.human);
  return Status::Ok();
}

// --- 3. LPM vs FCFS under a small KV pool (fake model runner) ---

struct LpmFlags {
  int64_t groups = 32;
  int64_t per_group = 32;
  int64_t prefix_tokens = 1024;
  int64_t suffix_tokens = 32;
  int32_t output_tokens = 4;
  int64_t max_total_tokens = 8192;
  std::vector<std::string> policies = {"lpm", "fcfs"};
  int32_t lpm_rematch_max_requests = 0;  // 0: the scheduler's default
};

Status RunLpmVsFcfs(const CommonFlags& common, const LpmFlags& f) {
  constexpr int32_t kVocab = 256;
  TokenGen gen(common.seed, 0, kVocab);
  std::vector<Prompt> prompts;
  for (int64_t g = 0; g < f.groups; ++g) {
    const std::vector<int32_t> prefix = gen.Tokens(f.prefix_tokens);
    for (int64_t i = 0; i < f.per_group; ++i) {
      prompts.push_back({Concat({prefix, gen.Tokens(f.suffix_tokens)}), f.output_tokens});
    }
  }
  std::shuffle(prompts.begin(), prompts.end(), gen.rng());  // groups arrive interleaved
  Json summary = {{"scenario", "lpm-vs-fcfs"},
                  {"summary", true},
                  {"model", "FakeModelRunner"},
                  {"requests", prompts.size()},
                  {"prompt_tokens", PromptTokens(prompts)},
                  {"all_prefixes_tokens", f.groups * f.prefix_tokens},
                  {"max_total_tokens", f.max_total_tokens}};
  for (const std::string& name : f.policies) {
    EngineConfig ec;
    ec.schedule_policy = name;
    RADIXLM_ASSIGN_OR_RETURN(SchedulerConfig c, ToSchedulerConfig(ec, f.max_total_tokens, 4096));
    if (f.lpm_rematch_max_requests > 0) c.lpm_rematch_max_requests = f.lpm_rematch_max_requests;
    FakeModelConfig fm;
    fm.vocab_size = kVocab;
    fm.context_length = 4096;
    fm.max_batch_tokens = c.chunked_prefill_size + c.max_running_requests + c.page_size;
    fm.kv_slots = (f.max_total_tokens / c.page_size + 1) * c.page_size;
    FakeModelRunner runner(fm);
    RADIXLM_ASSIGN_OR_RETURN(SchedulerRun r,
                             RunOnScheduler(c, &runner, prompts, Submission::kAllAtOnce));
    Json j = RunToJson(r);
    j["scenario"] = "lpm-vs-fcfs";
    j["policy"] = name;
    j["lpm_rematch_max_requests"] = c.lpm_rematch_max_requests;
    Print(j, common.human);
    summary[name] = {{"prefill_tokens", r.stats.prefill_tokens},
                     {"sched_per_pass_ms", j["sched_per_pass_ms"]},
                     {"max_waiting", r.max_waiting}};
  }
  if (summary.contains("lpm") && summary.contains("fcfs")) {
    summary["prefill_ratio_fcfs_over_lpm"] =
        static_cast<double>(summary["fcfs"]["prefill_tokens"].get<int64_t>()) /
        static_cast<double>(summary["lpm"]["prefill_tokens"].get<int64_t>());
  }
  Print(summary, common.human);
  return Status::Ok();
}

// --- 4. radix overhead without sharing ---

struct OverheadFlags {
  int64_t requests = 16;
  int64_t prompt_tokens = 256;
  int32_t output_tokens = 32;
  int64_t max_total_tokens = 2048;  // small enough that finished prompts get evicted
  bool compare_disabled = true;
};

Status RunOverhead(const CommonFlags& common, const OverheadFlags& f) {
  TokenGen gen(common.seed, 1000, 200000);
  std::vector<Prompt> prompts;
  for (int64_t i = 0; i < f.requests; ++i) {
    std::vector<int32_t> ids = gen.Tokens(f.prompt_tokens);
    ids[0] = static_cast<int32_t>(1000 + i);  // distinct first tokens: nothing is shared
    prompts.push_back({std::move(ids), f.output_tokens});
  }
  RADIXLM_ASSIGN_OR_RETURN(RealModel real, LoadRealModel(common, f.max_total_tokens));
  RADIXLM_RETURN_IF_ERROR(WarmUp(real, real.runner.get(), gen));
  Json summary = {{"scenario", "radix-overhead"},
                  {"summary", true},
                  {"requests", prompts.size()},
                  {"prompt_tokens", PromptTokens(prompts)},
                  {"max_total_tokens", f.max_total_tokens}};
  std::vector<bool> modes = {true};
  if (f.compare_disabled) modes.push_back(false);
  for (bool tree : modes) {
    SchedulerConfig c = real.config;
    c.disable_radix_cache = !tree;
    RADIXLM_ASSIGN_OR_RETURN(SchedulerRun r,
                             RunOnScheduler(c, real.runner.get(), prompts, Submission::kAllAtOnce));
    Json j = RunToJson(r);
    j["scenario"] = "radix-overhead";
    j["radix_cache"] = tree;
    j["cache_op_share_pct"] = 100.0 * r.stats.cache_op_seconds / r.wall_s;
    Print(j, common.human);
    summary[tree ? "tree" : "no_tree"] = {{"wall_s", r.wall_s},
                                          {"cache_op_s", r.stats.cache_op_seconds},
                                          {"cache_ops", r.stats.cache_ops},
                                          {"cache_op_share_pct", j["cache_op_share_pct"]}};
  }
  Print(summary, common.human);
  return Status::Ok();
}

// --- 5. the tree view's cost to the scheduler ---

struct TreeViewFlags {
  int64_t prefixes = 10;  // shared prefixes under the root
  int64_t leaves = 999;   // leaves under each (10 × (1 + 999) = 10,000 nodes)
  int32_t reps = 200;     // snapshots timed
  int64_t requests = 8;   // real-model decode workload for the step time
  int32_t output_tokens = 32;
  double poll_interval_s = 0.2;  // server/radix_tree_feed.h
};

// Mean seconds per call of fn over `reps` calls.
template <typename Fn>
double MeanSeconds(int32_t reps, Fn&& fn) {
  const auto start = Clock::now();
  for (int32_t i = 0; i < reps; ++i) fn();
  return SecondsSince(start) / reps;
}

Status RunTreeView(const CommonFlags& common, const TreeViewFlags& f) {
  RadixCache cache({});
  int32_t next_slot = 0;
  for (int64_t p = 0; p < f.prefixes; ++p) {
    for (int64_t i = 0; i < f.leaves; ++i) {
      std::vector<int32_t> key(64);
      std::iota(key.begin(), key.end(), static_cast<int32_t>(100000 * (p + 1)));
      key.push_back(static_cast<int32_t>(i + 1));
      key.push_back(7);
      std::vector<int32_t> slots(key.size());
      std::iota(slots.begin(), slots.end(), next_slot);
      next_slot += static_cast<int32_t>(key.size());
      cache.Insert(key, slots);
    }
  }
  Json summary = {{"scenario", "tree-view"}, {"summary", true}, {"tree_nodes", cache.num_nodes()}};
  size_t sink = 0;
  for (int32_t max_nodes : {500, 10000}) {
    const double s = MeanSeconds(f.reps, [&] {
      sink += SnapshotRadixTree(cache, RadixTreeQuery{.max_nodes = max_nodes}).entries.size();
    });
    summary["snapshot_ms_max_nodes_" + std::to_string(max_nodes)] = 1e3 * s;
  }
  const uint64_t version = cache.version();
  const double unchanged = MeanSeconds(f.reps * 100, [&] {
    sink += SnapshotRadixTree(cache, RadixTreeQuery{.if_version_not = version}).unchanged;
  });
  summary["unchanged_poll_us"] = 1e6 * unchanged;

  TokenGen gen(common.seed, 1000, 200000);
  std::vector<Prompt> prompts;
  for (int64_t i = 0; i < f.requests; ++i) prompts.push_back({gen.Tokens(64), f.output_tokens});
  RADIXLM_ASSIGN_OR_RETURN(RealModel real, LoadRealModel(common, 8192));
  RADIXLM_RETURN_IF_ERROR(WarmUp(real, real.runner.get(), gen));
  RADIXLM_ASSIGN_OR_RETURN(SchedulerRun run, RunOnScheduler(real.config, real.runner.get(), prompts,
                                                            Submission::kAllAtOnce));
  const double step_s = run.passes > 0 ? run.wall_s / static_cast<double>(run.passes) : 0;
  summary["step_ms"] = 1e3 * step_s;
  summary["batch"] = f.requests;
  // Worst case: the tree changes all the time, so the feed takes a full snapshot (default
  // max_nodes 500) as often as it may, every max(200 ms, 200 × its cost), and a counters-only
  // poll every 200 ms in between; the share of the scheduler's time (so of each step, on
  // average). Unchanged: an idle tree, one O(1) poll per 200 ms.
  const double snap_s = summary["snapshot_ms_max_nodes_500"].get<double>() / 1e3;
  const double full_interval_s = std::max(f.poll_interval_s, 200 * snap_s);
  summary["full_snapshot_interval_s"] = full_interval_s;
  summary["added_share_pct_worst"] =
      100.0 * (snap_s / full_interval_s + unchanged / f.poll_interval_s);
  summary["added_share_pct_unchanged"] = 100.0 * unchanged / f.poll_interval_s;
  summary["checksum"] = sink;
  Print(summary, common.human);
  return Status::Ok();
}

// --- CLI ---

void AddCommon(CLI::App* cmd, CommonFlags* flags) {
  cmd->add_option("--model-path", flags->model_path, "GGUF file, or 'default'");
  cmd->add_option("--threads", flags->threads, "Worker threads (0: all cores)");
  cmd->add_option("--seed", flags->seed, "Seed of the random prompts");
  cmd->add_flag("--human", flags->human, "Pretty-print the JSON");
}

int exit_code = 0;

void OnDone(const Status& status) {
  if (!status.ok()) {
    std::cerr << "bench_runtime: " << status.ToString() << "\n";
    exit_code = 1;
  }
}

int Main(int argc, char** argv) {
  CLI::App app{"Runtime benchmarks of the radix cache and the scheduler (JSON lines)"};
  CLI::App* cmd = &app;
  cmd->require_subcommand(1);
  auto common = std::make_shared<CommonFlags>();

  auto nested = std::make_shared<NestedFlags>();
  CLI::App* n = cmd->add_subcommand("nested-sharing", "Instruction + doc + question prompts");
  AddCommon(n, common.get());
  n->add_option("--instruction-tokens", nested->instruction_tokens);
  n->add_option("--docs", nested->docs);
  n->add_option("--doc-tokens", nested->doc_tokens);
  n->add_option("--questions", nested->questions);
  n->add_option("--question-tokens", nested->question_tokens);
  n->add_option("--max-new-tokens", nested->max_new_tokens);
  n->add_option("--submit", nested->submit, "all | sequential | both");
  n->callback([common, nested]() { OnDone(RunNested(*common, *nested)); });

  auto gsp = std::make_shared<SharedPrefixFlags>();
  CLI::App* s = cmd->add_subcommand("shared-prefix", "Generated-shared-prefix workload, Engine");
  AddCommon(s, common.get());
  s->add_option("--groups", gsp->groups);
  s->add_option("--prompts-per-group", gsp->prompts_per_group);
  s->add_option("--system-prompt-tokens", gsp->system_prompt_tokens);
  s->add_option("--question-tokens", gsp->question_tokens);
  s->add_option("--output-tokens", gsp->output_tokens);
  s->add_option("--max-total-tokens", gsp->max_total_tokens, "0: engine default");
  s->callback([common, gsp]() { OnDone(RunSharedPrefix(*common, *gsp)); });

  auto lpm = std::make_shared<LpmFlags>();
  CLI::App* l = cmd->add_subcommand("lpm-vs-fcfs", "Policies under a small KV pool (fake model)");
  AddCommon(l, common.get());
  l->add_option("--groups", lpm->groups);
  l->add_option("--per-group", lpm->per_group);
  l->add_option("--prefix-tokens", lpm->prefix_tokens);
  l->add_option("--suffix-tokens", lpm->suffix_tokens);
  l->add_option("--output-tokens", lpm->output_tokens);
  l->add_option("--max-total-tokens", lpm->max_total_tokens);
  l->add_option("--policies", lpm->policies, "e.g. lpm,fcfs,dfs-weight")->delimiter(',');
  l->add_option("--lpm-rematch-max-requests", lpm->lpm_rematch_max_requests,
                "Stale waiting requests LPM re-matches per pass (0: default)");
  l->callback([common, lpm]() { OnDone(RunLpmVsFcfs(*common, *lpm)); });

  auto overhead = std::make_shared<OverheadFlags>();
  CLI::App* o = cmd->add_subcommand("radix-overhead", "Cache-op time share without sharing");
  AddCommon(o, common.get());
  o->add_option("--requests", overhead->requests);
  o->add_option("--prompt-tokens", overhead->prompt_tokens);
  o->add_option("--output-tokens", overhead->output_tokens);
  o->add_option("--max-total-tokens", overhead->max_total_tokens);
  o->add_option("--compare-disabled", overhead->compare_disabled,
                "Also run with --disable-radix-cache");
  o->callback([common, overhead]() { OnDone(RunOverhead(*common, *overhead)); });

  auto tree_view = std::make_shared<TreeViewFlags>();
  CLI::App* t = cmd->add_subcommand("tree-view", "The tree view's cost to the scheduler");
  AddCommon(t, common.get());
  t->add_option("--prefixes", tree_view->prefixes);
  t->add_option("--leaves", tree_view->leaves);
  t->add_option("--reps", tree_view->reps);
  t->add_option("--requests", tree_view->requests);
  t->add_option("--output-tokens", tree_view->output_tokens);
  t->callback([common, tree_view]() { OnDone(RunTreeView(*common, *tree_view)); });

  CLI11_PARSE(app, argc, argv);
  return exit_code;
}

}  // namespace
}  // namespace radixlm::bench

int main(int argc, char** argv) { return radixlm::bench::Main(argc, argv); }
