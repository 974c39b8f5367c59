// Gemma 4's tool calls (--tool-call-parser gemma4): <|tool_call>call:NAME{dict}<tool_call|> with
// <|"|>-quoted strings, converted to OpenAI calls with JSON arguments, whole and streamed at
// every byte (the streamed arguments are always a prefix of the final JSON); malformed calls come
// back as content; detection from Gemma 4's template; calls formatted the template's way parse
// back to the same JSON.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "chat/gemma4_tool_syntax.h"
#include "chat/tool_call_parser.h"

// A namespace of its own: the unity build compiles this file with the other chat tests.
namespace radixlm::chat::gemma4_tool_call_test {
namespace {

using json = nlohmann::json;

const std::vector<std::string> kNames = {"get_weather", "add", "search"};
const std::string Q = "<|\"|>";  // Gemma 4's string quote token

struct Case {
  std::string text;
  std::string content;
  std::vector<std::pair<std::string, std::string>> calls;  // name, JSON arguments
};

std::vector<Case> Cases() {
  return {
      {"<|tool_call>call:get_weather{city:" + Q + "Paris" + Q + "}<tool_call|>",
       "",
       {{"get_weather", R"({"city":"Paris"})"}}},
      // Every value kind, nesting, white space where the grammar allows it.
      {"<|tool_call>call:search{query:" + Q + "cats \"and\" dogs\n\\o/" + Q +
           ", limit: 10,exact:false,after:null,score:-1.5e3,"
           "filter:{ lang:" +
           Q + "en" + Q + ",tags:[" + Q + "a" + Q + ", 2, true,[],{}] } }" + "<tool_call|>",
       "",
       {{"search", R"({"query":"cats \"and\" dogs\n\\o/","limit":10,"exact":false,"after":null,)"
                   R"("score":-1.5e3,"filter":{"lang":"en","tags":["a",2,true,[],{}]}})"}}},
      // Content first, two calls back to back, an empty dict.
      {"Let me check.<|tool_call>call:add{a:1,b:2}<tool_call|><|tool_call>call:get_weather{}"
       "<tool_call|>",
       "Let me check.",
       {{"add", R"({"a":1,"b":2})"}, {"get_weather", "{}"}}},
      // A key in quotes, as the template writes declarations; unicode in strings.
      {"<|tool_call>call:get_weather{" + Q + "city" + Q + ":" + Q + "Zürich 東京" + Q +
           "}<tool_call|>",
       "",
       {{"get_weather", R"({"city":"Zürich 東京"})"}}},
      // Cut right after the dict: still a call.
      {"<|tool_call>call:add{a:1}", "", {{"add", R"({"a":1})"}}},
      // Not calls: plain text, an unknown function, a broken dict, a number that is not one,
      // a call cut short.
      {"No call here, <|tool is not a tag.", "No call here, <|tool is not a tag.", {}},
      {"<|tool_call>call:rm{path:" + Q + "/" + Q + "}<tool_call|>",
       "<|tool_call>call:rm{path:" + Q + "/" + Q + "}<tool_call|>",
       {}},
      {"Hi <|tool_call>call:add{a 1}<tool_call|>", "Hi <|tool_call>call:add{a 1}<tool_call|>", {}},
      {"<|tool_call>call:add{a:01}<tool_call|>", "<|tool_call>call:add{a:01}<tool_call|>", {}},
      {"<|tool_call>call:add{a:" + Q + "x", "<|tool_call>call:add{a:" + Q + "x", {}},
      {"<|tool_call>call:add{a:1}junk", "<|tool_call>call:add{a:1}junk", {}},
  };
}

void ExpectParsed(const ParsedToolOutput& out, const Case& c, const std::string& where) {
  EXPECT_EQ(out.content, c.content) << where;
  ASSERT_EQ(out.calls.size(), c.calls.size()) << where;
  for (size_t i = 0; i < c.calls.size(); ++i) {
    EXPECT_EQ(out.calls[i].name, c.calls[i].first) << where;
    EXPECT_EQ(out.calls[i].arguments, c.calls[i].second) << where;
    EXPECT_FALSE(json::parse(out.calls[i].arguments, nullptr, false).is_discarded()) << where;
  }
}

ParsedToolOutput Stream(const ToolCallParser& parser, const std::vector<std::string>& pieces) {
  ToolCallStreamParser stream(parser);
  ParsedToolOutput out;
  auto apply = [&](const ToolStreamDelta& d) {
    out.content += d.content;
    for (const ToolCallDelta& call : d.calls) {
      if (call.index >= static_cast<int>(out.calls.size())) out.calls.resize(call.index + 1);
      if (call.name.has_value()) out.calls[call.index].name = *call.name;
      out.calls[call.index].arguments += call.arguments;
    }
  };
  for (const std::string& piece : pieces) apply(stream.Feed(piece));
  apply(stream.Finish());
  return out;
}

TEST(Gemma4ToolCallTest, CannedReplies) {
  for (const Case& c : Cases()) {
    ExpectParsed(ToolCallParser(ToolCallFormat::kGemma4, kNames).Parse(c.text), c, c.text);
  }
}

TEST(Gemma4ToolCallTest, StreamedAtEveryByteTheyAssembleToTheParse) {
  const ToolCallParser parser(ToolCallFormat::kGemma4, kNames);
  for (const Case& c : Cases()) {
    // A call cut short or broken after its name went out stays a call when streamed; those
    // replies must only never stream the call's text as content.
    bool cut_short = false;
    for (size_t n = 0; n <= c.text.size(); ++n) {
      cut_short |= parser.Snapshot(c.text.substr(0, n), false).calls.size() > c.calls.size();
    }
    for (size_t split = 0; split <= c.text.size(); ++split) {
      const ParsedToolOutput out = Stream(parser, {c.text.substr(0, split), c.text.substr(split)});
      if (!cut_short) ExpectParsed(out, c, c.text + " split at " + std::to_string(split));
    }
    std::vector<std::string> bytes;
    for (char ch : c.text) bytes.emplace_back(1, ch);
    const ParsedToolOutput out = Stream(parser, bytes);
    if (cut_short) {
      EXPECT_EQ(out.content.find("<|tool_call>"), std::string::npos) << c.text;
    } else {
      ExpectParsed(out, c, c.text + " byte by byte");
    }
  }
}

TEST(Gemma4ToolCallTest, PartialArgumentsArePrefixesOfTheFinalJson) {
  const ToolCallParser parser(ToolCallFormat::kGemma4, kNames);
  for (const Case& c : Cases()) {
    if (c.calls.empty()) continue;
    const ParsedToolOutput final_out = parser.Parse(c.text);
    for (size_t n = 0; n <= c.text.size(); ++n) {
      const ToolParseSnapshot snap = parser.Snapshot(c.text.substr(0, n), false);
      ASSERT_LE(snap.calls.size(), final_out.calls.size()) << c.text.substr(0, n);
      for (size_t i = 0; i < snap.calls.size(); ++i) {
        EXPECT_TRUE(final_out.calls[i].arguments.starts_with(snap.calls[i].arguments))
            << c.text.substr(0, n) << " -> " << snap.calls[i].arguments;
      }
      // A string value's closing quote token, arriving, is never streamed as text.
      for (const PartialToolCall& call : snap.calls) {
        EXPECT_EQ(call.arguments.find("<|"), std::string::npos) << c.text.substr(0, n);
      }
    }
  }
}

TEST(Gemma4ToolCallTest, StreamingHoldsBackTheMarker) {
  ToolCallStreamParser stream(ToolCallParser(ToolCallFormat::kGemma4, kNames));
  EXPECT_EQ(stream.Feed("Sure <|tool_").content, "Sure ");
  EXPECT_TRUE(stream.Feed("call>call:get_wea").empty());
  ToolStreamDelta d = stream.Feed("ther{city:" + Q + "Pa");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(*d.calls[0].name, "get_weather");
  EXPECT_EQ(d.calls[0].arguments, R"({"city":"Pa)");
  d = stream.Feed("ris<|\"");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].arguments, "ris");
  d = stream.Feed("|>}<tool_call|>");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].arguments, "\"}");
  EXPECT_TRUE(stream.Finish().empty());
}

TEST(Gemma4ToolCallTest, DeepNestingIsMalformedNotACrash) {
  std::string deep = "<|tool_call>call:add{a:";
  for (int i = 0; i < 200; ++i) deep += "[";
  const ParsedToolOutput out = ToolCallParser(ToolCallFormat::kGemma4, kNames).Parse(deep);
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, deep);
  EXPECT_EQ(ConvertGemma4Args("{a:" + std::string(100, '['), 0).status, Gemma4Scan::kInvalid);
}

TEST(Gemma4ToolCallTest, NameAndDetectionFromGemma4sTemplate) {
  EXPECT_EQ(*ToolCallFormatFromName("gemma4"), ToolCallFormat::kGemma4);
  EXPECT_EQ(ToolCallFormatName(ToolCallFormat::kGemma4), "gemma4");
  std::ifstream in(std::string(RADIXLM_SOURCE_DIR) + "/tests/chat/templates/gemma4.jinja");
  std::stringstream source;
  source << in.rdbuf();
  ASSERT_FALSE(source.str().empty());
  EXPECT_EQ(DetectToolCallFormat(source.str()), ToolCallFormat::kGemma4);
}

TEST(Gemma4ToolCallTest, FormattedCallsParseBackToTheSameJson) {
  const std::vector<ToolCall> calls = {
      {"search", R"({"query": "a \"b\"", "n": 3, "opts": {"x": [1, "y", null]}, "on": true})"},
      {"get_weather", "{}"}};
  const std::string text = FormatToolCalls(ToolCallFormat::kGemma4, calls);
  EXPECT_EQ(text, "<|tool_call>call:search{n:3,on:true,opts:{x:[1," + Q + "y" + Q +
                      ",null]},query:" + Q + "a \"b\"" + Q +
                      "}<tool_call|><|tool_call>call:get_weather{}<tool_call|>");
  const ParsedToolOutput out = ToolCallParser(ToolCallFormat::kGemma4, kNames).Parse(text);
  EXPECT_EQ(out.content, "");
  ASSERT_EQ(out.calls.size(), 2u);
  EXPECT_EQ(json::parse(out.calls[0].arguments), json::parse(calls[0].arguments));
  EXPECT_EQ(out.calls[1].arguments, "{}");
}

}  // namespace
}  // namespace radixlm::chat::gemma4_tool_call_test
