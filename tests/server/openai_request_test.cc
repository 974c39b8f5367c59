// /v1/completions and /v1/chat/completions body parsing.
#include "server/openai_request.h"

#include <gtest/gtest.h>

#include <cstring>

#include "chat/tool_call_parser.h"
#include "grammar/test_util.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

StatusOr<OpenAiRequest> Completion(const std::string& body) {
  return ParseCompletionRequest(json::parse(body), ServerConfig());
}
StatusOr<OpenAiRequest> Chat(const std::string& body) {
  return ParseChatRequest(json::parse(body), ServerConfig());
}

TEST(OpenAiRequestTest, CompletionDefaultsAndFields) {
  auto r = Completion(R"({"model": "m", "prompt": "hi", "temperature": 0, "seed": 7, "n": 2,
      "stop": ["\n"], "logprobs": 3, "stream": true, "stream_options": {"include_usage": true},
      "top_k": 5, "min_p": 0.1, "min_tokens": 2, "user": "u"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->chat);
  EXPECT_EQ(r->prompts.size(), 1u);
  EXPECT_EQ(r->sampling.max_new_tokens, 16);  // OpenAI's completions default
  EXPECT_EQ(r->sampling.sampling_seed, 7);
  EXPECT_EQ(r->sampling.n, 2);
  EXPECT_EQ(r->sampling.top_k, 5);
  EXPECT_EQ(r->sampling.min_new_tokens, 2);
  EXPECT_EQ(r->sampling.stop, std::vector<std::string>{"\n"});
  EXPECT_TRUE(r->logprobs);
  EXPECT_EQ(r->top_logprobs, 3);
  EXPECT_TRUE(r->include_usage);
}

TEST(OpenAiRequestTest, CompletionPromptShapes) {
  EXPECT_EQ(Completion(R"({"prompt": ["a", "b"]})")->prompts.size(), 2u);
  auto ids = Completion(R"({"prompt": [1, 2, 3]})");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->prompts.size(), 1u);
  EXPECT_TRUE(ids->prompts[0].input_ids.has_value());
  EXPECT_EQ(Completion(R"({"prompt": [[1], [2, 3]]})")->prompts.size(), 2u);
  for (const char* bad :
       {R"({})", R"({"prompt": 3})", R"({"prompt": []})", R"({"prompt": ["a", 1]})",
        R"({"prompt": [1, -2]})", R"({"prompt": [[1], []]})"}) {
    EXPECT_EQ(Completion(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(OpenAiRequestTest, CompletionBadFields) {
  const char* bad[] = {
      R"({"prompt": "a", "max_tokens": -1})",
      R"({"prompt": "a", "max_tokens": "5"})",
      R"({"prompt": "a", "n": 0})",
      R"({"prompt": "a", "logprobs": 21})",
      R"({"prompt": "a", "logprobs": true})",
      R"({"prompt": "a", "stop": 5})",
      R"({"prompt": "a", "stream_options": {}})",
      R"({"prompt": "a", "seed": "x"})",
      R"({"prompt": "a", "temperature": "hot"})",
      R"({"prompt": "a", "echo": 1})",
      R"({"prompt": "a", "model": 3})",
  };
  for (const char* body : bad) {
    EXPECT_EQ(Completion(body).status().code(), StatusCode::kInvalidArgument) << body;
  }
  for (const char* body :
       {R"({"prompt": "a", "suffix": "z"})", R"({"prompt": "a", "best_of": 3})"}) {
    EXPECT_EQ(Completion(body).status().code(), StatusCode::kUnimplemented) << body;
  }
  // echo with logprobs scores the prompt (lm-evaluation-harness's loglikelihood requests).
  auto echo = Completion(R"({"prompt": "a", "echo": true, "logprobs": 0, "max_tokens": 0})");
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_TRUE(echo->echo && echo->logprobs);
  EXPECT_EQ(echo->top_logprobs, 0);
  // stop_regex is read (SGLang's extension), as a string or a list; "" entries mean none.
  auto one = Completion(R"({"prompt": "a", "stop_regex": "x+"})");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->sampling.stop_regex, std::vector<std::string>{"x+"});
  auto two = Completion(R"({"prompt": "a", "stop_regex": ["x+", "", "y"]})");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->sampling.stop_regex, (std::vector<std::string>{"x+", "y"}));
  EXPECT_EQ(Completion(R"({"prompt": "a", "stop_regex": 3})").status().code(),
            StatusCode::kInvalidArgument);
  // Unset values are not requests for a feature.
  for (const char* body :
       {R"({"prompt": "a", "suffix": ""})", R"({"prompt": "a", "stop_regex": ""})",
        R"({"prompt": "a", "stop_regex": null})", R"({"prompt": "a", "tools": []})"}) {
    EXPECT_TRUE(Completion(body).ok()) << body;
  }
  auto chat = Chat(R"({"messages": [{"role": "user", "content": "hi"}], "stop_regex": "x"})");
  ASSERT_TRUE(chat.ok());
  EXPECT_EQ(chat->sampling.stop_regex, std::vector<std::string>{"x"});
}

TEST(OpenAiRequestTest, ChatMessagesAndTokens) {
  auto r = Chat(R"({"messages": [{"role": "system", "content": "be brief"},
      {"role": "user", "content": [{"type": "text", "text": "hi"}]}],
      "max_tokens": 9, "max_completion_tokens": 4, "logprobs": true, "top_logprobs": 2})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->chat);
  ASSERT_EQ(r->messages.size(), 2u);
  EXPECT_EQ(r->messages[1].content, "hi");
  EXPECT_EQ(r->sampling.max_new_tokens, 4);  // max_completion_tokens wins
  EXPECT_EQ(r->top_logprobs, 2);
  auto no_cap = Chat(R"({"messages": [{"role": "user", "content": "x"}]})");
  ASSERT_TRUE(no_cap.ok());
  EXPECT_FALSE(no_cap->sampling.max_new_tokens.has_value());
}

TEST(OpenAiRequestTest, ChatBadMessages) {
  const char* bad[] = {
      R"({})",
      R"({"messages": []})",
      R"({"messages": "hi"})",
      R"({"messages": [3]})",
      R"({"messages": [{"content": "x"}]})",
      R"({"messages": [{"role": "wizard", "content": "x"}]})",
      R"({"messages": [{"role": "user"}]})",
      R"({"messages": [{"role": "user", "content": 5}]})",
      R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})",
      R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})",
      R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "xml"}})",
  };
  for (const char* body : bad) {
    EXPECT_EQ(Chat(body).status().code(), StatusCode::kInvalidArgument) << body;
  }
  EXPECT_EQ(Chat(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})")
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Chat(R"({"messages": [{"role": "user", "content": [{"type": "input_audio"}]}]})")
                .status()
                .code(),
            StatusCode::kUnimplemented);
  // Image parts: their URLs in order, each a text part holding the marker for the template.
  auto images = Chat(R"({"messages": [{"role": "user", "content": [
      {"type": "text", "text": "see"},
      {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
      {"type": "image_url", "image_url": "http://h/x.png"}]}]})");
  ASSERT_TRUE(images.ok()) << images.status().ToString();
  EXPECT_EQ(images->image_urls,
            (std::vector<std::string>{"data:image/png;base64,AA", "http://h/x.png"}));
  EXPECT_EQ(images->messages[0].content, "see<__media__><__media__>");
  EXPECT_EQ(images->raw_messages[0]["content"][1],
            nlohmann::json({{"type", "text"}, {"text", "<__media__>"}}));
  EXPECT_EQ(Chat(R"({"messages": [{"role": "user", "content": "x"}],
      "tools": [{"type": "function"}]})")
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(Chat(R"({"messages": [{"role": "assistant", "content": null}]})").ok());
}

TEST(OpenAiRequestTest, ResponseFormatMapsToGrammarFields) {
  auto object = Chat(R"({"messages": [{"role": "user", "content": "x"}],
      "response_format": {"type": "json_object"}})");
  ASSERT_TRUE(object.ok());
  EXPECT_TRUE(object->sampling.json_schema.has_value());
  auto schema = Chat(R"({"messages": [{"role": "user", "content": "x"}],
      "response_format": {"type": "json_schema", "json_schema": {"name": "n",
      "schema": {"type": "integer"}}}})");
  ASSERT_TRUE(schema.ok());
  EXPECT_EQ(json::parse(*schema->sampling.json_schema), json({{"type", "integer"}}));
  auto tag = Chat(R"({"messages": [{"role": "user", "content": "x"}],
      "response_format": {"type": "structural_tag", "triggers": ["<f>"],
      "structures": [{"begin": "<f>", "schema": {"type": "integer"}, "end": "</f>"}]}})");
  ASSERT_TRUE(tag.ok()) << tag.status().ToString();
  ASSERT_TRUE(tag->sampling.structural_tag.has_value());
  EXPECT_EQ(json::parse(*tag->sampling.structural_tag)["triggers"], json({"<f>"}));
  auto regex = Chat(R"({"messages": [{"role": "user", "content": "x"}], "regex": "[0-9]+"})");
  ASSERT_TRUE(regex.ok());
  EXPECT_EQ(regex->sampling.regex, "[0-9]+");
  // Completions take it too (as SGLang's do).
  auto completion = Completion(R"({"prompt": "x", "response_format": {"type": "json_schema",
      "json_schema": {"name": "n", "schema": {"type": "integer"}}}})");
  ASSERT_TRUE(completion.ok()) << completion.status().ToString();
  EXPECT_EQ(json::parse(*completion->sampling.json_schema), json({{"type", "integer"}}));
  EXPECT_EQ(Completion(R"({"prompt": "x", "response_format": {"type": "xml"}})").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(OpenAiRequestTest, PriorityIsReadAndLoraOrHiddenStatesAreRefused) {
  auto completion = Completion(R"({"prompt": "x", "priority": -3})");
  ASSERT_TRUE(completion.ok()) << completion.status().ToString();
  EXPECT_EQ(completion->priority, -3);
  auto chat = Chat(R"({"messages": [{"role": "user", "content": "x"}], "priority": 7})");
  ASSERT_TRUE(chat.ok()) << chat.status().ToString();
  EXPECT_EQ(chat->priority, 7);
  EXPECT_EQ(Completion(R"({"prompt": "x", "priority": "high"})").status().code(),
            StatusCode::kInvalidArgument);
  for (const char* extra : {R"("return_hidden_states": true)"}) {
    EXPECT_EQ(Completion(std::string(R"({"prompt": "x", )") + extra + "}").status().code(),
              StatusCode::kUnimplemented)
        << extra;
    EXPECT_EQ(
        Chat(std::string(R"({"messages": [{"role": "user", "content": "x"}], )") + extra + "}")
            .status()
            .code(),
        StatusCode::kUnimplemented)
        << extra;
  }
  // Unset values ask for nothing.
  EXPECT_TRUE(
      Completion(R"({"prompt": "x", "lora_path": null, "return_hidden_states": false})").ok());
  // SGLang's lora_path names an adapter (which one "model" picks is the route's business).
  auto lora = Completion(R"({"prompt": "x", "lora_path": "adapter"})");
  ASSERT_TRUE(lora.ok()) << lora.status().ToString();
  EXPECT_EQ(lora->lora_path, "adapter");
  EXPECT_EQ(Completion(R"({"prompt": "x", "lora_path": 3})").status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace radixlm::server

namespace radixlm::server {
namespace {

StatusOr<OpenAiRequest> ToolChat(const std::string& extra) {
  ServerConfig limits;
  return ParseChatRequest(nlohmann::json::parse(
                              R"({"messages": [{"role": "user", "content": "x"}],
      "tools": [{"type": "function", "function": {"name": "get_weather", "parameters":
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
        {"type": "function", "function": {"name": "now"}}])" +
                              extra + "}"),
                          limits);
}

TEST(OpenAiToolsTest, ToolsAndToolChoiceAreRead) {
  auto automatic = ToolChat("");
  ASSERT_TRUE(automatic.ok()) << automatic.status().ToString();
  EXPECT_EQ(automatic->tools.choice, ToolChoice::kAuto);
  EXPECT_EQ(automatic->tools.names(), (std::vector<std::string>{"get_weather", "now"}));
  EXPECT_TRUE(automatic->tools.parallel);
  auto named = ToolChat(R"(, "tool_choice": {"type": "function", "function": {"name": "now"}},
      "parallel_tool_calls": false)");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->tools.choice, ToolChoice::kNamed);
  EXPECT_EQ(named->tools.named, "now");
  EXPECT_FALSE(named->tools.parallel);
  EXPECT_EQ(ToolChat(R"(, "tool_choice": "required")")->tools.choice, ToolChoice::kRequired);
  EXPECT_FALSE(ToolChat(R"(, "tool_choice": "none")")->tools.active());
  for (const char* bad :
       {R"(, "tool_choice": "always")",
        R"(, "tool_choice": {"type": "function", "function": {"name": "x"}})",
        R"(, "tool_choice": "required", "response_format": {"type": "json_object"})",
        R"(, "parallel_tool_calls": 1)"}) {
    EXPECT_EQ(ToolChat(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
  ServerConfig limits;
  for (const char* bad :
       {R"({"messages": [{"role": "user", "content": "x"}], "tools": {}})",
        R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function",
               "function": {"name": "has space"}}]})",
        R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function",
               "function": {"name": "f", "parameters": 3}}]})",
        R"({"messages": [{"role": "user", "content": "x"}], "tool_choice": "required"})"}) {
    EXPECT_EQ(ParseChatRequest(nlohmann::json::parse(bad), limits).status().code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
}

// tool_choice auto: the structural tag admits each format's calls among free text, with
// arguments that match the schema, and the parser reads them back.
TEST(OpenAiToolsTest, AutoStructuralTagConstrainsCallsInEveryFormat) {
  auto request = ToolChat("");
  ASSERT_TRUE(request.ok());
  for (chat::ToolCallFormat format :
       {chat::ToolCallFormat::kQwen25, chat::ToolCallFormat::kLlama3,
        chat::ToolCallFormat::kMistral, chat::ToolCallFormat::kGranite,
        chat::ToolCallFormat::kPhi4Mini, chat::ToolCallFormat::kJson}) {
    const std::string tag = AutoToolCallStructuralTag(request->tools, format);
    EXPECT_EQ(AutoToolCallConstraint(request->tools, format, {}), tag);
    auto grammar = grammar::testing::MustCompile(grammar::GrammarKind::kStructuralTag, tag);
    ASSERT_NE(grammar, nullptr) << tag;
    const std::string call =
        chat::FormatToolCalls(format, {{"get_weather", R"({"city": "Oslo"})"}});
    EXPECT_TRUE(grammar::testing::FullMatch(*grammar, "Let me see. " + call)) << call;
    EXPECT_TRUE(grammar::testing::FullMatch(*grammar, call));
    EXPECT_TRUE(
        grammar::testing::FullMatch(*grammar, chat::FormatToolCalls(format, {{"now", ""}})));
    EXPECT_TRUE(grammar::testing::FullMatch(*grammar, "no call at all"));
    const std::string bad_args =
        chat::FormatToolCalls(format, {{"get_weather", R"({"town": "Oslo"})"}});
    EXPECT_FALSE(grammar::testing::FullMatch(*grammar, bad_args)) << bad_args;
    const std::string unknown = chat::FormatToolCalls(format, {{"launch", "{}"}});
    EXPECT_FALSE(grammar::testing::FullMatch(*grammar, unknown)) << unknown;
    chat::ParsedToolOutput parsed =
        chat::ToolCallParser(format, request->tools.names()).Parse(call);
    ASSERT_EQ(parsed.calls.size(), 1u);
    EXPECT_EQ(parsed.calls[0].arguments, R"({"city": "Oslo"})");
  }
  // GLM-4's calls open with the bare function name: no trigger, so auto stays unconstrained.
  EXPECT_EQ(AutoToolCallTrigger(chat::ToolCallFormat::kGlm4), "");
  EXPECT_FALSE(AutoToolCallConstraint(request->tools, chat::ToolCallFormat::kGlm4, {}).has_value());
  // parallel_tool_calls false: nothing after the first call.
  auto single = ToolChat(R"(, "parallel_tool_calls": false)");
  ASSERT_TRUE(single.ok());
  auto grammar = grammar::testing::MustCompile(
      grammar::GrammarKind::kStructuralTag,
      AutoToolCallStructuralTag(single->tools, chat::ToolCallFormat::kQwen25));
  const std::string call = chat::FormatToolCalls(chat::ToolCallFormat::kQwen25, {{"now", "{}"}});
  EXPECT_TRUE(grammar::testing::FullMatch(*grammar, call));
  EXPECT_FALSE(grammar::testing::FullMatch(*grammar, call + "\n" + call));
  // Gemma 4: the trigger opens a call in its own syntax.
  EXPECT_EQ(AutoToolCallTrigger(chat::ToolCallFormat::kGemma4), "<|tool_call>call:");
  ASSERT_TRUE(AutoToolCallConstraint(single->tools, chat::ToolCallFormat::kGemma4, {}).has_value());
  auto gemma4 = grammar::testing::MustCompile(
      grammar::GrammarKind::kStructuralTag,
      AutoToolCallStructuralTag(single->tools, chat::ToolCallFormat::kGemma4));
  ASSERT_NE(gemma4, nullptr);
  const std::string gemma4_call = chat::FormatToolCalls(chat::ToolCallFormat::kGemma4,
                                                        {{"get_weather", R"({"city": "Oslo"})"}});
  EXPECT_TRUE(grammar::testing::FullMatch(*gemma4, "Let me see. " + gemma4_call)) << gemma4_call;
  EXPECT_FALSE(grammar::testing::FullMatch(*gemma4, gemma4_call + gemma4_call));
  const std::string gemma4_bad = chat::FormatToolCalls(chat::ToolCallFormat::kGemma4,
                                                       {{"get_weather", R"({"town": "Oslo"})"}});
  EXPECT_FALSE(grammar::testing::FullMatch(*gemma4, gemma4_bad)) << gemma4_bad;
  // gpt-oss: a commentary message to functions.NAME (in the channel header, as the model
  // writes it) whose body is the arguments; <|call|> after it ends the generation.
  EXPECT_EQ(AutoToolCallTrigger(chat::ToolCallFormat::kGptOss), "<|channel|>commentary to=");
  const std::string harmony_tag =
      AutoToolCallStructuralTag(request->tools, chat::ToolCallFormat::kGptOss);
  ASSERT_EQ(AutoToolCallConstraint(request->tools, chat::ToolCallFormat::kGptOss, {}), harmony_tag);
  auto harmony = grammar::testing::MustCompile(grammar::GrammarKind::kStructuralTag, harmony_tag);
  ASSERT_NE(harmony, nullptr);
  const std::string analysis = "<|channel|>analysis<|message|>Oslo, then.<|end|><|start|>assistant";
  const std::string harmony_call = chat::FormatToolCalls(chat::ToolCallFormat::kGptOss,
                                                         {{"get_weather", R"({"city": "Oslo"})"}});
  EXPECT_TRUE(grammar::testing::FullMatch(*harmony, analysis + harmony_call)) << harmony_call;
  EXPECT_TRUE(grammar::testing::FullMatch(*harmony, "<|channel|>final<|message|>Hi"));
  EXPECT_FALSE(grammar::testing::FullMatch(
      *harmony, chat::FormatToolCalls(chat::ToolCallFormat::kGptOss,
                                      {{"get_weather", R"({"town": "Oslo"})"}})));
  EXPECT_FALSE(grammar::testing::FullMatch(
      *harmony, "<|channel|>commentary to=functions.launch <|constrain|>json<|message|>{}"));
  // A schema radixlm cannot compile leaves auto unconstrained.
  auto odd = ParseToolRequest(json::parse(R"({"tools": [{"type": "function", "function":
      {"name": "f", "parameters": {"type": "object", "bogusKeyword": 1}}}]})"));
  ASSERT_TRUE(odd.ok());
  EXPECT_FALSE(AutoToolCallConstraint(*odd, chat::ToolCallFormat::kQwen25, {}).has_value());
  // So does one that lowers to a regex the grammar compiler refuses: a repetition bound over
  // its limit, or an automaton over the state cap (the engine's compilation would fail the
  // request, which did not ask for a constraint).
  auto string_of = [](int max_length) {
    return ParseToolRequest(json::parse(
        R"({"tools": [{"type": "function", "function": {"name": "f", "parameters":
            {"type": "object", "properties": {"s": {"type": "string", "maxLength": )" +
        std::to_string(max_length) + R"(}}, "required": ["s"]}}}]})"));
  };
  auto huge = string_of(5000), big = string_of(300);
  ASSERT_TRUE(huge.ok() && big.ok());
  EXPECT_TRUE(grammar::JsonSchemaToRegex(huge->functions[0].parameters.dump(), {}).ok());
  EXPECT_FALSE(AutoToolCallConstraint(*huge, chat::ToolCallFormat::kQwen25, {}).has_value());
  grammar::CompileOptions small;
  small.max_dfa_states = 200;
  EXPECT_FALSE(AutoToolCallConstraint(*big, chat::ToolCallFormat::kQwen25, small).has_value());
  EXPECT_TRUE(AutoToolCallConstraint(*big, chat::ToolCallFormat::kQwen25, {}).has_value());
}

// Every reply a forced regex admits parses back as calls to the allowed functions.
TEST(OpenAiToolsTest, ForcedRegexMatchesItsOwnFormat) {
  auto request = ToolChat(R"(, "tool_choice": "required")");
  ASSERT_TRUE(request.ok());
  for (chat::ToolCallFormat format :
       {chat::ToolCallFormat::kQwen25, chat::ToolCallFormat::kLlama3,
        chat::ToolCallFormat::kMistral, chat::ToolCallFormat::kGranite,
        chat::ToolCallFormat::kPhi4Mini, chat::ToolCallFormat::kGlm4, chat::ToolCallFormat::kGemma4,
        chat::ToolCallFormat::kGptOss, chat::ToolCallFormat::kJson}) {
    auto regex = ForcedToolCallRegex(request->tools, format, {});
    ASSERT_TRUE(regex.ok()) << regex.status().ToString();
    auto grammar = grammar::testing::MustCompile(grammar::GrammarKind::kRegex, *regex);
    ASSERT_NE(grammar, nullptr) << *regex;
    const std::vector<chat::ToolCall> calls = {{"get_weather", R"({"city": "Oslo"})"},
                                               {"now", "{}"}};
    for (size_t n : {1}) {
      const std::vector<chat::ToolCall> some(calls.begin(), calls.begin() + n);
      std::string text = chat::FormatToolCalls(format, some);
      // gpt-oss ends a call with <|call|>, a control token that ends the generation: the
      // grammar stops before it.
      if (format == chat::ToolCallFormat::kGptOss) text.resize(text.size() - strlen("<|call|>"));
      EXPECT_TRUE(grammar::testing::FullMatch(*grammar, text)) << text << "\n" << *regex;
      chat::ParsedToolOutput parsed =
          chat::ToolCallParser(format, request->tools.names()).Parse(text);
      EXPECT_EQ(parsed.calls.size(), n);
    }
    // Two calls, or arguments that break the schema, do not match.
    EXPECT_FALSE(grammar::testing::FullMatch(*grammar, chat::FormatToolCalls(format, calls)));
    EXPECT_FALSE(grammar::testing::FullMatch(
        *grammar, chat::FormatToolCalls(format, {{"get_weather", R"({"town": "Oslo"})"}})));
  }
}

// gpt-oss: a forced call may follow analysis (reasoning) and preamble messages, as llama.cpp's
// grammar for a required call allows; a reply that ends in the analysis, or whose message after
// the analysis is a final answer, does not match.
TEST(OpenAiToolsTest, ForcedHarmonyCallMayFollowAnalysis) {
  auto request = ToolChat(R"(, "tool_choice": "required")");
  ASSERT_TRUE(request.ok());
  auto regex = ForcedToolCallRegex(request->tools, chat::ToolCallFormat::kGptOss, {});
  ASSERT_TRUE(regex.ok()) << regex.status().ToString();
  auto grammar = grammar::testing::MustCompile(grammar::GrammarKind::kRegex, *regex);
  ASSERT_NE(grammar, nullptr) << *regex;
  std::string call = chat::FormatToolCalls(chat::ToolCallFormat::kGptOss,
                                           {{"get_weather", R"({"city": "Oslo"})"}});
  call.resize(call.size() - strlen("<|call|>"));
  const std::string analysis =
      "<|channel|>analysis<|message|>The user wants Oslo's weather: x < 3, a <b> tag.\n"
      "<|end|><|start|>assistant";
  const std::string preamble =
      "<|channel|>commentary<|message|>Looking it up.<|end|><|start|>assistant";
  EXPECT_TRUE(grammar::testing::FullMatch(*grammar, analysis + call));
  EXPECT_TRUE(grammar::testing::FullMatch(*grammar, analysis + preamble + call));
  EXPECT_FALSE(grammar::testing::FullMatch(*grammar, analysis));
  EXPECT_FALSE(
      grammar::testing::FullMatch(*grammar, analysis + "<|channel|>final<|message|>It is sunny."));
  // The analysis is not a call: the parser still finds exactly the one call after it.
  chat::ParsedToolOutput parsed =
      chat::ToolCallParser(chat::ToolCallFormat::kGptOss, request->tools.names())
          .Parse(analysis + call + "<|call|>");
  ASSERT_EQ(parsed.calls.size(), 1u);
  EXPECT_EQ(parsed.calls[0].name, "get_weather");
}

// A forced call whose automaton is over the state cap is refused as a bad request before it
// is submitted (the engine's compilation would otherwise end it with an abort).
TEST(OpenAiToolsTest, ForcedRegexOverTheStateCapIsInvalidArgument) {
  auto forced = [](const std::string& string_schema) {
    return ParseToolRequest(json::parse(
        R"({"tool_choice": "required", "tools": [{"type": "function", "function": {"name": "f",
            "parameters": {"type": "object", "properties": {"s": )" +
        string_schema + R"(}, "required": ["s"]}}}]})"));
  };
  // A pattern whose DFA needs 2^20 states, and a string of up to 300 characters (within the
  // default cap, over a cap of 200).
  auto huge = forced(R"({"type": "string", "pattern": "(a|b)*a(a|b){20}"})");
  auto big = forced(R"({"type": "string", "maxLength": 300})");
  ASSERT_TRUE(huge.ok() && big.ok());
  const StatusOr<std::string> refused =
      ForcedToolCallRegex(*huge, chat::ToolCallFormat::kQwen25, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("tool_choice"), std::string::npos);
  EXPECT_NE(refused.status().message().find("exceeds"), std::string::npos)
      << refused.status().message();
  grammar::CompileOptions small;
  small.max_dfa_states = 200;
  EXPECT_FALSE(ForcedToolCallRegex(*big, chat::ToolCallFormat::kQwen25, small).ok());
  EXPECT_TRUE(ForcedToolCallRegex(*big, chat::ToolCallFormat::kQwen25, {}).ok());
}

// With a memo, a grammar is built once per distinct text: a repeated forced or auto tool list
// (an agent's every turn) costs no second automaton, and a refusal is remembered as one.
TEST(OpenAiToolsTest, AMemoBuildsEachToolGrammarOnce) {
  auto forced = ToolChat(R"(, "tool_choice": "required")");
  auto named = ToolChat(R"(, "tool_choice": {"type": "function", "function": {"name": "now"}})");
  auto automatic = ToolChat("");
  ASSERT_TRUE(forced.ok() && named.ok() && automatic.ok());
  const auto format = chat::ToolCallFormat::kQwen25;
  GrammarCheckMemo memo;
  auto first = ForcedToolCallRegex(forced->tools, format, {}, &memo);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(memo.builds(), 1);
  auto again = ForcedToolCallRegex(forced->tools, format, {}, &memo);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
  EXPECT_EQ(memo.builds(), 1);
  ASSERT_TRUE(ForcedToolCallRegex(named->tools, format, {}, &memo).ok());
  EXPECT_EQ(memo.builds(), 2);  // another regex
  EXPECT_TRUE(AutoToolCallConstraint(automatic->tools, format, {}, &memo).has_value());
  EXPECT_TRUE(AutoToolCallConstraint(automatic->tools, format, {}, &memo).has_value());
  EXPECT_EQ(memo.builds(), 3);

  auto huge = ParseToolRequest(json::parse(
      R"({"tool_choice": "required", "tools": [{"type": "function", "function": {"name": "f",
          "parameters": {"type": "object", "properties": {"s": {"type": "string",
          "pattern": "(a|b)*a(a|b){20}"}}, "required": ["s"]}}}]})"));
  ASSERT_TRUE(huge.ok());
  for (int i = 0; i < 2; ++i) {
    const StatusOr<std::string> refused = ForcedToolCallRegex(*huge, format, {}, &memo);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(refused.status().message().find("exceeds"), std::string::npos);
  }
  EXPECT_EQ(memo.builds(), 4);
}

}  // namespace
}  // namespace radixlm::server
