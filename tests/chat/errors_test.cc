// Errors (syntax and runtime, with positions), runaway guards, the RenderChat helper and
// concurrent rendering.
#include <gtest/gtest.h>

#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "chat/chat_template.h"
#include "test_util.h"

namespace radixlm::chat {
namespace {

using nlohmann::ordered_json;
using testing::Render;
using testing::RenderStatus;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(SyntaxErrorTest, ReportsLineAndColumn) {
  auto parsed = ChatTemplate::Parse("first line\n{{ 1 + }}");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(),
            "chat template syntax error at line 2, column 8: unexpected '}}'");
}

TEST(SyntaxErrorTest, UnclosedAndUnknownBlocks) {
  EXPECT_TRUE(Contains(RenderStatus("{% for x in y %}").message(),
                       "Jinja was looking for the following tags: 'endfor' or 'else'. The "
                       "innermost block that needs to be closed is 'for'."));
  EXPECT_TRUE(Contains(RenderStatus("{% if x %}{% endfor %}").message(),
                       "Encountered unknown tag 'endfor'."));
  EXPECT_TRUE(Contains(RenderStatus("{% frobnicate %}").message(),
                       "Encountered unknown tag 'frobnicate'."));
  EXPECT_TRUE(Contains(RenderStatus("{% break %}").message(), "'break' outside of a for loop"));
  EXPECT_TRUE(Contains(RenderStatus("{% include 'x' %}").message(), "not supported"));
}

TEST(SyntaxErrorTest, LexerErrors) {
  EXPECT_TRUE(Contains(RenderStatus("a {# never closed").message(), "Missing end of comment tag"));
  EXPECT_TRUE(Contains(RenderStatus("{{ 'abc }}").message(), "unterminated string"));
  EXPECT_TRUE(Contains(RenderStatus("{{ x").message(), "unexpected end of template"));
  EXPECT_TRUE(Contains(RenderStatus("{{ (1 }}").message(), "unexpected '}', expected ')'"));
  EXPECT_TRUE(Contains(RenderStatus("{{ '\\x4' }}").message(), "truncated \\xXX escape"));
  EXPECT_TRUE(Contains(RenderStatus("{{ a ? b }}").message(), "unexpected char '?'"));
}

TEST(SyntaxErrorTest, DeepNestingIsRejectedNotACrash) {
  const std::string deep = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  EXPECT_TRUE(Contains(RenderStatus(deep).message(), "nested too deeply"));
  std::string blocks;
  for (int i = 0; i < 1000; ++i) blocks += "{% if true %}";
  EXPECT_TRUE(Contains(RenderStatus(blocks).message(), "nested too deeply"));
}

TEST(RenderErrorTest, ReportsTheInnermostExpressionPosition) {
  const Status status = RenderStatus("{{ 'ok' }}\n  {{ 1 + 'a' }}");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "chat template render error at line 2, column 8: unsupported operand type(s) for +: "
            "'int' and 'str'");
}

TEST(RenderErrorTest, UndefinedUnknownFilterAndTypeErrors) {
  EXPECT_TRUE(Contains(RenderStatus("{{ missing.attr }}").message(), "'missing' is undefined"));
  EXPECT_TRUE(Contains(RenderStatus("{{ 1|nope }}").message(), "No filter named 'nope'."));
  EXPECT_TRUE(Contains(RenderStatus("{{ x is nope }}").message(), "No test named 'nope'."));
  EXPECT_TRUE(Contains(RenderStatus("{{ 'a' + 1 }}").message(), "can only concatenate str"));
  EXPECT_TRUE(Contains(RenderStatus("{{ [].append(1) }}").message(), "is unsafe"));
  // An unknown filter in a branch that never runs is fine (jinja2 >= 3.0 behaves the same).
  EXPECT_EQ(Render("{% if false %}{{ 1|nope }}{% endif %}ok"), "ok");
}

TEST(RenderErrorTest, RaiseExceptionBecomesInvalidArgumentWithTheMessage) {
  const Status status =
      RenderStatus("{% if messages|length == 0 %}{{ raise_exception('No messages!') }}{% endif %}",
                   {{"messages", ordered_json::array()}});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "chat template raised an exception at line 1, column 33: No messages!");
}

TEST(RenderErrorTest, ContextMustBeAnObject) {
  auto tmpl = ChatTemplate::Parse("x");
  ASSERT_TRUE(tmpl.ok());
  EXPECT_EQ(tmpl->Render(nlohmann::json::array()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RenderChat(*tmpl, nlohmann::json::object(), true, "", "").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(LimitTest, OutputSizeCap) {
  RenderLimits limits;
  limits.max_output_bytes = 1000;
  const Status status = RenderStatus("{% for i in range(1000) %}0123456789{% endfor %}",
                                     ordered_json::object(), limits);
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted) << status.ToString();
  EXPECT_EQ(Render("{% for i in range(10) %}0123456789{% endfor %}", ordered_json::object(), limits)
                .size(),
            100u);
}

TEST(LimitTest, MacroRecursionDepth) {
  const Status status = RenderStatus("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(Contains(status.message(), "macro calls nested deeper than 64"));
}

TEST(LimitTest, StepBudget) {
  RenderLimits limits;
  limits.max_steps = 10000;
  const Status status = RenderStatus(
      "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
      ordered_json::object(), limits);
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted) << status.ToString();
}

TEST(LimitTest, HugeValuesAndDeepNesting) {
  EXPECT_EQ(RenderStatus("{{ 'a' * 1000000000 }}").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(RenderStatus("{% set ns = namespace(x=[]) %}{% for i in range(1000) %}"
                         "{% set ns.x = [ns.x] %}{% endfor %}")
                .code(),
            StatusCode::kResourceExhausted);
  ordered_json deep = 1;
  for (int i = 0; i < 1000; ++i) deep = ordered_json::array({deep});
  EXPECT_EQ(RenderStatus("{{ x }}", {{"x", deep}}).code(), StatusCode::kResourceExhausted);
}

// Found by fuzz/chat_template_fuzzer.cc: "{{ 1 + 1 + ... }}" with 10^5 terms (likewise x.a.a...,
// x|f|f..., x and x and ...) parses to a tree 10^5 deep, which overflowed the stack when it
// was evaluated, and when it was destroyed even if never evaluated.
TEST(LimitTest, LongOperatorChainsNeitherOverflowNorFailToParse) {
  const int n = 100000;
  std::string plus = "{{ 1", attrs = "{{ x", filters = "{{ 'a'", ands = "{{ x";
  for (int i = 0; i < n; ++i) {
    plus += " + 1";
    attrs += ".a";
    filters += "|upper";
    ands += " and x";
  }
  for (std::string* source : {&plus, &attrs, &filters, &ands}) {
    *source += " }}";
    const Status status = RenderStatus(*source);
    EXPECT_EQ(status.code(), StatusCode::kResourceExhausted) << status.ToString();
    EXPECT_TRUE(Contains(status.message(), "expression nested deeper than 1000 levels"))
        << status.message();
  }
  // Parsed but never evaluated: only the tree's destructor runs.
  EXPECT_EQ(Render("{% if false %}" + plus + "{% endif %}"), "");
  // {% filter %} chains recurse without Eval.
  std::string block_filters = "{% filter trim";
  for (int i = 0; i < n; ++i) block_filters += "|trim";
  EXPECT_EQ(RenderStatus(block_filters + " %}x{% endfilter %}").code(),
            StatusCode::kResourceExhausted);
  // Long but reasonable chains still render.
  std::string sum = "{{ 0";
  for (int i = 0; i < 500; ++i) sum += " + 1";
  EXPECT_EQ(Render(sum + " }}"), "500");
}

TEST(LimitTest, SelfReferencingNamespaceNeitherLeaksNorCrashes) {
  EXPECT_EQ(Render("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns.me.me is defined }}"),
            "True");
  EXPECT_EQ(RenderStatus("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}").code(),
            StatusCode::kResourceExhausted);
}

std::string ReadTemplate(const std::string& name) {
  std::ifstream in(std::string(RADIXLM_SOURCE_DIR) + "/tests/chat/templates/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(RenderChatTest, PassesTheVariablesTransformersPasses) {
  auto tmpl = ChatTemplate::Parse(
      "{{ bos_token }}|{{ eos_token }}|{{ add_generation_prompt }}|{{ tools }}|{{ documents }}"
      "|{{ messages|length }}|{{ extra }}");
  ASSERT_TRUE(tmpl.ok());
  const nlohmann::json messages = {{{"role", "user"}, {"content", "hi"}}};
  auto out = RenderChat(*tmpl, messages, true, "<s>", "</s>", {{"extra", 5}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "<s>|</s>|True|None|None|1|5");
}

TEST(RenderChatTest, Llama32UsesTodayWhenNoDateIsGiven) {
  auto tmpl = ChatTemplate::Parse(ReadTemplate("llama3_2.jinja"));
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  auto out = RenderChat(*tmpl, nlohmann::json::array({{{"role", "user"}, {"content", "hi"}}}), true,
                        "<|begin_of_text|>", "<|eot_id|>");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  char today[32];
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::strftime(today, sizeof(today), "%d %b %Y", &local);
  EXPECT_TRUE(Contains(*out, std::string("Today Date: ") + today + "\n\n")) << *out;
}

TEST(RenderChatTest, GemmaRoleAlternationError) {
  auto tmpl = ChatTemplate::Parse(ReadTemplate("gemma3.jinja"));
  ASSERT_TRUE(tmpl.ok());
  const nlohmann::json messages = {{{"role", "user"}, {"content", "a"}},
                                   {{"role", "user"}, {"content", "b"}}};
  auto out = RenderChat(*tmpl, messages, true, "<bos>", "<eos>");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(out.status().message(),
                       "Conversation roles must alternate user/assistant/user/assistant/..."));
}

TEST(ConcurrencyTest, OneTemplateRendersOnManyThreads) {
  auto tmpl = ChatTemplate::Parse(ReadTemplate("qwen3.jinja"));
  ASSERT_TRUE(tmpl.ok());
  auto render = [&](int i) {
    const nlohmann::json messages = {{{"role", "user"}, {"content", "q" + std::to_string(i)}},
                                     {{"role", "assistant"}, {"content", "<think>t</think>a"}}};
    auto out = RenderChat(*tmpl, messages, i % 2 == 0, "", "<|im_end|>");
    return out.ok() ? *out : out.status().ToString();
  };
  std::vector<std::string> expected;
  for (int i = 0; i < 8; ++i) expected.push_back(render(i));
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        for (int i = 0; i < 8; ++i) mismatches[t] += render(i) != expected[i];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0);
}

}  // namespace
}  // namespace radixlm::chat
