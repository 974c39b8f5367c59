#include "chat/chat_template.h"

#include <new>

#include "chat/ast.h"
#include "chat/builtins.h"
#include "chat/json_value.h"
#include "chat/parser.h"
#include "chat/renderer.h"
#include "chat/template_error.h"

namespace radixlm::chat {

StatusOr<ChatTemplate> ChatTemplate::Parse(std::string_view source) {
  try {
    std::shared_ptr<const TemplateAst> ast = ParseTemplate(source);
    return ChatTemplate(std::move(ast));
  } catch (const TemplateError& e) {
    return e.ToStatus();
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory while parsing a chat template");
  } catch (const std::exception& e) {
    return Internal(std::string("chat template parser failed: ") + e.what());
  }
}

const std::string& ChatTemplate::source() const { return ast_->source; }

template <typename Json>
StatusOr<std::string> ChatTemplate::RenderJson(const Json& context,
                                               const RenderLimits& limits) const {
  if (!context.is_object()) return InvalidArgument("chat template context must be a JSON object");
  try {
    Frame globals(nullptr);
    InstallGlobals(&globals);
    for (auto it = context.begin(); it != context.end(); ++it) {
      globals.Set(it.key(), ValueFromJson(it.value()));
    }
    Renderer renderer(*ast_, limits);
    return renderer.Render(globals);
  } catch (const TemplateError& e) {
    return e.ToStatus();
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory while rendering a chat template");
  } catch (const std::exception& e) {
    return Internal(std::string("chat template renderer failed: ") + e.what());
  }
}

StatusOr<std::string> ChatTemplate::Render(const nlohmann::json& context,
                                           const RenderLimits& limits) const {
  return RenderJson(context, limits);
}

StatusOr<std::string> ChatTemplate::Render(const nlohmann::ordered_json& context,
                                           const RenderLimits& limits) const {
  return RenderJson(context, limits);
}

namespace {

template <typename Json>
StatusOr<std::string> RenderChatImpl(const ChatTemplate& chat_template, const Json& messages,
                                     bool add_generation_prompt, std::string_view bos_token,
                                     std::string_view eos_token, const Json& extra_vars,
                                     const RenderLimits& limits) {
  if (!messages.is_array()) return InvalidArgument("chat messages must be a JSON array");
  if (!extra_vars.is_object()) return InvalidArgument("extra template variables must be an object");
  Json context = Json::object();
  context["messages"] = messages;
  context["tools"] = nullptr;
  context["documents"] = nullptr;
  context["add_generation_prompt"] = add_generation_prompt;
  context["bos_token"] = std::string(bos_token);
  context["eos_token"] = std::string(eos_token);
  for (auto it = extra_vars.begin(); it != extra_vars.end(); ++it) context[it.key()] = it.value();
  return chat_template.Render(context, limits);
}

}  // namespace

StatusOr<std::string> RenderChat(const ChatTemplate& chat_template, const nlohmann::json& messages,
                                 bool add_generation_prompt, std::string_view bos_token,
                                 std::string_view eos_token, const nlohmann::json& extra_vars,
                                 const RenderLimits& limits) {
  return RenderChatImpl(chat_template, messages, add_generation_prompt, bos_token, eos_token,
                        extra_vars, limits);
}

StatusOr<std::string> RenderChat(const ChatTemplate& chat_template,
                                 const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                 std::string_view bos_token, std::string_view eos_token,
                                 const nlohmann::ordered_json& extra_vars,
                                 const RenderLimits& limits) {
  return RenderChatImpl(chat_template, messages, add_generation_prompt, bos_token, eos_token,
                        extra_vars, limits);
}

}  // namespace radixlm::chat
