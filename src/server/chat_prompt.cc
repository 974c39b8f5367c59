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

// A message's text: a string, or the text parts of a list joined; "" for null.
std::string MessageText(const json& message) {
  const json content = message.value("content", json());
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array()) {
    for (const json& part : content) {
      if (part.is_object() && part.value("type", "") == "text" && part.contains("text") &&
          part["text"].is_string()) {
        text += part["text"].get<std::string>();
      }
    }
  }
  return text;
}

// gpt-oss's harmony template reads an assistant turn's reasoning from `thinking` (and refuses
// a turn with tool calls that has both content and thinking): a client sends it back as
// `reasoning_content`, which is copied there, as llama.cpp does (its content dropped when the
// turn made calls).
void ReasoningAsThinking(json* messages) {
  if (!messages->is_array()) return;
  for (json& m : *messages) {
    if (!m.is_object() || m.value("role", json()) != "assistant" || m.contains("thinking")) {
      continue;
    }
    const auto reasoning = m.find("reasoning_content");
    if (reasoning == m.end() || !reasoning->is_string()) continue;
    m["thinking"] = *reasoning;
    const auto calls = m.find("tool_calls");
    if (calls != m.end() && calls->is_array() && !calls->empty()) m.erase("content");
  }
}

}  // namespace

StatusOr<ChatTemplateOptions> ReadChatTemplateOptions(const json& body) {
  ChatTemplateOptions options;
  if (auto it = body.find("chat_template_kwargs"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) {
      return InvalidArgument("chat_template_kwargs must be an object of template variables");
    }
    if (it->contains("messages")) {
      return InvalidArgument("chat_template_kwargs cannot set messages");
    }
    options.kwargs = *it;
  }
  if (auto it = body.find("continue_final_message"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) return InvalidArgument("continue_final_message must be a boolean");
    options.continue_final_message = it->get<bool>();
  }
  return options;
}

chat::ToolCallFormat ToolFormat(const ServerContext& ctx) {
  if (!ctx.config->tool_call_parser.empty()) {
    StatusOr<chat::ToolCallFormat> format =
        chat::ToolCallFormatFromName(ctx.config->tool_call_parser);
    if (format.ok()) return *format;  // HttpServer::Create validated the name
  }
  return chat::DetectToolCallFormat(ctx.chat->template_source());
}

StatusOr<std::string> RenderChatPrompt(const ServerContext& ctx, const json& messages,
                                       const ToolRequest& tools,
                                       const ChatTemplateOptions& options) {
  json turns = messages;
  // SGLang's assistant prefix: the final assistant message leaves the list and follows the
  // generation prompt as text.
  std::string assistant_prefix;
  if (options.continue_final_message && turns.is_array() && !turns.empty() &&
      turns.back().is_object() && turns.back().value("role", json()) == "assistant") {
    assistant_prefix = MessageText(turns.back());
    turns.erase(turns.size() - 1);
  }
  if (ctx.chat->template_source().find("message.thinking") != std::string_view::npos) {
    ReasoningAsThinking(&turns);
  }
  json rendered_messages = turns;
  json extra_vars = options.kwargs;
  if (tools.active() || HasToolHistory(turns)) {
    RADIXLM_ASSIGN_OR_RETURN(
        chat::ToolPrompt prepared,
        chat::PrepareToolPrompt(turns, tools.active() ? tools.tools : json(nullptr),
                                ToolFormat(ctx),
                                chat::TemplateHandlesTools(ctx.chat->template_source()),
                                chat::TemplateRendersToolCalls(ctx.chat->template_source())));
    rendered_messages = std::move(prepared.messages);
    extra_vars.update(prepared.extra_vars);  // the request's tools win over a kwarg of theirs
  }
  StatusOr<std::string> prompt = ctx.chat->RenderPrompt(rendered_messages, extra_vars);
  if (!prompt.ok()) {
    return Status(prompt.status().code(), "chat template: " + prompt.status().message());
  }
  return *prompt + assistant_prefix;
}

}  // namespace radixlm::server
