// Tool-call and reasoning parsers on canned model outputs: every format, malformed and
// partial calls, and streaming with the text split at every byte.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chat/builtin_templates.h"
#include "chat/chat_renderer.h"
#include "chat/json_scan.h"
#include "chat/reasoning_parser.h"
#include "chat/tool_call_parser.h"
#include "chat/tool_prompt.h"

namespace radixlm::chat {
namespace {

using json = nlohmann::json;

struct Case {
  ToolCallFormat format;
  std::string text;
  std::string content;                                     // expected
  std::vector<std::pair<std::string, std::string>> calls;  // expected (name, arguments)
};

const std::vector<std::string> kNames = {"get_weather", "add"};

std::vector<Case> Cases() {
  using F = ToolCallFormat;
  return {
      // qwen25 / hermes
      {F::kQwen25,
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
       "\"Paris\"}}\n</tool_call>",
       "",
       {{"get_weather", R"({"city": "Paris"})"}}},
      {F::kQwen25,
       "Let me check.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 22}}\n"
       "</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
       "\"N\\\"Y\"}}\n</tool_call>",
       "Let me check.\n",
       {{"add", R"({"a": 1, "b": 22})"}, {"get_weather", R"({"city": "N\"Y"})"}}},
      {F::kQwen25,
       "No tools needed: 1 < 2 and <tool is not a tag.",
       "No tools needed: 1 < 2 and <tool is not a tag.",
       {}},
      // Malformed JSON, unknown name, cut short: all text.
      {F::kQwen25,
       "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1,,}}\n</tool_call>",
       "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1,,}}\n</tool_call>",
       {}},
      {F::kQwen25,
       "<tool_call>\n{\"name\": \"rm_rf\", \"arguments\": {}}\n</tool_call>",
       "<tool_call>\n{\"name\": \"rm_rf\", \"arguments\": {}}\n</tool_call>",
       {}},
      {F::kQwen25,
       "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1",
       "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1",
       {}},
      // No arguments key: "{}"; a missing closing tag at the end still counts.
      {F::kQwen25, "<tool_call>{\"name\": \"add\"}", "", {{"add", "{}"}}},
      // llama3
      {F::kLlama3,
       "{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}",
       "",
       {{"add", R"({"a": 1, "b": 2})"}}},
      {F::kLlama3,
       "<|python_tag|>{\"name\": \"add\", \"parameters\": {\"a\": 1}}; {\"name\": "
       "\"get_weather\", \"parameters\": {}}",
       "",
       {{"add", R"({"a": 1})"}, {"get_weather", "{}"}}},
      {F::kLlama3, "The answer is {\"a\": 1}.", "The answer is {\"a\": 1}.", {}},
      {F::kLlama3, "{\"answer\": 42}", "{\"answer\": 42}", {}},
      // mistral
      {F::kMistral,
       "[TOOL_CALLS] [{\"name\": \"add\", \"arguments\": {\"a\": -1.5e3}}, {\"name\": "
       "\"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}]",
       "",
       {{"add", R"({"a": -1.5e3})"}, {"get_weather", R"({"city": "Oslo"})"}}},
      {F::kMistral,
       "Sure. [TOOL_CALLS] [{\"name\": \"add\", \"arguments\": {}}",
       "Sure. [TOOL_CALLS] [{\"name\": \"add\", \"arguments\": {}}",
       {}},
      {F::kMistral, "[TOOL_CALL] is not the marker", "[TOOL_CALL] is not the marker", {}},
      // json (templates without tool syntax)
      {F::kJson,
       "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\", \"days\": [1, 2]}}",
       "",
       {{"get_weather", R"({"city": "Rome", "days": [1, 2]})"}}},
      {F::kJson,
       " [{\"name\": \"add\", \"arguments\": {\"a\": 1}}, {\"name\": \"add\", \"arguments\": "
       "{\"a\": 2}}]",
       "",
       {{"add", R"({"a": 1})"}, {"add", R"({"a": 2})"}}},
      {F::kJson,
       "{\"name\": \"add\", \"arguments\": {\"a\": 1}}\n{\"name\": \"add\", \"arguments\": "
       "{}}{\"name\": \"get_weather\"}\n",
       "",
       {{"add", R"({"a": 1})"}, {"add", "{}"}, {"get_weather", "{}"}}},
      {F::kMistral,
       "[TOOL_CALLS] [{\"name\": \"add\", \"arguments\": {}}{\"name\": \"add\", \"arguments\": "
       "{}}, ]",
       "",
       {{"add", "{}"}, {"add", "{}"}}},
      {F::kLlama3, "{\"name\": \"add\", \"parameters\": {}}; ", "", {{"add", "{}"}}},
      {F::kJson, "It is sunny in Rome.", "It is sunny in Rome.", {}},
      {F::kJson, "{\"name\": \"Bob\", \"age\": 3}", "{\"name\": \"Bob\", \"age\": 3}", {}},
      {F::kJson,
       "{\"name\": \"add\", \"arguments\": {\"a\": tru}}",
       "{\"name\": \"add\", \"arguments\": {\"a\": tru}}",
       {}},
      {F::kJson,
       "{\"name\": \"add\", \"arguments\": {\"a\": [1, {\"b\": \"}\"}]",
       "{\"name\": \"add\", \"arguments\": {\"a\": [1, {\"b\": \"}\"}]",
       {}},
      {F::kJson, "", "", {}},
  };
}

void ExpectParsed(const ParsedToolOutput& out, const Case& c, const std::string& where) {
  EXPECT_EQ(out.content, c.content) << where;
  ASSERT_EQ(out.calls.size(), c.calls.size()) << where;
  for (size_t i = 0; i < c.calls.size(); ++i) {
    EXPECT_EQ(out.calls[i].name, c.calls[i].first) << where;
    EXPECT_EQ(out.calls[i].arguments, c.calls[i].second) << where;
    EXPECT_TRUE(json::accept(out.calls[i].arguments)) << where;
  }
}

TEST(ToolCallParserTest, CannedOutputsOfEveryFormat) {
  for (const Case& c : Cases()) {
    ToolCallParser parser(c.format, kNames);
    ExpectParsed(parser.Parse(c.text), c,
                 std::string(ToolCallFormatName(c.format)) + ": " + c.text);
  }
}

// Streams `pieces`; returns what the deltas assemble to, and checks the deltas' shape: a
// call's first delta carries its name, later ones only arguments.
ParsedToolOutput Stream(const ToolCallParser& parser, const std::vector<std::string>& pieces) {
  ToolCallStreamParser stream(parser);
  ParsedToolOutput out;
  auto apply = [&](const ToolStreamDelta& d) {
    out.content += d.content;
    for (const ToolCallDelta& call : d.calls) {
      if (call.name.has_value()) {
        EXPECT_EQ(call.index, static_cast<int>(out.calls.size()));
        out.calls.push_back({*call.name, ""});
      }
      EXPECT_LT(call.index, static_cast<int>(out.calls.size()));
      out.calls[call.index].arguments += call.arguments;
    }
  };
  for (const std::string& piece : pieces) apply(stream.Feed(piece));
  apply(stream.Finish());
  return out;
}

TEST(ToolCallParserTest, StreamingSplitAtEveryByteAssemblesToTheParse) {
  for (const Case& c : Cases()) {
    ToolCallParser parser(c.format, kNames);
    // A call cut short streams its name (it cannot be taken back), so only complete replies
    // must agree exactly; the others must never stream call text as content.
    bool cut_short = false;
    for (size_t n = 0; n <= c.text.size(); ++n) {
      cut_short |= parser.Snapshot(c.text.substr(0, n), false).calls.size() > c.calls.size();
    }
    for (size_t split = 0; split <= c.text.size(); ++split) {
      const std::string where = c.text + " split at " + std::to_string(split);
      ParsedToolOutput out = Stream(parser, {c.text.substr(0, split), c.text.substr(split)});
      if (!cut_short || out.calls.size() == c.calls.size()) {
        ExpectParsed(out, c, where);
      } else {
        EXPECT_EQ(out.content.find('{'), std::string::npos) << where;
      }
    }
    std::vector<std::string> bytes;
    for (char ch : c.text) bytes.emplace_back(1, ch);
    ParsedToolOutput out = Stream(parser, bytes);
    if (!cut_short) {
      ExpectParsed(out, c, c.text + " byte by byte");
    } else {
      EXPECT_EQ(out.content.find('{'), std::string::npos) << c.text;
    }
  }
}

TEST(ToolCallParserTest, StreamingHoldsBackAMarkerUntilItIsDecided) {
  ToolCallStreamParser stream(ToolCallParser(ToolCallFormat::kQwen25, kNames));
  EXPECT_EQ(stream.Feed("Hi <tool").content, "Hi ");
  ToolStreamDelta d = stream.Feed("_call>\n{\"name\": \"add\", \"arguments\": {\"a\"");
  EXPECT_TRUE(d.content.empty());
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].name, "add");
  EXPECT_EQ(d.calls[0].arguments, "{\"a\"");
  d = stream.Feed(": 1}}\n</tool_call>");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_FALSE(d.calls[0].name.has_value());
  EXPECT_EQ(d.calls[0].arguments, ": 1}");
  EXPECT_TRUE(stream.Finish().empty());
}

TEST(ToolCallParserTest, FormatNamesAndDetection) {
  EXPECT_EQ(*ToolCallFormatFromName("hermes"), ToolCallFormat::kQwen25);
  EXPECT_EQ(*ToolCallFormatFromName("qwen25"), ToolCallFormat::kQwen25);
  EXPECT_EQ(*ToolCallFormatFromName("llama3"), ToolCallFormat::kLlama3);
  EXPECT_EQ(*ToolCallFormatFromName("mistral"), ToolCallFormat::kMistral);
  EXPECT_EQ(*ToolCallFormatFromName("json"), ToolCallFormat::kJson);
  EXPECT_FALSE(ToolCallFormatFromName("gemma").ok());
  EXPECT_EQ(DetectToolCallFormat("{{'<tool_call>\\n'}}"), ToolCallFormat::kQwen25);
  EXPECT_EQ(DetectToolCallFormat("[TOOL_CALLS] {{ x }}"), ToolCallFormat::kMistral);
  EXPECT_EQ(DetectToolCallFormat("<|start_header_id|>ipython"), ToolCallFormat::kLlama3);
  EXPECT_EQ(DetectToolCallFormat(DefaultChatTemplateForArchitecture("gemma3")),
            ToolCallFormat::kJson);
}

TEST(ToolCallParserTest, FormattedCallsParseBack) {
  const std::vector<ToolCall> calls = {{"add", R"({"a": 1})"}, {"get_weather", "{}"}};
  for (ToolCallFormat f : {ToolCallFormat::kQwen25, ToolCallFormat::kLlama3,
                           ToolCallFormat::kMistral, ToolCallFormat::kJson}) {
    ParsedToolOutput out = ToolCallParser(f, kNames).Parse(FormatToolCalls(f, calls));
    EXPECT_EQ(out.content, "") << ToolCallFormatName(f);
    ASSERT_EQ(out.calls.size(), 2u) << ToolCallFormatName(f);
    EXPECT_EQ(out.calls[0].arguments, R"({"a": 1})");
    EXPECT_EQ(out.calls[1].name, "get_weather");
  }
}

TEST(JsonScanTest, CompleteIncompleteInvalid) {
  EXPECT_EQ(ScanJsonValue(R"({"a": [1, 2.5e-3, "x\"y", null]} tail)", 0).end, 32u);
  EXPECT_EQ(ScanJsonValue("12", 0).status, JsonScan::kIncomplete);  // may grow
  EXPECT_EQ(ScanJsonValue("12 ", 0).status, JsonScan::kComplete);
  EXPECT_EQ(ScanJsonValue(R"({"a": "\u00)", 0).status, JsonScan::kIncomplete);
  EXPECT_EQ(ScanJsonValue(R"({"a" 1})", 0).status, JsonScan::kInvalid);
  EXPECT_EQ(ScanJsonValue("[1,]", 0).status, JsonScan::kInvalid);
  EXPECT_EQ(ScanJsonValue("[]", 0).status, JsonScan::kComplete);
  EXPECT_EQ(ScanJsonValue("{}", 0).status, JsonScan::kComplete);
  EXPECT_EQ(ScanJsonValue(std::string(1000, '['), 0).status, JsonScan::kInvalid);
}

TEST(ReasoningParserTest, SplitsAndStreamsAtEveryByte) {
  struct R {
    ReasoningFormat format;
    std::string text, reasoning, content;
  };
  const std::vector<R> cases = {
      {ReasoningFormat::kDeepSeekR1, "I think 2+2=4.</think>\n\nThe answer is 4.", "I think 2+2=4.",
       "The answer is 4."},
      {ReasoningFormat::kDeepSeekR1, "<think>hmm</think>ok", "hmm", "ok"},
      {ReasoningFormat::kDeepSeekR1, "still thinking <", "still thinking <", ""},
      {ReasoningFormat::kQwen3, "<think>\nplan</think>\n\nanswer", "\nplan", "answer"},
      {ReasoningFormat::kQwen3, "no thinking here", "", "no thinking here"},
      {ReasoningFormat::kQwen3, "<thin", "", "<thin"},
  };
  for (const R& c : cases) {
    ReasoningSplit whole = SplitReasoning(c.format, c.text);
    EXPECT_EQ(whole.reasoning, c.reasoning) << c.text;
    EXPECT_EQ(whole.content, c.content) << c.text;
    for (size_t split = 0; split <= c.text.size(); ++split) {
      ReasoningStreamParser stream(c.format);
      ReasoningSplit got;
      for (const std::string& piece : {c.text.substr(0, split), c.text.substr(split)}) {
        ReasoningSplit d = stream.Feed(piece);
        got.reasoning += d.reasoning;
        got.content += d.content;
        EXPECT_EQ(d.content.find("</think>"), std::string::npos);
        EXPECT_EQ(d.reasoning.find("</think"), std::string::npos);
      }
      ReasoningSplit d = stream.Finish();
      got.reasoning += d.reasoning;
      got.content += d.content;
      EXPECT_EQ(got.reasoning, c.reasoning) << c.text << " split " << split;
      EXPECT_EQ(got.content, c.content) << c.text << " split " << split;
    }
  }
  EXPECT_FALSE(ReasoningFormatFromName("r1").ok());
}

TEST(ReasoningParserTest, DeepSeekV3ThinksOnlyWhenAsked) {
  StatusOr<ReasoningFormat> v3 = ReasoningFormatFromName("deepseek-v3");
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(ForRequest(*v3, true), ReasoningFormat::kDeepSeekR1);
  EXPECT_EQ(ForRequest(*v3, false), ReasoningFormat::kQwen3);
  EXPECT_EQ(ForRequest(ReasoningFormat::kDeepSeekR1, false), ReasoningFormat::kDeepSeekR1);
  EXPECT_EQ(ForRequest(ReasoningFormat::kQwen3, true), ReasoningFormat::kQwen3);
  // Thinking off: V3.1's answer after the closed empty block is content, "</think>" or not.
  EXPECT_EQ(SplitReasoning(ForRequest(*v3, false), "Paris.").content, "Paris.");
  EXPECT_EQ(SplitReasoning(ForRequest(*v3, true), "hmm</think>Paris.").reasoning, "hmm");
}

const json kTools = json::parse(R"([{"type": "function", "function": {"name": "get_weather",
  "description": "Weather in a city", "parameters": {"type": "object",
  "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])");

const json kHistory = json::parse(R"([
  {"role": "user", "content": "Weather in Paris?"},
  {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
    "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
  {"role": "tool", "tool_call_id": "call_1", "content": "18 C, sunny"}])");

TEST(ToolPromptTest, GemmaTemplateRendersToolsAndToolMessages) {
  const std::string_view source = DefaultChatTemplateForArchitecture("gemma3");
  EXPECT_FALSE(TemplateHandlesTools(source));
  auto prompt = PrepareToolPrompt(kHistory, kTools, ToolCallFormat::kJson, false);
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  auto renderer = ChatRenderer::FromSource(source, "<bos>", "<eos>");
  ASSERT_TRUE(renderer.ok());
  auto text = renderer->RenderPrompt(prompt->messages, prompt->extra_vars);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("\"name\": \"get_weather\""), std::string::npos) << *text;
  EXPECT_NE(text->find("<start_of_turn>model\n{\"name\": \"get_weather\", \"arguments\": "
                       "{\"city\": \"Paris\"}}<end_of_turn>"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("<start_of_turn>user\nResult of get_weather: 18 C, sunny<end_of_turn>\n"
                       "<start_of_turn>model\n"),
            std::string::npos)
      << *text;
}

TEST(ToolPromptTest, TemplatesWithToolSyntaxGetToolsAndArgumentObjects) {
  const std::string source =
      "{%- for t in tools %}[{{ t.function.name }}]{% endfor -%}"
      "{%- for m in messages %}{{ m.role }}:{% if m.tool_calls %}{% for c in m.tool_calls %}"
      "<tool_call>{{ c.function.arguments.city }}</tool_call>{% endfor %}{% else %}"
      "{{ m.content }}{% endif %}|{% endfor %}";
  EXPECT_TRUE(TemplateHandlesTools(source));
  auto prompt = PrepareToolPrompt(kHistory, kTools, ToolCallFormat::kQwen25, true);
  ASSERT_TRUE(prompt.ok());
  auto renderer = ChatRenderer::FromSource(source, "", "");
  ASSERT_TRUE(renderer.ok());
  auto text = renderer->RenderPrompt(prompt->messages, prompt->extra_vars);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text,
            "[get_weather]user:Weather in Paris?|assistant:<tool_call>Paris</tool_call>|"
            "tool:18 C, sunny|");
}

TEST(ToolPromptTest, MalformedToolCallsAreErrors) {
  json bad = json::parse(R"([{"role": "assistant", "tool_calls": [{"function": {}}]}])");
  auto prompt = PrepareToolPrompt(bad, kTools, ToolCallFormat::kJson, false);
  ASSERT_FALSE(prompt.ok());
  EXPECT_NE(prompt.status().message().find("messages[0].tool_calls[0].function.name"),
            std::string::npos);
}

}  // namespace
}  // namespace radixlm::chat
