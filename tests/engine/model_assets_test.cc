// ModelAssets: the model's tokenizer codec, chat renderer and metadata, loaded once from the
// GGUF (real default model) or assembled from parts (fake vocabulary).
#include "engine/model_assets.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "testing/fake_token_text.h"
#include "support/real_model.h"

namespace radixlm {
namespace {

TEST(ModelAssetsTest, PartsWithoutATemplateHaveNoChatAndSayWhy) {
  ModelInfo info;
  info.arch = "fake";
  info.name = "tiny";
  auto assets = ModelAssets::FromParts(std::make_unique<FakeTokenTextCodec>(), info);
  EXPECT_EQ(assets->chat(), nullptr);
  EXPECT_EQ(assets->chat_status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(assets->chat_status().message().find("tiny has no chat template"), std::string::npos)
      << assets->chat_status().ToString();
  // A codec that adds nothing extra encodes a rendered template as a prompt.
  EXPECT_EQ(*assets->codec().EncodeVerbatim("ab"), *assets->codec().Encode("ab"));
  // Control tokens add no bytes to constrained output.
  EXPECT_EQ(assets->codec().TokenBytes(FakeTokenTextCodec::kEos), "");
  EXPECT_EQ(assets->codec().TokenBytes(43), "ab");
}

TEST(ModelAssetsTest, ArchitectureWithABuiltInTemplateGetsChat) {
  ModelInfo info;
  info.arch = "gemma3";
  auto assets = ModelAssets::FromParts(std::make_unique<FakeTokenTextCodec>(), info);
  ASSERT_NE(assets->chat(), nullptr) << assets->chat_status().ToString();
  auto prompt =
      assets->chat()->RenderPrompt(nlohmann::json::array({{{"role", "user"}, {"content", "hi"}}}));
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_NE(prompt->find("<start_of_turn>model\n"), std::string::npos) << *prompt;
}

class RealModelAssetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = testing::RealModelSkipReason(); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_F(RealModelAssetsTest, DefaultModelFile) {
  const std::string path = testing::RealModelPath();
  auto file = gguf::GgufFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto assets = ModelAssets::FromGguf(**file, path);
  ASSERT_TRUE(assets.ok()) << assets.status().ToString();
  const ModelInfo& info = (*assets)->info();
  EXPECT_EQ(info.model_path, path);
  EXPECT_EQ(info.arch, "gemma3");
  EXPECT_EQ(info.model_type, "gemma3_text");
  EXPECT_EQ(info.architectures, std::vector<std::string>{"Gemma3ForCausalLM"});
  EXPECT_GT(info.file_bytes, 0);

  const TokenTextCodec& codec = (*assets)->codec();
  EXPECT_EQ(codec.bos_text(), "<bos>");
  auto prompt = codec.Encode("Hello world");
  auto verbatim = codec.EncodeVerbatim("Hello world");
  ASSERT_TRUE(prompt.ok() && verbatim.ok());
  ASSERT_EQ(prompt->size(), verbatim->size() + 1);  // Encode adds BOS; EncodeVerbatim does not
  EXPECT_TRUE(codec.IsControlToken(prompt->front()));
  EXPECT_EQ(codec.TokenBytes(prompt->front()), "");
  EXPECT_EQ(std::vector<int32_t>(prompt->begin() + 1, prompt->end()), *verbatim);

  // The model has no template of its own: the built-in Gemma 3 one, with the model's BOS.
  const chat::ChatRenderer* chat = (*assets)->chat();
  ASSERT_NE(chat, nullptr) << (*assets)->chat_status().ToString();
  auto rendered =
      chat->RenderPrompt(nlohmann::json::array({{{"role", "user"}, {"content", "Hello world"}}}));
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  EXPECT_EQ(rendered->rfind("<bos><start_of_turn>user\n", 0), 0u) << *rendered;
  // The rendered template already holds BOS: encoding it verbatim gives exactly one.
  auto ids = codec.EncodeVerbatim(*rendered);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->front(), prompt->front());
  EXPECT_NE((*ids)[1], prompt->front());
}

}  // namespace
}  // namespace radixlm
