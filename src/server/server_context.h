// ServerContext: what the route handlers share. Owned by HttpServer; every pointer outlives the
// handlers. Handlers only call the Engine's thread-safe API.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "engine/engine.h"
#include "server/grammar_check_memo.h"
#include "server/live_requests.h"
#include "server/load_report.h"
#include "server/metrics.h"
#include "server/server_config.h"

namespace radixlm::server {

// The server's version in /server_info and /v1/loads.
inline constexpr char kServerVersion[] = "0.1.0";

struct ServerContext {
  Engine* engine = nullptr;
  ServerMetrics* metrics = nullptr;
  const ServerConfig* config = nullptr;
  const ModelInfo* model_info = nullptr;     // the engine's (Engine::assets())
  std::string served_model_name;             // the "model" the OpenAI routes report
  int64_t created_unix_s = 0;                // server start, for /v1/models
  const chat::ChatRenderer* chat = nullptr;  // the engine's; null: chat_status says why
  Status chat_status;
  std::atomic<bool>* shutting_down = nullptr;
  LiveRequests* live = nullptr;         // generation requests in flight (for abort_all)
  LoadRateMeter* load_rates = nullptr;  // gen_throughput / utilization of /v1/loads
  GrammarCheckMemo* grammar_checks = nullptr;  // tool-call grammars known to build (or not)
};

}  // namespace radixlm::server
