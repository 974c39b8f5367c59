#include "engine/encoder_runner.h"

#include <algorithm>

#include "engine/model_assets.h"

namespace radixlm {

EncoderRunner::EncoderRunner(std::unique_ptr<model::EncoderModel> model, int64_t context,
                             int64_t kv_slots)
    : model_(std::move(model)),
      context_(context),
      kv_slots_(kv_slots),
      // Several whole prompts per forward; at least one of the longest.
      max_batch_tokens_(std::max<int64_t>(context, 2048)) {}

Status EncoderRunner::Forward(const model::ForwardBatch& batch, model::ForwardOutput* out) {
  std::vector<std::span<const int32_t>> sequences;
  sequences.reserve(batch.sequences.size());
  for (const model::SequenceInput& s : batch.sequences) {
    if (!s.prefix_slots.empty()) {
      return InvalidArgument("an encoder runs each prompt whole; got " +
                             std::to_string(s.tokens.size()) + " tokens after a prefix of " +
                             std::to_string(s.prefix_slots.size()));
    }
    if (s.lora != nullptr) return InvalidArgument("an encoder takes no LoRA adapter");
    sequences.push_back(s.tokens);
  }
  RADIXLM_RETURN_IF_ERROR(model_->Forward(sequences, &hidden_));
  const int64_t h = model_->config().hidden_size;
  out->vocab_size = h;
  out->row_offset.assign(sequences.size(), 0);
  out->row_count.assign(sequences.size(), 0);
  int64_t rows = 0;
  for (size_t s = 0; s < sequences.size(); ++s) {
    const auto n = static_cast<int64_t>(sequences[s].size());
    const model::LogitsMode mode = batch.sequences[s].logits;
    out->row_offset[s] = rows;
    out->row_count[s] = mode == model::LogitsMode::kAll ? n : mode == model::LogitsMode::kLast;
    rows += out->row_count[s];
  }
  out->n_rows = rows;
  if (static_cast<int64_t>(out->logits.size()) < rows * h) out->logits.resize(rows * h);
  int64_t first = 0;  // the sequence's first row in hidden_
  for (size_t s = 0; s < sequences.size(); ++s) {
    const auto n = static_cast<int64_t>(sequences[s].size());
    const int64_t from = first + n - out->row_count[s];  // every row, or the last
    std::copy(hidden_.begin() + from * h, hidden_.begin() + (first + n) * h,
              out->logits.begin() + out->row_offset[s] * h);
    first += n;
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<Engine>> CreateEncoderEngine(const EngineConfig& config,
                                                      const std::string& path,
                                                      std::unique_ptr<gguf::GgufFile> file,
                                                      Pooling pooling) {
  RADIXLM_ASSIGN_OR_RETURN(const std::string arch, file->GetString("general.architecture"));
  if (!config.is_embedding) {
    return InvalidArgument("'" + arch +
                           "' is an encoder (an embedding model): serve it with "
                           "--is-embedding");
  }
  if (!config.speculative_algorithm.empty()) {
    return InvalidArgument("--speculative-algorithm does not go with an encoder ('" + arch + "')");
  }
  if (config.enable_lora || !config.lora_paths.empty()) {
    return InvalidArgument("LoRA adapters do not go with an encoder ('" + arch + "')");
  }
  if (!config.hicache_storage_backend.empty()) {
    return InvalidArgument("--enable-hierarchical-cache does not go with an encoder ('" + arch +
                           "'): it keeps no KV");
  }
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<ModelAssets> assets, ModelAssets::FromGguf(*file, path));
  RADIXLM_ASSIGN_OR_RETURN(
      std::unique_ptr<model::EncoderModel> model,
      model::EncoderModel::FromGguf(std::move(file), {.n_threads = config.threads}));
  int64_t context = model->config().context_length;
  if (config.context_length > 0) context = std::min(context, config.context_length);

  EngineConfig kept = config;
  kept.on_load_progress = nullptr;
  kept.pooling = PoolingName(pooling);
  kept.disable_radix_cache = true;  // bidirectional attention: no prefix is reusable
  kept.chunked_prefill_size = -1;   // and no prompt is cut (runs_whole_prompts)
  kept.max_total_tokens =
      std::max<int64_t>(config.max_total_tokens > 0 ? config.max_total_tokens : 16384, context);
  const int64_t page = std::max<int64_t>(config.page_size, 1);
  const int64_t slots = (kept.max_total_tokens / page + 1) * page;
  auto runner = std::make_unique<EncoderRunner>(std::move(model), context, slots);
  return Engine::Create(kept, std::move(runner), std::move(assets));
}

}  // namespace radixlm
