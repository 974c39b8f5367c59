// RenderChatPrompt with a request's template options: chat_template_kwargs become template
// variables (a request's tools still win), continue_final_message turns a final assistant
// message into the text the reply continues; ReadChatTemplateOptions refuses bad values.
#include "server/chat_prompt.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "chat/chat_renderer.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

// A template shaped like Qwen3's: a kwarg switches thinking off; it takes `tools` itself (the
// comment names tool_call, as templates with tool syntax do).
constexpr char kTemplate[] =
    "{# tool_call #}{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>\n{% endfor "
    "%}"
    "{% if tools is defined and tools %}[tools: {{ tools | length }}]\n{% endif %}"
    "{% if add_generation_prompt %}<assistant>"
    "{% if enable_thinking is defined and enable_thinking is false %}<think></think>"
    "{% endif %}{% endif %}";

class ChatPromptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto renderer = chat::ChatRenderer::FromSource(kTemplate, "<s>", "</s>");
    ASSERT_TRUE(renderer.ok()) << renderer.status().ToString();
    renderer_.emplace(std::move(*renderer));
    ctx_.chat = &*renderer_;
    ctx_.config = &config_;
  }

  std::string Render(const json& messages, const json& body, const ToolRequest& tools = {}) {
    StatusOr<ChatTemplateOptions> options = ReadChatTemplateOptions(body);
    EXPECT_TRUE(options.ok()) << options.status().ToString();
    StatusOr<std::string> prompt = RenderChatPrompt(ctx_, messages, tools, *options);
    EXPECT_TRUE(prompt.ok()) << prompt.status().ToString();
    return prompt.ok() ? *prompt : "";
  }

  std::optional<chat::ChatRenderer> renderer_;
  ServerConfig config_;
  ServerContext ctx_;
};

const json kChat = json::parse(R"([{"role": "user", "content": "hi"}])");

TEST_F(ChatPromptTest, KwargsBecomeTemplateVariables) {
  EXPECT_EQ(Render(kChat, json::object()), "<user>hi</user>\n<assistant>");
  EXPECT_EQ(Render(kChat, {{"chat_template_kwargs", {{"enable_thinking", false}}}}),
            "<user>hi</user>\n<assistant><think></think>");
  EXPECT_EQ(Render(kChat, {{"chat_template_kwargs", {{"enable_thinking", true}}}}),
            "<user>hi</user>\n<assistant>");
  EXPECT_EQ(Render(kChat, {{"chat_template_kwargs", nullptr}}), "<user>hi</user>\n<assistant>");
}

TEST_F(ChatPromptTest, TheRequestsToolsWinOverAKwargOfTheSameName) {
  StatusOr<ToolRequest> tools = ParseToolRequest(
      json::parse(R"({"tools": [{"type": "function", "function": {"name": "f"}}]})"));
  ASSERT_TRUE(tools.ok()) << tools.status().ToString();
  const json body = {{"chat_template_kwargs", {{"tools", {1, 2, 3}}}}};
  EXPECT_NE(Render(kChat, body, *tools).find("[tools: 1]"), std::string::npos);
  // Without tools of its own the request's kwarg is what the template sees.
  EXPECT_NE(Render(kChat, body).find("[tools: 3]"), std::string::npos);
}

TEST_F(ChatPromptTest, ContinueFinalMessageContinuesTheAssistantsText) {
  const json chat = json::parse(R"([{"role": "user", "content": "hi"},
                                    {"role": "assistant", "content": "The answer is"}])");
  EXPECT_EQ(Render(chat, {{"continue_final_message", true}}),
            "<user>hi</user>\n<assistant>The answer is");
  // Off (the default), the assistant's message is a finished turn and a new one opens.
  EXPECT_EQ(Render(chat, json::object()),
            "<user>hi</user>\n<assistant>The answer is</assistant>\n<assistant>");
  // Text parts are joined; a final message that is not the assistant's changes nothing.
  const json parts = json::parse(R"([{"role": "user", "content": "hi"},
      {"role": "assistant", "content": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]}])");
  EXPECT_EQ(Render(parts, {{"continue_final_message", true}}), "<user>hi</user>\n<assistant>AB");
  EXPECT_EQ(Render(kChat, {{"continue_final_message", true}}), "<user>hi</user>\n<assistant>");
}

// The built-in templates of the third-wave families through the server's path: the format is
// detected from the template (or --tool-call-parser) and the tool history takes the family's
// shapes.
TEST(FamilyChatPromptTest, ToolHistoriesTakeEachFamilysShape) {
  const json history = json::parse(R"([
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_123456789",
      "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_123456789", "content": "18 C"}])");
  StatusOr<ToolRequest> tools = ParseToolRequest(json::parse(
      R"({"tools": [{"type": "function", "function": {"name": "get_weather", "parameters":
          {"type": "object", "properties": {"city": {"type": "string"}}}}}]})"));
  ASSERT_TRUE(tools.ok()) << tools.status().ToString();
  struct Family {
    const char* arch;
    const char* parser;  // --tool-call-parser ("" detects)
    chat::ToolCallFormat format;
    const char* expected;  // in the prompt
  };
  const Family families[] = {
      {"glm4", "", chat::ToolCallFormat::kGlm4,
       "<|assistant|>get_weather\n{\"city\": \"Paris\"}<|observation|>\n18 C<|assistant|>"},
      {"granite", "", chat::ToolCallFormat::kGranite,
       "<|end_of_role|><|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": "
       "\"Paris\"}}]<|end_of_text|>\n<|start_of_role|>tool<|end_of_role|>18 C"},
      {"smollm3", "", chat::ToolCallFormat::kQwen25,
       "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\""},
      {"phi3", "", chat::ToolCallFormat::kPhi4Mini,
       "<|assistant|>functools[{\"name\": \"get_weather\", \"arguments\": {\"city\": "
       "\"Paris\"}}]<|end|><|user|>Result of get_weather: 18 C<|end|><|assistant|>"},
      {"mistral3", "", chat::ToolCallFormat::kMistral,
       // (the server's JSON sorts keys, so tojson writes "arguments" first)
       "[TOOL_CALLS] [{\"arguments\": {\"city\": \"Paris\"}, \"name\": \"get_weather\", "
       "\"id\": \"123456789\"}]</s>[TOOL_RESULTS] {\"content\": 18 C, \"call_id\": "
       "\"123456789\"}[/TOOL_RESULTS]"},
      {"olmo2", "json", chat::ToolCallFormat::kJson,
       "<|assistant|>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}"},
  };
  for (const Family& f : families) {
    SCOPED_TRACE(f.arch);
    auto renderer = chat::ChatRenderer::ForModel("", f.arch, "m", "<s>", "</s>");
    ASSERT_TRUE(renderer.ok()) << renderer.status().ToString();
    ServerConfig config;
    config.tool_call_parser = f.parser;
    ServerContext ctx;
    ctx.chat = &*renderer;
    ctx.config = &config;
    EXPECT_EQ(ToolFormat(ctx), f.format);
    StatusOr<std::string> prompt = RenderChatPrompt(ctx, history, *tools, {});
    ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
    EXPECT_NE(prompt->find(f.expected), std::string::npos) << *prompt;
  }
}

// gpt-oss's harmony template: a call in the history is written as the model writes one (the
// recipient in the role header, the arguments as JSON), the turn's reasoning_content as its
// analysis message, the result as a message from the function.
TEST(FamilyChatPromptTest, HarmonyHistoryWithReasoningAndACall) {
  std::ifstream in(std::string(RADIXLM_SOURCE_DIR) + "/tests/chat/templates/gpt_oss.jinja");
  std::stringstream source;
  source << in.rdbuf();
  auto renderer = chat::ChatRenderer::FromSource(source.str(), "<|startoftext|>", "<|return|>");
  ASSERT_TRUE(renderer.ok()) << renderer.status().ToString();
  ServerConfig config;
  ServerContext ctx;
  ctx.chat = &*renderer;
  ctx.config = &config;
  EXPECT_EQ(ToolFormat(ctx), chat::ToolCallFormat::kGptOss);
  const json history = json::parse(R"([
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "reasoning_content": "Need the weather.",
     "tool_calls": [{"id": "call_1", "type": "function",
       "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "18 C"}])");
  StatusOr<ToolRequest> tools = ParseToolRequest(json::parse(
      R"({"tools": [{"type": "function", "function": {"name": "get_weather", "description":
          "The weather", "parameters": {"type": "object", "properties": {"city":
          {"type": "string"}}}}}]})"));
  ASSERT_TRUE(tools.ok()) << tools.status().ToString();
  StatusOr<std::string> prompt = RenderChatPrompt(ctx, history, *tools, {});
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_NE(prompt->find("<|start|>user<|message|>Weather in Paris?<|end|>"
                         "<|start|>assistant<|channel|>analysis<|message|>Need the weather.<|end|>"
                         "<|start|>assistant to=functions.get_weather<|channel|>commentary json"
                         "<|message|>{\"city\": \"Paris\"}<|call|>"
                         "<|start|>functions.get_weather to=assistant<|channel|>commentary"
                         "<|message|>\"18 C\"<|end|><|start|>assistant"),
            std::string::npos)
      << *prompt;
}

TEST(ChatTemplateOptionsTest, BadValuesAreRefused) {
  for (const char* body :
       {R"({"chat_template_kwargs": 5})", R"({"chat_template_kwargs": [1]})",
        R"({"chat_template_kwargs": {"messages": []}})", R"({"continue_final_message": "yes"})"}) {
    StatusOr<ChatTemplateOptions> options = ReadChatTemplateOptions(json::parse(body));
    EXPECT_EQ(options.status().code(), StatusCode::kInvalidArgument) << body;
  }
}

}  // namespace
}  // namespace radixlm::server
