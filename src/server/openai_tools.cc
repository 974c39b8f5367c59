#include "server/openai_tools.h"

#include <algorithm>

#include "grammar/compiled_grammar.h"
#include "grammar/json_patterns.h"
#include "grammar/structural_tag.h"
#include "server/gemma4_call_regex.h"
#include "server/json_fields.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;
namespace jp = grammar::json_patterns;

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

Status ReadTools(const json& tools, ToolRequest* r) {
  if (!tools.is_array()) return WrongType("tools", "a list of tools", tools);
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string field = "tools[" + std::to_string(i) + "]";
    const json& tool = tools[i];
    if (!tool.is_object()) return WrongType(field, "an object", tool);
    const json* type = FindField(tool, "type");
    if (type == nullptr || *type != "function") {
      return InvalidArgument(field + ".type must be \"function\"");
    }
    const json* fn = FindField(tool, "function");
    if (fn == nullptr || !fn->is_object()) {
      return InvalidArgument(field + ".function must be an object");
    }
    const json* name = FindField(*fn, "name");
    if (name == nullptr || !name->is_string() || !ValidName(name->get<std::string>())) {
      return InvalidArgument(field + ".function.name must be 1 to 64 letters, digits, '_' or '-'");
    }
    ToolFunction f;
    f.name = name->get<std::string>();
    for (const ToolFunction& other : r->functions) {
      if (other.name == f.name) return InvalidArgument(field + ": duplicate function " + f.name);
    }
    if (const json* params = FindField(*fn, "parameters"); params != nullptr) {
      if (!params->is_object())
        return WrongType(field + ".function.parameters", "a JSON schema object", *params);
      f.parameters = *params;
    }
    r->functions.push_back(std::move(f));
  }
  r->tools = tools;
  return Status::Ok();
}

Status ReadToolChoice(const json& choice, ToolRequest* r) {
  if (choice.is_string()) {
    const std::string s = choice.get<std::string>();
    if (s == "none")
      r->choice = ToolChoice::kNone;
    else if (s == "auto")
      r->choice = ToolChoice::kAuto;
    else if (s == "required")
      r->choice = ToolChoice::kRequired;
    else
      return InvalidArgument("tool_choice must be none, auto, required or a function, got \"" + s +
                             "\"");
    return Status::Ok();
  }
  if (!choice.is_object()) return WrongType("tool_choice", "a string or an object", choice);
  const json* fn = FindField(choice, "function");
  const json* name = fn != nullptr && fn->is_object() ? FindField(*fn, "name") : nullptr;
  if (name == nullptr || !name->is_string()) {
    return InvalidArgument(
        "tool_choice must be {\"type\": \"function\", \"function\": {\"name\": ...}}");
  }
  r->choice = ToolChoice::kNamed;
  r->named = name->get<std::string>();
  return Status::Ok();
}

// The header of a harmony call message (as gpt-oss writes it, and as llama.cpp's grammar for it
// reads it with the recipient in the channel header); the arguments object follows.
std::string HarmonyCallHeader(std::string_view name) {
  return "<|channel|>commentary to=functions." + std::string(name) +
         " <|constrain|>json<|message|>";
}

// Harmony messages that may precede a forced call: "<|channel|>analysis<|message|>" (or a
// "commentary" preamble) + a body + "<|end|><|start|>assistant". A body is any text in which no
// "<|e" occurs (so that it cannot run past its <|end|>; llama.cpp's older harmony grammar bounds
// it the same way).
std::string HarmonyMessagesBeforeCall() {
  return "(?:<\\|channel\\|>(?:analysis|commentary)<\\|message\\|>"
         "(?:[^<]|<[^|]|<\\|[^e])*<\\|end\\|><\\|start\\|>assistant)*";
}

std::string CallRegex(const ToolFunction& f, chat::ToolCallFormat format,
                      const std::string& params_regex) {
  // GLM-4 writes the name on a line of its own, then the arguments object.
  if (format == chat::ToolCallFormat::kGlm4) {
    return jp::EscapeRegex(f.name) + "\\n(?:" + params_regex + ")";
  }
  // Gemma 4: the name, then its own dict syntax (params_regex is Gemma4ArgsRegex's).
  if (format == chat::ToolCallFormat::kGemma4) return jp::EscapeRegex(f.name) + params_regex;
  // gpt-oss: a commentary message to the function whose body is the arguments object.
  if (format == chat::ToolCallFormat::kGptOss) {
    return jp::EscapeRegex(HarmonyCallHeader(f.name)) + "(?:" + params_regex + ")";
  }
  const char* key = format == chat::ToolCallFormat::kLlama3 ? "parameters" : "arguments";
  return jp::EscapeRegex("{\"name\": " + json(f.name).dump() + ", \"" + key + "\": ") +
         "(?:" + params_regex + ")\\}";
}

}  // namespace

std::vector<std::string> ToolRequest::names() const {
  std::vector<std::string> out;
  for (const ToolFunction& f : functions) out.push_back(f.name);
  return out;
}

StatusOr<ToolRequest> ParseToolRequest(const json& body) {
  ToolRequest r;
  const json* tools = FindField(body, "tools");
  if (tools != nullptr) RADIXLM_RETURN_IF_ERROR(ReadTools(*tools, &r));
  // The legacy fields answer with message.function_call, which radixlm does not write.
  if (IsFieldSet(body, "functions")) {
    return Unimplemented("functions (the deprecated form of tools) is not supported; use tools");
  }
  if (IsFieldSet(body, "function_call")) {
    return Unimplemented(
        "function_call (the deprecated form of tool_choice) is not supported; use tool_choice");
  }
  if (const json* choice = FindField(body, "tool_choice"); choice != nullptr) {
    RADIXLM_RETURN_IF_ERROR(ReadToolChoice(*choice, &r));
    if (r.forced() && r.functions.empty()) {
      return InvalidArgument("tool_choice requires tools");
    }
  }
  if (r.choice == ToolChoice::kNamed) {
    const std::vector<std::string> names = r.names();
    if (std::find(names.begin(), names.end(), r.named) == names.end()) {
      return InvalidArgument("tool_choice names function \"" + r.named +
                             "\", which is not among the tools");
    }
  }
  RADIXLM_RETURN_IF_ERROR(ReadBool(body, "parallel_tool_calls", &r.parallel));
  return r;
}

namespace {

// The regex of ForcedToolCallRegex, before its automaton is checked.
StatusOr<std::string> ForcedToolCallPattern(const ToolRequest& request, chat::ToolCallFormat format,
                                            const grammar::JsonSchemaOptions& options) {
  std::string one;  // any one allowed call
  for (const ToolFunction& f : request.functions) {
    if (request.choice == ToolChoice::kNamed && f.name != request.named) continue;
    std::string params = "\\{\\}";
    if (format == chat::ToolCallFormat::kGemma4) {
      params = Gemma4ArgsRegex(f.parameters);
    } else if (!f.parameters.is_null()) {
      StatusOr<std::string> regex = grammar::JsonSchemaToRegex(f.parameters.dump(), options);
      if (!regex.ok()) {
        return InvalidArgument("tools: the parameters of function " + f.name + ": " +
                               regex.status().message());
      }
      params = *regex;
    }
    if (!one.empty()) one += "|";
    one += CallRegex(f, format, params);
  }
  one = "(?:" + one + ")";
  // One call. A small model offered "one or more" keeps adding calls until max_tokens, and a
  // bounded count would copy the alternation once per call (large tool lists then overflow
  // the DFA's cap), so forced decoding makes exactly one call.
  switch (format) {
    case chat::ToolCallFormat::kQwen25:
      return "<tool_call>\\n" + one + "\\n</tool_call>";
    case chat::ToolCallFormat::kLlama3:
    case chat::ToolCallFormat::kJson:
      return one;
    case chat::ToolCallFormat::kMistral:
      return "\\[TOOL_CALLS\\] \\[" + one + "\\]";
    case chat::ToolCallFormat::kGranite:
      return "<\\|tool_call\\|>\\[" + one + "\\]";
    case chat::ToolCallFormat::kPhi4Mini:
      return "functools\\[" + one + "\\]";
    case chat::ToolCallFormat::kGlm4:
      return one;
    case chat::ToolCallFormat::kGemma4:
      return "<\\|tool_call>call:" + one + "<tool_call\\|>";
    case chat::ToolCallFormat::kGptOss:
      // Before the call, any number of analysis (reasoning) or preamble messages, each closed
      // by <|end|> and a new assistant message, as llama.cpp's grammar for a required call
      // allows; the model ends the generation with <|call|> after the call.
      return HarmonyMessagesBeforeCall() + one;
  }
  return one;
}

}  // namespace

StatusOr<std::string> ForcedToolCallRegex(const ToolRequest& request, chat::ToolCallFormat format,
                                          const grammar::CompileOptions& options,
                                          GrammarCheckMemo* memo) {
  RADIXLM_ASSIGN_OR_RETURN(std::string regex, ForcedToolCallPattern(request, format, options.json));
  // The automaton (not the token masks) is built here so that one over the state cap is a 400
  // before the request is submitted, never an abort of the request after it (as the engine's
  // compilation on its pool would end it).
  auto build = [&] { return grammar::CompileRegex(regex, options).status(); };
  if (const Status built = memo ? memo->Check("regex\n" + regex, build) : build(); !built.ok()) {
    return InvalidArgument("tool_choice: the grammar of the calls it allows cannot be built (" +
                           built.message() + "); offer fewer or simpler functions");
  }
  return regex;
}

std::optional<std::string> AutoToolCallConstraint(const ToolRequest& request,
                                                  chat::ToolCallFormat format,
                                                  const grammar::CompileOptions& options,
                                                  GrammarCheckMemo* memo) {
  if (AutoToolCallTrigger(format).empty()) return std::nullopt;
  std::string tag = AutoToolCallStructuralTag(request, format);
  auto build = [&] {
    StatusOr<grammar::StructuralTagSpec> spec = grammar::ParseStructuralTag(tag, options);
    return spec.ok() ? grammar::BuildStructuralTagDfa(*spec, options).status() : spec.status();
  };
  if (!(memo ? memo->Check("structural_tag\n" + tag, build) : build()).ok()) return std::nullopt;
  return tag;
}

std::string AutoToolCallTrigger(chat::ToolCallFormat format) {
  switch (format) {
    case chat::ToolCallFormat::kQwen25:
      return "<tool_call>";
    case chat::ToolCallFormat::kLlama3:
    case chat::ToolCallFormat::kJson:
      return "{\"name\":";
    case chat::ToolCallFormat::kMistral:
      return "[TOOL_CALLS]";
    case chat::ToolCallFormat::kGranite:
      return "<|tool_call|>";
    case chat::ToolCallFormat::kPhi4Mini:
      return "functools[";
    case chat::ToolCallFormat::kGlm4:
      return "";  // a call opens with the function's name: no text announces it
    case chat::ToolCallFormat::kGemma4:
      return "<|tool_call>call:";
    case chat::ToolCallFormat::kGptOss:
      return "<|channel|>commentary to=";
  }
  return "";
}

std::string AutoToolCallStructuralTag(const ToolRequest& request, chat::ToolCallFormat format) {
  // Each call is written as in ForcedToolCallRegex; the trigger is where the parser sees a
  // call begin.
  const std::string trigger = AutoToolCallTrigger(format);
  std::string before;  // the begin text up to the call object
  std::string after;   // the end text after the call object's closing brace
  switch (format) {
    case chat::ToolCallFormat::kQwen25:
      before = "<tool_call>\n";
      after = "}\n</tool_call>";
      break;
    case chat::ToolCallFormat::kLlama3:
    case chat::ToolCallFormat::kJson:
      after = "}";
      break;
    case chat::ToolCallFormat::kMistral:
      before = "[TOOL_CALLS] [";
      after = "}]";
      break;
    case chat::ToolCallFormat::kGranite:
      before = "<|tool_call|>[";
      after = "}]";
      break;
    case chat::ToolCallFormat::kPhi4Mini:
      before = "functools[";
      after = "}]";
      break;
    case chat::ToolCallFormat::kGlm4:
    case chat::ToolCallFormat::kGemma4:
    case chat::ToolCallFormat::kGptOss:
      break;  // glm4: no trigger (AutoToolCallConstraint builds none); gemma4, gpt-oss: below
  }
  const char* key = format == chat::ToolCallFormat::kLlama3 ? "parameters" : "arguments";
  json tags = json::array();
  for (const ToolFunction& f : request.functions) {
    if (format == chat::ToolCallFormat::kGemma4) {
      // The name, then the arguments in Gemma 4's own syntax (the regex forced calls use).
      tags.push_back({{"type", "tag"},
                      {"begin", trigger + f.name},
                      {"content", {{"type", "regex"}, {"pattern", Gemma4ArgsRegex(f.parameters)}}},
                      {"end", "<tool_call|>"}});
      continue;
    }
    if (format == chat::ToolCallFormat::kGptOss) {
      // The call's header, then its arguments; <|call|> (a control token, which grammars never
      // write) ends the generation after it.
      tags.push_back(
          {{"type", "tag"},
           {"begin", HarmonyCallHeader(f.name)},
           {"content", f.parameters.is_null()
                           ? json{{"type", "const_string"}, {"value", "{}"}}
                           : json{{"type", "json_schema"}, {"json_schema", f.parameters}}},
           {"end", ""}});
      continue;
    }
    json content = f.parameters.is_null()
                       ? json{{"type", "const_string"}, {"value", "{}"}}
                       : json{{"type", "json_schema"}, {"json_schema", f.parameters}};
    tags.push_back({{"type", "tag"},
                    {"begin", before + "{\"name\": " + json(f.name).dump() + ", \"" + key + "\": "},
                    {"content", std::move(content)},
                    {"end", after}});
  }
  json tag = {{"type", "structural_tag"},
              {"format",
               {{"type", "triggered_tags"},
                {"triggers", json::array({trigger})},
                {"tags", std::move(tags)},
                {"at_least_one", false},
                {"stop_after_first", !request.parallel}}}};
  return tag.dump();
}

}  // namespace radixlm::server
