// Tool messages through a chat template.
//
// A template with tool syntax of its own (it reads `tools` and renders `tool_calls`) gets the
// request's `tools` as a variable and the messages as sent, except that each assistant tool
// call's `function.arguments` JSON string becomes an object (what Hugging Face templates
// expect: they write it with tojson).
//
// A template without tool syntax (Gemma-3's, the built-in ChatML) gets the messages rewritten
// into plain turns in the chosen format: the tools and how to call them are described in the
// system turn, an assistant's tool calls become its text (FormatToolCalls), and tool results
// become user turns naming the function (consecutive results share one turn, so templates
// that insist on alternating user / assistant roles accept them).
//
// The glm4 format with a template that handles tools (GLM-4's) gets GLM-4's shapes: `tools` as
// a variable, each call an assistant turn with `metadata` (the name) and the arguments as
// content, each result an `observation` turn.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "chat/tool_call_parser.h"
#include "util/status.h"

namespace radixlm::chat {

// Whether the template renders `tools` and tool calls itself (it mentions `tools` and
// `tool_call`, or GLM-4's `<|observation|>`).
bool TemplateHandlesTools(std::string_view template_source);
// Whether it reads an assistant turn's `tool_calls` (Granite 3.x's and SmolLM3's templates
// describe the tools but print only a turn's content).
bool TemplateRendersToolCalls(std::string_view template_source);

struct ToolPrompt {
  nlohmann::json messages;    // what to render
  nlohmann::json extra_vars;  // template variables beyond messages ({"tools": [...]} or {})
};

// `tools`: the request's tool list (null or empty: no tools are described, but tool messages
// are still rewritten). A template that handles tools but does not render tool calls
// (!template_renders_calls) gets each assistant turn's calls as its content, in `format`.
// InvalidArgument naming the message for malformed tool_calls.
StatusOr<ToolPrompt> PrepareToolPrompt(const nlohmann::json& messages, const nlohmann::json& tools,
                                       ToolCallFormat format, bool template_handles_tools,
                                       bool template_renders_calls = true);

}  // namespace radixlm::chat
