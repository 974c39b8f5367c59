// Engine::Create(config): open the GGUF once; load its assets (tokenizer, chat template,
// metadata) and the model; size the KV pool.
#include <algorithm>
#include <cstdio>

#include "cache/radix_cache.h"
#include "engine/draft_model.h"
#include "engine/encoder_runner.h"
#include "engine/engine.h"
#include "engine/engine_core.h"
#include "engine/kv_identity.h"
#include "engine/lora_registry.h"
#include "engine/model_backed_runner.h"
#include "engine/nextn_runner.h"
#include "engine/projector_encoder.h"
#include "engine/scheduler_bridge.h"
#include "gguf/gguf_file.h"
#include "hf/model_file.h"
#include "model/load_progress.h"
#include "model/model.h"
#include "util/model_path.h"

namespace radixlm {
namespace {

struct KvSizing {
  int64_t pool_tokens = 0;      // full-attention layers (every layer without hybrid memory)
  int64_t swa_pool_tokens = 0;  // sliding-window layers; 0: no pool of their own
  int64_t sliding_window = 0;
};

// The --kv-cache-dtype value as a KV element type.
StatusOr<kernels::KvDtype> ParseKvCacheDtype(const std::string& name) {
  if (name == "auto") return kernels::KvDtype::kF16;
  if (name == "bf16") return kernels::KvDtype::kBF16;
  if (name == "fp8_e5m2") return kernels::KvDtype::kFp8E5M2;
  if (name == "fp8_e4m3") {
    return InvalidArgument("--kv-cache-dtype fp8_e4m3 is not built; use fp8_e5m2, bf16 or auto");
  }
  return InvalidArgument("--kv-cache-dtype must be auto, bf16 or fp8_e5m2, got '" + name + "'");
}

// Token budgets of the KV pools. One K and V row per layer per token (of the layer's own width;
// none for a layer reading another's, gemma4); with hybrid SWA memory, M bytes hold F
// full-layer tokens and S = r·F windowed-layer tokens where
//   F = M / (full_bytes + r · windowed_bytes),  r = --swa-full-tokens-ratio,
// full_bytes and windowed_bytes being a token's K and V over those layers,
// except that S is at least twice the window plus two pages (what one request needs; F is
// then what the rest of M holds) and never more than F (--max-total-tokens sets F itself).
StatusOr<KvSizing> SizeKv(const EngineConfig& config, const model::ModelConfig& mc,
                          kernels::KvDtype dtype) {
  int64_t n_windowed = 0;
  int64_t window = 0;
  int64_t full_bytes = 0;      // a token's K and V over the full-attention layers
  int64_t windowed_bytes = 0;  // and over the sliding-window ones
  for (int64_t l = 0; l < mc.n_layers; ++l) {
    const model::LayerAttentionConfig la = mc.LayerAttention(l);
    const int64_t w = la.sliding_window;
    if (w > 0) ++n_windowed;
    window = std::max(window, w);
    if (la.kv_layer != l) continue;  // reads another layer's K/V
    const int64_t bytes = mc.KvPlanes() * mc.LayerKvSize(l) * kernels::KvDtypeBytes(dtype);
    (w > 0 ? windowed_bytes : full_bytes) += bytes;
  }
  const int64_t n_full = mc.n_layers - n_windowed;
  const bool hybrid = !config.disable_hybrid_swa_memory && n_windowed > 0 && n_full > 0;
  const double ratio = config.swa_full_tokens_ratio;
  if (hybrid && !(ratio > 0 && ratio <= 1)) {
    return InvalidArgument("--swa-full-tokens-ratio must be in (0, 1], got " +
                           std::to_string(ratio));
  }
  KvSizing out;
  out.pool_tokens = config.max_total_tokens;
  if (out.pool_tokens <= 0) {
    if (config.kv_cache_memory_mb <= 0) {
      return InvalidArgument("set max_total_tokens or kv_cache_memory_mb");
    }
    const double bytes = static_cast<double>(config.kv_cache_memory_mb) * (int64_t{1} << 20);
    const double bytes_per_token =
        hybrid ? static_cast<double>(full_bytes) + ratio * static_cast<double>(windowed_bytes)
               : static_cast<double>(full_bytes + windowed_bytes);
    out.pool_tokens = static_cast<int64_t>(bytes / bytes_per_token);
  }
  if (!hybrid) return out;
  out.sliding_window = window;
  out.swa_pool_tokens = static_cast<int64_t>(ratio * static_cast<double>(out.pool_tokens));
  const int64_t least = 2 * (window + 2 * static_cast<int64_t>(config.page_size));
  if (out.swa_pool_tokens < least && config.max_total_tokens <= 0) {
    const int64_t memory = config.kv_cache_memory_mb * (int64_t{1} << 20);
    out.swa_pool_tokens = least;
    out.pool_tokens = (memory - windowed_bytes * least) / full_bytes;
    if (out.pool_tokens < least) {
      out.pool_tokens = memory / (full_bytes + windowed_bytes);  // one pool's worth
    }
  }
  out.swa_pool_tokens = std::min(std::max(out.swa_pool_tokens, least), out.pool_tokens);
  return out;
}

// A hybrid model's state snapshots in the radix tree (EngineConfig::max_mamba_cache_size):
// their count, taking their share of the KV memory out of kv->pool_tokens when the pool is
// sized from memory.
int32_t SizeStateSnapshots(const EngineConfig& config, const model::ModelConfig& mc,
                           kernels::KvDtype dtype, KvSizing* kv) {
  if (config.max_mamba_cache_size > 0) return config.max_mamba_cache_size;
  const int64_t slot_bytes = model::RecurrentState::SlotBytes(mc);
  int64_t token_bytes = 0;  // a token's K and V over the full-attention layers
  for (int64_t l = 0; l < mc.n_layers; ++l) {
    if (mc.LayerAttention(l).kv_layer == l) {
      token_bytes += 2 * mc.LayerKvSize(l) * kernels::KvDtypeBytes(dtype);
    }
  }
  double budget = 0;
  if (config.max_total_tokens > 0) {
    // A third of the pool's bytes, and at least a quarter of the default KV memory (a hybrid
    // model's tokens are cheap next to one snapshot: a few layers keep KV).
    budget = std::max(static_cast<double>(kv->pool_tokens) * static_cast<double>(token_bytes) / 3,
                      256.0 * (int64_t{1} << 20));
  } else {
    budget = static_cast<double>(config.kv_cache_memory_mb) * (int64_t{1} << 20) / 4;
    kv->pool_tokens = kv->pool_tokens * 3 / 4;
  }
  const auto n =
      static_cast<int64_t>(budget / static_cast<double>(std::max<int64_t>(slot_bytes, 1)));
  return static_cast<int32_t>(std::clamp<int64_t>(n, 1, INT32_MAX / 2));
}

// An embedding engine's pooling: --pooling, else the GGUF's <arch>.pooling_type.
StatusOr<Pooling> ResolvePooling(const EngineConfig& config, const gguf::GgufFile& file,
                                 const std::string& arch) {
  if (!config.is_embedding) {
    if (!config.pooling.empty()) return InvalidArgument("--pooling goes with --is-embedding");
    return Pooling::kNone;
  }
  if (!config.pooling.empty()) {
    StatusOr<Pooling> flag = ParsePooling(config.pooling);
    if (!flag.ok()) return InvalidArgument("--" + flag.status().message());
    return flag;
  }
  const std::string key = arch + ".pooling_type";
  RADIXLM_ASSIGN_OR_RETURN(const int64_t type, file.GetIntOr(key, -1));
  Pooling pooling = Pooling::kNone;
  if (type >= 0) {
    StatusOr<Pooling> from_file = PoolingFromGguf(type);
    if (!from_file.ok()) {
      return Status(from_file.status().code(), key + ": " + from_file.status().message());
    }
    pooling = *from_file;
  }
  if (pooling == Pooling::kNone) {
    return InvalidArgument("--is-embedding: the model has no pooling (" + key + " is " +
                           (type < 0 ? std::string("absent") : "0, none") +
                           "); choose one with --pooling mean|cls|last");
  }
  return pooling;
}

// The LoRA registry of --enable-lora / --lora-paths (null when neither is given), with the
// --lora-paths adapters loaded. What cannot keep adapters apart is refused.
StatusOr<std::unique_ptr<LoraRegistry>> CreateLoraRegistry(const EngineConfig& config,
                                                           const model::Model& model) {
  if (!config.enable_lora && config.lora_paths.empty()) return std::unique_ptr<LoraRegistry>();
  if (config.is_embedding) return Unimplemented("LoRA adapters with --is-embedding");
  if (model.config().vocab_size > RadixCache::kKeyNamespaceStride) {
    return Unimplemented("LoRA adapters need a vocabulary of at most " +
                         std::to_string(RadixCache::kKeyNamespaceStride) + " tokens");
  }
  if (config.max_loras_per_batch < 1) {
    return InvalidArgument("--max-loras-per-batch must be at least 1");
  }
  if (config.max_lora_rank < 0) return InvalidArgument("--max-lora-rank must not be negative");
  model::LoraLoadOptions options;
  options.max_rank = config.max_lora_rank;
  if (!config.lora_target_modules.empty()) {
    options.allowed_targets.fill(false);
    for (const std::string& m : config.lora_target_modules) {
      bool known = false;
      for (int t = 0; t < model::kNumLoraTargets; ++t) {
        if (m == "all" || m == model::LoraTargetModuleName(static_cast<model::LoraTarget>(t))) {
          options.allowed_targets[t] = true;
          known = true;
        }
      }
      if (!known) {
        return InvalidArgument("--lora-target-modules: unknown module '" + m +
                               "' (valid: q_proj, "
                               "k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, all)");
      }
    }
  }
  auto registry = std::make_unique<LoraRegistry>(model.config(), model.weights(), options);
  for (const std::string& item : config.lora_paths) {
    RADIXLM_ASSIGN_OR_RETURN(auto name_path, ParseLoraPathItem(item));
    RADIXLM_RETURN_IF_ERROR(registry->Load(name_path.first, name_path.second));
  }
  return registry;
}

}  // namespace

StatusOr<std::unique_ptr<Engine>> Engine::Create(const EngineConfig& config) {
  RADIXLM_ASSIGN_OR_RETURN(std::string path, ResolveModelPath(config.model_path));
  // A GGUF file, or a Hugging Face folder presented as one (its findings go to the load log).
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file,
                           hf::OpenModelFile(path, {.quantization = config.quantization,
                                                    .n_threads = config.threads,
                                                    .log = config.on_load_progress}));
  // An encoder (bert, nomic-bert) runs outside the decoder's KV cache (engine/encoder_runner.h).
  if (const StatusOr<std::string> arch = file->GetString("general.architecture");
      arch.ok() && model::IsEncoderArchitecture(*arch)) {
    RADIXLM_ASSIGN_OR_RETURN(const Pooling pooling, ResolvePooling(config, *file, *arch));
    return CreateEncoderEngine(config, path, std::move(file), pooling);
  }
  RADIXLM_ASSIGN_OR_RETURN(model::ModelConfig mc, model::ModelConfig::FromGguf(*file));
  if (config.speculative_algorithm == "NEXTN" && !mc.has_nextn_layer) {
    return mc.nextn_layers < 1
               ? InvalidArgument(
                     "--speculative-algorithm NEXTN needs a model with NextN "
                     "(multi-token-prediction) layers; this '" +
                     mc.arch + "' model has none (" + mc.arch +
                     ".nextn_predict_layers is 0 or absent)")
               : Unimplemented("--speculative-algorithm NEXTN: running the NextN layers of '" +
                               mc.arch +
                               "' models is not supported (qwen35, qwen35moe and "
                               "qwen3next are)");
  }
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<ModelAssets> assets, ModelAssets::FromGguf(*file, path));
  RADIXLM_ASSIGN_OR_RETURN(const Pooling pooling, ResolvePooling(config, *file, mc.arch));
  if (config.is_embedding && !config.speculative_algorithm.empty()) {
    return InvalidArgument(
        "--speculative-algorithm does not go with --is-embedding (nothing is "
        "decoded)");
  }

  int64_t context = mc.context_length;
  if (config.context_length > 0) context = std::min(context, config.context_length);
  RADIXLM_ASSIGN_OR_RETURN(const kernels::KvDtype kv_dtype,
                           ParseKvCacheDtype(config.kv_cache_dtype));
  RADIXLM_ASSIGN_OR_RETURN(KvSizing kv, SizeKv(config, mc, kv_dtype));
  const bool hybrid = mc.IsHybrid();
  const int32_t snapshot_slots =
      hybrid && !config.disable_radix_cache ? SizeStateSnapshots(config, mc, kv_dtype, &kv) : 0;
  RADIXLM_ASSIGN_OR_RETURN(
      SchedulerConfig sc,
      ToSchedulerConfig(config, kv.pool_tokens, context, kv.swa_pool_tokens, kv.sliding_window));
  if (sc.hicache.enable) {
    sc.hicache.model_id = KvIdentity(*file, sc.hicache.block_tokens, kv_dtype);
  }
  // A hybrid model's linear layers keep a state per request, not per token: the radix tree
  // keeps snapshots of it beside the KV (scheduler_snapshots.cc); what moves KV alone (the
  // disk tier, PD transfer) is refused; speculative decoding only with NEXTN, whose
  // verification rolls the state back (scheduler_nextn.cc).
  sc.state_snapshot_slots = snapshot_slots;
  sc.hybrid_snapshot_interval = config.hybrid_snapshot_interval;
  if (snapshot_slots > 0 && (config.hybrid_snapshot_interval < 1 ||
                             config.hybrid_snapshot_interval % sc.page_size != 0)) {
    return InvalidArgument(
        "--hybrid-snapshot-interval must be a positive multiple of "
        "--page-size (" +
        std::to_string(sc.page_size) + "), got " + std::to_string(config.hybrid_snapshot_interval));
  }
  RADIXLM_RETURN_IF_ERROR(sc.Validate());
  // Draft chains verify on a hybrid model with checkpoints of its state (scheduler_nextn.cc):
  // speculative_num_steps more state slots per running request.
  const int64_t checkpoint_slots = hybrid && sc.speculative_nextn
                                       ? int64_t{sc.max_running_requests} * sc.speculative_num_steps
                                       : 0;
  if (hybrid) {
    if (sc.speculative_ngram || (sc.speculative_draft_model && !sc.speculative_nextn)) {
      return Unimplemented(
          "speculative decoding is not supported for hybrid (linear-attention) "
          "models such as '" +
          mc.arch +
          "' except --speculative-algorithm "
          "NEXTN");
    }
  }

  model::ModelOptions mo;
  mo.n_threads = config.threads;
  // Prefill chunks share the chunk budget with the decodes mixed into the same forward.
  mo.max_batch_tokens =
      (sc.chunked_prefill_size > 0 ? sc.chunked_prefill_size : sc.max_prefill_tokens) +
      sc.max_running_requests + sc.page_size;
  mo.max_context = context;
  mo.output_hidden_states = config.is_embedding;
  RADIXLM_ASSIGN_OR_RETURN(mo.linear_attn_prefill,
                           model::ParseLinearAttnPrefill(config.linear_attn_prefill));
  auto progress_lines = [&config](std::string prefix) -> model::LoadProgressFn {
    if (!config.on_load_progress) return nullptr;
    return [&config, prefix](const model::LoadProgress& p) {
      config.on_load_progress(prefix + model::FormatLoadProgress(p));
    };
  };
  const int64_t page = sc.page_size;
  const int64_t kv_slots = (kv.pool_tokens / page + 1) * page;
  const int64_t swa_kv_slots = kv.swa_pool_tokens > 0 ? (kv.swa_pool_tokens / page + 1) * page : 0;
  std::unique_ptr<ModelRunner> draft_runner;
  // Its KV cache mirrors the target's full-layer slots one for one (every layer, windowed ones
  // included: the draft keeps KV for every token the target computes). (NEXTN's draft is the
  // model's own layer, made below.)
  if (sc.speculative_draft_model && !sc.speculative_nextn) {
    model::ModelOptions draft_options = mo;
    draft_options.on_load_progress = progress_lines("draft model: ");
    RADIXLM_ASSIGN_OR_RETURN(draft_runner, LoadDraftRunner(config.speculative_draft_model_path,
                                                           *file, draft_options, kv_slots));
  }
  mo.on_load_progress = progress_lines("");
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<model::Model> model,
                           model::Model::FromGguf(std::move(file), mo));
  model::Model* target = model.get();  // (the runner owns it and outlives the draft runner)
  RADIXLM_ASSIGN_OR_RETURN(
      std::unique_ptr<ModelBackedRunner> runner,
      ModelBackedRunner::Create(
          std::move(model), kv_slots, swa_kv_slots, kv_dtype,
          /*state_slots=*/int64_t{sc.max_running_requests} + snapshot_slots + checkpoint_slots));
  if (sc.speculative_nextn) {  // the model's own NextN layer, its KV slot for slot the target's
    RADIXLM_ASSIGN_OR_RETURN(draft_runner, NextnRunner::Create(*target, kv_slots, kv_dtype));
  }
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<LoraRegistry> lora,
                           CreateLoraRegistry(config, runner->model()));
  runner->set_lora_capacity(config.max_loras_per_batch);
  EngineConfig kept = config;
  kept.on_load_progress = nullptr;  // the load is over (and the callback may capture locals)
  if (config.is_embedding) kept.pooling = PoolingName(pooling);
  RADIXLM_ASSIGN_OR_RETURN(
      std::unique_ptr<EngineCore> core,
      EngineCore::Create(kept, sc, std::move(runner), std::move(assets), std::move(draft_runner)));
  core->set_lora(std::move(lora));  // before any request: nothing has been submitted yet
  if (!config.mmproj_path.empty()) {
    RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<ImageEncoder> encoder,
                             LoadProjectorEncoder(config.mmproj_path, config.threads));
    // A projector serves beside the language model its image positions are made for: gemma3's
    // (one position per image token) beside a model without M-RoPE, qwen2.5vl_merger's (2-D
    // M-RoPE positions, MropePositions) beside qwen2vl's M-RoPE, qwen3vl_merger's (the same
    // positions, rows with deepstack slices) beside qwen3vl's interleaved M-RoPE and deepstack,
    // gemma4v's beside a gemma4 model (image rows unscaled, per-layer inputs of token 0 at image
    // positions, as llama.cpp's gemma4 reads embeddings), idefics3's (one position per image
    // token, text between its tiles) beside a model without M-RoPE whose vocabulary has its
    // layout's tokens (SetImageEncoder).
    const std::string type(encoder->projector_type());
    const model::ModelConfig& lm = target->config();
    if (type != "gemma3" && type != "qwen2.5vl_merger" && type != "qwen3vl_merger" &&
        type != "gemma4v" && type != "idefics3") {
      return Unimplemented("serving images through a '" + type +
                           "' projector is not built; gemma3, gemma4v, idefics3, "
                           "qwen2.5vl_merger and qwen3vl_merger projectors are");
    }
    const bool qwen3 = type == "qwen3vl_merger";
    if ((qwen3 || lm.mrope_interleaved) &&
        (qwen3 != lm.mrope_interleaved || encoder->n_deepstack() != lm.n_deepstack_layers)) {
      return InvalidArgument(
          "--mmproj: a '" + type + "' projector with " + std::to_string(encoder->n_deepstack()) +
          " deepstack layers does not fit a '" + lm.arch + "' language model with " +
          std::to_string(lm.n_deepstack_layers) +
          " (qwen3vl_merger goes with qwen3vl's interleaved M-RoPE, as many deepstack layers on "
          "each side)");
    }
    if (type == "gemma4v" && lm.arch != "gemma4") {
      return Unimplemented(
          "a gemma4v projector is served beside a gemma4 language model only; this model is '" +
          lm.arch + "'");
    }
    if ((type == "qwen2.5vl_merger" || qwen3) != lm.mrope()) {
      return InvalidArgument(
          "--mmproj: a '" + type + "' projector does not fit a '" + lm.arch +
          "' language model (qwen2.5vl_merger goes with qwen2vl's M-RoPE, qwen3vl_merger with "
          "qwen3vl's, gemma3, gemma4v and idefics3 with a model without it)");
    }
    RADIXLM_RETURN_IF_ERROR(core->SetImageEncoder(std::move(encoder)));
  }
  return std::unique_ptr<Engine>(new Engine(std::move(core)));
}

}  // namespace radixlm
