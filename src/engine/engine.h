// Engine: the in-process serving API (what the HTTP server, the frontend language, benchmarks
// and tests use). It owns the model runner, the tokenizer codec and ONE scheduler thread that
// owns the Scheduler and everything under it (pool, tree, requests).
//
//   auto engine = Engine::Create(config);               // loads model + tokenizer
//   auto stream = (*engine)->Submit({.text = "Hello", ...});
//   while (auto chunk = (*stream)->Next()) { ... }      // or (*stream)->Collect()
//
// Threading: every public method is thread-safe. Submit validates on the caller's thread
// (tokenizing text; a grammar is only parsed there, or taken from the grammar cache: its
// compilation runs on the grammar compiler pool while the request waits in the scheduler's
// grammar queue), then hands the request to the scheduler thread through a queue; outputs
// come back through the request's GenerateStream. Nothing but the scheduler thread touches the
// scheduler's state; Abort / FlushCache / GetStats are commands to it as well (the last two
// wait for its answer, at most one forward pass).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/engine_config.h"
#include "grammar/grammar_cache.h"
#include "grammar/grammar_compiler_pool.h"
#include "engine/generate_request.h"
#include "engine/generate_stream.h"
#include "scheduler/model_runner.h"
#include "scheduler/scheduler.h"
#include "scheduler/token_text.h"
#include "util/mutex.h"

namespace radixlm {

struct EngineStats {
  SchedulerStats scheduler;
  int64_t live_requests = 0;  // submitted and not yet ended (all samples)
  grammar::GrammarCacheStats grammar;  // constrained decoding: compiles, lookups, compile time
  // Share of prefill tokens served by the radix cache: hit / (hit + computed).
  double cache_hit_rate() const {
    const double total = static_cast<double>(scheduler.cache_hit_tokens + scheduler.prefill_tokens);
    return total > 0 ? static_cast<double>(scheduler.cache_hit_tokens) / total : 0.0;
  }
};

class Engine {
 public:
  // Loads the model (config.model_path) and its tokenizer, sizes the KV pool, starts the
  // scheduler thread.
  static StatusOr<std::unique_ptr<Engine>> Create(const EngineConfig& config);
  // With a given runner and codec (tests, fakes). config.max_total_tokens must be > 0 and fit
  // the runner's KV storage; config.model_path is ignored.
  static StatusOr<std::unique_ptr<Engine>> Create(const EngineConfig& config,
                                                  std::unique_ptr<ModelRunner> runner,
                                                  std::unique_ptr<TokenTextCodec> codec);
  // Shutdown(), then frees everything.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates and queues a request (n = sampling_params.n samples). InvalidArgument (or
  // Unimplemented) with a clear message for a bad request; Aborted after Shutdown.
  StatusOr<std::shared_ptr<GenerateStream>> Submit(GenerateRequest request);

  // Aborts every sample of a live request, at whatever stage it is; its stream ends with
  // finish_reason abort. False if no live request has that rid.
  bool Abort(const std::string& rid);

  // Drops the radix cache; only when no request is live (else Aborted, nothing changed).
  Status FlushCache();

  EngineStats GetStats();

  // Prefix pins (the frontend language's fork locks its shared prefix while the branches run):
  // keeps the longest cached prefix of `input_ids` from eviction until UnpinPrefix(pin.id).
  // pin.tokens is how much of it was cached (0 with the radix cache disabled). Aborted after
  // Shutdown. FlushCache is refused while a pin is held. Unknown ids are ignored.
  struct PrefixPin {
    uint64_t id = 0;
    int64_t tokens = 0;
  };
  StatusOr<PrefixPin> PinPrefix(std::vector<int32_t> input_ids);
  void UnpinPrefix(uint64_t pin_id);

  // Stops accepting requests, aborts the live ones (their streams end) and joins the
  // scheduler thread. Idempotent.
  void Shutdown();

  const EngineConfig& config() const { return config_; }
  const SchedulerConfig& scheduler_config() const { return scheduler_config_; }
  const TokenTextCodec& codec() const { return *codec_; }
  int32_t vocab_size() const { return runner_->vocab_size(); }
  int64_t context_length() const { return context_length_; }
  int64_t max_total_tokens() const { return scheduler_config_.max_total_tokens; }

 private:
  struct Route {
    std::shared_ptr<GenerateStream> stream;
    int32_t index = 0;
  };
  struct Command {
    enum class Kind { kSubmit, kAbort, kFlush, kStats, kPin, kUnpin };
    Kind kind = Kind::kSubmit;
    std::shared_ptr<GenerateStream> stream;  // kSubmit
    std::vector<RequestInput> inputs;        // kSubmit: one per sample
    std::string rid;                         // kAbort
    std::function<void()> done;              // kFlush / kStats: called on completion
    Status* status_out = nullptr;            // kFlush
    EngineStats* stats_out = nullptr;        // kStats
    uint64_t pin_id = 0;                     // kPin / kUnpin
    std::vector<int32_t> pin_ids;            // kPin: the prefix
    StatusOr<int64_t>* pin_out = nullptr;    // kPin
  };

  Engine(const EngineConfig& config, const SchedulerConfig& scheduler_config,
         std::unique_ptr<ModelRunner> runner, std::unique_ptr<TokenTextCodec> codec);
  Status Start();
  void Post(Command command);
  // Posts a command and blocks until the scheduler thread has handled it.
  void PostAndWait(Command command);
  void Loop();
  void Apply(Command& command);                   // scheduler thread
  void OnOutput(RequestOutput&& output);          // scheduler thread
  void AbortAllLive(const std::string& message);  // scheduler thread

  const EngineConfig config_;
  const SchedulerConfig scheduler_config_;
  std::unique_ptr<ModelRunner> runner_;
  std::unique_ptr<TokenTextCodec> codec_;
  int64_t context_length_ = 0;

  // Constrained decoding: grammars compile once per (kind, text) against the codec's
  // vocabulary (built on first use) and are shared by every request using them. Submit only
  // parses the grammar (errors: InvalidArgument); the automata are built on grammar_pool_ and
  // the request waits in the scheduler's grammar queue meanwhile (a cache hit skips both).
  struct PreparedGrammar {
    std::shared_ptr<const grammar::CompiledGrammar> ready;  // compiled (or no grammar)
    std::shared_future<RequestInput::GrammarResult> pending;  // valid() while compiling
    grammar::GrammarKind kind = grammar::GrammarKind::kRegex;
  };
  StatusOr<PreparedGrammar> PrepareGrammar(const SamplingParams& params);
  std::once_flag grammar_once_;
  grammar::CompileOptions grammar_options_;               // set once under grammar_once_
  std::unique_ptr<grammar::GrammarCache> grammar_cache_;  // set once under grammar_once_
  std::atomic<const grammar::GrammarCache*> grammar_cache_ready_{nullptr};  // for GetStats
  // Set once under grammar_once_; reset in ~Engine after the scheduler thread is joined and
  // before the cache (its tasks use it) and mu_ / cv_ (its completion hook wakes the loop).
  std::unique_ptr<grammar::GrammarCompilerPool> grammar_pool_;

  // Caller side.
  Mutex mu_;
  std::condition_variable cv_;
  std::deque<Command> inbox_ GUARDED_BY(mu_);
  std::unordered_map<std::string, std::vector<uint64_t>> live_ GUARDED_BY(mu_);  // rid → ids
  bool stopping_ GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> next_id_{1};
  std::atomic<uint64_t> next_rid_{1};
  std::atomic<uint64_t> next_pin_{1};
  std::once_flag shutdown_once_;

  // Scheduler thread only.
  std::unique_ptr<Scheduler> scheduler_;
  std::unordered_map<uint64_t, Route> routes_;
  std::thread thread_;
};

}  // namespace radixlm
