// Operational routes: GET /health, GET /health_generate (a 1-token generation), GET
// /model_info and /get_model_info, GET /server_info and /get_server_info (flags, pool and tree
// counts), POST /flush_cache, POST /abort_request {"rid"}, GET /metrics (Prometheus text).
#pragma once

#include "server/router.h"
#include "server/server_context.h"

namespace radixlm::server {

void AddOpsRoutes(const ServerContext& context, Router* router);

// The /get_server_info object for a stats snapshot (exposed for tests).
nlohmann::json ServerInfoJson(const ServerContext& context, const EngineStats& stats);

}  // namespace radixlm::server
