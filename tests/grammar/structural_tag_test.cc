// Structural tags: free text, a trigger, the constrained structure, its end, free text again;
// both request shapes, their refusals, and masks / jump-forward inside a structure.
#include "grammar/structural_tag.h"

#include <gtest/gtest.h>

#include "grammar/matcher.h"
#include "sampling/token_bitmask.h"
#include "test_util.h"

namespace radixlm::grammar {
namespace {

using testing::FullMatch;
using testing::kSyntheticEos;
using testing::MustCompile;

// SGLang's shape: a weather call and a time call in the hermes-like <function=...> style.
constexpr const char* kLegacyTag = R"J({
  "type": "structural_tag",
  "structures": [
    {"begin": "<function=weather>",
     "schema": {"type": "object", "properties": {"city": {"type": "string"}},
                "required": ["city"]},
     "end": "</function>"},
    {"begin": "<function=time>",
     "schema": {"type": "object", "properties": {"utc": {"type": "boolean"}},
                "required": ["utc"]},
     "end": "</function>"}],
  "triggers": ["<function="]})J";

std::shared_ptr<const CompiledGrammar> Legacy() {
  return MustCompile(GrammarKind::kStructuralTag, kLegacyTag);
}

StatusCode CompileCode(const std::string& text) {
  return CompiledGrammar::Compile(GrammarKind::kStructuralTag, text, testing::SyntheticVocab())
      .status()
      .code();
}

TEST(StructuralTagTest, FreeTextWithoutTriggerIsAnything) {
  auto g = Legacy();
  EXPECT_TRUE(FullMatch(*g, ""));
  EXPECT_TRUE(FullMatch(*g, "Hello, world! <func no call here\n"));
  EXPECT_TRUE(FullMatch(*g, "ends with a trigger prefix <function"));
}

TEST(StructuralTagTest, TriggerThenStructureThenFreeTextAgain) {
  auto g = Legacy();
  EXPECT_TRUE(FullMatch(*g, "Sure. <function=weather>{\"city\": \"Paris\"}</function>"));
  EXPECT_TRUE(FullMatch(*g, "<function=time>{\"utc\": true}</function> and then more text"));
  // A second structure after free text.
  EXPECT_TRUE(FullMatch(*g,
                        "a <function=weather>{\"city\": \"Oslo\"}</function> b "
                        "<function=time>{\"utc\": false}</function> c"));
}

TEST(StructuralTagTest, TheStructureIsConstrained) {
  auto g = Legacy();
  EXPECT_FALSE(FullMatch(*g, "<function=weather>{\"town\": \"Paris\"}</function>"));  // key
  EXPECT_FALSE(FullMatch(*g, "<function=time>{\"utc\": 1}</function>"));              // value type
  EXPECT_FALSE(FullMatch(*g, "<function=other>{}</function>"));                   // no such begin
  EXPECT_FALSE(FullMatch(*g, "<function=weather>{\"city\": \"Paris\"}</func>"));  // end
  // Cut inside a structure: not a complete match, so EOS is not allowed there.
  EXPECT_FALSE(FullMatch(*g, "text <function=weather>{\"city\": \"Pa"));
}

TEST(StructuralTagTest, MatcherStepsThroughFreeStructureFree) {
  Matcher m(Legacy());
  ASSERT_TRUE(m.AcceptBytes("I will check. "));
  EXPECT_TRUE(m.CanTerminate());
  EXPECT_EQ(m.ForcedBytes(), "");  // free text: nothing forced
  ASSERT_TRUE(m.AcceptBytes("<function="));
  EXPECT_FALSE(m.CanTerminate());
  ASSERT_TRUE(m.AcceptBytes("weather>"));
  // Inside the structure, jump-forward works: the schema forces the key.
  EXPECT_EQ(m.ForcedBytes(), "{\"city\": \"");
  ASSERT_TRUE(m.AcceptBytes("{\"city\": \"Rome\""));
  EXPECT_EQ(m.ForcedBytes(), "}</function>");
  ASSERT_TRUE(m.AcceptBytes("}</function>"));
  EXPECT_TRUE(m.CanTerminate());
  EXPECT_FALSE(m.MustTerminate());  // free text may follow
  EXPECT_EQ(m.ForcedBytes(), "");
  EXPECT_TRUE(m.AcceptBytes(" done"));
  EXPECT_TRUE(m.AcceptToken(kSyntheticEos));
}

TEST(StructuralTagTest, ForcedRestOfBeginWhenTheTriggerHasOneStructure) {
  Matcher m(MustCompile(GrammarKind::kStructuralTag, R"J({
    "structures": [{"begin": "<tool_call>\n{\"name\": \"f\", \"arguments\": ",
                    "schema": {"type": "object", "properties": {"x": {"type": "integer"}},
                               "required": ["x"]},
                    "end": "}\n</tool_call>"}],
    "triggers": ["<tool_call>"]})J"));
  ASSERT_TRUE(m.AcceptBytes("<tool_call>"));
  EXPECT_EQ(m.ForcedBytes(), "\n{\"name\": \"f\", \"arguments\": {\"x\": ");
}

TEST(StructuralTagTest, MasksAgreeWithAcceptTokenEverywhere) {
  auto g = Legacy();
  Matcher m(g);
  EXPECT_EQ(testing::CheckMaskBruteForce(m), "");
  for (const char* piece : {"ok <", "function=", "weather>", "{\"city\": \"", "X\"}", "</fun"}) {
    ASSERT_TRUE(m.AcceptBytes(piece)) << piece;
    EXPECT_EQ(testing::CheckMaskBruteForce(m), "") << "after " << piece;
  }
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    EXPECT_EQ(testing::RandomWalkCheck(g, 40, seed), "") << seed;
  }
}

TEST(StructuralTagTest, FormatShapeWithTagsAndStopAfterFirst) {
  const std::string tag = R"J({"type": "structural_tag", "format": {
    "type": "triggered_tags", "triggers": ["[CALL]"],
    "tags": [{"type": "tag", "begin": "[CALL] ",
              "content": {"type": "json_schema", "json_schema": {"type": "integer"}},
              "end": ["[/CALL]", "[END]"]},
             {"begin": "[CALL]x",
              "content": {"type": "const_string", "value": "yz"}, "end": "!"},
             {"begin": "[CALL]r",
              "content": {"type": "regex", "pattern": "[0-9]{2}"}, "end": "."}],
    "at_least_one": false, "stop_after_first": STOP}})J";
  auto with = [&](const char* stop) {
    std::string t = tag;
    t.replace(t.find("STOP"), 4, stop);
    return MustCompile(GrammarKind::kStructuralTag, t);
  };
  auto many = with("false");
  EXPECT_TRUE(FullMatch(*many, "a [CALL] 42[/CALL] b [CALL]xyz! c [CALL]r07. [CALL] 1[END]"));
  EXPECT_FALSE(FullMatch(*many, "[CALL]xzz!"));
  EXPECT_FALSE(FullMatch(*many, "[CALL]r7."));

  auto first = with("true");
  EXPECT_TRUE(FullMatch(*first, "text [CALL] 42[/CALL]"));
  EXPECT_FALSE(FullMatch(*first, "text [CALL] 42[/CALL] more"));
  Matcher m(first);
  ASSERT_TRUE(m.AcceptBytes("[CALL]xyz!"));
  EXPECT_TRUE(m.MustTerminate());  // only EOS may follow
}

TEST(StructuralTagTest, SchemaAsJsonTextAndMissingSchema) {
  auto g = MustCompile(GrammarKind::kStructuralTag, R"J({
    "structures": [{"begin": "<a>", "schema": "{\"type\": \"boolean\"}", "end": "</a>"},
                   {"begin": "<b>", "end": "</b>"}],
    "triggers": ["<a>", "<b>"]})J");
  EXPECT_TRUE(FullMatch(*g, "<a>true</a><b>[1, 2]</b>"));
  EXPECT_FALSE(FullMatch(*g, "<a>1</a>"));
}

TEST(StructuralTagTest, RefusesWhatItCannotHonour) {
  const std::pair<const char*, const char*> cases[] = {
      {"not json", "must be a JSON object"},
      {R"({"type": "json_schema", "structures": [], "triggers": ["a"]})", "type must be"},
      {R"({"triggers": ["a"]})", "needs"},
      {R"({"structures": [], "triggers": ["<"]})", "at least one structure"},
      {R"({"structures": [{"begin": "<a>", "end": "x"}], "triggers": []})", "non-empty list"},
      {R"({"structures": [{"begin": "<a>", "end": "x"}], "triggers": ["<a>", "<"]})",
       "contains trigger"},
      {R"({"structures": [{"begin": "<a>", "end": "x"}], "triggers": ["["]})",
       "does not start with any trigger"},
      {R"({"structures": [{"begin": "<a>", "end": "x"}], "triggers": ["<", "["]})",
       "starts no structure"},
      {R"({"structures": [{"begin": "<a>", "end": "x", "extra": 1}], "triggers": ["<"]})",
       "field \"extra\""},
      {R"({"structures": [{"begin": "<a>", "schema": {"type": "integer"}, "end": ""}],
           "triggers": ["<"]})",
       "can go on after a complete match"},
      {R"({"structures": [{"begin": "<a>", "schema": {"bogusKeyword": 1}, "end": "x"}],
           "triggers": ["<"]})",
       "schema"},
      {R"({"format": {"type": "sequence", "elements": []}})", "not supported"},
      {R"({"format": {"type": "triggered_tags", "triggers": ["<"], "at_least_one": true,
           "tags": [{"begin": "<a>", "content": {"type": "const_string", "value": "v"},
                     "end": "x"}]}})",
       "at_least_one"},
      {R"({"format": {"type": "triggered_tags", "triggers": ["<"],
           "tags": [{"begin": "<a>", "content": {"type": "any_text"}, "end": "x"}]}})",
       "any_text"},
  };
  for (const auto& [text, message] : cases) {
    StatusOr<std::shared_ptr<const CompiledGrammar>> g =
        CompiledGrammar::Compile(GrammarKind::kStructuralTag, text, testing::SyntheticVocab());
    ASSERT_FALSE(g.ok()) << text;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(g.status().message().find(message), std::string::npos)
        << text << " -> " << g.status().message();
  }
  // Validate (the cheap check at submission) refuses the parse errors too.
  EXPECT_FALSE(
      CompiledGrammar::Validate(GrammarKind::kStructuralTag, R"({"triggers": ["a"]})").ok());
  EXPECT_TRUE(CompiledGrammar::Validate(GrammarKind::kStructuralTag, kLegacyTag).ok());
  EXPECT_EQ(CompileCode(kLegacyTag), StatusCode::kOk);
}

TEST(StructuralTagTest, OversizedRequestsAreRefusedWhenParsed) {
  // Parsing (CompiledGrammar::Validate, on the HTTP thread) refuses what the automaton cap
  // would refuse later, before a trie of 1 KiB per trigger byte or the pairwise trigger checks
  // run: a trigger longer than the state cap...
  CompileOptions options;
  options.max_dfa_states = 64;
  const std::string trigger = "<" + std::string(100, 'x') + ">";
  const std::string long_trigger = R"({"structures": [{"begin": ")" + trigger +
                                   R"(", "end": "!"}], "triggers": [")" + trigger + R"("]})";
  StatusOr<StructuralTagSpec> spec = ParseStructuralTag(long_trigger, options);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(spec.status().message().find("triggers alone"), std::string::npos)
      << spec.status().message();
  // ... while triggers sharing their prefixes count each shared byte once.
  const std::string shared = R"({"structures": [{"begin": "<aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1>",
      "end": "!"}, {"begin": "<aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2>", "end": "!"}],
      "triggers": ["<aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1>", "<aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2>"]})";
  EXPECT_TRUE(ParseStructuralTag(shared, options).ok());
  // More triggers than the pairwise checks are bounded for.
  std::string structures, triggers;
  for (int i = 0; i < 1025; ++i) {
    const std::string t = "\"<t" + std::to_string(i) + ">\"";
    structures += std::string(i > 0 ? ", " : "") + R"({"begin": )" + t + R"(, "end": "!"})";
    triggers += std::string(i > 0 ? ", " : "") + t;
  }
  spec = ParseStructuralTag(
      R"({"structures": [)" + structures + R"(], "triggers": [)" + triggers + "]}",
      CompileOptions());
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(spec.status().message().find("at most 1024 triggers"), std::string::npos)
      << spec.status().message();
}

}  // namespace
}  // namespace radixlm::grammar
