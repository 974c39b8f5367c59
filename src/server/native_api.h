// SGLang's native generation route, POST /generate: parsing (native_request.h), submission, and
// the response shapes (one object, or a list for batches and n > 1; SSE events when streaming,
// cumulative by default, deltas with --incremental-streaming-output; "index" on list streams).
#pragma once

#include "server/router.h"
#include "server/server_context.h"

namespace radixlm::server {

void AddNativeGenerateRoutes(const ServerContext& context, Router* router);

}  // namespace radixlm::server
