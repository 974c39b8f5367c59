// Engine::Create(config): open the GGUF once; load its assets (tokenizer, chat template,
// metadata) and the model; size the KV pool.
#include "engine/draft_model.h"
#include "engine/engine.h"
#include "engine/engine_core.h"
#include "engine/model_backed_runner.h"
#include "engine/scheduler_bridge.h"
#include "gguf/gguf_file.h"
#include "model/model.h"
#include "util/model_path.h"

namespace radixlm {

StatusOr<std::unique_ptr<Engine>> Engine::Create(const EngineConfig& config) {
  RADIXLM_ASSIGN_OR_RETURN(std::string path, ResolveModelPath(config.model_path));
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::Open(path));
  RADIXLM_ASSIGN_OR_RETURN(model::ModelConfig mc, model::ModelConfig::FromGguf(*file));
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<ModelAssets> assets, ModelAssets::FromGguf(*file, path));

  int64_t context = mc.context_length;
  if (config.context_length > 0) context = std::min(context, config.context_length);
  // F16 K and V per layer per token.
  const int64_t bytes_per_token = mc.n_layers * 2 * mc.kv_size() * 2;
  int64_t pool_tokens = config.max_total_tokens;
  if (pool_tokens <= 0) {
    if (config.kv_cache_memory_mb <= 0) {
      return InvalidArgument("set max_total_tokens or kv_cache_memory_mb");
    }
    pool_tokens = config.kv_cache_memory_mb * (int64_t{1} << 20) / bytes_per_token;
  }
  RADIXLM_ASSIGN_OR_RETURN(SchedulerConfig sc, ToSchedulerConfig(config, pool_tokens, context));

  model::ModelOptions mo;
  mo.n_threads = config.threads;
  // Prefill chunks share the chunk budget with the decodes mixed into the same forward.
  mo.max_batch_tokens =
      (sc.chunked_prefill_size > 0 ? sc.chunked_prefill_size : sc.max_prefill_tokens) +
      sc.max_running_requests + sc.page_size;
  mo.max_context = context;
  const int64_t page = sc.page_size;
  const int64_t kv_slots = (pool_tokens / page + 1) * page;
  std::unique_ptr<ModelBackedRunner> draft_runner;
  if (sc.speculative_draft_model) {  // its KV cache mirrors the target's slot for slot
    RADIXLM_ASSIGN_OR_RETURN(
        draft_runner, LoadDraftRunner(config.speculative_draft_model_path, *file, mo, kv_slots));
  }
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<model::Model> model,
                           model::Model::FromGguf(std::move(file), mo));
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<ModelBackedRunner> runner,
                           ModelBackedRunner::Create(std::move(model), kv_slots));
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<EngineCore> core,
                           EngineCore::Create(config, sc, std::move(runner), std::move(assets),
                                              std::move(draft_runner)));
  return std::unique_ptr<Engine>(new Engine(std::move(core)));
}

}  // namespace radixlm
