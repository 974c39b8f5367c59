// LoRA on the HTTP server, as SGLang serves it: POST /load_lora_adapter {lora_name, lora_path}
// and POST /unload_lora_adapter {lora_name}, answered with SGLang's LoRAUpdateOutput
// ({"success", "error_message", "loaded_adapters": {name: path}}; 400 when success is false),
// the adapters' cards in /v1/models, and which adapter an OpenAI request names.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/router.h"
#include "server/server_context.h"
#include "util/status.h"

namespace radixlm::server {

void AddLoraRoutes(const ServerContext& context, Router* router);

// One /v1/models card per loaded adapter (SGLang's: id = the adapter's name, root = its path,
// parent = the served model); empty when LoRA is off.
std::vector<nlohmann::json> LoraModelCards(const ServerContext& ctx);

// The adapter an OpenAI request runs under, as SGLang resolves it: "model": "<base>:<adapter>"
// names the adapter (the served name itself may contain ':'), before an explicit lora_path;
// radixlm also takes "model": "<adapter>" for a loaded adapter's name (the id /v1/models lists).
// "": the base model.
std::string ResolveOpenAiLora(const ServerContext& ctx, const std::string& model,
                              const std::string& explicit_lora_path);

// SGLang's lora_path value for one prompt: null or "" (the base), or an adapter's name.
StatusOr<std::string> ReadLoraPath(const nlohmann::json& value);

}  // namespace radixlm::server
