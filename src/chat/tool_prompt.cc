#include "chat/tool_prompt.h"

#include <map>
#include <string>
#include <vector>

namespace radixlm::chat {
namespace {

using json = nlohmann::json;

std::string FormatExample(ToolCallFormat format) {
  return FormatToolCalls(format, {{"function_name", R"({"argument": "value"})"}});
}

std::string ToolInstructions(const json& tools, ToolCallFormat format) {
  std::string text = "You can call the following functions:\n";
  for (const json& tool : tools) {
    const json& fn = tool.contains("function") ? tool["function"] : tool;
    text += fn.dump() + "\n";
  }
  text += "\nTo call a function, reply with only this, and nothing else:\n" +
          FormatExample(format) +
          "\nwith the function's name and its arguments as JSON. Otherwise, answer normally.";
  return text;
}

std::string ContentText(const json& message) {
  auto it = message.find("content");
  if (it == message.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  std::string text;
  if (it->is_array()) {
    for (const json& part : *it) {
      if (part.is_object() && part.value("type", "") == "text" && part.contains("text") &&
          part["text"].is_string()) {
        text += part["text"].get<std::string>();
      }
    }
  }
  return text;
}

// An assistant message's calls; InvalidArgument naming the field when malformed.
StatusOr<std::vector<ToolCall>> ReadCalls(const json& message, const std::string& name,
                                          std::map<std::string, std::string>* names_by_id) {
  std::vector<ToolCall> calls;
  const json& list = message["tool_calls"];
  if (!list.is_array()) return InvalidArgument(name + ".tool_calls must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string field = name + ".tool_calls[" + std::to_string(i) + "]";
    const json& call = list[i];
    if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) {
      return InvalidArgument(field + " must be an object with a function");
    }
    const json& fn = call["function"];
    if (!fn.contains("name") || !fn["name"].is_string()) {
      return InvalidArgument(field + ".function.name must be a string");
    }
    ToolCall out;
    out.name = fn["name"].get<std::string>();
    if (fn.contains("arguments")) {
      const json& args = fn["arguments"];
      if (args.is_string()) {
        out.arguments = args.get<std::string>();
      } else if (args.is_object()) {
        out.arguments = args.dump();
      } else if (!args.is_null()) {
        return InvalidArgument(field + ".function.arguments must be a JSON string");
      }
    }
    if (call.contains("id") && call["id"].is_string()) {
      (*names_by_id)[call["id"].get<std::string>()] = out.name;
    }
    calls.push_back(std::move(out));
  }
  return calls;
}

StatusOr<ToolPrompt> ForTemplateWithTools(const json& messages, const json& tools,
                                          ToolCallFormat format, bool renders_calls) {
  ToolPrompt out;
  out.messages = messages;
  std::map<std::string, std::string> names_by_id;
  for (size_t i = 0; i < out.messages.size(); ++i) {
    json& m = out.messages[i];
    if (!m.is_object() || !m.contains("tool_calls") || !m["tool_calls"].is_array()) continue;
    if (!renders_calls) {
      // The template describes the tools but prints only an assistant turn's content (Granite
      // 3.x's, SmolLM3's): the calls become that content, written as the model writes them.
      RADIXLM_ASSIGN_OR_RETURN(std::vector<ToolCall> calls,
                               ReadCalls(m, "messages[" + std::to_string(i) + "]", &names_by_id));
      std::string text = ContentText(m);
      if (!calls.empty()) text += (text.empty() ? "" : "\n") + FormatToolCalls(format, calls);
      m = json{{"role", "assistant"}, {"content", text}};
      continue;
    }
    for (json& call : m["tool_calls"]) {
      if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) {
        return InvalidArgument("messages[" + std::to_string(i) +
                               "].tool_calls entries must be objects with a function");
      }
      json& fn = call["function"];
      if (fn.contains("arguments") && fn["arguments"].is_string()) {
        json parsed = json::parse(fn["arguments"].get<std::string>(), nullptr, false);
        if (!parsed.is_discarded()) fn["arguments"] = std::move(parsed);
      }
    }
  }
  out.extra_vars = json::object();
  if (tools.is_array() && !tools.empty()) out.extra_vars["tools"] = tools;
  return out;
}

// GLM-4's templates render `tools` themselves and take a call as an assistant turn whose
// `metadata` is the function's name and whose content is the arguments, a result as an
// `observation` turn.
StatusOr<ToolPrompt> ForGlm4Template(const json& messages, const json& tools) {
  ToolPrompt out;
  out.messages = json::array();
  out.extra_vars = json::object();
  std::map<std::string, std::string> names_by_id;
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    const std::string role = m.value("role", "");
    if (role == "tool" || role == "function") {
      out.messages.push_back({{"role", "observation"}, {"content", ContentText(m)}});
      continue;
    }
    if (role == "assistant" && m.contains("tool_calls") && !m["tool_calls"].is_null()) {
      RADIXLM_ASSIGN_OR_RETURN(std::vector<ToolCall> calls,
                               ReadCalls(m, "messages[" + std::to_string(i) + "]", &names_by_id));
      const std::string text = ContentText(m);
      if (!text.empty() || calls.empty()) {
        out.messages.push_back({{"role", "assistant"}, {"content", text}});
      }
      for (const ToolCall& call : calls) {
        out.messages.push_back(
            {{"role", "assistant"},
             {"metadata", call.name},
             {"content", call.arguments.empty() ? std::string("{}") : call.arguments}});
      }
      continue;
    }
    json copy = m;
    if (copy.contains("content") && copy["content"].is_null()) copy["content"] = "";
    out.messages.push_back(std::move(copy));
  }
  if (tools.is_array() && !tools.empty()) out.extra_vars["tools"] = tools;
  return out;
}

StatusOr<ToolPrompt> Rewritten(const json& messages, const json& tools, ToolCallFormat format) {
  ToolPrompt out;
  out.messages = json::array();
  out.extra_vars = json::object();
  std::map<std::string, std::string> names_by_id;
  bool last_was_tool = false;
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    const std::string name = "messages[" + std::to_string(i) + "]";
    const std::string role = m.value("role", "");
    if (role == "tool" || role == "function") {
      std::string fn_name = m.value("name", "");
      if (fn_name.empty() && m.contains("tool_call_id") && m["tool_call_id"].is_string()) {
        auto it = names_by_id.find(m["tool_call_id"].get<std::string>());
        if (it != names_by_id.end()) fn_name = it->second;
      }
      const std::string text = "Result of " +
                               (fn_name.empty() ? std::string("the function") : fn_name) + ": " +
                               ContentText(m);
      if (last_was_tool) {
        json& prev = out.messages.back();
        prev["content"] = prev["content"].get<std::string>() + "\n" + text;
      } else {
        out.messages.push_back({{"role", "user"}, {"content", text}});
      }
      last_was_tool = true;
      continue;
    }
    last_was_tool = false;
    if (role == "assistant" && m.contains("tool_calls") && !m["tool_calls"].is_null()) {
      RADIXLM_ASSIGN_OR_RETURN(std::vector<ToolCall> calls, ReadCalls(m, name, &names_by_id));
      std::string text = ContentText(m);
      if (!calls.empty()) text += (text.empty() ? "" : "\n") + FormatToolCalls(format, calls);
      out.messages.push_back({{"role", "assistant"}, {"content", text}});
      continue;
    }
    json copy = m;
    if (copy.contains("content") && copy["content"].is_null()) copy["content"] = "";
    out.messages.push_back(std::move(copy));
  }
  if (tools.is_array() && !tools.empty()) {
    const std::string instructions = ToolInstructions(tools, format);
    if (!out.messages.empty() && out.messages[0].value("role", "") == "system") {
      json& system = out.messages[0];
      system["content"] = ContentText(system) + "\n\n" + instructions;
    } else {
      out.messages.insert(out.messages.begin(),
                          json{{"role", "system"}, {"content", instructions}});
    }
  }
  return out;
}

}  // namespace

bool TemplateHandlesTools(std::string_view source) {
  return source.find("tools") != std::string_view::npos &&
         (source.find("tool_call") != std::string_view::npos ||
          source.find("<|observation|>") != std::string_view::npos);
}

bool TemplateRendersToolCalls(std::string_view source) {
  return source.find("tool_calls") != std::string_view::npos;
}

StatusOr<ToolPrompt> PrepareToolPrompt(const json& messages, const json& tools,
                                       ToolCallFormat format, bool template_handles_tools,
                                       bool template_renders_calls) {
  if (!messages.is_array()) return InvalidArgument("messages must be a list");
  if (format == ToolCallFormat::kGlm4 && template_handles_tools) {
    return ForGlm4Template(messages, tools);
  }
  if (template_handles_tools) {
    return ForTemplateWithTools(messages, tools, format, template_renders_calls);
  }
  return Rewritten(messages, tools, format);
}

}  // namespace radixlm::chat
