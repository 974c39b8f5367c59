#include "chat/chat_renderer.h"

#include <nlohmann/json.hpp>

#include "chat/builtin_templates.h"

namespace radixlm::chat {

StatusOr<ChatRenderer> ChatRenderer::ForModel(std::string_view source, std::string_view arch,
                                              std::string_view model_name, std::string bos_token,
                                              std::string eos_token) {
  // GGUFs without a template (the default model among them) get the built-in one.
  if (source.empty()) source = DefaultChatTemplateForArchitecture(arch);
  if (source.empty()) {
    return InvalidArgument("the model " + std::string(model_name) +
                           " has no chat template (tokenizer.chat_template) and radixlm has no "
                           "built-in one for architecture " +
                           std::string(arch) + "; use /v1/completions or /generate");
  }
  StatusOr<ChatRenderer> renderer = FromSource(source, std::move(bos_token), std::move(eos_token));
  if (!renderer.ok()) {
    return InvalidArgument("the model's chat template does not parse: " +
                           renderer.status().message());
  }
  return renderer;
}

StatusOr<ChatRenderer> ChatRenderer::FromSource(std::string_view source, std::string bos_token,
                                                std::string eos_token) {
  RADIXLM_ASSIGN_OR_RETURN(ChatTemplate parsed, ChatTemplate::Parse(source));
  return ChatRenderer(std::move(parsed), std::move(bos_token), std::move(eos_token));
}

StatusOr<std::string> ChatRenderer::RenderPrompt(const nlohmann::json& messages) const {
  return RenderChat(template_, messages, /*add_generation_prompt=*/true, bos_, eos_);
}

StatusOr<std::string> ChatRenderer::RenderPrompt(const nlohmann::json& messages,
                                                 const nlohmann::json& extra_vars) const {
  return RenderChat(template_, messages, /*add_generation_prompt=*/true, bos_, eos_, extra_vars);
}

StatusOr<std::string> ChatRenderer::RenderTurns(const nlohmann::json& messages) const {
  return RenderChat(template_, messages, /*add_generation_prompt=*/false, "", "");
}

}  // namespace radixlm::chat
