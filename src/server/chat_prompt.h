// The prompt text a chat request's messages become: tool history rewritten for the chat
// template (chat/tool_prompt.h), the offered tools described or passed as a template variable,
// then the template rendered. /v1/chat/completions and /tokenize's `messages` both render
// through here, so /tokenize counts exactly the tokens a chat completion sends the model.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "chat/tool_call_parser.h"
#include "server/openai_tools.h"
#include "server/server_context.h"
#include "util/status.h"

namespace radixlm::server {

// --tool-call-parser, or the format the chat template's tool syntax shows. Needs ctx.chat.
chat::ToolCallFormat ToolFormat(const ServerContext& ctx);

// What a chat request asks of the template itself (SGLang's and vLLM's fields):
// chat_template_kwargs, more template variables (e.g. {"enable_thinking": false} for Qwen3),
// and continue_final_message: when the last message is the assistant's, the prompt ends with
// the opening of the assistant's turn followed by that message's text, which the reply
// continues (SGLang's assistant prefix); otherwise it changes nothing.
struct ChatTemplateOptions {
  nlohmann::json kwargs = nlohmann::json::object();
  bool continue_final_message = false;
};

// The two fields of a chat (or /tokenize) body. InvalidArgument when chat_template_kwargs is
// not an object or names `messages`, or continue_final_message is not a boolean.
StatusOr<ChatTemplateOptions> ReadChatTemplateOptions(const nlohmann::json& body);

// `messages` as sent (a JSON list) and the request's tools (inactive: none described, tool
// messages still rewritten). Needs ctx.chat. InvalidArgument for malformed tool calls or a
// template error (its message prefixed "chat template: ").
StatusOr<std::string> RenderChatPrompt(const ServerContext& ctx, const nlohmann::json& messages,
                                       const ToolRequest& tools,
                                       const ChatTemplateOptions& options = {});

}  // namespace radixlm::server
