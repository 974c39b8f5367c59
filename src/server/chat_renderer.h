// ChatRenderer: turns a chat request's messages into the prompt text, with the model's chat
// template and add_generation_prompt. The template engine itself lives in src/chat/; this is
// the server's adapter to it, so the OpenAI handlers do not depend on its details.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "server/model_info.h"
#include "util/status.h"

namespace radixlm::server {

class ChatRenderer {
 public:
  virtual ~ChatRenderer() = default;
  // The prompt for `messages` (the request's list, as sent), ending with the assistant's turn.
  virtual StatusOr<std::string> Render(const nlohmann::json& messages) const = 0;
};

// A renderer for the model's template. Unimplemented when this build has no template engine;
// InvalidArgument when the model has no (usable) chat template. The message says which, and
// chat requests are answered with it.
StatusOr<std::unique_ptr<ChatRenderer>> MakeChatRenderer(const ModelInfo& model,
                                                         const std::string& bos_token,
                                                         const std::string& eos_token);

}  // namespace radixlm::server
