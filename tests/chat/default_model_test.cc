// The template a server would use for the default model file: the GGUF's own
// tokenizer.chat_template when present, else radixlm's built-in one for its architecture.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "chat/builtin_templates.h"
#include "chat/chat_template.h"
#include "gguf/gguf_file.h"
#include "util/model_path.h"

namespace radixlm::chat {
namespace {

TEST(DefaultModelTest, GemmaPromptFromTheModelFile) {
  auto path = ResolveModelPath("default");
  if (!path.ok()) GTEST_SKIP() << "default model not installed: " << path.status().ToString();
  auto file = gguf::GgufFile::Open(*path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto architecture = (*file)->GetString("general.architecture");
  ASSERT_TRUE(architecture.ok());
  EXPECT_EQ(*architecture, "gemma3");

  // gemma-3-270m-q4_k_m.gguf ships no chat template; the built-in Gemma 3 one fills in.
  std::string source;
  if ((*file)->Has("tokenizer.chat_template")) {
    source = *(*file)->GetString("tokenizer.chat_template");
  } else {
    source = std::string(DefaultChatTemplateForArchitecture(*architecture));
  }
  ASSERT_FALSE(source.empty());
  auto tmpl = ChatTemplate::Parse(source);
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  const nlohmann::json messages = {{{"role", "system"}, {"content", "Be brief."}},
                                   {{"role", "user"}, {"content", "Hi!"}},
                                   {{"role", "assistant"}, {"content", "Hello."}},
                                   {{"role", "user"}, {"content", "Bye"}}};
  auto prompt = RenderChat(*tmpl, messages, /*add_generation_prompt=*/true, "<bos>", "<eos>");
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_EQ(*prompt,
            "<bos><start_of_turn>user\nBe brief.\n\nHi!<end_of_turn>\n"
            "<start_of_turn>model\nHello.<end_of_turn>\n"
            "<start_of_turn>user\nBye<end_of_turn>\n"
            "<start_of_turn>model\n");
}

}  // namespace
}  // namespace radixlm::chat
