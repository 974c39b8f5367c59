// EngineCore: submission, the scheduler thread's loop, output routing, shutdown.
#include "engine/engine_core.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "engine/radix_tree_snapshot.h"
#include "engine/request_validation.h"
#include "engine/scheduler_bridge.h"
#include "util/process_memory.h"

namespace radixlm {
namespace {

std::string NewRid(uint64_t counter) {
  static const uint64_t salt = std::random_device{}() * 0x9E3779B97F4A7C15ULL;
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(salt),
                static_cast<unsigned long long>(counter));
  return buf;
}

// Seconds on the steady clock (session timeouts).
double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::chrono::steady_clock::time_point SteadyTimePoint(double seconds) {
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(seconds)));
}

}  // namespace

StatusOr<std::unique_ptr<EngineCore>> EngineCore::Create(
    const EngineConfig& config, const SchedulerConfig& sc, std::unique_ptr<ModelRunner> runner,
    std::unique_ptr<ModelAssets> assets, std::unique_ptr<ModelRunner> draft_runner) {
  std::unique_ptr<EngineCore> core(
      new EngineCore(config, sc, std::move(runner), std::move(assets), std::move(draft_runner)));
  RADIXLM_RETURN_IF_ERROR(core->Start());
  return core;
}

EngineCore::EngineCore(const EngineConfig& config, const SchedulerConfig& scheduler_config,
                       std::unique_ptr<ModelRunner> runner, std::unique_ptr<ModelAssets> assets,
                       std::unique_ptr<ModelRunner> draft_runner)
    : config_(config),
      scheduler_config_(scheduler_config),
      settings_(ToEngineSettings(scheduler_config)),
      runner_(std::move(runner)),
      draft_runner_(std::move(draft_runner)),
      assets_(std::move(assets)),
      sessions_(config.max_open_sessions) {
  if (config.is_embedding) {
    StatusOr<Pooling> pooling = ParsePooling(config.pooling);
    pooling_ = pooling.ok() ? *pooling : Pooling::kLast;  // Engine::Create resolved it
  }
}

Status EngineCore::Start() {
  RADIXLM_ASSIGN_OR_RETURN(
      scheduler_,
      Scheduler::Create(
          scheduler_config_, runner_.get(), &assets_->codec(),
          [this](RequestOutput&& out) { OnOutput(std::move(out)); }, draft_runner_.get()));
  context_length_ = scheduler_->context_length();
  if (const std::string bos = assets_->codec().bos_text(); !bos.empty()) {
    StatusOr<std::vector<int32_t>> ids = assets_->codec().EncodeVerbatim(bos);
    if (ids.ok() && ids->size() == 1) bos_id_ = ids->front();
  }
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

EngineCore::~EngineCore() {
  Shutdown();
  grammar_pool_.reset();  // joins compilations in flight; drops the queued ones
}

void EngineCore::Shutdown() {
  std::call_once(shutdown_once_, [this] {
    {
      MutexLock lock(&mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  });
}

StatusOr<std::shared_ptr<GenerateStream>> EngineCore::Submit(GenerateRequest request) {
  const ValidationLimits limits = Limits();
  RADIXLM_RETURN_IF_ERROR(CheckEmbeddingRequest(&request));
  const bool session = request.session_params.has_value();
  std::optional<ImagePrompt> images;
  if (!request.image_data.empty()) {
    RADIXLM_ASSIGN_OR_RETURN(images, PrepareImages(request));
  }
  RADIXLM_ASSIGN_OR_RETURN(
      std::vector<int32_t> ids,
      PrepareGenerateRequest(request, assets_->codec(), limits, images ? &*images : nullptr));
  // A session turn's whole prompt is known on the scheduler thread only; it checks the fit.
  // Otherwise the prompt and the request are made to fit here (with --allow-auto-truncate),
  // before the samples copy them. A prompt with images is never cut (a cut image is no image).
  PromptCut cut;
  if (images.has_value()) {
    RADIXLM_RETURN_IF_ERROR(ValidatePromptFit(ids, request, limits));
  } else if (!session) {
    RADIXLM_ASSIGN_OR_RETURN(cut, FitPrompt(ids, request, limits));
  }
  RADIXLM_ASSIGN_OR_RETURN(PreparedGrammar grammar, PrepareGrammar(request.sampling_params));
  const bool disaggregated = request.export_kv_room.has_value() || request.import_kv.valid();
  if (disaggregated && session) {
    return Unimplemented("prefill/decode disaggregation does not run session turns");
  }
  // An imported prompt is shared by the n samples; an exported one is computed once.
  if (request.export_kv_room.has_value() && request.sampling_params.n != 1) {
    return Unimplemented("a prefill request (export_kv_room) runs one sample (n = 1)");
  }
  if (request.export_kv_room.has_value() && !kv_export_sink_) {
    return Unimplemented("this server is not a prefill server: it exports no KV");
  }
  LoraHandle lora;
  if (!request.lora_path.empty()) {
    if (lora_ == nullptr) {
      return InvalidArgument("lora_path '" + request.lora_path +
                             "': LoRA is not enabled on this "
                             "server (start it with --enable-lora or --lora-paths)");
    }
    RADIXLM_ASSIGN_OR_RETURN(lora, lora_->Resolve(request.lora_path));
  }
  if (request.rid.empty()) request.rid = NewRid(next_rid_++);
  const int32_t n = request.sampling_params.n;
  auto stream = std::make_shared<GenerateStream>(request.rid, n, request.return_logprob);

  SubmitCommand cmd{.stream = stream,
                    .inputs = {},
                    .session = nullptr,
                    .export_room = request.export_kv_room,
                    .import_kv = request.import_kv,
                    .import_pin = 0,
                    .lora_name = request.lora_path};
  std::vector<uint64_t> ids_of_samples;
  for (int32_t i = 0; i < n; ++i) {
    RequestInput in;
    in.id = next_id_++;
    in.input_ids = ids;
    in.params = request.sampling_params;
    in.return_logprob = request.return_logprob;
    in.logprob_start_len = request.logprob_start_len;
    in.top_logprobs_num = request.top_logprobs_num;
    if (request.return_logprob) in.token_ids_logprob = request.token_ids_logprob;
    in.priority = request.priority;
    in.lora = lora.adapter;
    in.lora_namespace = lora.key_namespace;
    in.lora_identity = lora.adapter != nullptr ? lora.adapter->identity() : 0;
    in.grammar = grammar.ready;
    in.pending_grammar = grammar.pending;
    in.grammar_kind = grammar.kind;
    in.pooling = pooling_;
    in.snapshot_resume_point = request.export_kv_room.has_value();
    if (images.has_value()) in.images = images->images;
    if (request.sampling_params.sampling_seed.has_value()) {
      in.seed = static_cast<uint64_t>(*request.sampling_params.sampling_seed) + i;
    }
    // Samples 1..n-1 wait until sample 0 has put the prompt in the tree.
    if (i > 0) in.prefill_after = cmd.inputs.front().id;
    ids_of_samples.push_back(in.id);
    cmd.inputs.push_back(std::move(in));
  }
  if (session) {
    cmd.session = std::make_unique<SessionTurn>();
    cmd.session->own_ids = std::move(cmd.inputs.front().input_ids);
    cmd.session->request = std::move(request);
  }
  const std::string rid = stream->rid();
  {
    MutexLock lock(&mu_);
    if (stopping_) return Aborted("the engine is shutting down");
    if (live_.count(rid) != 0) return InvalidArgument("Duplicate request ID: " + rid);
    live_.emplace(rid, std::move(ids_of_samples));
    inbox_.emplace_back(std::move(cmd));
  }
  cv_.notify_all();
  if (cut.cut()) WarnCut(cut, rid);
  return stream;
}

Status EngineCore::SetImageEncoder(std::unique_ptr<ImageEncoder> encoder) {
  const int64_t hidden = runner_->hidden_size();
  if (hidden > 0 && encoder->n_embd() != hidden) {
    return InvalidArgument("the vision projector (" + std::string(encoder->projector_type()) +
                           ") outputs rows of " + std::to_string(encoder->n_embd()) +
                           " values but the model takes rows of " + std::to_string(hidden) +
                           " (its hidden size, times 1 + its deepstack layers): it is not this "
                           "model's projector");
  }
  // llama.cpp's mtmd looks these tokens up in the model's vocabulary (lookup_token); a model
  // without one is not the projector's.
  for (const std::string& token : encoder->layout().vocabulary_tokens) {
    if (!assets_->codec().TokenWithText(token).has_value()) {
      return InvalidArgument("the vision projector (" + std::string(encoder->projector_type()) +
                             ") lays out images with the token '" + token +
                             "', which the model's vocabulary does not have: it is not this "
                             "model's projector");
    }
  }
  image_encoder_ = std::move(encoder);
  image_cache_ = std::make_unique<ImageCache>(image_encoder_.get(),
                                              config_.image_cache_mb * (int64_t{1} << 20));
  return Status::Ok();
}

StatusOr<ImagePrompt> EngineCore::PrepareImages(const GenerateRequest& request) const {
  if (image_cache_ == nullptr) {
    return InvalidArgument(
        "this model takes no images: the server was started without a vision "
        "projector (--mmproj)");
  }
  const auto n = static_cast<int64_t>(request.image_data.size());
  if (n > config_.max_images_per_request) {
    return InvalidArgument("the request has " + std::to_string(n) + " images; the limit is " +
                           std::to_string(config_.max_images_per_request) +
                           " (--max-images-per-request)");
  }
  if (!request.text.has_value()) {
    return InvalidArgument("images need a text prompt with their markers (" +
                           std::string(kImageMarker) + "), not input_ids");
  }
  // Prefill/decode disaggregation takes them: both servers lay out the same prompt (the
  // images' ids come from their content) and the prefill server's record carries the image
  // spans' KV. The decode server encodes the images too (through its image cache), though the
  // imported KV covers their spans.
  if (request.embed || request.session_params.has_value()) {
    return Unimplemented("images are not taken by embedding requests or session turns");
  }
  if (draft_runner_ != nullptr) {
    return Unimplemented("images are not taken with a draft model (--speculative-algorithm)");
  }
  std::vector<EncodedImage> encoded;
  for (int64_t i = 0; i < n; ++i) {
    StatusOr<EncodedImage> image = image_cache_->Get(request.image_data[i]);
    if (!image.ok()) {
      return Status(image.status().code(),
                    "image " + std::to_string(i) + ": " + image.status().message());
    }
    encoded.push_back(std::move(image).value());
  }
  // SGLang's clients (sgl.image) write the model's image token (gemma3: <start_of_image>;
  // Qwen-VL: <|vision_start|><|image_pad|><|vision_end|>) where each image goes: with no marker
  // in the text, those are the markers (the begin text, with the pads and the end text after it
  // when they follow).
  const ImagePromptLayout layout = image_encoder_->layout();
  std::string text = *request.text;
  if (text.find(kImageMarker) == std::string::npos && !layout.begin_text.empty()) {
    const std::string_view view(text);
    const std::string_view pad(layout.pad_text), end(layout.end_text);
    std::string marked;
    size_t from = 0;
    for (size_t at = text.find(layout.begin_text); at != std::string::npos;
         at = text.find(layout.begin_text, from)) {
      marked += text.substr(from, at - from);
      marked += kImageMarker;
      from = at + layout.begin_text.size();
      size_t past = from;
      while (!pad.empty() && view.substr(past).starts_with(pad)) past += pad.size();
      if (past > from && view.substr(past).starts_with(end)) from = past + end.size();
    }
    text = marked + text.substr(from);
  }
  RADIXLM_ASSIGN_OR_RETURN(ImagePrompt prompt, BuildImagePrompt(text, request.text_verbatim,
                                                                encoded, layout, assets_->codec()));
  // A bidirectional span is prefilled in one forward pass.
  int64_t chunk = runner_->max_batch_tokens();
  if (config_.chunked_prefill_size > 0) chunk = std::min(chunk, config_.chunked_prefill_size);
  for (const PromptImage& image : prompt.images) {
    if (image.bidirectional && image.n > chunk) {
      return InvalidArgument("an image takes " + std::to_string(image.n) +
                             " tokens, more than one prefill chunk (" + std::to_string(chunk) +
                             " tokens: --chunked-prefill-size)");
    }
    if (request.return_logprob && request.logprob_start_len >= 0 &&
        request.logprob_start_len < image.begin + image.n) {
      return InvalidArgument("input logprobs (logprob_start_len " +
                             std::to_string(request.logprob_start_len) +
                             ") cannot cover an image's positions (it ends at " +
                             std::to_string(image.begin + image.n) + ")");
    }
  }
  return prompt;
}

Status EngineCore::CheckEmbeddingRequest(GenerateRequest* request) const {
  if (!config_.is_embedding) {
    if (request->embed) {
      return InvalidArgument(
          "this server runs a generation model: embeddings are served only "
          "with --is-embedding");
    }
    return Status::Ok();
  }
  if (!request->embed) {
    return InvalidArgument(
        "this server runs an embedding model (--is-embedding): it serves "
        "/v1/embeddings and /encode, not generation");
  }
  if (request->sampling_params.n != 1) return InvalidArgument("an embedding request has n = 1");
  if (request->return_logprob) return InvalidArgument("an embedding request returns no logprobs");
  if (request->session_params.has_value() || request->export_kv_room.has_value() ||
      request->import_kv.valid()) {
    return Unimplemented("an embedding request runs outside sessions and disaggregation");
  }
  SamplingParams params;  // no constraints, stop conditions or penalties: nothing is sampled
  params.max_new_tokens = 0;
  request->sampling_params = params;
  return Status::Ok();
}

ValidationLimits EngineCore::Limits() const {
  return ValidationLimits{.vocab_size = runner_->vocab_size(),
                          .context_length = context_length_,
                          .pool_tokens = scheduler_config_.max_total_tokens,
                          .allow_auto_truncate = config_.allow_auto_truncate};
}

void EngineCore::WarnCut(const PromptCut& cut, const std::string& rid) const {
  const std::string line = cut.Describe(rid);
  if (config_.on_request_warning) {
    config_.on_request_warning(line);
  } else {
    std::fprintf(stderr, "radixlm: warning: %s\n", line.c_str());
  }
}

StatusOr<EngineCore::PreparedGrammar> EngineCore::PrepareGrammar(const SamplingParams& params) {
  PreparedGrammar prepared;
  const std::string* text;
  if (params.regex.has_value()) {
    prepared.kind = grammar::GrammarKind::kRegex;
    text = &*params.regex;
  } else if (params.json_schema.has_value()) {
    prepared.kind = grammar::GrammarKind::kJsonSchema;
    text = &*params.json_schema;
  } else if (params.ebnf.has_value()) {
    prepared.kind = grammar::GrammarKind::kEbnf;
    text = &*params.ebnf;
  } else if (params.structural_tag.has_value()) {
    prepared.kind = grammar::GrammarKind::kStructuralTag;
    text = &*params.structural_tag;
  } else {
    return prepared;
  }
  std::call_once(grammar_once_, [this] {
    const TokenTextCodec& codec = assets_->codec();
    std::vector<std::string> bytes(runner_->vocab_size());
    for (int32_t t = 0; t < runner_->vocab_size(); ++t) bytes[t] = codec.TokenBytes(t);
    std::shared_ptr<const grammar::TokenVocab> vocab =
        grammar::TokenVocab::Create(std::move(bytes), codec.eog_token_ids());
    grammar_options_.json.whitespace_pattern = config_.constrained_json_whitespace_pattern;
    grammar_cache_ = std::make_unique<grammar::GrammarCache>(std::move(vocab), grammar_options_);
    grammar_cache_ready_.store(grammar_cache_.get(), std::memory_order_release);
    // A finished compilation wakes the scheduler thread (it waits on cv_ for a ready grammar);
    // taking mu_ orders the wake-up after the loop's check of the queue.
    grammar_pool_ =
        std::make_unique<grammar::GrammarCompilerPool>(config_.grammar_compile_threads, [this] {
          { MutexLock lock(&mu_); }
          cv_.notify_all();
        });
  });
  const char* field = grammar::GrammarKindName(prepared.kind);
  std::shared_future<RequestInput::GrammarResult> future = grammar_cache_->GetFuture(
      prepared.kind, *text,
      [this](std::function<void()> task) { grammar_pool_->Post(std::move(task)); });
  if (future.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    // A cache hit (or a compilation already over): no queueing; a cached error is a bad request.
    const RequestInput::GrammarResult& compiled = future.get();
    if (!compiled.ok()) {
      return InvalidArgument(std::string("invalid ") + field + ": " + compiled.status().message());
    }
    prepared.ready = *compiled;
    return prepared;
  }
  // Compiling: parse errors (the common bad request) are still answered here, at parse cost;
  // the automata are built on the pool and the request waits in the grammar queue.
  if (Status parsed = grammar::CompiledGrammar::Validate(prepared.kind, *text, grammar_options_);
      !parsed.ok()) {
    return InvalidArgument(std::string("invalid ") + field + ": " + parsed.message());
  }
  prepared.pending = std::move(future);
  return prepared;
}

bool EngineCore::Abort(const std::string& rid) {
  {
    MutexLock lock(&mu_);
    if (stopping_ || live_.count(rid) == 0) return false;
    inbox_.emplace_back(AbortCommand{.rid = rid});
  }
  cv_.notify_all();
  return true;
}

bool EngineCore::Post(Command command) {
  {
    MutexLock lock(&mu_);
    if (stopping_) return false;
    inbox_.push_back(std::move(command));
  }
  cv_.notify_all();
  return true;
}

template <typename Answer, typename C>
Answer EngineCore::Ask(C command, Answer if_stopped) {
  std::future<Answer> answer = command.answer.get_future();
  // Every posted command is applied (the loop drains its inbox before it stops).
  if (!Post(std::move(command))) return if_stopped;
  return answer.get();
}

Status EngineCore::FlushCache() {
  return Ask(FlushCommand{}, Aborted("the engine is shutting down"));
}

StatusOr<int64_t> EngineCore::ClearHiCacheStorage() {
  return Ask(ClearStorageCommand{}, StatusOr<int64_t>(Aborted("the engine is shutting down")));
}

EngineStats EngineCore::GetStats() {
  EngineStats stats = Ask(StatsCommand{}, EngineStats{});
  stats.memory.rss_bytes = ResidentSetBytes();
  if (image_cache_ != nullptr) stats.images = image_cache_->counters();
  if (const grammar::GrammarCache* cache = grammar_cache_ready_.load(std::memory_order_acquire)) {
    const grammar::GrammarCacheStats grammar = cache->stats();
    stats.grammar = GrammarCounters{.lookups = grammar.lookups,
                                    .compiles = grammar.compiles,
                                    .compile_seconds = grammar.compile_seconds};
  }
  return stats;
}

StatusOr<RadixTreeSnapshot> EngineCore::GetRadixTree(const RadixTreeQuery& query) {
  return Ask(TreeCommand{.query = query, .answer = {}},
             StatusOr<RadixTreeSnapshot>(Aborted("the engine is shutting down")));
}

StatusOr<PrefixPin> EngineCore::PinPrefix(std::vector<int32_t> input_ids) {
  const uint64_t id = next_pin_++;
  StatusOr<int64_t> tokens =
      Ask(PinCommand{.pin_id = id, .input_ids = std::move(input_ids), .answer = {}},
          StatusOr<int64_t>(Aborted("the engine is shutting down")));
  if (!tokens.ok()) return tokens.status();
  return PrefixPin{.id = id, .tokens = *tokens};
}

void EngineCore::UnpinPrefix(uint64_t pin_id) { Post(UnpinCommand{.pin_id = pin_id}); }

Status EngineCore::PauseGeneration(PauseMode mode) {
  return Ask(PauseCommand{.mode = mode, .answer = {}}, Aborted("the engine is shutting down"));
}

Status EngineCore::ContinueGeneration() {
  return Ask(ContinueCommand{}, Aborted("the engine is shutting down"));
}

StatusOr<std::string> EngineCore::OpenSession(OpenSessionRequest request) {
  if (request.capacity_of_str_len < 0) {
    return InvalidArgument("capacity_of_str_len must be at least 0, got " +
                           std::to_string(request.capacity_of_str_len));
  }
  if (request.timeout.has_value() && !(*request.timeout > 0 && std::isfinite(*request.timeout))) {
    return InvalidArgument("timeout must be a positive number of seconds, got " +
                           std::to_string(*request.timeout));
  }
  if (request.session_id.has_value() && request.session_id->empty()) request.session_id.reset();
  return Ask(OpenSessionCommand{.request = std::move(request), .answer = {}},
             StatusOr<std::string>(Aborted("the engine is shutting down")));
}

Status EngineCore::CloseSession(const std::string& session_id) {
  return Ask(CloseSessionCommand{.session_id = session_id, .answer = {}},
             Aborted("the engine is shutting down"));
}

void EngineCore::Loop() {
  for (;;) {
    std::deque<Command> commands;
    bool stopping = false;
    {
      MutexLock lock(&mu_);
      // Requests whose grammar is compiling do not count as work until a compilation is done
      // (the pool's hook notifies cv_), so the loop sleeps rather than polls; the timeout is
      // only a safety net.
      auto ready = [&]() REQUIRES(mu_) {
        return stopping_ || !inbox_.empty() || scheduler_->HasRunnableWork() ||
               scheduler_->HasReadyGrammar();
      };
      if (scheduler_->grammar_queue_size() > 0 || !awaiting_kv_.empty()) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
        while (!ready() && lock.WaitUntil(cv_, deadline)) {
        }
      } else if (std::optional<double> timeout = sessions_.NextTimeout()) {
        // A session times out then: wake for it (CloseTimedOutSessions).
        const auto deadline = SteadyTimePoint(*timeout) + std::chrono::milliseconds(1);
        while (!ready() && lock.WaitUntil(cv_, deadline)) {
        }
      } else {
        while (!ready()) lock.Wait(cv_);
      }
      commands.swap(inbox_);
      stopping = stopping_;
    }
    for (Command& cmd : commands) {
      std::visit([this](auto& command) { Apply(command); }, cmd);
    }
    PollKvImports();
    CloseTimedOutSessions();
    ReleaseSessionPins();
    if (stopping) {
      AbortAllLive("The engine was shut down.");
      session_unpins_ = sessions_.ReleaseAll();
      ReleaseSessionPins();
      return;
    }
    if (scheduler_->HasWork()) {
      Status status = scheduler_->Step();
      if (!status.ok())
        std::fprintf(stderr, "radixlm: step failed: %s\n", status.ToString().c_str());
      ReleaseSessionPins();
    }
  }
}

void EngineCore::Apply(SubmitCommand& cmd) {
  for (size_t i = 0; i < cmd.inputs.size(); ++i) {
    Route route;
    route.stream = cmd.stream;
    route.index = static_cast<int32_t>(i);
    route.export_room = cmd.export_room;
    if (cmd.export_room.has_value()) {
      route.export_ids = std::make_shared<const std::vector<int32_t>>(cmd.inputs[i].input_ids);
      route.export_namespace = cmd.inputs[i].lora_namespace;
      route.export_lora_identity = cmd.inputs[i].lora_identity;
      route.export_lora_name = cmd.lora_name;
    }
    route.import_pin = cmd.import_pin;
    if (route.import_pin != 0) ++import_pin_samples_[route.import_pin];
    auto [slot, inserted] = routes_.try_emplace(cmd.inputs[i].id);
    // An imported request is routed twice (before its import, without the pin, then with it).
    if (!inserted && slot->second.import_pin != 0) DropImportSample(slot->second.import_pin);
    slot->second = std::move(route);
  }
  if (cmd.import_kv.valid()) {  // imported and submitted by PollKvImports
    awaiting_kv_.push_back(std::move(cmd));
    return;
  }
  if (cmd.session != nullptr) {
    Status status = StartSessionTurn(cmd);
    if (!status.ok()) {
      // As SGLang: the turn ends with an abort the server answers with a 400.
      RequestOutput out;
      out.id = cmd.inputs.front().id;
      out.chunk.finish_reason = FinishReason::Abort(status.message(), 400);
      OnOutput(std::move(out));
      return;
    }
    Route& route = routes_[cmd.inputs.front().id];
    route.session_id = cmd.session->request.session_params->id;
    route.pin = *cmd.inputs.front().pin_on_finish;
  }
  for (RequestInput& in : cmd.inputs) {
    const uint64_t id = in.id;
    Status status = scheduler_->AddRequest(std::move(in));
    if (!status.ok()) {  // ids are unique, so this does not happen; never lose a stream
      RequestOutput out;
      out.id = id;
      out.chunk.finish_reason = FinishReason::Abort(status.message());
      OnOutput(std::move(out));
    }
  }
}

void EngineCore::Apply(AbortCommand& cmd) { AbortRid(cmd.rid, "Aborted by the user"); }

void EngineCore::AbortRid(const std::string& rid, const std::string& message) {
  if (AbortAwaitingKv(rid, message)) return;
  std::vector<uint64_t> ids;
  {
    MutexLock lock(&mu_);
    auto it = live_.find(rid);
    if (it != live_.end()) ids = it->second;
  }
  for (uint64_t id : ids) scheduler_->Abort(id, message);
}

Status EngineCore::StartSessionTurn(SubmitCommand& cmd) {
  SessionTurn& turn = *cmd.session;
  const SessionParams& params = *turn.request.session_params;
  const std::string& rid = cmd.stream->rid();
  StatusOr<SessionTable::Plan> plan = sessions_.PlanTurn(params, rid, turn.own_ids, bos_id_);
  if (!plan.ok()) return plan.status();
  // The turn runs, and the session remembers, the prompt as cut to fit: the next turn
  // continues from what this one saw.
  RADIXLM_ASSIGN_OR_RETURN(const PromptCut cut, FitPrompt(plan->input_ids, turn.request, Limits()));
  RequestInput& in = cmd.inputs.front();  // a session turn has n == 1
  in.input_ids = plan->input_ids;
  in.params.max_new_tokens = turn.request.sampling_params.max_new_tokens;
  in.params.min_new_tokens = turn.request.sampling_params.min_new_tokens;
  in.logprob_start_len = turn.request.logprob_start_len;
  in.pin_on_finish = next_pin_++;
  SessionTable::Commit commit =
      sessions_.CommitTurn(params, rid, std::move(*plan), *in.pin_on_finish);
  sessions_.Touch(params.id, MonotonicSeconds());
  for (const std::string& replaced : commit.abort_rids) {
    AbortRid(replaced, "replaced by turn " + rid + " of session " + params.id);
  }
  if (cut.cut()) WarnCut(cut, rid);
  session_unpins_.insert(session_unpins_.end(), commit.unpin.begin(), commit.unpin.end());
  return Status::Ok();
}

void EngineCore::Apply(OpenSessionCommand& cmd) {
  cmd.answer.set_value(sessions_.Open(cmd.request, NewRid(next_rid_++), MonotonicSeconds()));
}

void EngineCore::CloseTimedOutSessions() {
  for (const std::string& id : sessions_.TimedOut(MonotonicSeconds())) {
    StatusOr<std::vector<uint64_t>> unpin = sessions_.Close(id);
    if (unpin.ok()) session_unpins_.insert(session_unpins_.end(), unpin->begin(), unpin->end());
  }
}

void EngineCore::Apply(CloseSessionCommand& cmd) {
  StatusOr<std::vector<uint64_t>> unpin = sessions_.Close(cmd.session_id);
  if (unpin.ok()) session_unpins_.insert(session_unpins_.end(), unpin->begin(), unpin->end());
  cmd.answer.set_value(unpin.status());
}

void EngineCore::ReleaseSessionPins() {
  for (uint64_t pin : session_unpins_) scheduler_->UnpinPrefix(pin);
  session_unpins_.clear();
}

void EngineCore::Apply(FlushCommand& cmd) { cmd.answer.set_value(scheduler_->FlushCache()); }

void EngineCore::Apply(ClearStorageCommand& cmd) {
  cmd.answer.set_value(scheduler_->ClearDiskTier());
}

void EngineCore::Apply(StatsCommand& cmd) {
  EngineStats stats;
  stats.scheduler = ToSchedulerCounters(scheduler_->GetStats());
  {
    MutexLock lock(&mu_);
    stats.live_requests = static_cast<int64_t>(live_.size());
  }
  stats.open_sessions = static_cast<int64_t>(sessions_.open_sessions());
  for (const ModelRunner* runner : {runner_.get(), draft_runner_.get()}) {
    if (runner == nullptr) continue;
    const RunnerMemory m = runner->memory();
    stats.memory.weights_bytes += m.weights_bytes;
    stats.memory.kv_pool_bytes += m.kv_bytes;
    stats.memory.scratch_bytes += m.scratch_bytes;
    stats.memory.recurrent_state_bytes += m.state_bytes;
  }
  cmd.answer.set_value(std::move(stats));
}

// O(1) when the tree is unchanged since query.if_version_not (or only counters are asked for);
// else one walk of the tree (radix_tree_snapshot.h). The server's feed asks for a full
// snapshot at most once per max(200 ms, 200 × the last one's build_seconds), so snapshots take
// at most 0.5 % of this thread's time (server/radix_tree_feed.h).
void EngineCore::Apply(TreeCommand& cmd) {
  const auto start = std::chrono::steady_clock::now();
  RadixTreeSnapshot snap = SnapshotRadixTree(scheduler_->cache(), cmd.query);
  if (lora_ != nullptr) {
    const std::map<int32_t, std::string> names = lora_->NamespaceNames();
    for (RadixTreeEntry& e : snap.entries) {
      if (auto it = names.find(e.lora_namespace); it != names.end()) e.lora_adapter = it->second;
    }
  }
  const SchedulerStats stats = scheduler_->GetStats();
  snap.pool_size = stats.pool_size;
  snap.pool_free = stats.pool_free;
  snap.cache_hit_tokens = stats.cache_hit_tokens;
  snap.prefill_tokens = stats.prefill_tokens;
  snap.build_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cmd.answer.set_value(std::move(snap));
}

void EngineCore::Apply(PinCommand& cmd) {
  cmd.answer.set_value(scheduler_->PinPrefix(cmd.pin_id, cmd.input_ids));
}

void EngineCore::Apply(UnpinCommand& cmd) { scheduler_->UnpinPrefix(cmd.pin_id); }

void EngineCore::Apply(PauseCommand& cmd) {
  // An abort-mode pause finishes every live request here, before the answer: when the caller
  // hears back, each of their streams has its final chunk.
  scheduler_->Pause(ToSchedulerPauseMode(cmd.mode));
  cmd.answer.set_value(Status::Ok());
}

void EngineCore::Apply(ContinueCommand& cmd) {
  scheduler_->Continue();
  cmd.answer.set_value(Status::Ok());
}

void EngineCore::OnOutput(RequestOutput&& out) {
  auto it = routes_.find(out.id);
  if (it == routes_.end()) return;
  const Route route = it->second;
  GenerateOutput chunk = std::move(out.chunk);  // the scheduler's chunk, as the API types it
  chunk.index = route.index;
  chunk.meta.id = route.stream->rid();
  if (!route.session_id.empty()) {
    sessions_.AddOutput(route.session_id, route.stream->rid(), chunk.output_ids);
    if (chunk.finish_reason.has_value()) {
      std::vector<uint64_t> unpin = sessions_.EndTurn(route.session_id, route.stream->rid(),
                                                      route.pin, !chunk.finish_reason->is_abort());
      session_unpins_.insert(session_unpins_.end(), unpin.begin(), unpin.end());
    }
  }
  if (chunk.finish_reason.has_value()) {
    if (route.export_room.has_value()) ExportPrefixKv(route, chunk.finish_reason->is_abort());
    // The imported prefix stays pinned until the last of its samples ends (released after
    // the step).
    if (route.import_pin != 0 && DropImportSample(route.import_pin)) {
      session_unpins_.push_back(route.import_pin);
    }
    routes_.erase(it);
    // Forget the rid before the stream can end, so the caller may reuse it at once.
    MutexLock lock(&mu_);
    auto live = live_.find(route.stream->rid());
    if (live != live_.end()) {
      std::erase(live->second, out.id);
      if (live->second.empty()) live_.erase(live);
    }
  }
  route.stream->Push(std::move(chunk));
}

bool EngineCore::DropImportSample(uint64_t import_pin) {
  auto it = import_pin_samples_.find(import_pin);
  if (it == import_pin_samples_.end() || --it->second > 0) return false;
  import_pin_samples_.erase(it);
  return true;
}

void EngineCore::AbortAllLive(const std::string& message) {
  for (SubmitCommand& cmd : awaiting_kv_) EndUnsubmitted(cmd, FinishReason::Abort(message));
  awaiting_kv_.clear();
  std::vector<uint64_t> ids;
  for (const auto& [id, route] : routes_) ids.push_back(id);
  for (uint64_t id : ids) scheduler_->Abort(id, message);
}

}  // namespace radixlm
