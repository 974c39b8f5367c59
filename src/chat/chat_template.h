// ChatTemplate: renders a model's `tokenizer.chat_template` (a Jinja2 template) the way
// Hugging Face transformers' apply_chat_template does, byte for byte.
//
// The engine implements the Jinja2 subset chat templates use, with the environment transformers
// builds: ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) plus the
// loopcontrols extension ({% break %}, {% continue %}), its {% generation %} tag, its tojson
// (json.dumps with ensure_ascii=False) and the globals raise_exception() and strftime_now().
// Values behave like the Python objects jinja2 sees (None renders "None", True "True", dicts
// keep insertion order, strings index by code point, undefined prints as "").
//
// Not supported (a clear error if a template uses them): {% include / extends / import /
// block / call %}, recursive loops, *args / **kwargs calls, str.format() specs, and filters or
// tests other than those listed in src/chat/filters*.cc and jinja_tests.cc. The models verified
// byte for byte against jinja2 are listed in tests/chat/templates/README.md.
//
// Thread safety: a parsed ChatTemplate is immutable; Render may run concurrently on one
// instance. Failures are Status values: syntax errors and template errors carry the line and
// column; raise_exception(msg) returns InvalidArgument with msg; runaway templates (output
// size, macro recursion, step budget) return ResourceExhausted.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "chat/render_limits.h"
#include "util/status.h"

namespace radixlm::chat {

struct TemplateAst;

class ChatTemplate {
 public:
  // Parses the template source. InvalidArgument with line/column on a syntax error.
  static StatusOr<ChatTemplate> Parse(std::string_view source);

  // Renders with the members of `context` (a JSON object) as template variables.
  // nlohmann::ordered_json keeps object key order like a Python dict; nlohmann::json sorts keys
  // (that only shows where a template prints or iterates whole objects, e.g. tools|tojson).
  StatusOr<std::string> Render(const nlohmann::json& context,
                               const RenderLimits& limits = RenderLimits()) const;
  StatusOr<std::string> Render(const nlohmann::ordered_json& context,
                               const RenderLimits& limits = RenderLimits()) const;

  const std::string& source() const;

 private:
  explicit ChatTemplate(std::shared_ptr<const TemplateAst> ast) : ast_(std::move(ast)) {}

  template <typename Json>
  StatusOr<std::string> RenderJson(const Json& context, const RenderLimits& limits) const;

  std::shared_ptr<const TemplateAst> ast_;
};

// What apply_chat_template(messages, add_generation_prompt=..., **kwargs) passes: `messages`,
// `add_generation_prompt`, `bos_token`, `eos_token`, `tools` = None and `documents` = None,
// then every member of `extra_vars` (tools, enable_thinking, date_string, ...), which may
// override the others. `messages` must be a JSON array.
StatusOr<std::string> RenderChat(const ChatTemplate& chat_template, const nlohmann::json& messages,
                                 bool add_generation_prompt, std::string_view bos_token,
                                 std::string_view eos_token,
                                 const nlohmann::json& extra_vars = nlohmann::json::object(),
                                 const RenderLimits& limits = RenderLimits());
StatusOr<std::string> RenderChat(
    const ChatTemplate& chat_template, const nlohmann::ordered_json& messages,
    bool add_generation_prompt, std::string_view bos_token, std::string_view eos_token,
    const nlohmann::ordered_json& extra_vars = nlohmann::ordered_json::object(),
    const RenderLimits& limits = RenderLimits());

}  // namespace radixlm::chat
