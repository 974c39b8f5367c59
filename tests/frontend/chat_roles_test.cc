// ChatRoles derived from chat templates render what the template renders.
#include "frontend/chat_roles.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "chat/builtin_templates.h"
#include "chat/chat_template.h"

namespace radixlm::frontend {
namespace {

std::string Render(std::string_view source, const nlohmann::json& messages) {
  auto t = chat::ChatTemplate::Parse(source);
  EXPECT_TRUE(t.ok());
  auto r = chat::RenderChat(*t, messages, false, "", "");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : "";
}

// The roles applied to a conversation, as the interpreter applies them.
std::string Apply(const ChatRoles& roles, const nlohmann::json& messages) {
  std::string out, previous;
  for (const auto& m : messages) {
    const std::string role = m["role"];
    out += *roles.Prefix(role, previous) + m["content"].get<std::string>() + *roles.Suffix(role);
    previous = role;
  }
  return out;
}

TEST(FrontendChatRolesTest, GemmaRolesFoldTheSystemTurnIntoTheFirstUserTurn) {
  auto roles = ChatRolesForArchitecture("gemma3");
  ASSERT_TRUE(roles.ok()) << roles.status().ToString();
  EXPECT_EQ(roles->roles.at("user").prefix, "<start_of_turn>user\n");
  EXPECT_EQ(roles->roles.at("user").suffix, "<end_of_turn>\n");
  EXPECT_EQ(roles->roles.at("assistant").prefix, "<start_of_turn>model\n");
  EXPECT_EQ(roles->roles.at("system").prefix, "<start_of_turn>user\n");
  EXPECT_EQ(roles->roles.at("system").suffix, "\n\n");
  const nlohmann::json conversation = nlohmann::json::parse(R"([
    {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Bye"}])");
  EXPECT_EQ(Apply(*roles, conversation),
            Render(chat::DefaultChatTemplateForArchitecture("gemma3"), conversation));
}

TEST(FrontendChatRolesTest, ChatMlRolesMatchTheTemplateTurnByTurn) {
  auto roles = ChatRoles::FromTemplate(chat::ChatMlTemplate());
  ASSERT_TRUE(roles.ok()) << roles.status().ToString();
  EXPECT_FALSE(roles->user_prefix_after_system.has_value());
  const nlohmann::json conversation = nlohmann::json::parse(R"([
    {"role": "system", "content": "S"}, {"role": "user", "content": "U"},
    {"role": "assistant", "content": "A"}])");
  EXPECT_EQ(Apply(*roles, conversation), Render(chat::ChatMlTemplate(), conversation));
}

TEST(FrontendChatRolesTest, BadTemplatesAndUnknownRolesAreErrors) {
  EXPECT_EQ(ChatRoles::FromTemplate("{% if %}").status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ChatRoles::FromTemplate("no content here").ok());
  EXPECT_FALSE(ChatRolesForArchitecture("no-such-arch").ok());
  EXPECT_FALSE(ChatRoles::Plain().Prefix("tool", "").ok());
}

}  // namespace
}  // namespace radixlm::frontend
