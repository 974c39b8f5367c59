// OpenAI function calling on /v1/chat/completions: the request's `tools`, `tool_choice` and
// `parallel_tool_calls`, and the grammar that constrains a forced call.
//
// tool_choice "required" or {"type": "function", "function": {"name": ...}} constrains decoding
// with a regex built from the functions' JSON schemas in the parser's format (json-schema ->
// regex from src/grammar), so the reply always parses as calls whose arguments match their
// schemas. Both make exactly one call (a small model offered "one or more" keeps adding calls
// until max_tokens); parallel calls come from "auto", where the parsers read as many as the
// model writes. "auto" leaves decoding free and parses what the model writes; "none" ignores
// the tools. With "auto" and no other constraint on the reply, decoding is free until the
// model opens a call (the format's marker: `<tool_call>`, `[TOOL_CALLS]`, `<|channel|>commentary
// to=` for gpt-oss, or `{"name":` for llama3 and json), and the rest of the call is then
// constrained to a known function's name and arguments matching its schema (a structural tag,
// grammar/structural_tag.h); free text may follow, and further calls, unless
// parallel_tool_calls is false (then the reply ends after the first call). Where the functions' schemas cannot be compiled (one does not lower to a regex,
// or the calls' automaton is over the grammar state cap), or the
// vocabulary has the marker as a control token (grammars never allow those: e.g. Mistral's
// [TOOL_CALLS]), "auto" stays unconstrained (the call is parsed as written).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "chat/tool_call_parser.h"
#include "grammar/compiled_grammar.h"
#include "grammar/json_schema.h"
#include "server/grammar_check_memo.h"
#include "util/status.h"

namespace radixlm::server {

enum class ToolChoice { kNone, kAuto, kRequired, kNamed };

struct ToolFunction {
  std::string name;
  nlohmann::json parameters;  // a JSON schema; null when the function takes none
};

struct ToolRequest {
  nlohmann::json tools;  // as sent (the chat template receives them)
  std::vector<ToolFunction> functions;
  ToolChoice choice = ToolChoice::kAuto;
  std::string named;     // kNamed: the function
  bool parallel = true;  // read and reported; forced decoding makes one call either way

  std::vector<std::string> names() const;
  bool active() const { return choice != ToolChoice::kNone && !functions.empty(); }
  bool forced() const { return choice == ToolChoice::kRequired || choice == ToolChoice::kNamed; }
};

// Reads tools / tool_choice / parallel_tool_calls from a chat request body. InvalidArgument
// naming the field for malformed tools, names, schemas, or a named choice not among them.
StatusOr<ToolRequest> ParseToolRequest(const nlohmann::json& body);

// The regex a forced reply must match (ToolRequest::forced()). InvalidArgument when a
// function's parameters are not a schema radixlm can compile, or when the regex's automaton
// exceeds options' state caps (it is built to know; the token masks are not). With a memo, each
// distinct regex is built once.
StatusOr<std::string> ForcedToolCallRegex(const ToolRequest& request, chat::ToolCallFormat format,
                                          const grammar::CompileOptions& options,
                                          GrammarCheckMemo* memo = nullptr);

// AutoToolCallStructuralTag when it compiles with these options (every function's parameters
// lower to a regex and the automaton stays within options.max_dfa_states), else nullopt. It
// builds the automaton (not the token masks) to know, so "auto" never fails a request for a
// constraint the request did not ask for. With a memo, each distinct structural tag is built
// once. nullopt for glm4, whose calls open with no trigger text.
std::optional<std::string> AutoToolCallConstraint(const ToolRequest& request,
                                                  chat::ToolCallFormat format,
                                                  const grammar::CompileOptions& options,
                                                  GrammarCheckMemo* memo = nullptr);
// The text that opens a call in `format` (the structural tag's trigger); "" for glm4.
std::string AutoToolCallTrigger(chat::ToolCallFormat format);
// The structural tag (SGLang's `format` shape, as JSON text) for tool_choice "auto". Functions
// without parameters take "{}".
std::string AutoToolCallStructuralTag(const ToolRequest& request, chat::ToolCallFormat format);

}  // namespace radixlm::server
