// Engine: the in-process serving API (what the HTTP server, the frontend language, benchmarks
// and tests use). It owns the model runner, the model's assets (tokenizer, chat template,
// metadata: ModelAssets) and ONE scheduler thread that owns the Scheduler and everything under
// it (pool, tree, requests). Its types are api.h's; nothing of the scheduler shows here.
//
//   auto engine = Engine::Create(config);               // loads model + assets
//   auto stream = (*engine)->Submit({.text = "Hello", ...});
//   while (auto chunk = (*stream)->Next()) { ... }      // or (*stream)->Collect()
//
// Threading: every public method is thread-safe. Submit validates on the caller's thread
// (tokenizing text; a grammar is only parsed there, or taken from the grammar cache: its
// compilation runs on the grammar compiler pool while the request waits in the scheduler's
// grammar queue), then hands the request to the scheduler thread through a queue; outputs
// come back through the request's GenerateStream. Nothing but the scheduler thread touches the
// scheduler's state; Abort / FlushCache / GetStats / pins are commands to it as well (those
// with an answer wait for it, at most one forward pass).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/api.h"
#include "engine/engine_config.h"
#include "engine/generate_stream.h"
#include "engine/image_cache.h"
#include "engine/model_assets.h"
#include "engine/radix_tree_view.h"
#include "tokenizer/text_codec.h"
#include "util/status.h"

namespace radixlm {

class LoraRegistry;

class EngineCore;
class ModelRunner;

class Engine {
 public:
  // Loads the model (config.model_path) and its assets, sizes the KV pool, starts the
  // scheduler thread.
  static StatusOr<std::unique_ptr<Engine>> Create(const EngineConfig& config);
  // With a given runner (scheduler/model_runner.h) and assets (tests, fakes).
  // config.max_total_tokens must be > 0 and fit the runner's KV storage; config.model_path is
  // ignored.
  static StatusOr<std::unique_ptr<Engine>> Create(const EngineConfig& config,
                                                  std::unique_ptr<ModelRunner> runner,
                                                  std::unique_ptr<ModelAssets> assets);
  // As above, the assets being `codec` and an empty ModelInfo (no chat template).
  static StatusOr<std::unique_ptr<Engine>> Create(const EngineConfig& config,
                                                  std::unique_ptr<ModelRunner> runner,
                                                  std::unique_ptr<TokenTextCodec> codec);
  // Shutdown(), then frees everything.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates and queues a request (n = sampling_params.n samples). InvalidArgument (or
  // Unimplemented) with a clear message for a bad request; Aborted after Shutdown. With
  // config.allow_auto_truncate a prompt or max_new_tokens past the context is cut to fit
  // instead of refused, and reported to config.on_request_warning (request_validation.h).
  StatusOr<std::shared_ptr<GenerateStream>> Submit(GenerateRequest request);

  // Aborts every sample of a live request, at whatever stage it is; its stream ends with
  // finish_reason abort. False if no live request has that rid.
  bool Abort(const std::string& rid);

  // Drops the radix cache; only when no request is live, or while paused with none holding KV
  // (after a retract-mode pause); else Aborted, nothing changed.
  Status FlushCache();

  // Deletes the disk tier's blocks of this model (SGLang's clear_hicache_storage; the RAM tier
  // stays) and returns how many. InvalidArgument without --enable-hierarchical-cache.
  StatusOr<int64_t> ClearHiCacheStorage();

  EngineStats GetStats();

  // A size-limited view of the radix tree and its counters (radix_tree_view.h), taken on the
  // scheduler thread between steps (so it waits at most one step). O(1) for the scheduler when
  // query.if_version_not still matches; else one walk of the tree. Aborted after Shutdown.
  StatusOr<RadixTreeSnapshot> GetRadixTree(const RadixTreeQuery& query);

  // Prefix pins (the frontend language's fork locks its shared prefix while the branches run):
  // keeps the longest cached prefix of `input_ids` from eviction until UnpinPrefix(pin.id).
  // Aborted after Shutdown. FlushCache is refused while a pin is held. Unknown ids are ignored.
  StatusOr<PrefixPin> PinPrefix(std::vector<int32_t> input_ids);
  void UnpinPrefix(uint64_t pin_id);
  // SGLang's pause_generation / continue_generation (api.h's PauseMode says what happens to
  // the live requests). While paused no forward pass runs and no timeout fires; Submit still
  // accepts requests, which queue. Pausing again applies the new mode; continuing when not
  // paused does nothing. OK once the scheduler thread has applied it (an abort-mode pause has
  // then ended every live stream); Aborted after Shutdown.
  Status PauseGeneration(PauseMode mode);
  Status ContinueGeneration();

  // SGLang's streaming sessions (session_table.h): OpenSession returns the session's id
  // (InvalidArgument when that id is open or --max-open-sessions are open); CloseSession
  // releases its pinned KV (NotFound for an unknown id). A request with session_params runs
  // as a turn of an open session; one the scheduler thread refuses (an unknown session or
  // turn, a turn continued from that still runs, a prompt the history makes too long without
  // allow_auto_truncate) ends its stream with finish_reason abort, status_code 400, and the
  // reason. Aborted after Shutdown.
  StatusOr<std::string> OpenSession(OpenSessionRequest request);
  Status CloseSession(const std::string& session_id);

  // Prefill/decode disaggregation (docs/disaggregation.md): `sink` receives, on the scheduler
  // thread, the prompt KV of every request submitted with export_kv_room when it finishes (an
  // error when it was aborted); it must only hand the KV on, never block. Set it before the
  // first such request (without it they are refused).
  void SetKvExportSink(std::function<void(uint64_t room, StatusOr<PrefixKv> kv)> sink);

  // Stops accepting requests, aborts the live ones (their streams end) and joins the
  // scheduler thread. Idempotent.
  void Shutdown();

  // The LoRA adapters this engine serves (--enable-lora / --lora-paths); null when LoRA is
  // off. Thread-safe.
  LoraRegistry* lora() const;
  // Images: the vision projector (--mmproj loads it in Create), set before the first Submit
  // (tests give their own). InvalidArgument when its rows do not fit the model's hidden size.
  Status SetImageEncoder(std::unique_ptr<ImageEncoder> encoder);
  // What the engine's image cache counted (encodes, hits); nullopt: the model takes no images.
  std::optional<ImageCache::Counters> image_counters() const;

  const EngineConfig& config() const;
  const EngineSettings& settings() const;
  const ModelAssets& assets() const;
  int32_t vocab_size() const;
  int64_t context_length() const;
  // Bytes of one position's KV over every layer (K and V rows); 0 when the runner cannot move KV.
  int64_t kv_token_bytes() const;
  // Bytes of one sequence's linear-layer state (a hybrid model's; 0 for the others).
  int64_t state_slot_bytes() const;
  int64_t max_total_tokens() const { return settings().max_total_tokens; }

 private:
  explicit Engine(std::unique_ptr<EngineCore> core);

  std::unique_ptr<EngineCore> core_;
};

}  // namespace radixlm
