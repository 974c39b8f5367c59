#include "server/chat_renderer.h"

#include <nlohmann/json.hpp>

#ifdef RADIXLM_SERVER_HAVE_CHAT
#include "chat/builtin_templates.h"
#include "chat/chat_template.h"
#endif

namespace radixlm::server {

#ifdef RADIXLM_SERVER_HAVE_CHAT
namespace {

class TemplateChatRenderer : public ChatRenderer {
 public:
  TemplateChatRenderer(chat::ChatTemplate chat_template, std::string bos, std::string eos)
      : template_(std::move(chat_template)), bos_(std::move(bos)), eos_(std::move(eos)) {}

  StatusOr<std::string> Render(const nlohmann::json& messages) const override {
    return chat::RenderChat(template_, messages, /*add_generation_prompt=*/true, bos_, eos_);
  }

 private:
  const chat::ChatTemplate template_;
  const std::string bos_;
  const std::string eos_;
};

}  // namespace

StatusOr<std::unique_ptr<ChatRenderer>> MakeChatRenderer(const ModelInfo& model,
                                                         const std::string& bos_token,
                                                         const std::string& eos_token) {
  std::string source = model.chat_template;
  if (source.empty()) {
    // GGUFs without a template (the default model among them) get radixlm's built-in one for
    // their architecture, as SGLang infers a template from the model name.
    source = std::string(chat::DefaultChatTemplateForArchitecture(model.arch));
  }
  if (source.empty()) {
    return InvalidArgument("the model " + model.name +
                           " has no chat template (tokenizer.chat_template) and radixlm has no "
                           "built-in one for architecture " +
                           model.arch + "; use /v1/completions or /generate");
  }
  StatusOr<chat::ChatTemplate> parsed = chat::ChatTemplate::Parse(source);
  if (!parsed.ok()) {
    return InvalidArgument("the model's chat template does not parse: " +
                           parsed.status().message());
  }
  return std::unique_ptr<ChatRenderer>(
      new TemplateChatRenderer(std::move(*parsed), bos_token, eos_token));
}

#else

StatusOr<std::unique_ptr<ChatRenderer>> MakeChatRenderer(const ModelInfo& model,
                                                         const std::string& bos_token,
                                                         const std::string& eos_token) {
  return Unimplemented(
      "this build has no chat template engine (src/chat); use /v1/completions or /generate");
}

#endif

}  // namespace radixlm::server
