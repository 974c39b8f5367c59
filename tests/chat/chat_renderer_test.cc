// ChatRenderer: the model's template (or the built-in one for its architecture) with the
// model's BOS / EOS; RenderPrompt opens the assistant's turn, RenderTurns does not.
#include "chat/chat_renderer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace radixlm::chat {
namespace {

nlohmann::json UserSays(const char* text) {
  return nlohmann::json::array({{{"role", "user"}, {"content", text}}});
}

TEST(ChatRendererTest, PromptAddsTheGenerationPromptAndSpecialTokens) {
  auto renderer = ChatRenderer::FromSource(
      "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{{ eos_token }}"
      "{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}",
      "<s>", "</s>");
  ASSERT_TRUE(renderer.ok()) << renderer.status().ToString();
  EXPECT_EQ(*renderer->RenderPrompt(UserSays("hi")), "<s><user>hi</s><assistant>");
  EXPECT_EQ(*renderer->RenderTurns(UserSays("hi")), "<user>hi");
}

TEST(ChatRendererTest, ModelWithoutTemplateUsesTheArchitecturesBuiltIn) {
  auto renderer = ChatRenderer::ForModel("", "gemma3", "gemma", "<bos>", "<eos>");
  ASSERT_TRUE(renderer.ok()) << renderer.status().ToString();
  auto prompt = renderer->RenderPrompt(UserSays("hi"));
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_EQ(*prompt, "<bos><start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n");
}

TEST(ChatRendererTest, ErrorsNameTheModelOrTheParseFailure) {
  auto none = ChatRenderer::ForModel("", "no-such-arch", "my-model", "", "");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("my-model has no chat template"), std::string::npos);
  auto broken = ChatRenderer::ForModel("{% for %}", "llama", "m", "", "");
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("does not parse"), std::string::npos);
}

}  // namespace
}  // namespace radixlm::chat
