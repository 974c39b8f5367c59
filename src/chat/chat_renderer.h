// ChatRenderer: a model's chat template, parsed once, with the model's BOS / EOS text: turns a
// chat's messages into prompt text. The one renderer the server (chat completions, /tokenize)
// and the frontend language (role texts) share; the engine's ModelAssets owns it.
//
// Thread-safety: const methods may be called from any thread.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "chat/chat_template.h"
#include "util/status.h"

namespace radixlm::chat {

class ChatRenderer {
 public:
  // The template `source` (or, when it is empty, radixlm's built-in one for `arch`, as SGLang
  // infers a template from the model name). InvalidArgument naming `model_name` when there is
  // none or it does not parse; chat requests are answered with that message.
  static StatusOr<ChatRenderer> ForModel(std::string_view source, std::string_view arch,
                                         std::string_view model_name, std::string bos_token,
                                         std::string eos_token);
  // A given template; InvalidArgument if it does not parse.
  static StatusOr<ChatRenderer> FromSource(std::string_view source, std::string bos_token,
                                           std::string eos_token);

  // The prompt for `messages` (a chat request's list, as sent), ending with the opening of the
  // assistant's turn (add_generation_prompt), BOS / EOS written as the model's.
  StatusOr<std::string> RenderPrompt(const nlohmann::json& messages) const;
  // The same with more template variables (e.g. {"tools": [...]}).
  StatusOr<std::string> RenderPrompt(const nlohmann::json& messages,
                                     const nlohmann::json& extra_vars) const;
  // The turns alone: no generation prompt, BOS / EOS empty (the tokenizer adds BOS itself).
  // What the frontend derives each role's prefix and suffix from.
  StatusOr<std::string> RenderTurns(const nlohmann::json& messages) const;

  // The template's text (for detecting its tool-call syntax).
  const std::string& template_source() const { return template_.source(); }

 private:
  ChatRenderer(ChatTemplate chat_template, std::string bos, std::string eos)
      : template_(std::move(chat_template)), bos_(std::move(bos)), eos_(std::move(eos)) {}

  ChatTemplate template_;
  std::string bos_;
  std::string eos_;
};

}  // namespace radixlm::chat
