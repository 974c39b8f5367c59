// The tool-call and reasoning formats of the third-wave families (Granite, Phi-4-mini, Mistral's
// compact calls, GLM-4, SmolLM3, Mistral's [THINK]) on canned replies, whole and streamed at
// every byte; detection from the real templates in tests/chat/templates/; tool histories
// through those templates.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "chat/builtin_templates.h"
#include "chat/chat_renderer.h"
#include "chat/reasoning_parser.h"
#include "chat/tool_call_parser.h"
#include "chat/tool_prompt.h"

// A namespace of its own: the unity build compiles this file with the other chat tests.
namespace radixlm::chat::family_formats_test {
namespace {

using json = nlohmann::json;
using F = ToolCallFormat;

std::string ReadTemplate(const std::string& name) {
  std::ifstream in(std::string(RADIXLM_SOURCE_DIR) + "/tests/chat/templates/" + name,
                   std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

const std::vector<std::string> kNames = {"get_weather", "add"};

struct Case {
  F format;
  std::string text;
  std::string content;
  std::vector<std::pair<std::string, std::string>> calls;
};

std::vector<Case> Cases() {
  return {
      // granite: <|tool_call|> and a JSON list.
      {F::kGranite,
       R"(<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}])",
       "",
       {{"get_weather", R"({"city": "Paris"})"}}},
      {F::kGranite,
       "Checking.<|tool_call|>[{\"name\": \"add\", \"arguments\": {\"a\": 1}}, "
       "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}]",
       "Checking.",
       {{"add", R"({"a": 1})"}, {"get_weather", R"({"city": "Oslo"})"}}},
      {F::kGranite, "No calls: <|tool is not a tag.", "No calls: <|tool is not a tag.", {}},
      {F::kGranite,
       R"(<|tool_call|>[{"name": "rm", "arguments": {}}])",
       R"(<|tool_call|>[{"name": "rm", "arguments": {}}])",
       {}},
      // phi4_mini: functools[...] (SGLang's and vLLM's), or <|tool_call|>...<|/tool_call|>.
      {F::kPhi4Mini,
       R"(functools[{"name": "add", "arguments": {"a": 1, "b": 2}}])",
       "",
       {{"add", R"({"a": 1, "b": 2})"}}},
      {F::kPhi4Mini,
       "<|tool_call|>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}"
       "<|/tool_call|>",
       "",
       {{"get_weather", R"({"city": "Rome"})"}}},
      {F::kPhi4Mini,
       "Sure. <|tool_call|>[{\"name\": \"add\", \"arguments\": {}}]<|/tool_call|> Done.",
       "Sure. Done.",
       {{"add", "{}"}}},
      {F::kPhi4Mini,
       "Python's functools module has partial().",
       "Python's functools module has partial().",
       {}},
      // mistral, v11 and later: [TOOL_CALLS]name[ARGS]{...} per call.
      {F::kMistral,
       R"([TOOL_CALLS]get_weather[ARGS]{"city": "Paris"})",
       "",
       {{"get_weather", R"({"city": "Paris"})"}}},
      {F::kMistral,
       "[TOOL_CALLS]add[ARGS]{\"a\": 1}[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]"
       "{\"city\": \"Lima\"}",
       "",
       {{"add", R"({"a": 1})"}, {"get_weather", R"({"city": "Lima"})"}}},
      {F::kMistral,
       R"([TOOL_CALLS] [{"name": "add", "arguments": {"a": 2}}])",
       "",
       {{"add", R"({"a": 2})"}}},
      {F::kMistral,
       R"([TOOL_CALLS]launch[ARGS]{"x": 1})",
       R"([TOOL_CALLS]launch[ARGS]{"x": 1})",
       {}},
      {F::kMistral, R"([TOOL_CALLS]add[ARGS]{"a": )", R"([TOOL_CALLS]add[ARGS]{"a": )", {}},
      // glm4: the name on its own line, then the arguments.
      {F::kGlm4,
       "get_weather\n{\"city\": \"Paris\"}",
       "",
       {{"get_weather", R"({"city": "Paris"})"}}},
      {F::kGlm4, "\nadd\n{\"a\": 1, \"b\": 2}\n", "", {{"add", R"({"a": 1, "b": 2})"}}},
      {F::kGlm4, "Paris is sunny.\n{not a call}", "Paris is sunny.\n{not a call}", {}},
      {F::kGlm4, "add\nthe numbers", "add\nthe numbers", {}},
      {F::kGlm4, "add", "add", {}},
      {F::kGlm4, "get_weather\n{\"city\": ", "get_weather\n{\"city\": ", {}},
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
      if (call.index < static_cast<int>(out.calls.size())) {
        out.calls[call.index].arguments += call.arguments;
      }
    }
  };
  for (const std::string& piece : pieces) apply(stream.Feed(piece));
  apply(stream.Finish());
  return out;
}

TEST(FamilyToolFormatsTest, CannedReplies) {
  for (const Case& c : Cases()) {
    ExpectParsed(ToolCallParser(c.format, kNames).Parse(c.text), c,
                 std::string(ToolCallFormatName(c.format)) + ": " + c.text);
  }
}

TEST(FamilyToolFormatsTest, StreamedAtEveryByteTheyAssembleToTheParse) {
  for (const Case& c : Cases()) {
    ToolCallParser parser(c.format, kNames);
    // A call cut short has streamed its name (it cannot be taken back): such replies must only
    // never stream the call's text as content.
    bool cut_short = false;
    for (size_t n = 0; n <= c.text.size(); ++n) {
      cut_short |= parser.Snapshot(c.text.substr(0, n), false).calls.size() > c.calls.size();
    }
    for (size_t split = 0; split <= c.text.size(); ++split) {
      const std::string where = c.text + " split at " + std::to_string(split);
      ParsedToolOutput out = Stream(parser, {c.text.substr(0, split), c.text.substr(split)});
      if (!cut_short) ExpectParsed(out, c, where);
    }
    std::vector<std::string> bytes;
    for (char ch : c.text) bytes.emplace_back(1, ch);
    ParsedToolOutput out = Stream(parser, bytes);
    if (!cut_short) {
      ExpectParsed(out, c, c.text + " byte by byte");
    } else {
      EXPECT_EQ(out.content.find("[ARGS]"), std::string::npos) << c.text;
    }
  }
}

TEST(FamilyToolFormatsTest, StreamingHoldsBackWhatMayBecomeACall) {
  ToolCallStreamParser glm(ToolCallParser(F::kGlm4, kNames));
  EXPECT_TRUE(glm.Feed("get_wea").empty());  // a tool's name, arriving
  ToolStreamDelta d = glm.Feed("ther\n{\"city\"");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].name, "get_weather");
  EXPECT_EQ(d.calls[0].arguments, "{\"city\"");
  d = glm.Feed(": \"Paris\"}");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].arguments, ": \"Paris\"}");
  EXPECT_TRUE(glm.Finish().empty());
  // A first word that no tool's name starts with is content at once.
  ToolCallStreamParser text(ToolCallParser(F::kGlm4, kNames));
  EXPECT_EQ(text.Feed("Sunny").content, "Sunny");
  ToolCallStreamParser mistral(ToolCallParser(F::kMistral, kNames));
  EXPECT_EQ(mistral.Feed("Ok [TOOL_").content, "Ok ");
  d = mistral.Feed("CALLS]add[AR");
  EXPECT_TRUE(d.empty());
  d = mistral.Feed("GS]{\"a\": 1}");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].name, "add");
  EXPECT_EQ(d.calls[0].arguments, "{\"a\": 1}");
}

TEST(FamilyToolFormatsTest, NamesAndDetectionFromTheRealTemplates) {
  EXPECT_EQ(*ToolCallFormatFromName("granite"), F::kGranite);
  EXPECT_EQ(*ToolCallFormatFromName("phi4_mini"), F::kPhi4Mini);
  EXPECT_EQ(*ToolCallFormatFromName("phi4_mini_json"), F::kPhi4Mini);
  EXPECT_EQ(*ToolCallFormatFromName("glm4"), F::kGlm4);
  for (F f : {F::kGranite, F::kPhi4Mini, F::kGlm4}) {
    EXPECT_EQ(*ToolCallFormatFromName(ToolCallFormatName(f)), f);
  }
  EXPECT_FALSE(ToolCallFormatFromName("glm45").ok());  // GLM-4.5's XML calls are not parsed
  EXPECT_EQ(DetectToolCallFormat(ReadTemplate("granite3_3.jinja")), F::kGranite);
  EXPECT_EQ(DetectToolCallFormat(ReadTemplate("phi4_mini.jinja")), F::kPhi4Mini);
  EXPECT_EQ(DetectToolCallFormat(ReadTemplate("glm_z1_0414.jinja")), F::kGlm4);
  EXPECT_EQ(DetectToolCallFormat(ReadTemplate("smollm3.jinja")), F::kQwen25);
  EXPECT_EQ(DetectToolCallFormat(ReadTemplate("mistral_small3_1.jinja")), F::kMistral);
  EXPECT_EQ(DetectToolCallFormat(ReadTemplate("gemma2.jinja")), F::kJson);
  EXPECT_EQ(DetectToolCallFormat(ReadTemplate("olmo2.jinja")), F::kJson);
  // The built-in fallbacks detect the same.
  EXPECT_EQ(DetectToolCallFormat(DefaultChatTemplateForArchitecture("glm4")), F::kGlm4);
  EXPECT_EQ(DetectToolCallFormat(DefaultChatTemplateForArchitecture("phi3")), F::kPhi4Mini);
}

TEST(FamilyToolFormatsTest, FormattedCallsParseBack) {
  const std::vector<ToolCall> calls = {{"add", R"({"a": 1})"}, {"get_weather", "{}"}};
  for (F f : {F::kGranite, F::kPhi4Mini}) {
    ParsedToolOutput out = ToolCallParser(f, kNames).Parse(FormatToolCalls(f, calls));
    EXPECT_EQ(out.content, "") << ToolCallFormatName(f);
    ASSERT_EQ(out.calls.size(), 2u) << ToolCallFormatName(f);
    EXPECT_EQ(out.calls[0].arguments, R"({"a": 1})");
    EXPECT_EQ(out.calls[1].name, "get_weather");
  }
  // GLM-4 makes one call per reply.
  ParsedToolOutput glm =
      ToolCallParser(F::kGlm4, kNames).Parse(FormatToolCalls(F::kGlm4, {calls[0]}));
  ASSERT_EQ(glm.calls.size(), 1u);
  EXPECT_EQ(glm.calls[0].name, "add");
  EXPECT_EQ(glm.content, "");
}

TEST(FamilyReasoningTest, MistralThinkTagsAndGlm45) {
  EXPECT_EQ(*ReasoningFormatFromName("mistral"), ReasoningFormat::kMistral);
  EXPECT_EQ(*ReasoningFormatFromName("glm45"), ReasoningFormat::kQwen3);
  struct R {
    ReasoningFormat format;
    std::string text, reasoning, content;
  };
  const std::vector<R> cases = {
      {ReasoningFormat::kMistral, "[THINK]2+2 is 4.[/THINK]\n\nIt is 4.", "2+2 is 4.", "It is 4."},
      {ReasoningFormat::kMistral, "Just 4.", "", "Just 4."},
      {ReasoningFormat::kMistral, "[THINK]cut short", "cut short", ""},
      {ReasoningFormat::kMistral, "<think>not Mistral's</think>x", "",
       "<think>not Mistral's</think>x"},
      // SmolLM3 in /think mode writes its <think> block (the qwen3 parser).
      {ReasoningFormat::kQwen3, "<think>\nplan\n</think>\nanswer", "\nplan\n", "answer"},
  };
  for (const R& c : cases) {
    const ReasoningSplit whole = SplitReasoning(c.format, c.text);
    EXPECT_EQ(whole.reasoning, c.reasoning) << c.text;
    EXPECT_EQ(whole.content, c.content) << c.text;
    for (size_t split = 0; split <= c.text.size(); ++split) {
      ReasoningStreamParser stream(c.format);
      ReasoningSplit got;
      for (const std::string& piece : {c.text.substr(0, split), c.text.substr(split)}) {
        const ReasoningSplit d = stream.Feed(piece);
        got.reasoning += d.reasoning;
        got.content += d.content;
        EXPECT_EQ(d.reasoning.find("[/THINK"), std::string::npos) << c.text;
      }
      const ReasoningSplit d = stream.Finish();
      got.reasoning += d.reasoning;
      got.content += d.content;
      EXPECT_EQ(got.reasoning, c.reasoning) << c.text << " split " << split;
      EXPECT_EQ(got.content, c.content) << c.text << " split " << split;
    }
  }
}

// Granite 3.2 / 3.3's plain-text markers (vLLM's granite parser), both spellings; whole and
// streamed at every byte, no marker text ever reaching either field.
TEST(FamilyReasoningTest, GraniteThoughtProcessAndResponse) {
  EXPECT_EQ(*ReasoningFormatFromName("granite"), ReasoningFormat::kGranite);
  struct R {
    std::string text, reasoning, content;
  };
  const std::vector<R> cases = {
      {"Here is my thought process:\n2+2 is 4.\n\nHere is my response:\nIt is 4.",
       "\n2+2 is 4.\n\n", "It is 4."},
      {"Here's my thought process: short. Here's my response: 4", " short. ", "4"},
      {"Here is my thought process: mixed Here's my response:4", " mixed ", "4"},
      {"Here is my thought process: cut short", " cut short", ""},
      {"Here is the answer: 4", "", "Here is the answer: 4"},
      {"4. Here is my response: no thinking first", "",
       "4. Here is my response: no thinking first"},
      {"Here", "", "Here"},
  };
  for (const R& c : cases) {
    const ReasoningSplit whole = SplitReasoning(ReasoningFormat::kGranite, c.text);
    EXPECT_EQ(whole.reasoning, c.reasoning) << c.text;
    EXPECT_EQ(whole.content, c.content) << c.text;
    ReasoningStreamParser stream(ReasoningFormat::kGranite);
    ReasoningSplit got;
    for (char ch : c.text) {
      const ReasoningSplit d = stream.Feed(std::string(1, ch));
      got.reasoning += d.reasoning;
      got.content += d.content;
    }
    const ReasoningSplit d = stream.Finish();
    got.reasoning += d.reasoning;
    got.content += d.content;
    EXPECT_EQ(got.reasoning, c.reasoning) << c.text << " byte by byte";
    EXPECT_EQ(got.content, c.content) << c.text << " byte by byte";
    EXPECT_EQ(got.reasoning.find("Here is my"), std::string::npos) << c.text;
  }
}

const json kTools = json::parse(R"([{"type": "function", "function": {"name": "get_weather",
  "description": "Weather in a city", "parameters": {"type": "object",
  "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])");

const json kHistory = json::parse(R"([
  {"role": "user", "content": "Weather in Paris?"},
  {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
    "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
  {"role": "tool", "tool_call_id": "call_1", "content": "18 C, sunny"}])");

StatusOr<std::string> RenderWithTools(std::string_view source, F format, std::string bos,
                                      std::string eos) {
  RADIXLM_ASSIGN_OR_RETURN(ToolPrompt prompt,
                           PrepareToolPrompt(kHistory, kTools, format, TemplateHandlesTools(source),
                                             TemplateRendersToolCalls(source)));
  RADIXLM_ASSIGN_OR_RETURN(ChatRenderer renderer,
                           ChatRenderer::FromSource(source, std::move(bos), std::move(eos)));
  return renderer.RenderPrompt(prompt.messages, prompt.extra_vars);
}

TEST(FamilyToolPromptTest, GlmTurnsCallsIntoMetadataAndResultsIntoObservations) {
  auto text = RenderWithTools(DefaultChatTemplateForArchitecture("glm4"), F::kGlm4, "", "");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("## get_weather"), std::string::npos) << *text;
  EXPECT_NE(text->find("<|assistant|>get_weather\n{\"city\": \"Paris\"}"), std::string::npos)
      << *text;
  EXPECT_NE(text->find("<|observation|>\n18 C, sunny<|assistant|>"), std::string::npos) << *text;
}

TEST(FamilyToolPromptTest, TemplatesThatPrintOnlyContentGetTheCallsAsText) {
  // Granite 3.3: the call is written as the model writes it, the result is a tool turn.
  auto granite = RenderWithTools(ReadTemplate("granite3_3.jinja"), F::kGranite, "", "");
  ASSERT_TRUE(granite.ok()) << granite.status().ToString();
  EXPECT_NE(granite->find("<|start_of_role|>assistant<|end_of_role|><|tool_call|>[{\"name\": "
                          "\"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]"),
            std::string::npos)
      << *granite;
  EXPECT_NE(granite->find("<|start_of_role|>tool<|end_of_role|>18 C, sunny"), std::string::npos)
      << *granite;
  // SmolLM3: hermes calls; the result comes back as a user turn (its template's choice).
  auto smollm3 =
      RenderWithTools(DefaultChatTemplateForArchitecture("smollm3"), F::kQwen25, "", "<|im_end|>");
  ASSERT_TRUE(smollm3.ok()) << smollm3.status().ToString();
  EXPECT_NE(smollm3->find("<tool_call>\n{\"name\": \"get_weather\""), std::string::npos)
      << *smollm3;
  EXPECT_NE(smollm3->find("<|im_start|>user\n18 C, sunny<|im_end|>"), std::string::npos)
      << *smollm3;
  // Mistral Small 3.1 renders tool_calls itself (and wants ids of 9 characters or more).
  auto mistral =
      RenderWithTools(DefaultChatTemplateForArchitecture("mistral3"), F::kMistral, "<s>", "</s>");
  ASSERT_FALSE(mistral.ok());
  EXPECT_NE(mistral.status().message().find("Tool call IDs should be alphanumeric"),
            std::string::npos)
      << mistral.status().ToString();
}

TEST(FamilyToolPromptTest, TemplatesWithoutToolSyntaxDescribeTheTools) {
  // Phi-4-mini's own template, Gemma 2's and OLMo 2's: the tools in the system turn (Gemma 2
  // refuses a system turn, as its template does for any request with one).
  auto phi = RenderWithTools(DefaultChatTemplateForArchitecture("phi3"), F::kPhi4Mini, "", "");
  ASSERT_TRUE(phi.ok()) << phi.status().ToString();
  EXPECT_NE(phi->find("functools[{\"name\": \"function_name\""), std::string::npos) << *phi;
  EXPECT_NE(phi->find("<|assistant|>functools[{\"name\": \"get_weather\""), std::string::npos)
      << *phi;
  auto olmo = RenderWithTools(DefaultChatTemplateForArchitecture("olmo2"), F::kJson, "", "");
  ASSERT_TRUE(olmo.ok()) << olmo.status().ToString();
  EXPECT_NE(olmo->find("<|system|>\nYou can call the following functions"), std::string::npos)
      << *olmo;
  auto gemma2 = RenderWithTools(DefaultChatTemplateForArchitecture("gemma2"), F::kJson, "", "");
  ASSERT_FALSE(gemma2.ok());
  EXPECT_NE(gemma2.status().message().find("System role not supported"), std::string::npos);
}

}  // namespace
}  // namespace radixlm::chat::family_formats_test
