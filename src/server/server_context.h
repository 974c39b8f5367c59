// ServerContext: what the route handlers share. Owned by HttpServer; every pointer outlives the
// handlers. Handlers only call the Engine's thread-safe API.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "engine/engine.h"
#include "server/live_requests.h"
#include "server/metrics.h"
#include "server/server_config.h"

namespace radixlm::server {

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
  LiveRequests* live = nullptr;  // generation requests in flight (for abort_all)
};

}  // namespace radixlm::server
