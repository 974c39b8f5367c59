// gpt-oss's harmony replies (--reasoning-parser gpt-oss, --tool-call-parser gpt-oss): analysis
// bodies become reasoning, final and preamble bodies content, messages to functions.NAME OpenAI
// calls with JSON arguments (the recipient in the channel header or in the role header, as
// llama.cpp's gpt-oss parser reads both); whole and streamed, split at every byte (so inside
// every marker), and the two parsers chained as the server chains them; malformed replies come
// back as content; detection from the harmony template; formatted calls parse back.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "chat/harmony.h"
#include "chat/reasoning_parser.h"
#include "chat/tool_call_parser.h"

// A namespace of its own: the unity build compiles this file with the other chat tests.
namespace radixlm::chat::gpt_oss_parser_test {
namespace {

using json = nlohmann::json;

const std::vector<std::string> kNames = {"get_weather", "get_time"};
const std::string kCall =
    "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    "{\"city\": \"Paris\"}";

std::vector<std::string> Bytes(const std::string& text) {
  std::vector<std::string> out;
  for (char c : text) out.emplace_back(1, c);
  return out;
}

// --- reasoning ------------------------------------------------------------------------------

struct ReasoningCase {
  std::string text, reasoning, content;
};

std::vector<ReasoningCase> ReasoningCases() {
  return {
      {"<|channel|>analysis<|message|>User greets.<|end|><|start|>assistant<|channel|>final"
       "<|message|>Hello there!",
       "User greets.", "Hello there!"},
      // <|return|> kept (skip_special_tokens false), a preamble, two analysis messages.
      {"<|channel|>analysis<|message|>A.<|end|><|start|>assistant<|channel|>commentary"
       "<|message|>Checking.<|end|><|start|>assistant<|channel|>analysis<|message|>B.<|end|>"
       "<|start|>assistant<|channel|>final<|message|>Done.<|return|>",
       "A.B.", "Checking.Done."},
      // The stray commentary prefix gpt-oss-20b writes at times.
      {"<|channel|>commentary to=assistant<|channel|>analysis<|message|>Hmm<|end|>"
       "<|start|>assistant<|channel|>commentary<|channel|>final<|message|>Yes",
       "Hmm", "Yes"},
      // A tool call stays whole in content, for the tool-call parser.
      {"<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant" + kCall,
       "Need the weather.", "<|start|>assistant" + kCall},
      // Thinking cut short by max_tokens: all reasoning.
      {"<|channel|>analysis<|message|>Let me th", "Let me th", ""},
      // Not harmony: content, including a lone marker and a header that never ends.
      {"Just text, <|end|> and <|chan", "", "Just text, <|end|> and <|chan"},
      {"<|channel|>analysis no message", "", "<|channel|>analysis no message"},
      {"", "", ""},
  };
}

TEST(GptOssReasoningTest, ChannelsSplitIntoReasoningAndContent) {
  EXPECT_EQ(*ReasoningFormatFromName("gpt-oss"), ReasoningFormat::kGptOss);
  for (const ReasoningCase& c : ReasoningCases()) {
    const ReasoningSplit split = SplitReasoning(ReasoningFormat::kGptOss, c.text);
    EXPECT_EQ(split.reasoning, c.reasoning) << c.text;
    EXPECT_EQ(split.content, c.content) << c.text;
  }
}

TEST(GptOssReasoningTest, StreamedAtEveryByteAndEverySplitGivesTheSame) {
  for (const ReasoningCase& c : ReasoningCases()) {
    for (size_t split = 0; split <= c.text.size(); ++split) {
      ReasoningStreamParser stream(ReasoningFormat::kGptOss);
      ReasoningSplit a = stream.Feed(c.text.substr(0, split));
      const ReasoningSplit b = stream.Feed(c.text.substr(split));
      const ReasoningSplit end = stream.Finish();
      EXPECT_EQ(a.reasoning + b.reasoning + end.reasoning, c.reasoning) << c.text << " @" << split;
      EXPECT_EQ(a.content + b.content + end.content, c.content) << c.text << " @" << split;
    }
    ReasoningStreamParser stream(ReasoningFormat::kGptOss);
    std::string reasoning, content;
    for (const std::string& byte : Bytes(c.text)) {
      const ReasoningSplit d = stream.Feed(byte);
      reasoning += d.reasoning;
      content += d.content;
      // No marker text ever reaches the reasoning, even half of one.
      EXPECT_EQ(reasoning.find("<|"), std::string::npos) << c.text;
    }
    const ReasoningSplit end = stream.Finish();
    EXPECT_EQ(reasoning + end.reasoning, c.reasoning) << c.text;
    EXPECT_EQ(content + end.content, c.content) << c.text;
  }
}

TEST(GptOssReasoningTest, HeaderArrivingIsHeldBack) {
  ReasoningStreamParser stream(ReasoningFormat::kGptOss);
  EXPECT_EQ(stream.Feed("<|channel|>anal").reasoning, "");
  EXPECT_EQ(stream.Feed("ysis<|message|>Think").reasoning, "Think");
  ReasoningSplit d = stream.Feed("ing<|e");
  EXPECT_EQ(d.reasoning, "ing");
  d = stream.Feed("nd|><|start|>assistant<|channel|>final<|mess");
  EXPECT_EQ(d.reasoning + d.content, "");
  d = stream.Feed("age|>Hi");
  EXPECT_EQ(d.content, "Hi");
  EXPECT_EQ(d.reasoning, "");
}

// --- tool calls -----------------------------------------------------------------------------

struct ToolCase {
  std::string text;
  std::string content;
  std::vector<std::pair<std::string, std::string>> calls;  // name, JSON arguments
};

std::vector<ToolCase> ToolCases() {
  return {
      // Recipient in the channel header; the reply ends where <|call|> ended the generation.
      {kCall, "", {{"get_weather", R"({"city": "Paris"})"}}},
      {kCall + "<|call|>", "", {{"get_weather", R"({"city": "Paris"})"}}},
      // Recipient in the role header (the template's own history form), with the analysis
      // before it dropped (it is the reasoning parser's).
      {"<|channel|>analysis<|message|>Weather needed.<|end|><|start|>assistant to=functions."
       "get_weather<|channel|>commentary json<|message|>{\"city\":\"Oslo\"}<|call|>",
       "",
       {{"get_weather", R"({"city":"Oslo"})"}}},
      // ... or right at the reply's start (the generation prompt wrote <|start|>assistant).
      {" to=functions.get_time<|channel|>commentary json<|message|>{}", "", {{"get_time", "{}"}}},
      // A preamble, then two calls (parallel); an empty body is no arguments.
      {"<|channel|>commentary<|message|>Checking both.<|end|>" + std::string("<|start|>assistant") +
           kCall +
           "<|call|><|start|>assistant<|channel|>commentary to=functions.get_time "
           "<|constrain|>json<|message|><|call|>",
       "Checking both.",
       {{"get_weather", R"({"city": "Paris"})"}, {"get_time", "{}"}}},
      // Content only.
      {"<|channel|>final<|message|>It is sunny.", "It is sunny.", {}},
      {"plain words", "plain words", {}},
      // Not calls: an unknown function, arguments that are not an object, broken or cut
      // short: the message comes back as content, as written.
      {"<|channel|>commentary to=functions.rm <|constrain|>json<|message|>{}",
       "<|channel|>commentary to=functions.rm <|constrain|>json<|message|>{}",
       {}},
      {"<|channel|>commentary to=functions.get_time json<|message|>[1]",
       "<|channel|>commentary to=functions.get_time json<|message|>[1]",
       {}},
      {"<|channel|>commentary to=functions.get_time json<|message|>{\"a\": }",
       "<|channel|>commentary to=functions.get_time json<|message|>{\"a\": }",
       {}},
      {"<|channel|>commentary to=functions.get_weather json<|message|>{\"city\": \"Par",
       "<|channel|>commentary to=functions.get_weather json<|message|>{\"city\": \"Par",
       {}},
      {"<|channel|>commentary to=functions.get_time json<|message|>{} trailing",
       "<|channel|>commentary to=functions.get_time json<|message|>{} trailing",
       {}},
  };
}

void ExpectParsed(const ParsedToolOutput& out, const ToolCase& c, const std::string& where) {
  EXPECT_EQ(out.content, c.content) << where;
  ASSERT_EQ(out.calls.size(), c.calls.size()) << where;
  for (size_t i = 0; i < c.calls.size(); ++i) {
    EXPECT_EQ(out.calls[i].name, c.calls[i].first) << where;
    EXPECT_EQ(out.calls[i].arguments, c.calls[i].second) << where;
    EXPECT_FALSE(json::parse(out.calls[i].arguments, nullptr, false).is_discarded()) << where;
  }
}

void Apply(const ToolStreamDelta& d, ParsedToolOutput* out) {
  out->content += d.content;
  for (const ToolCallDelta& call : d.calls) {
    if (call.index >= static_cast<int>(out->calls.size())) out->calls.resize(call.index + 1);
    if (call.name.has_value()) out->calls[call.index].name = *call.name;
    out->calls[call.index].arguments += call.arguments;
  }
}

ParsedToolOutput Stream(const ToolCallParser& parser, const std::vector<std::string>& pieces) {
  ToolCallStreamParser stream(parser);
  ParsedToolOutput out;
  for (const std::string& piece : pieces) Apply(stream.Feed(piece), &out);
  Apply(stream.Finish(), &out);
  return out;
}

TEST(GptOssToolCallTest, CannedReplies) {
  const ToolCallParser parser(ToolCallFormat::kGptOss, kNames);
  for (const ToolCase& c : ToolCases()) ExpectParsed(parser.Parse(c.text), c, c.text);
}

TEST(GptOssToolCallTest, StreamedAtEveryByteTheyAssembleToTheParse) {
  const ToolCallParser parser(ToolCallFormat::kGptOss, kNames);
  for (const ToolCase& c : ToolCases()) {
    // A call cut short or broken after its name went out stays a call when streamed; such
    // replies must only never stream the call's text as content.
    bool cut_short = false;
    for (size_t n = 0; n <= c.text.size(); ++n) {
      cut_short |= parser.Snapshot(c.text.substr(0, n), false).calls.size() > c.calls.size();
    }
    for (size_t split = 0; split <= c.text.size(); ++split) {
      const ParsedToolOutput out = Stream(parser, {c.text.substr(0, split), c.text.substr(split)});
      if (!cut_short) ExpectParsed(out, c, c.text + " split at " + std::to_string(split));
    }
    const ParsedToolOutput out = Stream(parser, Bytes(c.text));
    if (cut_short) {
      EXPECT_EQ(out.content.find("<|channel|>commentary to="), std::string::npos) << c.text;
    } else {
      ExpectParsed(out, c, c.text + " byte by byte");
    }
    // Partial arguments are always a prefix of the final ones.
    const ParsedToolOutput whole = parser.Parse(c.text);
    for (size_t n = 0; n <= c.text.size() && !cut_short; ++n) {
      const ToolParseSnapshot snap = parser.Snapshot(c.text.substr(0, n), false);
      ASSERT_LE(snap.calls.size(), whole.calls.size()) << c.text.substr(0, n);
      for (size_t i = 0; i < snap.calls.size(); ++i) {
        EXPECT_TRUE(whole.calls[i].arguments.starts_with(snap.calls[i].arguments))
            << c.text.substr(0, n);
      }
    }
  }
}

TEST(GptOssToolCallTest, StreamingHoldsTheHeaderThenStreamsTheArguments) {
  ToolCallStreamParser stream(ToolCallParser(ToolCallFormat::kGptOss, kNames));
  EXPECT_TRUE(stream.Feed("<|channel|>commentary to=functions.get_wea").empty());
  EXPECT_TRUE(stream.Feed("ther <|constrain|>json<|mess").empty());
  ToolStreamDelta d = stream.Feed("age|>{\"city\": \"Pa");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(*d.calls[0].name, "get_weather");
  EXPECT_EQ(d.calls[0].arguments, "{\"city\": \"Pa");
  d = stream.Feed("ris\"}<|ca");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].arguments, "ris\"}");
  EXPECT_TRUE(stream.Feed("ll|>").empty());
  EXPECT_TRUE(stream.Finish().empty());
  EXPECT_EQ(stream.calls_started(), 1);
}

// The server runs the reasoning parser first and the tool-call parser on its content.
TEST(GptOssToolCallTest, ChainedAfterTheReasoningParserStreamedAtEveryByte) {
  const std::string text =
      "<|channel|>analysis<|message|>Need Paris weather.<|end|>"
      "<|start|>assistant<|channel|>commentary<|message|>One moment."
      "<|end|><|start|>assistant" +
      kCall;
  const ToolCallParser parser(ToolCallFormat::kGptOss, kNames);
  const ReasoningSplit split = SplitReasoning(ReasoningFormat::kGptOss, text);
  EXPECT_EQ(split.reasoning, "Need Paris weather.");
  const ParsedToolOutput whole = parser.Parse(split.content);
  const ToolCase expected{text, "One moment.", {{"get_weather", R"({"city": "Paris"})"}}};
  ExpectParsed(whole, expected, "whole");

  ReasoningStreamParser reasoning(ReasoningFormat::kGptOss);
  ToolCallStreamParser tools(parser);
  std::string thought;
  ParsedToolOutput streamed;
  for (const std::string& byte : Bytes(text)) {
    const ReasoningSplit d = reasoning.Feed(byte);
    thought += d.reasoning;
    Apply(tools.Feed(d.content), &streamed);
  }
  const ReasoningSplit end = reasoning.Finish();
  thought += end.reasoning;
  Apply(tools.Feed(end.content), &streamed);
  Apply(tools.Finish(), &streamed);
  EXPECT_EQ(thought, split.reasoning);
  ExpectParsed(streamed, expected, "streamed");
}

TEST(GptOssToolCallTest, NameDetectionAndFormattedCallsParseBack) {
  EXPECT_EQ(*ToolCallFormatFromName("gpt-oss"), ToolCallFormat::kGptOss);
  EXPECT_EQ(ToolCallFormatName(ToolCallFormat::kGptOss), "gpt-oss");
  std::ifstream in(std::string(RADIXLM_SOURCE_DIR) + "/tests/chat/templates/gpt_oss.jinja");
  std::stringstream source;
  source << in.rdbuf();
  ASSERT_FALSE(source.str().empty());
  EXPECT_EQ(DetectToolCallFormat(source.str()), ToolCallFormat::kGptOss);

  const std::vector<ToolCall> calls = {{"get_weather", R"({"city": "Rome"})"}, {"get_time", ""}};
  const std::string text = FormatToolCalls(ToolCallFormat::kGptOss, calls);
  EXPECT_EQ(text,
            "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
            "{\"city\": \"Rome\"}<|call|><|start|>assistant<|channel|>commentary "
            "to=functions.get_time <|constrain|>json<|message|>{}<|call|>");
  const ParsedToolOutput out = ToolCallParser(ToolCallFormat::kGptOss, kNames).Parse(text);
  EXPECT_EQ(out.content, "");
  ASSERT_EQ(out.calls.size(), 2u);
  EXPECT_EQ(out.calls[0].arguments, calls[0].arguments);
  EXPECT_EQ(out.calls[1].arguments, "{}");
}

TEST(GptOssToolCallTest, ScannerNeverFailsOnOddMarkerRuns) {
  // Markers in every order and cut anywhere: a scan, never a crash, and the parts' raw text
  // covers the settled text in order.
  const std::vector<std::string> atoms = {
      "<|start|>", "<|channel|>", "<|message|>", "<|constrain|>",
      "<|end|>",   "<|call|>",    "<|return|>",  " to=functions.get_time",
      "assistant", "x",           "{}"};
  for (size_t a = 0; a < atoms.size(); ++a) {
    for (size_t b = 0; b < atoms.size(); ++b) {
      for (size_t c = 0; c < atoms.size(); ++c) {
        const std::string text = atoms[a] + atoms[b] + atoms[c] + atoms[(a + b) % atoms.size()];
        for (bool final : {false, true}) {
          const HarmonyScan scan = ScanHarmony(text, final);
          size_t at = 0;
          for (const HarmonyPart& part : scan.parts) {
            ASSERT_EQ(part.raw.data() - text.data(), static_cast<std::ptrdiff_t>(at)) << text;
            at += part.raw.size();
          }
          EXPECT_LE(at, text.size());
          if (final) {
            EXPECT_EQ(at, text.size()) << text;
          }
        }
        ToolCallParser(ToolCallFormat::kGptOss, kNames).Parse(text);
      }
    }
  }
}

}  // namespace
}  // namespace radixlm::chat::gpt_oss_parser_test
