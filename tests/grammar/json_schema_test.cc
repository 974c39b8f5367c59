// JSON schema → regex → DFA: table-driven documents that must (not) match, and the errors
// for unsupported or broken schemas.
#include "grammar/json_schema.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace radixlm::grammar {
namespace {

using testing::FullMatch;
using testing::MustCompile;

struct SchemaCase {
  const char* schema;
  const char* document;
  bool matches;
};

constexpr const char* kPerson =
    R"G({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},
        "required":["name","age"]})G";
constexpr const char* kOptional =
    R"G({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},
        "c":{"type":"integer"}},"required":["b"]})G";
constexpr const char* kAllOptional =
    R"G({"properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}}})G";
constexpr const char* kRefs =
    R"G({"$defs":{"P":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}},
        "type":"array","items":{"$ref":"#/$defs/P"}})G";
constexpr const char* kAllOf =
    R"G({"allOf":[{"properties":{"a":{"type":"integer"}},"required":["a"]},
                 {"properties":{"b":{"type":"string"}},"required":["b"]}]})G";
constexpr const char* kNested =
    R"G({"type":"object","properties":{"inner":{"type":"object","properties":
        {"v":{"type":"boolean"}},"required":["v"]}},"required":["inner"]})G";

const SchemaCase kSchemaCases[] = {
    {R"G({"type":"integer"})G", "0", true},
    {R"G({"type":"integer"})G", "-12", true},
    {R"G({"type":"integer"})G", "012", false},
    {R"G({"type":"integer"})G", "1.5", false},
    {R"G({"type":"number"})G", "1.5", true},
    {R"G({"type":"number"})G", "-0.5e+10", true},
    {R"G({"type":"number"})G", "1.", false},
    {R"G({"type":"string"})G", R"G("abc")G", true},
    {R"G({"type":"string"})G", R"G("a\"b\u00e9")G", true},
    {R"G({"type":"string"})G", R"G("a"b")G", false},
    {R"G({"type":"string"})G", "\"tab\there\"", false},  // raw control characters are not JSON
    {R"G({"type":"string"})G", "abc", false},
    {R"G({"type":"boolean"})G", "true", true},
    {R"G({"type":"boolean"})G", "True", false},
    {R"G({"type":"null"})G", "null", true},
    {R"G({"type":["string","null"]})G", "null", true},
    {R"G({"type":["string","null"]})G", R"G("x")G", true},
    {R"G({"type":["string","null"]})G", "1", false},
    {kPerson, R"G({"name":"Al","age":3})G", true},
    {kPerson, R"G({ "name": "Al", "age": 3 })G", true},
    {kPerson, R"G({"name":  "Al","age":3})G", false},  // at most one space by default
    {kPerson, R"G({"age":3,"name":"Al"})G", false},    // properties in schema order
    {kPerson, R"G({"name":"Al"})G", false},
    {kPerson, R"G({"name":"Al","age":3,"x":1})G", false},  // no additional properties
    {kOptional, R"G({"b":1})G", true},
    {kOptional, R"G({"a":1,"b":2})G", true},
    {kOptional, R"G({"b":1,"c":3})G", true},
    {kOptional, R"G({"a":1,"b":2,"c":3})G", true},
    {kOptional, R"G({})G", false},
    {kOptional, R"G({"a":1})G", false},
    {kOptional, R"G({"a":1,,"b":2})G", false},
    {kAllOptional, R"G({})G", true},
    {kAllOptional, R"G({"c":1})G", true},
    {kAllOptional, R"G({"a":1,"c":3})G", true},
    {kAllOptional, R"G({"c":1,"a":1})G", false},
    {R"G({"enum":["red","green",1,null]})G", R"G("red")G", true},
    {R"G({"enum":["red","green",1,null]})G", "1", true},
    {R"G({"enum":["red","green",1,null]})G", "null", true},
    {R"G({"enum":["red","green",1,null]})G", R"G("blue")G", false},
    {R"G({"const":{"k":[1,"x"]}})G", R"G({"k":[1,"x"]})G", true},
    {R"G({"anyOf":[{"type":"integer"},{"type":"boolean"}]})G", "true", true},
    {R"G({"oneOf":[{"type":"integer"},{"type":"boolean"}]})G", R"G("a")G", false},
    {kAllOf, R"G({"a":1,"b":"x"})G", true},
    {kAllOf, R"G({"a":1})G", false},
    {kRefs, R"G([{"x":1},{"x":2}])G", true},
    {kRefs, "[]", true},
    {kRefs, R"G([{"y":1}])G", false},
    {kNested, R"G({"inner":{"v":true}})G", true},
    {kNested, R"G({"inner":{}})G", false},
    {R"G({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})G", "[1,2]", true},
    {R"G({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})G", "[1, 2, 3]",
     true},
    {R"G({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})G", "[1]", false},
    {R"G({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})G", "[1,2,3,4]",
     false},
    {R"G({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false})G",
     R"G(["a",1])G", true},
    {R"G({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false})G",
     R"G(["a",1,2])G", false},
    {R"G({"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"}})G",
     R"G(["a",1,2])G", true},
    {R"G({"type":"string","minLength":2,"maxLength":3})G", R"G("ab")G", true},
    {R"G({"type":"string","minLength":2,"maxLength":3})G", R"G("éé")G", true},  // characters
    {R"G({"type":"string","minLength":2,"maxLength":3})G", R"G("a")G", false},
    {R"G({"type":"string","minLength":2,"maxLength":3})G", R"G("abcd")G", false},
    {R"G({"type":"string","pattern":"^[a-z]+\\d$"})G", R"G("abc1")G", true},
    {R"G({"type":"string","pattern":"^[a-z]+\\d$"})G", R"G("abc")G", false},
    {R"G({"type":"string","format":"date"})G", R"G("2024-02-29")G", true},
    {R"G({"type":"string","format":"date"})G", R"G("2024-13-01")G", false},
    {R"G({"type":"string","format":"time"})G", R"G("12:30:00Z")G", true},
    {R"G({"type":"string","format":"date-time"})G", R"G("2024-01-01T00:00:00+01:00")G", true},
    {R"G({"type":"string","format":"email"})G", R"G("a.b@example.com")G", true},
    {R"G({"type":"string","format":"email"})G", R"G("ab@")G", false},
    {R"G({"type":"string","format":"uuid"})G", R"G("123e4567-e89b-12d3-a456-426614174000")G", true},
    {R"G({"type":"string","format":"uuid"})G", R"G("123e4567")G", false},
    {R"G({"type":"string","format":"ipv4"})G", R"G("192.168.0.1")G", true},
    {R"G({"type":"string","format":"ipv4"})G", R"G("256.1.1.1")G", false},
    {R"G({"type":"integer","minimum":10,"maximum":250})G", "10", true},
    {R"G({"type":"integer","minimum":10,"maximum":250})G", "250", true},
    {R"G({"type":"integer","minimum":10,"maximum":250})G", "199", true},
    {R"G({"type":"integer","minimum":10,"maximum":250})G", "9", false},
    {R"G({"type":"integer","minimum":10,"maximum":250})G", "251", false},
    {R"G({"type":"integer","minimum":10,"maximum":250})G", "-5", false},
    {R"G({"type":"integer","minimum":-20,"maximum":-5})G", "-13", true},
    {R"G({"type":"integer","minimum":-20,"maximum":-5})G", "-4", false},
    {R"G({"type":"integer","minimum":-20,"maximum":-5})G", "-21", false},
    {R"G({"type":"integer","exclusiveMinimum":0})G", "12345", true},
    {R"G({"type":"integer","exclusiveMinimum":0})G", "0", false},
    {R"G({"type":"integer","minimum":15})G", "123456", true},
    {R"G({"type":"integer","minimum":15})G", "14", false},
    {R"G({"type":"integer","maximum":7})G", "-100", true},
    {R"G({"type":"integer","maximum":7})G", "70", false},
    {R"G({"type":"number","minimum":0})G", "0.5", true},
    {R"G({"type":"number","minimum":0})G", "-0.5", false},
    {"{}", R"G({"a":[1,"x"],"b":{}})G", true},
    {"{}", R"G({"a":[1,{"b":null}]})G", false},  // deeper than max_any_depth (2)
    {"{}", R"G("x")G", true},
    {R"G({"type":"object","additionalProperties":{"type":"integer"}})G", R"G({"k":1,"j":2})G",
     true},
    {R"G({"type":"object","additionalProperties":{"type":"integer"}})G", R"G({"k":"x"})G", false},
};

// The table is written for outlines' whitespace "[ ]?" (compact JSON and single spaces both
// valid); the default, json.dumps's separators, has its own test below.
CompileOptions OutlinesWhitespace() {
  CompileOptions options;
  options.json.whitespace_pattern = "[ ]?";
  return options;
}

TEST(JsonSchemaTest, TableOfCases) {
  for (const SchemaCase& c : kSchemaCases) {
    auto grammar = MustCompile(GrammarKind::kJsonSchema, c.schema, OutlinesWhitespace());
    ASSERT_NE(grammar, nullptr) << c.schema;
    EXPECT_EQ(FullMatch(*grammar, c.document), c.matches)
        << "schema " << c.schema << "\ndocument " << c.document << "\nregex " << grammar->regex();
  }
}

TEST(JsonSchemaTest, IntegerRangesAgreeWithArithmetic) {
  // Every integer in a window around the bounds is accepted exactly when it is in range.
  const std::pair<int, int> ranges[] = {{0, 0},        {-1, 1}, {7, 93},  {-305, -17}, {99, 1000},
                                        {-1234, 5678}, {1, 9},  {10, 19}, {0, 100}};
  for (auto [lo, hi] : ranges) {
    const std::string schema = R"({"type":"integer","minimum":)" + std::to_string(lo) +
                               R"(,"maximum":)" + std::to_string(hi) + "}";
    auto grammar = MustCompile(GrammarKind::kJsonSchema, schema);
    for (int v = lo - 150; v <= hi + 150; ++v) {
      ASSERT_EQ(FullMatch(*grammar, std::to_string(v)), v >= lo && v <= hi) << schema << " " << v;
    }
  }
}

TEST(JsonSchemaTest, CustomWhitespacePattern) {
  CompileOptions options;
  options.json.whitespace_pattern = "[ \n]*";
  auto grammar = MustCompile(GrammarKind::kJsonSchema, kPerson, options);
  EXPECT_TRUE(FullMatch(*grammar, "{\n  \"name\": \"Al\",\n  \"age\": 3\n}"));
  EXPECT_FALSE(FullMatch(*MustCompile(GrammarKind::kJsonSchema, kPerson, OutlinesWhitespace()),
                         "{\n  \"name\": \"Al\",\n  \"age\": 3\n}"));
}

TEST(JsonSchemaTest, DefaultSeparatorsAreJsonDumps) {
  // Exactly what Python's json.dumps writes: ", " between items, ": " after keys.
  auto person = MustCompile(GrammarKind::kJsonSchema, kPerson);
  EXPECT_TRUE(FullMatch(*person, R"G({"name": "Al", "age": 3})G"));
  EXPECT_FALSE(FullMatch(*person, R"G({"name":"Al","age":3})G"));
  EXPECT_FALSE(FullMatch(*person, R"G({ "name": "Al", "age": 3 })G"));
  EXPECT_FALSE(FullMatch(*person, R"G({"name": "Al",  "age": 3})G"));
  auto optional = MustCompile(GrammarKind::kJsonSchema, kOptional);
  EXPECT_TRUE(FullMatch(*optional, R"G({"b": 1, "c": 3})G"));
  EXPECT_FALSE(FullMatch(*optional, R"G({"b": 1,"c": 3})G"));
  auto refs = MustCompile(GrammarKind::kJsonSchema, kRefs);
  EXPECT_TRUE(FullMatch(*refs, R"G([{"x": 1}, {"x": 2}])G"));
  EXPECT_TRUE(FullMatch(*refs, "[]"));
  EXPECT_FALSE(FullMatch(*refs, R"G([{"x": 1},{"x": 2}])G"));
  // const / enum values and schema-less values use the same separators.
  auto constant = MustCompile(GrammarKind::kJsonSchema, R"G({"const":{"k":[1,"x"]}})G");
  EXPECT_TRUE(FullMatch(*constant, R"G({"k": [1, "x"]})G"));
  EXPECT_FALSE(FullMatch(*constant, R"G({"k":[1,"x"]})G"));
  auto any = MustCompile(GrammarKind::kJsonSchema, "{}");
  EXPECT_TRUE(FullMatch(*any, R"G({"a": [1, 2], "c": {}})G"));
  EXPECT_FALSE(FullMatch(*any, R"G({"a":[1]})G"));
}

TEST(JsonSchemaTest, ConstObjectsFollowTheWhitespacePattern) {
  auto constant =
      MustCompile(GrammarKind::kJsonSchema, R"G({"const":{"k":[1,"x"]}})G", OutlinesWhitespace());
  EXPECT_TRUE(FullMatch(*constant, R"G({"k":[1,"x"]})G"));
  EXPECT_TRUE(FullMatch(*constant, R"G({ "k": [1, "x"] })G"));
  EXPECT_FALSE(FullMatch(*constant, R"G({"k":[1,"y"]})G"));
}

struct SchemaError {
  const char* schema;
  const char* message_part;
};

const SchemaError kSchemaErrors[] = {
    {R"G({"type":"object","patternProperties":{"a":{}}})G",
     "unsupported JSON schema keyword 'patternProperties'"},
    {R"G({"not":{"type":"string"}})G", "keyword 'not'"},
    {R"G({"type":"array","uniqueItems":true})G", "keyword 'uniqueItems'"},
    {R"G({"type":"string","format":"hostname"})G", "format 'hostname'"},
    {R"G({"type":"integr"})G", "unknown type 'integr'"},
    {R"G({"$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}},
        "$ref":"#/$defs/N"})G",
     "recursive $ref"},
    {R"G({"$ref":"#/$defs/Missing"})G", "does not resolve"},
    {R"G({"$ref":"http://example.com/s.json"})G", "unsupported $ref"},
    {R"G({"type":"object","properties":{"a":{}},"additionalProperties":true})G",
     "additionalProperties"},
    {R"G({"type":"integer","minimum":5,"maximum":1})G", "no integer"},
    {R"G({"type":"string","minLength":-1})G", "non-negative"},
    {R"G({"type": "object", )G", "not valid JSON"},
};

TEST(JsonSchemaTest, UnsupportedOrBrokenSchemasAreInvalidArgument) {
  for (const SchemaError& c : kSchemaErrors) {
    auto regex = JsonSchemaToRegex(c.schema);
    ASSERT_FALSE(regex.ok()) << c.schema;
    EXPECT_EQ(regex.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(regex.status().message().find(c.message_part), std::string::npos)
        << regex.status().message();
  }
}

}  // namespace
}  // namespace radixlm::grammar

namespace radixlm::grammar {
namespace {

// Found by fuzz/json_schema_fuzzer.cc: {"items": {"items": ...}} 100000 deep overflowed the stack
// in the recursive conversion. Document depth and schema nesting ($ref chains included) are
// capped at kMaxSchemaDepth.
TEST(JsonSchemaTest, DeepNestingIsAnErrorNotAStackOverflow) {
  const int n = 100000;
  std::string deep;
  for (int i = 0; i < n; ++i) deep += R"({"items": )";
  deep += "{}" + std::string(n, '}');
  auto regex = JsonSchemaToRegex(deep);
  ASSERT_FALSE(regex.ok());
  EXPECT_EQ(regex.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(regex.status().message().find("nests deeper than 64"), std::string::npos)
      << regex.status().message();

  // A deep const value is the document's depth too (serializing it recurses).
  const std::string deep_const = R"({"const": )" + std::string(n, '[') + std::string(n, ']') + "}";
  EXPECT_FALSE(JsonSchemaToRegex(deep_const).ok());

  // A chain of $refs nests schemas without nesting the document.
  std::string chain = R"({"$defs": {)";
  for (int i = 0; i < 1000; ++i) {
    chain +=
        "\"d" + std::to_string(i) + R"(": {"$ref": "#/$defs/d)" + std::to_string(i + 1) + "\"}, ";
  }
  chain += R"("d1000": {"type": "integer"}}, "$ref": "#/$defs/d0"})";
  regex = JsonSchemaToRegex(chain);
  ASSERT_FALSE(regex.ok());
  EXPECT_NE(regex.status().message().find("schemas nested deeper than 64"), std::string::npos)
      << regex.status().message();
}

// Found by fuzz/json_schema_fuzzer.cc: each array level repeats its item's regex twice, so 63
// nested arrays asked for a 2^63-byte regex (out of memory). The regex size is capped.
TEST(JsonSchemaTest, ExponentialRegexIsResourceExhausted) {
  std::string arrays = R"({"type": "integer"})";
  for (int i = 0; i < 63; ++i) arrays = R"({"type": "array", "items": )" + arrays + "}";
  // Two $refs per level to the level below: 2^25 copies of the innermost schema.
  std::string refs = R"({"$defs": {"d0": {"type": "boolean"}, )";
  for (int i = 1; i <= 25; ++i) {
    const std::string below = R"({"$ref": "#/$defs/d)" + std::to_string(i - 1) + "\"}";
    refs += "\"d" + std::to_string(i) + R"(": {"type": "array", "prefixItems": [)" + below + ", " +
            below + "]}" + (i < 25 ? ", " : "");
  }
  refs += R"(}, "$ref": "#/$defs/d25"})";
  for (const std::string& schema : {arrays, refs}) {
    auto regex = JsonSchemaToRegex(schema);
    ASSERT_FALSE(regex.ok());
    EXPECT_EQ(regex.status().code(), StatusCode::kResourceExhausted);
    EXPECT_NE(regex.status().message().find("the regex exceeds 1048576 bytes"), std::string::npos)
        << regex.status().message();
  }
}

TEST(JsonSchemaTest, NestingUpToTheCapCompiles) {
  // kMaxSchemaDepth / 2 object levels: each level is a schema object and its "properties".
  std::string schema = R"({"type": "integer"})";
  for (int i = 0; i < kMaxSchemaDepth / 2 - 1; ++i) {
    schema = R"({"type": "object", "properties": {"a": )" + schema + R"(}, "required": ["a"]})";
  }
  auto compiled = MustCompile(GrammarKind::kJsonSchema, schema);
  ASSERT_NE(compiled, nullptr);
  std::string doc = "1";
  for (int i = 0; i < kMaxSchemaDepth / 2 - 1; ++i) doc = R"({"a": )" + doc + "}";
  EXPECT_TRUE(FullMatch(*compiled, doc));
}

TEST(JsonSchemaTest, DfaCapIsReportedAsResourceExhausted) {
  CompileOptions options;
  options.max_dfa_states = 50;
  auto compiled = CompiledGrammar::Compile(GrammarKind::kJsonSchema,
                                           R"G({"type":"string","maxLength":200})G",  // ~200 states
                                           testing::SyntheticVocab(), options);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(compiled.status().message().find("JSON schema"), std::string::npos);
}

TEST(JsonSchemaTest, ManyOptionalPropertiesStayCompact) {
  // Optional-property lowering is quadratic in regex text but the DFA stays small.
  std::string schema = R"G({"type":"object","properties":{)G";
  for (int i = 0; i < 16; ++i) {
    if (i > 0) schema += ",";
    schema.append("\"p").append(std::to_string(i)).append(R"G(":{"type":"integer"})G");
  }
  schema += R"G(},"required":["p7"]})G";
  auto grammar = testing::MustCompile(GrammarKind::kJsonSchema, schema);
  ASSERT_NE(grammar, nullptr);
  EXPECT_LT(grammar->dfa()->num_states(), 2000);
  EXPECT_TRUE(testing::FullMatch(*grammar, R"G({"p7": 1})G"));
  EXPECT_TRUE(testing::FullMatch(*grammar, R"G({"p0": 1, "p7": 2, "p15": 3})G"));
  EXPECT_FALSE(testing::FullMatch(*grammar, R"G({"p0": 1, "p15": 3})G"));
}

}  // namespace
}  // namespace radixlm::grammar

namespace radixlm::grammar {
namespace {

TEST(JsonSchemaTest, HalfOpenIntegerRangesAgreeWithArithmetic) {
  struct Bound {
    const char* keyword;
    int value;
  };
  const Bound bounds[] = {{"minimum", -5},         {"minimum", 37},         {"minimum", 100},
                          {"maximum", -12},        {"maximum", 250},        {"maximum", 0},
                          {"exclusiveMinimum", 9}, {"exclusiveMaximum", -1}};
  for (const Bound& b : bounds) {
    std::string schema = R"G({"type":"integer",")G";
    schema.append(b.keyword).append("\":").append(std::to_string(b.value)).append("}");
    auto grammar = testing::MustCompile(GrammarKind::kJsonSchema, schema);
    const std::string kw = b.keyword;
    for (int v = -1200; v <= 1200; ++v) {
      bool in = kw == "minimum"            ? v >= b.value
                : kw == "maximum"          ? v <= b.value
                : kw == "exclusiveMinimum" ? v > b.value
                                           : v < b.value;
      ASSERT_EQ(testing::FullMatch(*grammar, std::to_string(v)), in) << schema << " " << v;
    }
  }
}

}  // namespace
}  // namespace radixlm::grammar

namespace radixlm::grammar {
namespace {

// Numbers end: a schema without bounds allows at most 16 integer digits, 16 fraction digits
// and 3 exponent digits (llama.cpp's bounds), so a model cannot loop inside one.
TEST(JsonSchemaTest, NumbersAreBoundedInLength) {
  auto integer = testing::MustCompile(GrammarKind::kJsonSchema, R"({"type":"integer"})");
  EXPECT_TRUE(testing::FullMatch(*integer, "9999999999999999"));
  EXPECT_TRUE(testing::FullMatch(*integer, "-9999999999999999"));
  EXPECT_FALSE(testing::FullMatch(*integer, "10000000000000000"));
  auto number = testing::MustCompile(GrammarKind::kJsonSchema, R"({"type":"number"})");
  EXPECT_TRUE(testing::FullMatch(*number, "-1234567890123456.1234567890123456e+123"));
  EXPECT_FALSE(testing::FullMatch(*number, "12345678901234567"));
  EXPECT_FALSE(testing::FullMatch(*number, "1.12345678901234567"));
  EXPECT_FALSE(testing::FullMatch(*number, "1e1234"));
  // Half-open ranges close at the same length; a bound beyond it is the schema's to keep.
  auto at_least =
      testing::MustCompile(GrammarKind::kJsonSchema, R"({"type":"integer","minimum":5})");
  EXPECT_TRUE(testing::FullMatch(*at_least, "9999999999999999"));
  EXPECT_FALSE(testing::FullMatch(*at_least, "99999999999999999"));
  auto huge = testing::MustCompile(GrammarKind::kJsonSchema,
                                   R"({"type":"integer","minimum":100000000000000000})");
  EXPECT_TRUE(testing::FullMatch(*huge, "1000000000000000000"));
  // Inside "any JSON" values too.
  auto any = testing::MustCompile(GrammarKind::kJsonSchema, R"({"type":"object"})");
  EXPECT_TRUE(testing::FullMatch(*any, R"({"a": 12})"));
  EXPECT_FALSE(testing::FullMatch(*any, R"({"a": 123456789012345678})"));
}

}  // namespace
}  // namespace radixlm::grammar
