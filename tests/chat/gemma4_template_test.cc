// Gemma 4's chat template (tests/chat/templates/gemma4.jinja, the one Gemma 4 GGUFs carry in
// tokenizer.chat_template) rendered by radixlm's engine against Python jinja2's output
// (testdata/gemma4_golden.json, written by make_gemma4_golden.py): thinking, tool declarations
// in Gemma 4's own syntax, tool calls and their results, content parts.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "chat/reasoning_parser.h"

namespace radixlm::chat {
namespace {

const std::string kChatTestDir = std::string(RADIXLM_SOURCE_DIR) + "/tests/chat/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(Gemma4TemplateTest, MatchesJinja2ByteForByte) {
  const std::string text = ReadFile(kChatTestDir + "testdata/gemma4_golden.json");
  ASSERT_FALSE(text.empty()) << "missing gemma4_golden.json; run tests/chat/make_gemma4_golden.py";
  const auto golden = nlohmann::ordered_json::parse(text);
  auto tmpl = ChatTemplate::Parse(ReadFile(kChatTestDir + "templates/gemma4.jinja"));
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  int checked = 0;
  for (const auto& c : golden["cases"]) {
    const std::string name = c["name"].get<std::string>();
    SCOPED_TRACE(name);
    auto rendered = RenderChat(*tmpl, c["messages"], c["add_generation_prompt"].get<bool>(),
                               c["bos_token"].get<std::string>(), c["eos_token"].get<std::string>(),
                               c["extra"]);
    ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
    const std::string expected = c["expected"].get<std::string>();
    if (*rendered != expected) {
      size_t i = 0;
      while (i < expected.size() && i < rendered->size() && expected[i] == (*rendered)[i]) ++i;
      const size_t from = i > 40 ? i - 40 : 0;
      ADD_FAILURE() << "first difference at byte " << i << "\n  expected: ..."
                    << nlohmann::json(expected.substr(from, 100)).dump() << "\n  actual:   ..."
                    << nlohmann::json(rendered->substr(from, 100)).dump();
    }
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

// Gemma 4's thinking: "<|channel>thought\n" ... "<channel|>" then the answer, whole or streamed
// in two pieces split anywhere.
TEST(Gemma4ReasoningTest, ThoughtChannelSplitsFromTheAnswer) {
  auto format = ReasoningFormatFromName("gemma4");
  ASSERT_TRUE(format.ok());
  struct R {
    std::string text, reasoning, content;
  };
  const std::vector<R> cases = {
      {"<|channel>thought\n2+2 is 4.<channel|>It is 4.", "2+2 is 4.", "It is 4."},
      {"It is 4.", "", "It is 4."},  // thinking off: the prompt closed an empty channel
      {"<|channel>thought\ncut short", "cut short", ""},
      {"<think>not Gemma's</think>x", "", "<think>not Gemma's</think>x"},
  };
  for (const R& c : cases) {
    const ReasoningSplit whole = SplitReasoning(*format, c.text);
    EXPECT_EQ(whole.reasoning, c.reasoning) << c.text;
    EXPECT_EQ(whole.content, c.content) << c.text;
    for (size_t split = 0; split <= c.text.size(); ++split) {
      ReasoningStreamParser stream(*format);
      ReasoningSplit got;
      for (const std::string& piece : {c.text.substr(0, split), c.text.substr(split)}) {
        const ReasoningSplit d = stream.Feed(piece);
        got.reasoning += d.reasoning;
        got.content += d.content;
      }
      const ReasoningSplit d = stream.Finish();
      got.reasoning += d.reasoning;
      got.content += d.content;
      EXPECT_EQ(got.reasoning, c.reasoning) << c.text << " split at " << split;
      EXPECT_EQ(got.content, c.content) << c.text << " split at " << split;
    }
  }
}

}  // namespace
}  // namespace radixlm::chat
