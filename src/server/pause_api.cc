#include "server/pause_api.h"

#include <nlohmann/json.hpp>

#include "engine/engine.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

HttpResponse Done(const char* message) {
  return HttpResponse::Json(200, json{{"message", message}, {"status", "ok"}});
}

}  // namespace

StatusOr<PauseMode> ParsePauseMode(const json& body) {
  if (!body.is_object()) return InvalidArgument("the request body must be a JSON object");
  auto it = body.find("mode");
  if (it == body.end() || it->is_null()) return PauseMode::kAbort;
  if (!it->is_string()) return InvalidArgument("'mode' must be a string");
  const std::string& mode = it->get_ref<const std::string&>();
  if (mode == "abort") return PauseMode::kAbort;
  if (mode == "retract") return PauseMode::kRetract;
  if (mode == "in_place") return PauseMode::kInPlace;
  return InvalidArgument("Invalid mode: '" + mode +
                         "'. Expected one of ['abort', 'retract', 'in_place'].");
}

void AddPauseRoutes(const ServerContext& context, Router* router) {
  const ServerContext ctx = context;
  router->Add("POST", "/pause_generation", [ctx](const HttpRequest& request) {
    PauseMode mode = PauseMode::kAbort;
    if (!request.body.empty()) {
      ApiError error;
      std::optional<json> body = ParseJsonBody(request, &error);
      if (!body.has_value()) return HandlerResult::Error(error);
      StatusOr<PauseMode> parsed = ParsePauseMode(*body);
      if (!parsed.ok()) return HandlerResult::Error(BadRequest(parsed.status().message(), "mode"));
      mode = *parsed;
    }
    return HandlerResult::Blocking([ctx, mode] {
      Status status = ctx.engine->PauseGeneration(mode);
      if (!status.ok()) return ErrorResponse(ApiErrorFromStatus(status));
      return Done("Generation paused successfully.");
    });
  });
  router->Add("POST", "/continue_generation", [ctx](const HttpRequest&) {
    return HandlerResult::Blocking([ctx] {
      Status status = ctx.engine->ContinueGeneration();
      if (!status.ok()) return ErrorResponse(ApiErrorFromStatus(status));
      return Done("Generation continued successfully.");
    });
  });
}

}  // namespace radixlm::server
