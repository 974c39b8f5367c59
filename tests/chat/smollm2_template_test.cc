// SmolLM2-135M-Instruct's chat template (ChatML without tool syntax; the text of its GGUF's
// tokenizer.chat_template, the end-to-end tests' chat model): rendered by the Jinja engine,
// with tools described in the system turn and tool calls / results as plain turns in the json
// format, which is what the server detects for it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "chat/chat_renderer.h"
#include "chat/tool_call_parser.h"
#include "chat/tool_prompt.h"

namespace radixlm::chat {
namespace {

using nlohmann::json;

constexpr std::string_view kSmolLm2Template =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}";

ChatRenderer Renderer() {
  auto renderer = ChatRenderer::FromSource(kSmolLm2Template, "<|im_start|>", "<|im_end|>");
  EXPECT_TRUE(renderer.ok()) << renderer.status().ToString();
  return std::move(renderer).value();
}

TEST(SmolLm2TemplateTest, RendersChatMlWithTheDefaultSystemTurn) {
  auto text = Renderer().RenderPrompt(json::parse(R"([{"role": "user", "content": "Hi"}])"));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text,
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
            "Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  auto with_system = Renderer().RenderPrompt(json::parse(
      R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])"));
  ASSERT_TRUE(with_system.ok());
  EXPECT_EQ(*with_system,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(SmolLm2TemplateTest, NoToolSyntaxSoToolsGoThroughTheJsonFormat) {
  EXPECT_EQ(DetectToolCallFormat(kSmolLm2Template), ToolCallFormat::kJson);
  EXPECT_FALSE(TemplateHandlesTools(kSmolLm2Template));

  const json tools = json::parse(R"([{"type": "function", "function": {"name": "get_weather",
    "description": "Weather in a city", "parameters": {"type": "object",
    "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])");
  const json history = json::parse(R"([
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "18 C, sunny"}])");
  auto prompt = PrepareToolPrompt(history, tools, ToolCallFormat::kJson, false);
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  auto text = Renderer().RenderPrompt(prompt->messages, prompt->extra_vars);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  // The tools are described in a system turn of their own, which replaces the default one.
  EXPECT_EQ(text->rfind("<|im_start|>system\n", 0), 0u) << *text;
  EXPECT_EQ(text->find("named SmolLM"), std::string::npos) << *text;
  EXPECT_NE(text->find("\"name\": \"get_weather\""), std::string::npos) << *text;
  EXPECT_NE(text->find("<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"
                       "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}"
                       "<|im_end|>\n"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("<|im_start|>user\nResult of get_weather: 18 C, sunny<|im_end|>\n"
                       "<|im_start|>assistant\n"),
            std::string::npos)
      << *text;
  EXPECT_TRUE(text->ends_with("<|im_end|>\n<|im_start|>assistant\n")) << *text;
}

}  // namespace
}  // namespace radixlm::chat
