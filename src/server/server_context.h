// ServerContext: what the route handlers share. Owned by HttpServer; every pointer outlives the
// handlers. Handlers only call the Engine's thread-safe API.
#pragma once

#include <atomic>

#include "engine/engine.h"
#include "server/live_requests.h"
#include "server/metrics.h"
#include "server/model_info.h"
#include "server/server_config.h"

namespace radixlm::server {

class ChatRenderer;

struct ServerContext {
  Engine* engine = nullptr;
  ServerMetrics* metrics = nullptr;
  const ServerConfig* config = nullptr;
  const ModelInfo* model_info = nullptr;
  const ChatRenderer* chat = nullptr;  // null: chat_status says why chat is unavailable
  Status chat_status;
  std::atomic<bool>* shutting_down = nullptr;
  LiveRequests* live = nullptr;  // generation requests in flight (for abort_all)
};

}  // namespace radixlm::server
