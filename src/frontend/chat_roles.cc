#include "frontend/chat_roles.h"

#include <nlohmann/json.hpp>

#include "chat/builtin_templates.h"

namespace radixlm::frontend {
namespace {

constexpr const char* kSystemMark = "RADIXLMSYSTEMMARK";
constexpr const char* kUserMark = "RADIXLMUSERMARK";
constexpr const char* kAssistantMark = "RADIXLMASSISTANTMARK";

nlohmann::json Message(const char* role, const char* content) {
  return nlohmann::json{{"role", role}, {"content", content}};
}

// Splits `rendered` around `mark`; false if the mark is absent.
bool SplitAround(const std::string& rendered, const std::string& mark, std::string* before,
                 std::string* after) {
  const size_t at = rendered.find(mark);
  if (at == std::string::npos) return false;
  *before = rendered.substr(0, at);
  *after = rendered.substr(at + mark.size());
  return true;
}

}  // namespace

StatusOr<std::string> ChatRoles::Prefix(const std::string& role,
                                        const std::string& previous) const {
  if (role == "user" && previous == "system" && user_prefix_after_system.has_value()) {
    return *user_prefix_after_system;
  }
  auto it = roles.find(role);
  if (it == roles.end()) {
    return InvalidArgument("the chat template has no role '" + role + "'");
  }
  return it->second.prefix;
}

StatusOr<std::string> ChatRoles::Suffix(const std::string& role) const {
  auto it = roles.find(role);
  if (it == roles.end()) {
    return InvalidArgument("the chat template has no role '" + role + "'");
  }
  return it->second.suffix;
}

StatusOr<ChatRoles> ChatRoles::FromTemplate(std::string_view jinja_source) {
  StatusOr<chat::ChatRenderer> renderer = chat::ChatRenderer::FromSource(jinja_source, "", "");
  if (!renderer.ok()) {
    return InvalidArgument("the chat template does not parse: " + renderer.status().message());
  }
  return FromRenderer(*renderer);
}

StatusOr<ChatRoles> ChatRoles::FromRenderer(const chat::ChatRenderer& renderer) {
  auto render = [&](const nlohmann::json& messages) { return renderer.RenderTurns(messages); };
  ChatRoles roles;
  // user: [user]
  StatusOr<std::string> u = render(nlohmann::json::array({Message("user", kUserMark)}));
  if (!u.ok())
    return InvalidArgument("the chat template renders no user turn: " + u.status().message());
  RoleText user;
  if (!SplitAround(*u, kUserMark, &user.prefix, &user.suffix)) {
    return InvalidArgument("the chat template drops the user message's content");
  }
  roles.roles["user"] = user;
  // assistant: [user, assistant] minus [user]
  StatusOr<std::string> ua = render(
      nlohmann::json::array({Message("user", kUserMark), Message("assistant", kAssistantMark)}));
  if (!ua.ok()) {
    return InvalidArgument("the chat template renders no assistant turn: " + ua.status().message());
  }
  if (ua->compare(0, u->size(), *u) != 0) {
    return InvalidArgument(
        "the chat template renders a user turn differently before an assistant turn");
  }
  RoleText assistant;
  if (!SplitAround(ua->substr(u->size()), kAssistantMark, &assistant.prefix, &assistant.suffix)) {
    return InvalidArgument("the chat template drops the assistant message's content");
  }
  roles.roles["assistant"] = assistant;
  // system: [system, user]; optional (some templates reject system messages).
  StatusOr<std::string> su =
      render(nlohmann::json::array({Message("system", kSystemMark), Message("user", kUserMark)}));
  RoleText system;
  std::string rest;
  if (su.ok() && SplitAround(*su, kSystemMark, &system.prefix, &rest)) {
    std::string between, after_user;
    if (SplitAround(rest, kUserMark, &between, &after_user)) {
      if (between.size() >= user.prefix.size() &&
          between.compare(between.size() - user.prefix.size(), user.prefix.size(), user.prefix) ==
              0) {
        system.suffix = between.substr(0, between.size() - user.prefix.size());
      } else {
        system.suffix = between;  // the system text is folded into the first user turn
        roles.user_prefix_after_system = "";
      }
      roles.roles["system"] = system;
    }
  }
  return roles;
}

ChatRoles ChatRoles::Plain() {
  ChatRoles roles;
  for (const char* name : {"system", "user", "assistant"}) {
    roles.roles[name] = RoleText{std::string(name) + "\n", "\n"};
  }
  return roles;
}

StatusOr<ChatRoles> ChatRolesForArchitecture(const std::string& arch) {
  const std::string_view source = chat::DefaultChatTemplateForArchitecture(arch);
  if (source.empty()) {
    return InvalidArgument("radixlm has no built-in chat template for architecture '" + arch +
                           "'; give the roles explicitly");
  }
  return ChatRoles::FromTemplate(source);
}

}  // namespace radixlm::frontend
