// ChatRoles: the text a chat role opens and closes with, derived from the model's chat
// template so `user("hi")` renders exactly what apply_chat_template renders for that turn.
//
// Derivation: the template is rendered (bos_token and eos_token empty: the tokenizer adds BOS
// itself) with sentinel contents — [user], [user, assistant], [system, user] — and the text
// around each sentinel is the role's prefix / suffix. Templates that fold the system message
// into the first user turn (Gemma) have no user prefix right after a system turn; that is
// user_prefix_after_system. A role the template rejects (raise_exception) is absent, and using
// it is an InvalidArgument.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "chat/chat_renderer.h"
#include "util/status.h"

namespace radixlm::frontend {

struct RoleText {
  std::string prefix;
  std::string suffix;
};

struct ChatRoles {
  std::map<std::string, RoleText> roles;  // "system", "user", "assistant"
  std::optional<std::string> user_prefix_after_system;

  // The prefix of `role` when the previous role to end was `previous` ("" : none).
  StatusOr<std::string> Prefix(const std::string& role, const std::string& previous) const;
  StatusOr<std::string> Suffix(const std::string& role) const;

  // From a model's chat template renderer (see above). InvalidArgument if it does not render a
  // user turn and a user + assistant conversation.
  static StatusOr<ChatRoles> FromRenderer(const chat::ChatRenderer& renderer);
  // From a Jinja chat template's source; InvalidArgument also if it does not parse.
  static StatusOr<ChatRoles> FromTemplate(std::string_view jinja_source);
  // Roles as "<role>\n" ... "\n" (models without a template, tests).
  static ChatRoles Plain();
};

// The roles for a model architecture's built-in template (e.g. "gemma3"), for clients that
// only know the served model's type.
StatusOr<ChatRoles> ChatRolesForArchitecture(const std::string& arch);

}  // namespace radixlm::frontend
