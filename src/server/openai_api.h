// OpenAI-compatible routes: POST /v1/completions, POST /v1/chat/completions, GET /v1/models
// (and GET /v1/models/{id}). Request parsing is in openai_request.h, response shapes in
// openai_response.h; this file submits to the engine.
#pragma once

#include "server/router.h"
#include "server/server_context.h"

namespace radixlm::server {

void AddOpenAiRoutes(const ServerContext& context, Router* router);

}  // namespace radixlm::server
