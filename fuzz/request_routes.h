// The request-decoding half of the server's JSON routes, for the HTTP and JSON fuzz targets:
// a Router whose POST /generate, /v1/completions and /v1/chat/completions handlers parse the
// body as the real handlers do (ParseJsonBody, then ParseNativeGenerate / ParseCompletionRequest
// / ParseChatRequest with the default ServerConfig) and answer 200 or the parser's error,
// without an engine behind them.
#pragma once

#include "server/router.h"
#include "server/server_config.h"

namespace radixlm::fuzz {

const server::ServerConfig& FuzzServerConfig();
const server::Router& DecodingRouter();

// Checks what every response must have: a status in 200..599 and, for an error, a JSON body of
// the ApiError shape. Aborts otherwise.
void CheckResponse(const server::HttpResponse& response);

}  // namespace radixlm::fuzz
