#include "server/ops_api.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "server/generation_call.h"
#include "server/json_fields.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

bool ShuttingDown(const ServerContext& ctx) {
  return ctx.shutting_down != nullptr && ctx.shutting_down->load();
}

HttpResponse Unavailable() {
  return ErrorResponse(ApiError{503, "the server is shutting down", ""});
}

// /health_generate succeeds when a 1-token generation finishes normally.
class HealthFormatter : public GenerationFormatter {
 public:
  HttpResponse OnComplete(const ResultGrid& results, double elapsed_s) override {
    for (const auto& samples : results) {
      for (const GenerateResult& r : samples) {
        if (!r.finish_reason.has_value() || r.finish_reason->is_abort()) {
          return ErrorResponse(ApiError{503, "health check generation was aborted", ""});
        }
      }
    }
    return HttpResponse::Json(200, json{{"status", "ok"}, {"e2e_latency", elapsed_s}});
  }
};

HandlerResult HealthGenerate(const ServerContext& ctx) {
  if (ShuttingDown(ctx)) return HandlerResult::Respond(Unavailable());
  static std::atomic<uint64_t> counter{0};
  GenerateRequest request;
  request.rid = "HEALTH_CHECK_" + std::to_string(counter.fetch_add(1));
  request.text = "Hello";
  request.sampling_params.max_new_tokens = 1;
  request.sampling_params.temperature = 0.0f;
  request.embed = ctx.engine->config().is_embedding;  // an embedding server embeds it
  auto call = std::make_shared<GenerationCall>(ctx.engine, nullptr, nullptr,
                                               std::make_unique<HealthFormatter>(), false);
  std::vector<GenerateRequest> requests;
  requests.push_back(std::move(request));
  Status status = call->Submit(std::move(requests));
  if (!status.ok()) return HandlerResult::Error(ApiErrorFromStatus(status));
  return HandlerResult::Generate(std::move(call));
}

HandlerResult AbortRequest(const ServerContext& ctx, const HttpRequest& request) {
  ApiError error;
  std::optional<json> body = ParseJsonBody(request, &error);
  if (!body.has_value()) return HandlerResult::Error(error);
  if (!body->is_object()) {
    return HandlerResult::Error(BadRequest("the request body must be a JSON object"));
  }
  bool abort_all = false;
  std::string rid;
  Status status = ReadBool(*body, "abort_all", &abort_all);
  if (status.ok()) status = ReadString(*body, "rid", &rid);
  if (!status.ok()) return HandlerResult::Error(ApiErrorFromStatus(status));
  if (abort_all) {
    int64_t aborted = 0;
    if (ctx.live != nullptr) {
      for (const std::string& live_rid : ctx.live->Snapshot())
        aborted += ctx.engine->Abort(live_rid);
    }
    return HandlerResult::Respond(
        HttpResponse::Json(200, json{{"success", true}, {"aborted", aborted}}));
  }
  if (rid.empty()) return HandlerResult::Error(BadRequest("rid is required", "rid"));
  const bool found = ctx.engine->Abort(rid);
  return HandlerResult::Respond(HttpResponse::Json(200, json{{"success", found}, {"rid", rid}}));
}

// SGLang's /open_session {"capacity_of_str_len", "session_id", "streaming", "timeout"}:
// answers the session id as a JSON string, as SGLang does.
HandlerResult OpenSession(const ServerContext& ctx, const HttpRequest& request) {
  ApiError error;
  std::optional<json> body = ParseJsonBody(request, &error);
  if (!body.has_value()) return HandlerResult::Error(error);
  if (!body->is_object()) {
    return HandlerResult::Error(BadRequest("the request body must be a JSON object"));
  }
  OpenSessionRequest open;
  std::string id;
  Status status = ReadInt(*body, "capacity_of_str_len", 0, std::numeric_limits<int64_t>::max(),
                          &open.capacity_of_str_len);
  if (status.ok()) status = ReadString(*body, "session_id", &id);
  if (status.ok()) status = ReadBool(*body, "streaming", &open.streaming);
  if (status.ok() && FindField(*body, "timeout") != nullptr) {  // (the engine checks > 0)
    double timeout = 0;
    status = ReadNumber(*body, "timeout", -std::numeric_limits<double>::max(),
                        std::numeric_limits<double>::max(), &timeout);
    open.timeout = timeout;
  }
  if (!status.ok()) return HandlerResult::Error(ApiErrorFromStatus(status));
  if (!id.empty()) open.session_id = id;
  if (ShuttingDown(ctx)) return HandlerResult::Respond(Unavailable());
  return HandlerResult::Blocking([ctx, open] {
    StatusOr<std::string> opened = ctx.engine->OpenSession(open);
    if (!opened.ok()) return ErrorResponse(ApiErrorFromStatus(opened.status()));
    return HttpResponse::Json(200, json(*opened));
  });
}

// SGLang's /close_session {"session_id"}: 200 with an empty body; 404 for a session not open.
HandlerResult CloseSession(const ServerContext& ctx, const HttpRequest& request) {
  ApiError error;
  std::optional<json> body = ParseJsonBody(request, &error);
  if (!body.has_value()) return HandlerResult::Error(error);
  if (!body->is_object()) {
    return HandlerResult::Error(BadRequest("the request body must be a JSON object"));
  }
  std::string id;
  if (Status status = ReadString(*body, "session_id", &id); !status.ok()) {
    return HandlerResult::Error(ApiErrorFromStatus(status));
  }
  if (id.empty()) return HandlerResult::Error(BadRequest("session_id is required", "session_id"));
  return HandlerResult::Blocking([ctx, id] {
    Status status = ctx.engine->CloseSession(id);
    if (!status.ok()) return ErrorResponse(ApiErrorFromStatus(status));
    return HttpResponse::Text(200, "", "text/plain");
  });
}

// SGLang's /get_model_info object.
json ModelInfoJson(const ServerContext& ctx) {
  const ModelInfo& model = *ctx.model_info;
  return json{
      {"model_path", model.model_path},
      {"tokenizer_path", model.model_path},
      {"is_generation", !ctx.engine->config().is_embedding},
      {"preferred_sampling_params", nullptr},
      {"weight_version", "default"},
      {"has_image_understanding", ctx.engine->image_counters().has_value()},
      {"has_audio_understanding", false},
      {"model_type", model.model_type},
      {"architectures", model.architectures},
      {"served_model_name", ctx.served_model_name},
      {"disaggregation_mode", ctx.config->disaggregation_mode},
      // radixlm's addition: the GGUF's chat template ("" when it has none) and architecture,
      // so a remote client renders chats as this server does without the model file.
      {"chat_template", model.chat_template},
      {"arch", model.arch},
      {"model_name", model.name},
      // Mixtures of experts: experts per layer and per token (0 when dense), and parameters
      // in all and those a token reads.
      {"num_experts", model.n_experts},
      {"num_experts_per_tok", model.n_experts_used},
      {"total_params", model.total_parameters},
      {"active_params", model.active_parameters},
  };
}

}  // namespace

json ServerInfoJson(const ServerContext& ctx, const EngineStats& stats) {
  const EngineConfig& ec = ctx.engine->config();
  const EngineSettings& sc = ctx.engine->settings();
  const SchedulerCounters& s = stats.scheduler;
  const int64_t tree_tokens = s.evictable_tokens + s.protected_tokens;
  json internal = {
      {"pool_size", s.pool_size},
      {"pool_free_tokens", s.pool_free},
      {"pool_used_tokens", s.pool_used},
      {"tree_tokens", tree_tokens},
      {"evictable_tokens", s.evictable_tokens},
      {"protected_tokens", s.protected_tokens},
      {"swa_pool_size", s.swa_pool_size},
      {"swa_pool_free_tokens", s.swa_pool_free},
      {"swa_evictable_tokens", s.swa_evictable_tokens},
      {"swa_protected_tokens", s.swa_protected_tokens},
      // Tree tokens whose windowed-layer KV was released (full-attention KV only).
      {"swa_tombstone_tokens", sc.swa_max_total_tokens > 0
                                   ? tree_tokens - s.swa_evictable_tokens - s.swa_protected_tokens
                                   : 0},
      // A hybrid model's linear-layer state snapshots in the tree (0 for other models).
      {"state_snapshots", s.state_snapshots},
      {"state_snapshot_capacity", s.state_snapshot_capacity},
      {"state_snapshots_protected", s.state_snapshots_protected},
      {"state_snapshot_bytes", s.state_snapshot_bytes},
      {"state_snapshots_taken", s.state_snapshots_taken},
      {"state_snapshot_resumes", s.state_snapshot_resumes},
      {"num_running_reqs", s.running_requests + s.prefilling_requests},
      {"num_waiting_reqs", s.waiting_requests},
      {"live_requests", stats.live_requests},
      {"open_sessions", stats.open_sessions},
      {"reclaimed_session_pins", s.reclaimed_session_pins},
      {"cache_hit_rate", stats.cache_hit_rate()},
      {"cache_hit_tokens", s.cache_hit_tokens},
      {"prefill_tokens", s.prefill_tokens},
      {"decode_tokens", s.decode_tokens},
      {"retractions", s.retractions},
      {"forward_passes", s.forward_passes},
      {"finished_requests", s.finished_requests},
      {"aborted_requests", s.aborted_requests},
      {"new_token_ratio", s.new_token_ratio},
      {"jump_forwards", s.jump_forwards},
      {"jump_forward_tokens", s.jump_forward_tokens},
      {"grammar_masks", s.grammar_masks},
      {"grammar_mask_seconds", s.grammar_mask_seconds},
      {"forward_seconds", s.forward_seconds},
      {"deferred_prefill_steps", s.deferred_prefill_steps},
      {"grammar_lookups", stats.grammar.lookups},
      {"grammar_compiles", stats.grammar.compiles},
      {"grammar_compile_seconds", stats.grammar.compile_seconds},
      {"grammar_cache_hit_rate", stats.grammar.hit_rate()},
      {"grammar_queue_requests", s.grammar_queue_requests},
      {"spec_verify_steps", s.spec_verify_steps},
      {"spec_draft_tokens", s.spec_drafted_tokens},
      {"spec_accepted_tokens", s.spec_accepted_tokens},
      {"avg_spec_accept_length", s.spec_accept_length()},
      {"paused", s.paused},
  };
  // The disk tier (HiCache): tokens per tier, hits per tier, bytes and bandwidth both ways.
  const HiCacheCounters& h = s.hicache;
  internal["hicache"] = {
      {"enabled", h.enabled},
      {"ram_tokens", tree_tokens},
      {"disk_tokens", h.disk_tokens},
      {"disk_bytes", h.disk_bytes},
      {"ram_hit_tokens", std::max<int64_t>(0, s.cache_hit_tokens - h.disk_hit_tokens)},
      {"disk_hit_tokens", h.disk_hit_tokens},
      {"blocks_loaded", h.blocks_loaded},
      {"bytes_loaded", h.bytes_loaded},
      {"load_seconds", h.load_seconds},
      {"load_bandwidth_bytes_per_s", h.load_bandwidth()},
      {"blocks_stored", h.blocks_stored},
      {"bytes_stored", h.bytes_stored},
      {"store_seconds", h.store_seconds},
      {"store_bandwidth_bytes_per_s", h.store_bandwidth()},
      {"load_failures", h.load_failures},
      {"write_failures", h.write_failures},
      {"writes_dropped", h.writes_dropped},
      {"files_evicted", h.files_evicted},
  };
  json info = {
      {"version", kServerVersion},
      {"model_path", ctx.model_info->model_path},
      {"tokenizer_path", ctx.model_info->model_path},
      {"served_model_name", ctx.served_model_name},
      {"host", ctx.config->host},
      {"port", ctx.config->port},
      {"schedule_policy", sc.schedule_policy},
      {"chunked_prefill_size", sc.chunked_prefill_size},
      {"max_prefill_tokens", sc.max_prefill_tokens},
      {"max_running_requests", sc.max_running_requests},
      {"page_size", sc.page_size},
      {"disable_radix_cache", sc.disable_radix_cache},
      {"disable_jump_forward", !sc.enable_jump_forward},
      {"speculative_algorithm",
       sc.speculative_algorithm.empty() ? json(nullptr) : json(sc.speculative_algorithm)},
      {"speculative_num_draft_tokens", sc.speculative_num_draft_tokens},
      {"defer_long_prefill", sc.defer_long_prefill_s},
      {"waiting_timeout", sc.waiting_timeout_s},
      {"running_timeout", sc.running_timeout_s},
      {"constrained_json_whitespace_pattern", ec.constrained_json_whitespace_pattern
                                                  ? json(*ec.constrained_json_whitespace_pattern)
                                                  : json(nullptr)},
      {"radix_eviction_policy", sc.radix_eviction_policy},
      {"context_length", ctx.engine->context_length()},
      {"allow_auto_truncate", ec.allow_auto_truncate},
      {"max_total_num_tokens", ctx.engine->max_total_tokens()},
      {"disable_hybrid_swa_memory", sc.swa_max_total_tokens == 0},
      {"swa_max_total_num_tokens", sc.swa_max_total_tokens},
      {"swa_full_tokens_ratio", ec.swa_full_tokens_ratio},
      {"max_mamba_cache_size", ec.max_mamba_cache_size},
      {"hybrid_snapshot_interval", ec.hybrid_snapshot_interval},
      {"linear_attn_prefill", ec.linear_attn_prefill},
      {"kv_cache_dtype", ec.kv_cache_dtype},
      {"kv_token_bytes", ctx.engine->kv_token_bytes()},
      {"sliding_window_size", sc.sliding_window},
      {"enable_hierarchical_cache", !sc.hicache_write_policy.empty()},
      {"hicache_storage_backend", sc.hicache_write_policy.empty() ? json(nullptr) : json("file")},
      {"hicache_write_policy",
       sc.hicache_write_policy.empty() ? json(nullptr) : json(sc.hicache_write_policy)},
      {"hicache_storage_dir",
       sc.hicache_write_policy.empty() ? json(nullptr) : json(sc.hicache_storage_dir)},
      {"hicache_storage_size_bytes", sc.hicache_storage_bytes},
      {"hicache_block_tokens", sc.hicache_block_tokens},
      {"max_total_tokens", ec.max_total_tokens > 0 ? json(ec.max_total_tokens) : json(nullptr)},
      // One process, one rank: what SGLang's gateway reads to size its data-parallel routing.
      {"tp_size", 1},
      {"pp_size", 1},
      {"dp_size", 1},
      {"disaggregation_mode", ctx.config->disaggregation_mode},
      {"is_embedding", false},
      {"weight_version", "default"},
      {"threads", ec.threads},
      {"incremental_streaming_output", ctx.config->incremental_streaming_output},
      {"api_key_set", !ctx.config->api_key.empty()},
      {"internal_states", json::array({internal})},
      // Resident bytes by kind (api.h's MemoryCounters).
      {"memory",
       {{"weights_bytes", stats.memory.weights_bytes},
        {"kv_pool_bytes", stats.memory.kv_pool_bytes},
        {"scratch_bytes", stats.memory.scratch_bytes},
        {"recurrent_state_bytes", stats.memory.recurrent_state_bytes},
        {"rss_bytes", stats.memory.rss_bytes}}},
  };
  // Flattened copies of the counters a client most often wants.
  for (const char* key : {"pool_size", "pool_free_tokens", "tree_tokens", "num_running_reqs",
                          "num_waiting_reqs", "cache_hit_rate"}) {
    info[key] = internal[key];
  }
  return info;
}

void AddOpsRoutes(const ServerContext& context, Router* router) {
  const ServerContext ctx = context;
  auto health = [ctx](const HttpRequest&) {
    if (ShuttingDown(ctx)) return HandlerResult::Respond(Unavailable());
    return HandlerResult::Respond(HttpResponse::Json(200, json{{"status", "ok"}}));
  };
  router->Add("GET", "/health", health, /*open=*/true);
  router->Add(
      "GET", "/health_generate", [ctx](const HttpRequest&) { return HealthGenerate(ctx); },
      /*open=*/true);
  auto model_info = [ctx](const HttpRequest&) {
    return HandlerResult::Respond(HttpResponse::Json(200, ModelInfoJson(ctx)));
  };
  router->Add("GET", "/model_info", model_info);
  router->Add("GET", "/get_model_info", model_info);
  auto server_info = [ctx](const HttpRequest&) {
    return HandlerResult::Blocking(
        [ctx] { return HttpResponse::Json(200, ServerInfoJson(ctx, ctx.engine->GetStats())); });
  };
  router->Add("GET", "/server_info", server_info);
  router->Add("GET", "/get_server_info", server_info);
  auto flush = [ctx](const HttpRequest&) {
    return HandlerResult::Blocking([ctx] {
      Status status = ctx.engine->FlushCache();
      if (!status.ok()) {
        return ErrorResponse(ApiError{400, "Cache not flushed: " + status.message(), ""});
      }
      return HttpResponse::Json(200, json{{"success", true}, {"message", "Cache flushed."}});
    });
  };
  router->Add("POST", "/flush_cache", flush);
  router->Add("GET", "/flush_cache", flush);
  auto clear_storage = [ctx](const HttpRequest&) {
    return HandlerResult::Blocking([ctx] {
      StatusOr<int64_t> cleared = ctx.engine->ClearHiCacheStorage();
      if (!cleared.ok()) {
        return ErrorResponse(ApiError{
            400, "Hierarchical cache storage backend not cleared: " + cleared.status().message(),
            ""});
      }
      return HttpResponse::Json(200,
                                json{{"success", true},
                                     {"message", "Hierarchical cache storage backend cleared."},
                                     {"blocks_deleted", *cleared}});
    });
  };
  router->Add("POST", "/clear_hicache_storage_backend", clear_storage);
  router->Add("GET", "/clear_hicache_storage_backend", clear_storage);
  router->Add("POST", "/hicache/storage-backend/clear", clear_storage);
  router->Add("POST", "/open_session",
              [ctx](const HttpRequest& request) { return OpenSession(ctx, request); });
  router->Add("POST", "/close_session",
              [ctx](const HttpRequest& request) { return CloseSession(ctx, request); });
  router->Add("POST", "/abort_request",
              [ctx](const HttpRequest& request) { return AbortRequest(ctx, request); });
  router->Add(
      "GET", "/metrics",
      [ctx](const HttpRequest&) {
        return HandlerResult::Blocking([ctx] {
          std::optional<KvTransferTotals> kv_transfer;
          if (ctx.config->kv_transfer_totals) kv_transfer = ctx.config->kv_transfer_totals();
          return HttpResponse::Text(
              200,
              ctx.metrics->Render(ctx.engine->GetStats(), ctx.served_model_name,
                                  kv_transfer ? &*kv_transfer : nullptr),
              "text/plain; version=0.0.4; charset=utf-8");
        });
      },
      /*open=*/true);
}

}  // namespace radixlm::server
