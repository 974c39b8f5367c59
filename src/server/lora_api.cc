#include "server/lora_api.h"

#include <optional>

#include "engine/engine.h"
#include "engine/lora_registry.h"
#include "server/api_error.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

json LoadedAdapters(const LoraRegistry& registry) {
  json loaded = json::object();
  for (const LoraAdapterInfo& a : registry.List()) loaded[a.name] = a.path;
  return loaded;
}

HttpResponse UpdateOutput(const LoraRegistry* registry, const Status& status) {
  json out{{"success", status.ok()},
           {"error_message", status.ok() ? json(nullptr) : json(status.message())},
           {"loaded_adapters", registry != nullptr ? LoadedAdapters(*registry) : json(nullptr)}};
  return HttpResponse::Json(status.ok() ? 200 : 400, out);
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// The body's string field `name`, or an error naming it.
StatusOr<std::string> StringField(const json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    return InvalidArgument(std::string(name) + " (a non-empty string) is required");
  }
  return it->get<std::string>();
}

HandlerResult Update(const ServerContext& ctx, const HttpRequest& request, bool load) {
  ApiError error;
  std::optional<json> body = ParseJsonBody(request, &error);
  if (!body.has_value()) return HandlerResult::Error(error);
  if (!body->is_object()) {
    return HandlerResult::Error(BadRequest("the request body must be a JSON object"));
  }
  LoraRegistry* registry = ctx.engine->lora();
  if (registry == nullptr) {
    return HandlerResult::Respond(
        UpdateOutput(nullptr, InvalidArgument("LoRA is not enabled on this server (start it with "
                                              "--enable-lora or --lora-paths)")));
  }
  StatusOr<std::string> name = StringField(*body, "lora_name");
  if (!name.ok()) return HandlerResult::Respond(UpdateOutput(registry, name.status()));
  if (!load) return HandlerResult::Respond(UpdateOutput(registry, registry->Unload(*name)));
  StatusOr<std::string> path = StringField(*body, "lora_path");
  if (!path.ok()) return HandlerResult::Respond(UpdateOutput(registry, path.status()));
  return HandlerResult::Respond(UpdateOutput(registry, registry->Load(*name, *path)));
}

}  // namespace

void AddLoraRoutes(const ServerContext& context, Router* router) {
  const ServerContext ctx = context;
  router->Add("POST", "/load_lora_adapter",
              [ctx](const HttpRequest& request) { return Update(ctx, request, true); });
  router->Add("POST", "/unload_lora_adapter",
              [ctx](const HttpRequest& request) { return Update(ctx, request, false); });
}

std::vector<json> LoraModelCards(const ServerContext& ctx) {
  std::vector<json> cards;
  const LoraRegistry* registry = ctx.engine->lora();
  if (registry == nullptr) return cards;
  for (const LoraAdapterInfo& a : registry->List()) {
    cards.push_back(json{{"id", a.name},
                         {"object", "model"},
                         {"created", ctx.created_unix_s},
                         {"owned_by", "radixlm"},
                         {"root", a.path},
                         {"parent", ctx.served_model_name},
                         {"max_model_len", nullptr}});
  }
  return cards;
}

std::string ResolveOpenAiLora(const ServerContext& ctx, const std::string& model,
                              const std::string& explicit_lora_path) {
  const std::string& served = ctx.served_model_name;
  if (model.find(':') != std::string::npos && model != served) {
    const std::string adapter = model.starts_with(served + ":") ? model.substr(served.size() + 1)
                                                                : model.substr(model.find(':') + 1);
    if (!Trim(adapter).empty()) return Trim(adapter);
  }
  if (!model.empty() && model != served && ctx.engine->lora() != nullptr &&
      ctx.engine->lora()->Resolve(model).ok()) {
    return model;
  }
  return explicit_lora_path;
}

StatusOr<std::string> ReadLoraPath(const json& value) {
  if (value.is_null()) return std::string();
  if (!value.is_string()) {
    return InvalidArgument(
        "lora_path must be a string (an adapter's name), null, or a list of "
        "them, one per prompt");
  }
  return value.get<std::string>();
}

}  // namespace radixlm::server
