// Renders every case of tests/chat/testdata/golden.json (written by make_golden.py with Python
// jinja2 in transformers' environment) and compares byte for byte.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "chat/builtin_templates.h"
#include "chat/chat_template.h"

// A namespace of its own: the unity build compiles this file with the other chat tests.
namespace radixlm::chat::golden_test {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

const std::string kChatTestDir = std::string(RADIXLM_SOURCE_DIR) + "/tests/chat/";

// Shows the first difference, which a plain EXPECT_EQ on long prompts buries.
std::string FirstDifference(const std::string& expected, const std::string& actual) {
  size_t i = 0;
  while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
  const size_t from = i > 40 ? i - 40 : 0;
  return "first difference at byte " + std::to_string(i) + "\n  expected: ..." +
         nlohmann::json(expected.substr(from, 100)).dump() + "\n  actual:   ..." +
         nlohmann::json(actual.substr(from, 100)).dump();
}

class GoldenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string text = ReadFile(kChatTestDir + "testdata/golden.json");
    ASSERT_FALSE(text.empty()) << "missing golden.json; run tests/chat/make_golden.py";
    golden_ = new nlohmann::ordered_json(nlohmann::ordered_json::parse(text));
  }
  static void TearDownTestSuite() {
    delete golden_;
    golden_ = nullptr;
  }

  const ChatTemplate& Template(const std::string& name) {
    auto it = templates_.find(name);
    if (it == templates_.end()) {
      auto parsed = ChatTemplate::Parse(ReadFile(kChatTestDir + "templates/" + name));
      EXPECT_TRUE(parsed.ok()) << name << ": " << parsed.status().ToString();
      it = templates_.emplace(name, std::move(parsed).value()).first;
    }
    return it->second;
  }

  static nlohmann::ordered_json* golden_;
  std::map<std::string, ChatTemplate> templates_;
};

nlohmann::ordered_json* GoldenTest::golden_ = nullptr;

TEST_F(GoldenTest, AllTemplatesParse) {
  for (const char* name :
       {"chatml.jinja", "gemma3.jinja", "llama3.jinja", "llama3_1.jinja", "llama3_2.jinja",
        "mistral_v0_3.jinja", "qwen2_5.jinja", "qwen3.jinja", "hermes3_tool_use.jinja",
        "deepseek_r1_distill_qwen.jinja", "phi3_5.jinja", "granite3_3.jinja", "gemma2.jinja",
        "olmo2.jinja", "phi4_mini.jinja", "smollm3.jinja", "glm_z1_0414.jinja",
        "mistral_small3_1.jinja"}) {
    auto parsed = ChatTemplate::Parse(ReadFile(kChatTestDir + "templates/" + name));
    EXPECT_TRUE(parsed.ok()) << name << ": " << parsed.status().ToString();
  }
}

TEST_F(GoldenTest, MatchesJinja2ByteForByte) {
  const auto& cases = (*golden_)["cases"];
  ASSERT_GE(cases.size(), 100u);
  std::map<std::string, int> per_template;
  for (const auto& c : cases) {
    const std::string name = c["name"].get<std::string>();
    SCOPED_TRACE(name);
    const ChatTemplate& tmpl = Template(c["template"].get<std::string>());
    RenderLimits limits;  // templates that print the date see the generator's fixed time
    if (c.contains("fixed_now_unix_s"))
      limits.fixed_now_unix_s = c["fixed_now_unix_s"].get<int64_t>();
    auto rendered = RenderChat(tmpl, c["messages"], c["add_generation_prompt"].get<bool>(),
                               c["bos_token"].get<std::string>(), c["eos_token"].get<std::string>(),
                               c["extra"], limits);
    if (c.contains("error")) {
      ASSERT_FALSE(rendered.ok()) << "expected the error: " << c["error"];
      EXPECT_NE(rendered.status().message().find(c["error"].get<std::string>()), std::string::npos)
          << rendered.status().ToString();
      continue;
    }
    ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
    const std::string expected = c["expected"].get<std::string>();
    EXPECT_EQ(*rendered, expected) << FirstDifference(expected, *rendered);
    ++per_template[c["template"].get<std::string>()];
  }
  // Every template is covered by at least 5 conversations x 2 generation-prompt settings.
  EXPECT_EQ(per_template.size(), 20u);
  for (const auto& [name, count] : per_template) EXPECT_GE(count, 10) << name;
}

TEST_F(GoldenTest, BuiltinTemplatesAreTheStoredOnes) {
  EXPECT_EQ(std::string(DefaultChatTemplateForArchitecture("gemma3")),
            ReadFile(kChatTestDir + "templates/gemma3.jinja"));
  EXPECT_EQ(std::string(ChatMlTemplate()), ReadFile(kChatTestDir + "templates/chatml.jinja"));
  EXPECT_TRUE(DefaultChatTemplateForArchitecture("llama").empty());
  const std::pair<const char*, const char*> families[] = {
      {"gemma2", "gemma2.jinja"},  {"granite", "granite3_3.jinja"},
      {"olmo2", "olmo2.jinja"},    {"smollm3", "smollm3.jinja"},
      {"phi3", "phi4_mini.jinja"}, {"mistral3", "mistral_small3_1.jinja"}};
  for (const auto& [arch, file] : families) {
    EXPECT_EQ(std::string(DefaultChatTemplateForArchitecture(arch)),
              ReadFile(kChatTestDir + "templates/" + file))
        << arch;
  }
  // GLM-4-0414's: GLM-Z1-0414's without the thinking opener after the generation prompt.
  std::string glm4 = ReadFile(kChatTestDir + "templates/glm_z1_0414.jinja");
  const std::string opener = "<|assistant|>\n<think>{% endif %}";
  ASSERT_NE(glm4.find(opener), std::string::npos);
  glm4.replace(glm4.find(opener), opener.size(), "<|assistant|>{% endif %}");
  EXPECT_EQ(std::string(DefaultChatTemplateForArchitecture("glm4")), glm4);
  auto rendered = RenderChat(*ChatTemplate::Parse(glm4),
                             nlohmann::json::parse(R"([{"role": "user", "content": "Hi"}])"),
                             /*add_generation_prompt=*/true, "", "<|user|>");
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  EXPECT_EQ(*rendered, "[gMASK]<sop><|user|>\nHi<|assistant|>");
}

// Small templates exercising one engine feature each (filters, loops, whitespace control,
// errors), rendered by jinja2 in the same environment.
TEST_F(GoldenTest, FeaturesMatchJinja2) {
  const auto& features = (*golden_)["features"];
  ASSERT_GE(features.size(), 50u);
  for (const auto& f : features) {
    SCOPED_TRACE(f["name"].get<std::string>());
    auto parsed = ChatTemplate::Parse(f["source"].get<std::string>());
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto rendered = parsed->Render(f["variables"]);
    if (f.contains("error")) {
      ASSERT_FALSE(rendered.ok()) << "rendered " << nlohmann::json(*rendered).dump()
                                  << " but jinja2 raised: " << f["error"];
      EXPECT_NE(rendered.status().message().find(f["error"].get<std::string>()), std::string::npos)
          << rendered.status().ToString() << "\n  jinja2: " << f["error"];
      continue;
    }
    ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
    const std::string expected = f["expected"].get<std::string>();
    EXPECT_EQ(*rendered, expected) << FirstDifference(expected, *rendered);
  }
}

}  // namespace
}  // namespace radixlm::chat::golden_test
