// EngineCore: the machinery behind Engine (engine.h), internal to src/engine. It owns the model
// runner, the model's assets, the grammar compiler pool and ONE scheduler thread that owns the
// Scheduler and everything under it (pool, tree, requests).
//
// Threading: every public method is thread-safe. Submit validates on the caller's thread
// (request_validation.h; a grammar is only parsed there, or taken from the grammar cache: its
// compilation runs on the grammar compiler pool while the request waits in the scheduler's
// grammar queue), then posts a command to the scheduler thread's inbox; outputs come back
// through the request's GenerateStream. Abort / FlushCache / GetStats / GetRadixTree / PinPrefix /
// UnpinPrefix / PauseGeneration / ContinueGeneration / OpenSession / CloseSession are commands
// too (those with an answer wait for it: at most one scheduler step). A session turn's Submit
// returns at once (its prompt depends on the session's turns, which the scheduler thread owns: a
// refused turn ends its stream with an abort carrying status 400).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "engine/api.h"
#include "engine/engine_config.h"
#include "engine/generate_stream.h"
#include "engine/image_cache.h"
#include "engine/image_prompt.h"
#include "engine/lora_registry.h"
#include "engine/model_assets.h"
#include "engine/radix_tree_view.h"
#include "engine/request_validation.h"
#include "engine/session_table.h"
#include "grammar/grammar_cache.h"
#include "grammar/grammar_compiler_pool.h"
#include "scheduler/model_runner.h"
#include "scheduler/scheduler.h"
#include "util/mutex.h"

namespace radixlm {

class EngineCore {
 public:
  // Starts the scheduler thread. `sc` is the scheduler config the engine config resolved to.
  // draft_runner: the draft model when sc.speculative_draft_model (else null).
  static StatusOr<std::unique_ptr<EngineCore>> Create(
      const EngineConfig& config, const SchedulerConfig& sc, std::unique_ptr<ModelRunner> runner,
      std::unique_ptr<ModelAssets> assets, std::unique_ptr<ModelRunner> draft_runner = nullptr);
  // Shutdown(), then frees everything.
  ~EngineCore();
  EngineCore(const EngineCore&) = delete;
  EngineCore& operator=(const EngineCore&) = delete;

  // An embedding engine takes embedding requests only (resetting their sampling params to
  // prefill only), a generation engine none; InvalidArgument naming the mismatch.
  Status CheckEmbeddingRequest(GenerateRequest* request) const;
  // As the Engine methods of the same names.
  StatusOr<std::shared_ptr<GenerateStream>> Submit(GenerateRequest request);
  bool Abort(const std::string& rid);
  Status FlushCache();
  StatusOr<int64_t> ClearHiCacheStorage();
  EngineStats GetStats();
  StatusOr<RadixTreeSnapshot> GetRadixTree(const RadixTreeQuery& query);
  StatusOr<PrefixPin> PinPrefix(std::vector<int32_t> input_ids);
  void UnpinPrefix(uint64_t pin_id);
  Status PauseGeneration(PauseMode mode);
  Status ContinueGeneration();
  StatusOr<std::string> OpenSession(OpenSessionRequest request);
  Status CloseSession(const std::string& session_id);
  void Shutdown();
  // Prefill/decode disaggregation: where the KV of finished export_kv_room requests goes
  // (Engine::SetKvExportSink). Set before the first such request.
  using KvExportSink = std::function<void(uint64_t room, StatusOr<PrefixKv> kv)>;
  void SetKvExportSink(KvExportSink sink) { kv_export_sink_ = std::move(sink); }

  const EngineConfig& config() const { return config_; }
  const EngineSettings& settings() const { return settings_; }
  const ModelAssets& assets() const { return *assets_; }
  // LoRA: set once, before the first Submit (Engine::Create); null: LoRA is off.
  void set_lora(std::unique_ptr<LoraRegistry> lora) { lora_ = std::move(lora); }
  LoraRegistry* lora() const { return lora_.get(); }
  // Images (--mmproj): the projector, set once before the first Submit. InvalidArgument when
  // its output width is not the model's hidden size (where the runner says it).
  Status SetImageEncoder(std::unique_ptr<ImageEncoder> encoder);
  // Null when the engine takes no images.
  const ImageCache* image_cache() const { return image_cache_.get(); }
  int32_t vocab_size() const { return runner_->vocab_size(); }
  int64_t kv_token_bytes() const { return runner_->kv_token_bytes(); }
  int64_t state_slot_bytes() const { return runner_->state_slot_bytes(); }
  int64_t context_length() const { return context_length_; }

 private:
  struct Route {
    std::shared_ptr<GenerateStream> stream;
    int32_t index = 0;
    std::string session_id;  // a session turn: its session ("" for none)
    uint64_t pin = 0;        // and the pin its KV takes when it completes
    // Prefill/decode disaggregation: the room its prompt's KV is exported under when it
    // finishes (with the prompt), and the pin of an imported prefix (0: none) released then.
    std::optional<uint64_t> export_room;
    std::shared_ptr<const std::vector<int32_t>> export_ids;  // shared: routes are copied
    uint64_t import_pin = 0;
    // The LoRA adapter an exported prompt ran under: its tree namespace, its identity and
    // name (the record carries the last two; PrefixKv).
    int32_t export_namespace = 0;
    uint64_t export_lora_identity = 0;
    std::string export_lora_name;
  };
  // A session turn's part of a SubmitCommand: the scheduler thread composes its prompt
  // (SessionTable) and checks that it fits; a refused turn ends its stream with an abort
  // carrying status 400.
  struct SessionTurn {
    GenerateRequest request;  // what was submitted (text already tokenized into own_ids)
    std::vector<int32_t> own_ids;
  };
  // The scheduler thread's commands. Those with an answer carry the promise it is set on.
  struct SubmitCommand {
    std::shared_ptr<GenerateStream> stream;
    std::vector<RequestInput> inputs;                  // one per sample
    std::unique_ptr<SessionTurn> session;              // null: not a session turn
    std::optional<uint64_t> export_room;               // GenerateRequest::export_kv_room
    std::shared_future<StatusOr<PrefixKv>> import_kv;  // valid(): waits in awaiting_kv_
    uint64_t import_pin = 0;                           // the imported prefix's pin, once imported
    std::string lora_name;                             // GenerateRequest::lora_path ("": base)
  };
  struct OpenSessionCommand {
    OpenSessionRequest request;
    std::promise<StatusOr<std::string>> answer;
  };
  struct CloseSessionCommand {
    std::string session_id;
    std::promise<Status> answer;
  };
  struct AbortCommand {
    std::string rid;
  };
  struct FlushCommand {
    std::promise<Status> answer;
  };
  struct ClearStorageCommand {
    std::promise<StatusOr<int64_t>> answer;
  };
  struct StatsCommand {
    std::promise<EngineStats> answer;
  };
  struct TreeCommand {
    RadixTreeQuery query;
    std::promise<StatusOr<RadixTreeSnapshot>> answer;
  };
  struct PinCommand {
    uint64_t pin_id = 0;
    std::vector<int32_t> input_ids;  // the prefix
    std::promise<StatusOr<int64_t>> answer;
  };
  struct UnpinCommand {
    uint64_t pin_id = 0;
  };
  struct PauseCommand {
    PauseMode mode = PauseMode::kAbort;
    std::promise<Status> answer;
  };
  struct ContinueCommand {
    std::promise<Status> answer;
  };
  using Command = std::variant<SubmitCommand, AbortCommand, FlushCommand, StatsCommand, TreeCommand,
                               PinCommand, UnpinCommand, PauseCommand, ContinueCommand,
                               OpenSessionCommand, CloseSessionCommand, ClearStorageCommand>;

  EngineCore(const EngineConfig& config, const SchedulerConfig& scheduler_config,
             std::unique_ptr<ModelRunner> runner, std::unique_ptr<ModelAssets> assets,
             std::unique_ptr<ModelRunner> draft_runner);
  Status Start();
  // Queues a command for the scheduler thread; false (command dropped) after Shutdown.
  bool Post(Command command);
  // Posts a command with an answer and waits for it; `if_stopped` after Shutdown.
  template <typename Answer, typename C>
  Answer Ask(C command, Answer if_stopped);
  void Loop();
  // Scheduler thread.
  void Apply(SubmitCommand& command);
  void Apply(AbortCommand& command);
  void Apply(FlushCommand& command);
  void Apply(ClearStorageCommand& command);
  void Apply(StatsCommand& command);
  void Apply(TreeCommand& command);
  void Apply(PinCommand& command);
  void Apply(UnpinCommand& command);
  void Apply(PauseCommand& command);
  void Apply(ContinueCommand& command);
  void Apply(OpenSessionCommand& command);
  void Apply(CloseSessionCommand& command);
  // A session turn's prompt (into command.inputs) and bookkeeping; an error when refused.
  Status StartSessionTurn(SubmitCommand& command);
  // What a request's prompt is checked against (request_validation.h).
  ValidationLimits Limits() const;
  // A request's images encoded (through image_cache_) and its prompt built around them;
  // InvalidArgument / Unimplemented for what cannot take images.
  StatusOr<ImagePrompt> PrepareImages(const GenerateRequest& request) const;
  // Logs that request `rid` was cut to fit (--allow-auto-truncate).
  void WarnCut(const PromptCut& cut, const std::string& rid) const;
  void AbortRid(const std::string& rid, const std::string& message);
  // Releases the pins session bookkeeping handed back (after each command and step, never from
  // inside a scheduler call).
  void ReleaseSessionPins();
  // Closes the sessions whose timeout has passed (their pins to session_unpins_).
  void CloseTimedOutSessions();
  void OnOutput(RequestOutput&& output);
  // One sample holding `import_pin` has ended; true when it was the last (the pin is free).
  bool DropImportSample(uint64_t import_pin);
  void AbortAllLive(const std::string& message);
  // Prefill/decode disaggregation (engine_core_prefix_kv.cc). Submits waiting for their
  // prefix's KV: those whose future is ready are imported and submitted, or ended with the
  // error. Abort / shutdown of a waiting submit ends its stream.
  void PollKvImports();
  bool AbortAwaitingKv(const std::string& rid, const std::string& message);
  // Ends every sample of a submit that never reached the scheduler.
  void EndUnsubmitted(SubmitCommand& cmd, FinishReason reason);
  void ExportPrefixKv(const Route& route, bool aborted);
  Status ImportPrefixKv(SubmitCommand& cmd, const PrefixKv& kv);

  const EngineConfig config_;
  Pooling pooling_ = Pooling::kNone;  // an embedding engine's (config_.pooling, resolved)
  const SchedulerConfig scheduler_config_;
  const EngineSettings settings_;
  std::unique_ptr<ModelRunner> runner_;
  std::unique_ptr<ModelRunner> draft_runner_;  // null: no draft model
  std::unique_ptr<ModelAssets> assets_;
  std::unique_ptr<LoraRegistry> lora_;  // (thread-safe itself)
  std::unique_ptr<ImageEncoder> image_encoder_;
  std::unique_ptr<ImageCache> image_cache_;  // (thread-safe itself)
  int64_t context_length_ = 0;

  // Constrained decoding: grammars compile once per (kind, text) against the codec's
  // vocabulary (built on first use) and are shared by every request using them. Submit only
  // parses the grammar (errors: InvalidArgument); the automata are built on grammar_pool_ and
  // the request waits in the scheduler's grammar queue meanwhile (a cache hit skips both).
  struct PreparedGrammar {
    std::shared_ptr<const grammar::CompiledGrammar> ready;    // compiled (or no grammar)
    std::shared_future<RequestInput::GrammarResult> pending;  // valid() while compiling
    grammar::GrammarKind kind = grammar::GrammarKind::kRegex;
  };
  StatusOr<PreparedGrammar> PrepareGrammar(const SamplingParams& params);
  std::once_flag grammar_once_;
  grammar::CompileOptions grammar_options_;               // set once under grammar_once_
  std::unique_ptr<grammar::GrammarCache> grammar_cache_;  // set once under grammar_once_
  std::atomic<const grammar::GrammarCache*> grammar_cache_ready_{nullptr};  // for GetStats
  // Set once under grammar_once_; reset in ~EngineCore after the scheduler thread is joined
  // and before the cache (its tasks use it) and mu_ / cv_ (its completion hook wakes the loop).
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
  // Imported prefix pin → its samples still routed: the pin is released when this reaches 0.
  std::unordered_map<uint64_t, int32_t> import_pin_samples_;
  SessionTable sessions_;
  std::vector<uint64_t> session_unpins_;
  std::vector<SubmitCommand> awaiting_kv_;
  KvExportSink kv_export_sink_;
  int32_t bos_id_ = -1;  // trimmed from the front of a session turn that continues another
  std::thread thread_;
};

}  // namespace radixlm
