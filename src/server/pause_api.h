// Pausing generation, as SGLang's routes of the same names:
//   POST /pause_generation     {"mode": "abort" | "retract" | "in_place"} (default "abort"; an
//                              empty body is the default) → {"message": "Generation paused
//                              successfully.", "status": "ok"}
//   POST /continue_generation  (body ignored) → {"message": "Generation continued
//                              successfully.", "status": "ok"}
// Both answer once the scheduler thread has applied them (Engine::PauseGeneration). An unknown
// mode, a mode that is not a string, or a body that is not a JSON object is a 400 naming it.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "engine/api.h"
#include "server/router.h"
#include "server/server_context.h"
#include "util/status.h"

namespace radixlm::server {

void AddPauseRoutes(const ServerContext& context, Router* router);

// The mode of a /pause_generation body (exposed for tests). InvalidArgument naming the
// problem.
StatusOr<PauseMode> ParsePauseMode(const nlohmann::json& body);

}  // namespace radixlm::server
