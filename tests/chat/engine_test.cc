// The engine's features one by one: whitespace control, expressions, loops, set/macros,
// filters, tests and values. Expected strings were checked against Python jinja2 3.1 with
// transformers' environment (trim_blocks, lstrip_blocks); golden_test.cc compares many more
// snippets against jinja2 directly.
#include <gtest/gtest.h>

#include "chat/chat_template.h"
#include "test_util.h"

namespace radixlm::chat {
namespace {

using nlohmann::ordered_json;
using testing::Render;

TEST(WhitespaceTest, TrimBlocksDropsTheNewlineAfterATag) {
  EXPECT_EQ(Render("{% if true %}\nx\n{% endif %}\ny"), "x\ny");
  EXPECT_EQ(Render("a{# comment #}\nb"), "ab");
}

TEST(WhitespaceTest, LstripBlocksDropsIndentBeforeBlockTagsOnly) {
  EXPECT_EQ(Render("  {% if true %}\n  x\n  {% endif %}"), "  x\n");
  EXPECT_EQ(Render("  {{ 'v' }}"), "  v");                    // not for {{ }}
  EXPECT_EQ(Render("a  {% if true %}b{% endif %}"), "a  b");  // not mid-line
  EXPECT_EQ(Render("a\n\t {# c #}\nb"), "a\nb");              // comments too
}

TEST(WhitespaceTest, DashStripsAllAdjacentWhitespace) {
  EXPECT_EQ(Render("a \n\n {{- 'b' -}} \n c"), "abc");
  EXPECT_EQ(Render("a\n  {%- if true -%}\n  b\n  {%- endif -%}\n\nc"), "abc");
  EXPECT_EQ(Render("x {#- gone -#} y"), "xy");
}

TEST(WhitespaceTest, PlusOptsOutOfLstripAndTrim) {
  EXPECT_EQ(Render("  {%+ if true %}x{% endif %}"), "  x");
  EXPECT_EQ(Render("{% if true +%}\nx{% endif %}"), "\nx");
}

TEST(WhitespaceTest, NewlinesNormalizedAndOneTrailingNewlineDropped) {
  EXPECT_EQ(Render("x\n"), "x");
  EXPECT_EQ(Render("x\n\n"), "x\n");
  EXPECT_EQ(Render("a\r\nb\rc\r\n"), "a\nb\nc");
  EXPECT_EQ(Render("{% if true %}\r\nx{% endif %}"), "x");  // trim_blocks after \r\n too
}

TEST(WhitespaceTest, RawBlocksAreText) {
  EXPECT_EQ(Render("{% raw %}{{ x }}{% if %}{% endraw %}"), "{{ x }}{% if %}");
  EXPECT_EQ(Render("{% raw -%}  a  {%- endraw %}!"), "a!");
}

TEST(ExpressionTest, PrecedenceFollowsJinja) {
  EXPECT_EQ(Render("{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 2 ** 3 ** 2 }}"), "7|9|64");
  EXPECT_EQ(Render("{{ 'x' ~ 2 * 3 }}"), "x6");           // * binds tighter than ~
  EXPECT_EQ(Render("{{ ('a' ~ 1) ~ (1 + 2) }}"), "a13");  // ~ binds tighter than +
  EXPECT_EQ(Render("{{ [1, 2]|length + 1 }}"), "3");      // filters bind tightest
  EXPECT_EQ(Render("{{ -2 ** 2 }}"), "4");                // jinja: (-2) ** 2
  EXPECT_EQ(Render("{{ not 1 == 2 }}|{{ not true and false }}"), "True|False");
  EXPECT_EQ(Render("{{ 1 < 2 < 3 }}|{{ 1 < 3 < 2 }}"), "True|False");
}

TEST(ExpressionTest, AndOrReturnOperandsLikePython) {
  EXPECT_EQ(Render("{{ 0 or 'b' }}|{{ 'a' and 'b' }}|{{ none and 1 }}|{{ '' or [] }}"),
            "b|b|None|[]");
}

TEST(ExpressionTest, TernaryWithAndWithoutElse) {
  EXPECT_EQ(Render("{{ 'y' if n > 2 else 'n' }}", {{"n", 3}}), "y");
  EXPECT_EQ(Render("[{{ 'y' if false }}]"), "[]");
}

TEST(ExpressionTest, SubscriptsSlicesAndAttributes) {
  const ordered_json ctx = {{"m", {{"role", "user"}, {"parts", {1, 2, 3}}}}};
  EXPECT_EQ(Render("{{ m.role }}{{ m['role'] }}{{ m.parts[0] }}{{ m.parts[-1] }}", ctx),
            "useruser13");
  EXPECT_EQ(Render("{{ m.parts[1:] }}{{ m.parts[::-1] }}{{ m.parts[:-1] }}", ctx),
            "[2, 3][3, 2, 1][1, 2]");
  EXPECT_EQ(Render("{{ 'héllo'[1] }}{{ 'héllo'[::-1] }}{{ 'héllo'|length }}"), "éolléh5");
  EXPECT_EQ(Render("[{{ m.missing }}][{{ m.parts[7] }}][{{ none.x }}]", ctx), "[][][]");
}

TEST(ExpressionTest, StringMethods) {
  EXPECT_EQ(Render("{{ '  a b '.strip() }}|{{ 'xxaxx'.lstrip('x') }}|{{ 'a\\n'.rstrip() }}"),
            "a b|axx|a");
  EXPECT_EQ(Render("{{ 'a</think>b'.split('</think>')[-1] }}|{{ ' a  b '.split() }}"),
            "b|['a', 'b']");
  EXPECT_EQ(Render("{{ '<tool_response>x'.startswith('<tool_response>') }}"
                   "{{ 'x.py'.endswith(('.js', '.py')) }}"),
            "TrueTrue");
  EXPECT_EQ(Render("{{ 'ab'.upper() }}{{ 'AB'.lower() }}{{ 'aXa'.replace('a', '-') }}"), "ABab-X-");
}

TEST(ExpressionTest, StringConcatenationAndRepetition) {
  EXPECT_EQ(Render("{{ 'a' + 'b' }}|{{ 'a' ~ 1 ~ none ~ missing }}|{{ 'ab' * 2 }}"),
            "ab|a1None|abab");
}

TEST(ExpressionTest, DictAndListLiterals) {
  EXPECT_EQ(Render("{{ {'b': 1, 'a': [1, 'x', none, true]} }}"),
            "{'b': 1, 'a': [1, 'x', None, True]}");
  EXPECT_EQ(Render("{{ (1, 'a') }}|{{ (1,) }}|{{ () }}"), "(1, 'a')|(1,)|()");
}

TEST(LoopTest, LoopVariables) {
  EXPECT_EQ(Render("{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}"
                   "{{ loop.last }}{{ loop.length }}{{ loop.revindex }};{% endfor %}"),
            "10TrueFalse33;21FalseFalse32;32FalseTrue31;");
  EXPECT_EQ(Render("{% for x in [1, 2, 3] %}{{ loop.cycle('a', 'b') }}{% endfor %}"), "aba");
}

TEST(LoopTest, InlineFilterCountsOnlyKeptItemsAndElseRunsWhenEmpty) {
  EXPECT_EQ(Render("{% for x in range(6) if x is odd %}{{ x }}/{{ loop.length }} {% endfor %}"),
            "1/3 3/3 5/3 ");
  EXPECT_EQ(Render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
}

TEST(LoopTest, UnpackingItemsAndPairs) {
  const ordered_json ctx = {{"d", {{"b", 1}, {"a", 2}}}};
  EXPECT_EQ(Render("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", ctx), "b=1;a=2;");
  EXPECT_EQ(
      Render("{% for k, v in d|items %}{{ k }}{% endfor %}|{% for k in d %}{{ k }}{% endfor %}",
             ctx),
      "ba|ba");
}

TEST(LoopTest, BreakAndContinue) {
  EXPECT_EQ(Render("{% for x in range(10) %}{% if x is odd %}{% continue %}{% endif %}"
                   "{% if x > 5 %}{% break %}{% endif %}{{ x }}{% endfor %}"),
            "024");
}

TEST(LoopTest, SetInsideALoopDoesNotLeakButNamespaceDoes) {
  EXPECT_EQ(Render("{% set x = 1 %}{% for i in [1, 2] %}{% set x = 5 %}{% endfor %}{{ x }}"), "1");
  EXPECT_EQ(Render("{% set ns = namespace(x=1) %}{% for i in [1, 2] %}{% set ns.x = ns.x + i %}"
                   "{% endfor %}{{ ns.x }}"),
            "4");
  EXPECT_EQ(Render("{% if true %}{% set y = 2 %}{% endif %}{{ y }}"), "2");  // if has no scope
}

TEST(SetTest, AssignmentForms) {
  EXPECT_EQ(Render("{% set a, b = 1, 2 %}{{ b }}{{ a }}"), "21");
  EXPECT_EQ(Render("{% set t %}  x {{ 1 }}{% endset %}[{{ t }}]"), "[  x 1]");
  EXPECT_EQ(Render("{% set t | trim | upper %}  x  {% endset %}[{{ t }}]"), "[X]");
  EXPECT_EQ(
      Render("{% set messages = messages[1:] %}{{ messages|length }}", {{"messages", {1, 2, 3}}}),
      "2");
}

TEST(MacroTest, DefaultsKeywordsAndNesting) {
  const char* src =
      "{% macro tag(name, body='') %}<{{ name }}>{{ body }}</{{ name }}>{% endmacro %}"
      "{{ tag('a') }}{{ tag('b', 'x') }}{{ tag(body='y', name='c') }}{{ tag('d', tag('e')) }}";
  EXPECT_EQ(Render(src), "<a></a><b>x</b><c>y</c><d><e></e></d>");
}

TEST(MacroTest, MacrosSeeTemplateLevelVariables) {
  EXPECT_EQ(Render("{% set greeting = 'hi' %}{% macro m() %}{{ greeting }}{% endmacro %}{{ m() }}"),
            "hi");
}

TEST(BlockTest, FilterWithAndGeneration) {
  EXPECT_EQ(Render("{% filter upper %}a{{ 'b' }}{% endfilter %}"), "AB");
  EXPECT_EQ(Render("{% with a = 2 %}{{ a * 3 }}{% endwith %}[{{ a }}]"), "6[]");
  EXPECT_EQ(Render("{% generation %}kept{% endgeneration %}"), "kept");
}

TEST(FilterTest, StringFilters) {
  EXPECT_EQ(Render("{{ '  x \\n'|trim }}|{{ 'xxyxx'|trim('x') }}|{{ 'aB'|upper }}{{ 'aB'|lower }}"),
            "x|y|ABab");
  EXPECT_EQ(Render("{{ 'hELLO wORLD'|capitalize }}|{{ 'hello wORLD'|title }}"),
            "Hello world|Hello World");
  EXPECT_EQ(Render("{{ 'aaa'|replace('a', 'b', 2) }}|{{ 42|string ~ '!' }}|{{ '<b>'|safe }}"),
            "bba|42!|<b>");
  EXPECT_EQ(Render("{{ 'a\\nb'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}"), "a\n  b|  a\n  b");
}

TEST(FilterTest, SequenceFilters) {
  const ordered_json ctx = {{"xs", {3, 1, 2}}};
  EXPECT_EQ(Render("{{ xs|length }}{{ xs|first }}{{ xs|last }}{{ xs|join('-') }}", ctx),
            "3323-1-2");
  EXPECT_EQ(Render("{{ xs|sort }}{{ xs|reverse|list }}{{ xs|sum }}{{ xs|min }}{{ xs|max }}", ctx),
            "[1, 2, 3][2, 1, 3]613");
  EXPECT_EQ(Render("{{ {'a': 1}|items|list }}|{{ 'ab'|list }}|{{ [1, 1, 2]|unique|list }}"),
            "[('a', 1)]|['a', 'b']|[1, 2]");
}

TEST(FilterTest, SelectRejectAndMap) {
  const ordered_json ctx = {{"msgs",
                             {{{"role", "system"}, {"content", "S"}},
                              {{"role", "user"}, {"content", "U"}},
                              {{"role", "user"}, {"content", "V"}}}}};
  EXPECT_EQ(
      Render("{{ msgs|selectattr('role', 'equalto', 'user')|map(attribute='content')|join }}", ctx),
      "UV");
  EXPECT_EQ(Render("{{ msgs|rejectattr('role', 'equalto', 'user')|list|length }}", ctx), "1");
  EXPECT_EQ(Render("{{ [0, 1, 2, 3]|select('odd')|list }}{{ ['a', 'b']|map('upper')|list }}"),
            "[1, 3]['A', 'B']");
}

TEST(FilterTest, DefaultIntAndFloat) {
  EXPECT_EQ(Render("{{ x|default('d') }}|{{ ''|default('d') }}|{{ ''|default('d', true) }}"),
            "d||d");
  EXPECT_EQ(
      Render("{{ '42'|int + 1 }}|{{ '3.9'|int }}|{{ 'x'|int }}|{{ '2.5'|float }}|{{ 1|float }}"),
      "43|3|0|2.5|1.0");
}

TEST(FilterTest, ToJsonIsTransformersJsonDumps) {
  const ordered_json ctx = {{"t", {{"name", "f"}, {"n", 1.5}, {"ok", true}, {"x", nullptr}}}};
  EXPECT_EQ(Render("{{ t|tojson }}", ctx), R"({"name": "f", "n": 1.5, "ok": true, "x": null})");
  EXPECT_EQ(Render("{{ [1]|tojson(indent=2) }}"), "[\n  1\n]");
  EXPECT_EQ(Render("{{ 'é<&>'|tojson }}|{{ 'é'|tojson(ensure_ascii=true) }}"),
            "\"é<&>\"|\"\\u00e9\"");  // no HTML escaping, unlike jinja2's own tojson
  EXPECT_EQ(Render("{{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }}"), R"({"a": 2, "b": 1})");
}

TEST(TestsTest, TypeAndValueTests) {
  const ordered_json ctx = {{"s", "x"}, {"n", 1}, {"l", {1}}, {"d", {{"a", 1}}}, {"z", nullptr}};
  EXPECT_EQ(Render("{{ s is string }}{{ n is number }}{{ l is iterable }}{{ d is mapping }}"
                   "{{ z is none }}{{ q is defined }}{{ q is undefined }}{{ l is sequence }}",
                   ctx),
            "TrueTrueTrueTrueTrueFalseTrueTrue");
  EXPECT_EQ(Render("{{ s is equalto 'x' }}{{ 2 is divisibleby 2 }}{{ 3 is odd }}{{ 1 in l }}"
                   "{{ 'a' not in d }}{{ n is not none }}{{ false is false }}",
                   ctx),
            "TrueTrueTrueTrueFalseTrueTrue");
}

TEST(ValueTest, PythonStyleRendering) {
  EXPECT_EQ(Render("{{ none }}|{{ true }}|{{ false }}|{{ 1.0 }}|{{ 1e16 }}|{{ 0.1 + 0.2 }}"),
            "None|True|False|1.0|1e+16|0.30000000000000004");
  EXPECT_EQ(Render("{{ x }}|{{ y }}", {{"x", 2.5}, {"y", 7}}), "2.5|7");
  EXPECT_EQ(Render("{{ ['it\\'s', \"q\\\"\"] }}"), "[\"it's\", 'q\"']");
}

TEST(ValueTest, KeyOrderFollowsTheJsonContainer) {
  auto tmpl = ChatTemplate::Parse("{{ d|tojson }}");
  ASSERT_TRUE(tmpl.ok());
  const ordered_json ordered = {{"d", {{"b", 1}, {"a", 2}}}};
  const nlohmann::json sorted = {{"d", {{"b", 1}, {"a", 2}}}};
  EXPECT_EQ(*tmpl->Render(ordered), R"({"b": 1, "a": 2})");
  EXPECT_EQ(*tmpl->Render(sorted), R"({"a": 2, "b": 1})");
}

TEST(GlobalsTest, RangeDictNamespaceStrftime) {
  EXPECT_EQ(Render("{{ range(3)|list }}{{ dict(a=1) }}{{ namespace(a=2).a }}"),
            "[0, 1, 2]{'a': 1}2");
  char year[8];
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::strftime(year, sizeof(year), "%Y", &local);
  EXPECT_EQ(Render("{{ strftime_now('%Y') }}"), year);
}

}  // namespace
}  // namespace radixlm::chat
