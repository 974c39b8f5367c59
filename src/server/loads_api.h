// GET /v1/loads: SGLang's load report, which SGLang's model gateway (smg) polls for its
// load-aware policies (load_report.h says what each field means). Query parameters as SGLang's:
// include (comma-separated sections; default all), dp_rank (only 0 exists), format (json |
// prometheus). Bad values are 400 naming the parameter.
#pragma once

#include "server/router.h"
#include "server/server_context.h"

namespace radixlm::server {

void AddLoadsRoutes(const ServerContext& context, Router* router);

}  // namespace radixlm::server
