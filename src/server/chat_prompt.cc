#include "server/chat_prompt.h"

#include "chat/chat_renderer.h"
#include "chat/tool_prompt.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

// Whether the messages hold tool calls or tool results (they need rewriting for templates
// without tool syntax even when the request offers no tools).
bool HasToolHistory(const json& messages) {
  for (const json& m : messages) {
    if (!m.is_object()) continue;
    const json role = m.value("role", json());
    if (role == "tool" || role == "function") return true;
    if (m.contains("tool_calls") && !m["tool_calls"].is_null()) return true;
  }
  return false;
}

}  // namespace

chat::ToolCallFormat ToolFormat(const ServerContext& ctx) {
  if (!ctx.config->tool_call_parser.empty()) {
    StatusOr<chat::ToolCallFormat> format =
        chat::ToolCallFormatFromName(ctx.config->tool_call_parser);
    if (format.ok()) return *format;  // HttpServer::Create validated the name
  }
  return chat::DetectToolCallFormat(ctx.chat->template_source());
}

StatusOr<std::string> RenderChatPrompt(const ServerContext& ctx, const json& messages,
                                       const ToolRequest& tools) {
  json rendered_messages = messages;
  json extra_vars = json::object();
  if (tools.active() || HasToolHistory(messages)) {
    RADIXLM_ASSIGN_OR_RETURN(
        chat::ToolPrompt prepared,
        chat::PrepareToolPrompt(messages, tools.active() ? tools.tools : json(nullptr),
                                ToolFormat(ctx),
                                chat::TemplateHandlesTools(ctx.chat->template_source())));
    rendered_messages = std::move(prepared.messages);
    extra_vars = std::move(prepared.extra_vars);
  }
  StatusOr<std::string> prompt = ctx.chat->RenderPrompt(rendered_messages, extra_vars);
  if (!prompt.ok()) {
    return Status(prompt.status().code(), "chat template: " + prompt.status().message());
  }
  return prompt;
}

}  // namespace radixlm::server
