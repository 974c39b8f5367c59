// Engine: the public face; everything is EngineCore's (engine_core.h).
#include "engine/engine.h"

#include <algorithm>

#include "engine/engine_core.h"
#include "engine/scheduler_bridge.h"

namespace radixlm {

StatusOr<std::unique_ptr<Engine>> Engine::Create(const EngineConfig& config,
                                                 std::unique_ptr<ModelRunner> runner,
                                                 std::unique_ptr<TokenTextCodec> codec) {
  if (codec == nullptr) return InvalidArgument("Engine needs a tokenizer codec");
  return Create(config, std::move(runner), ModelAssets::FromParts(std::move(codec), ModelInfo{}));
}

StatusOr<std::unique_ptr<Engine>> Engine::Create(const EngineConfig& config,
                                                 std::unique_ptr<ModelRunner> runner,
                                                 std::unique_ptr<ModelAssets> assets) {
  if (runner == nullptr || assets == nullptr) {
    return InvalidArgument("Engine needs a model runner and the model's assets");
  }
  if (config.max_total_tokens <= 0) {
    return InvalidArgument("max_total_tokens must be set when the engine is given a runner");
  }
  int64_t context = runner->context_length();
  if (config.context_length > 0) context = std::min(context, config.context_length);
  RADIXLM_ASSIGN_OR_RETURN(SchedulerConfig sc,
                           ToSchedulerConfig(config, config.max_total_tokens, context));
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<EngineCore> core,
                           EngineCore::Create(config, sc, std::move(runner), std::move(assets)));
  return std::unique_ptr<Engine>(new Engine(std::move(core)));
}

Engine::Engine(std::unique_ptr<EngineCore> core) : core_(std::move(core)) {}

Engine::~Engine() = default;

StatusOr<std::shared_ptr<GenerateStream>> Engine::Submit(GenerateRequest request) {
  return core_->Submit(std::move(request));
}

bool Engine::Abort(const std::string& rid) { return core_->Abort(rid); }

Status Engine::FlushCache() { return core_->FlushCache(); }

StatusOr<int64_t> Engine::ClearHiCacheStorage() { return core_->ClearHiCacheStorage(); }

EngineStats Engine::GetStats() { return core_->GetStats(); }

StatusOr<RadixTreeSnapshot> Engine::GetRadixTree(const RadixTreeQuery& query) {
  return core_->GetRadixTree(query);
}

void Engine::SetKvExportSink(std::function<void(uint64_t room, StatusOr<PrefixKv> kv)> sink) {
  core_->SetKvExportSink(std::move(sink));
}

StatusOr<PrefixPin> Engine::PinPrefix(std::vector<int32_t> input_ids) {
  return core_->PinPrefix(std::move(input_ids));
}

void Engine::UnpinPrefix(uint64_t pin_id) { core_->UnpinPrefix(pin_id); }

Status Engine::PauseGeneration(PauseMode mode) { return core_->PauseGeneration(mode); }

Status Engine::ContinueGeneration() { return core_->ContinueGeneration(); }

StatusOr<std::string> Engine::OpenSession(OpenSessionRequest request) {
  return core_->OpenSession(std::move(request));
}

Status Engine::CloseSession(const std::string& session_id) {
  return core_->CloseSession(session_id);
}

void Engine::Shutdown() { core_->Shutdown(); }

LoraRegistry* Engine::lora() const { return core_->lora(); }

Status Engine::SetImageEncoder(std::unique_ptr<ImageEncoder> encoder) {
  return core_->SetImageEncoder(std::move(encoder));
}

std::optional<ImageCache::Counters> Engine::image_counters() const {
  const ImageCache* cache = core_->image_cache();
  if (cache == nullptr) return std::nullopt;
  return cache->counters();
}
const EngineConfig& Engine::config() const { return core_->config(); }
const EngineSettings& Engine::settings() const { return core_->settings(); }
const ModelAssets& Engine::assets() const { return core_->assets(); }
int32_t Engine::vocab_size() const { return core_->vocab_size(); }
int64_t Engine::context_length() const { return core_->context_length(); }
int64_t Engine::kv_token_bytes() const { return core_->kv_token_bytes(); }
int64_t Engine::state_slot_bytes() const { return core_->state_slot_bytes(); }

}  // namespace radixlm
