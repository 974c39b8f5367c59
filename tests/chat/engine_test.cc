#include <gtest/gtest.h>

#include "chat/chat_template.h"

namespace radixlm::chat {
namespace {

TEST(ChatTemplateTest, Smoke) {
  auto t = ChatTemplate::Parse("Hello {{ name }}!");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto out = t->Render(nlohmann::json{{"name", "world"}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "Hello world!");
}

}  // namespace
}  // namespace radixlm::chat
