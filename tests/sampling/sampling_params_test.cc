// SamplingParams: defaults, Validate messages per field, FromJson / ToJson.
#include "sampling/sampling_params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace radixlm {
namespace {

using json = nlohmann::json;
constexpr int32_t kVocab = 1000;

// Validate's message for params edited by `edit`; "" when OK.
template <typename Edit>
std::string ValidateMessage(Edit edit) {
  SamplingParams p;
  edit(p);
  Status status = p.Validate(kVocab);
  if (status.ok()) return "";
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  return status.message();
}

SamplingParams Parse(const std::string& text) {
  StatusOr<SamplingParams> p = SamplingParams::FromJson(json::parse(text));
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : SamplingParams();
}

std::string ParseError(const std::string& text) {
  StatusOr<SamplingParams> p = SamplingParams::FromJson(json::parse(text));
  if (p.ok()) return "";
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  return p.status().message();
}

TEST(SamplingParamsTest, DefaultsMatchSglang) {
  SamplingParams p;
  EXPECT_EQ(p.max_new_tokens, 128);
  EXPECT_EQ(p.min_new_tokens, 0);
  EXPECT_EQ(p.temperature, 1.0f);
  EXPECT_EQ(p.top_p, 1.0f);
  EXPECT_EQ(p.top_k, -1);
  EXPECT_EQ(p.min_p, 0.0f);
  EXPECT_EQ(p.frequency_penalty, 0.0f);
  EXPECT_EQ(p.presence_penalty, 0.0f);
  EXPECT_EQ(p.repetition_penalty, 1.0f);
  EXPECT_TRUE(p.stop.empty());
  EXPECT_TRUE(p.stop_token_ids.empty());
  EXPECT_FALSE(p.ignore_eos);
  EXPECT_TRUE(p.skip_special_tokens);
  EXPECT_TRUE(p.spaces_between_special_tokens);
  EXPECT_FALSE(p.no_stop_trim);
  EXPECT_TRUE(p.logit_bias.empty());
  EXPECT_FALSE(p.sampling_seed.has_value());
  EXPECT_EQ(p.n, 1);
  EXPECT_FALSE(p.regex || p.json_schema || p.ebnf);
  EXPECT_TRUE(p.Validate(kVocab).ok());
  EXPECT_FALSE(p.IsGreedy());
  EXPECT_EQ(p.EffectiveTopK(kVocab), kVocab);
}

TEST(SamplingParamsTest, GreedyAndTopK) {
  SamplingParams p;
  p.temperature = 0.0f;
  EXPECT_TRUE(p.IsGreedy());
  p.temperature = 1e-7f;
  EXPECT_TRUE(p.IsGreedy());
  p.temperature = 1e-5f;
  EXPECT_FALSE(p.IsGreedy());
  p.top_k = 1;
  EXPECT_TRUE(p.IsGreedy());
  p.top_k = 5000;
  EXPECT_EQ(p.EffectiveTopK(kVocab), kVocab);
  p.top_k = 7;
  EXPECT_EQ(p.EffectiveTopK(kVocab), 7);
}

TEST(SamplingParamsTest, ValidateTemperature) {
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.temperature = -1; }),
            "temperature must be a non-negative finite number, got -1");
  EXPECT_NE(ValidateMessage([](SamplingParams& p) {
              p.temperature = std::numeric_limits<float>::infinity();
            }).find("temperature"),
            std::string::npos);
  EXPECT_NE(ValidateMessage([](SamplingParams& p) { p.temperature = NAN; }).find("temperature"),
            std::string::npos);
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.temperature = 0; }), "");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.temperature = 100; }), "");
}

TEST(SamplingParamsTest, ValidateTopPMinPTopK) {
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.top_p = 0; }),
            "top_p must be in (0, 1], got 0");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.top_p = 1.5; }),
            "top_p must be in (0, 1], got 1.5");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.top_p = NAN; }).rfind("top_p", 0), 0u);
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.top_p = 1e-9f; }), "");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.min_p = -0.5; }),
            "min_p must be in [0, 1], got -0.5");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.min_p = 2; }),
            "min_p must be in [0, 1], got 2");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.min_p = 1; }), "");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.top_k = 0; }),
            "top_k must be -1 (disable) or at least 1, got 0");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.top_k = -2; }),
            "top_k must be -1 (disable) or at least 1, got -2");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.top_k = 1; }), "");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.top_k = 1 << 30; }), "");
}

TEST(SamplingParamsTest, ValidatePenalties) {
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.frequency_penalty = 2.5; }),
            "frequency_penalty must be in [-2, 2], got 2.5");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.frequency_penalty = -2; }), "");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.presence_penalty = -3; }),
            "presence_penalty must be in [-2, 2], got -3");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.presence_penalty = 2; }), "");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.repetition_penalty = 0; }),
            "repetition_penalty must be in (0, 2] (1.0 = no penalty), got 0");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.repetition_penalty = 2.5; }),
            "repetition_penalty must be in (0, 2] (1.0 = no penalty), got 2.5");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.repetition_penalty = 0.5; }), "");
}

TEST(SamplingParamsTest, ValidateLengths) {
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.max_new_tokens = -1; }),
            "max_new_tokens must be at least 0, got -1");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.min_new_tokens = -1; }),
            "min_new_tokens must be in [0, max_new_tokens], got -1");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) {
              p.max_new_tokens = 10;
              p.min_new_tokens = 11;
            }),
            "min_new_tokens must be in [0, max_new_tokens(10)], got 11");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) {
              p.max_new_tokens.reset();  // no cap
              p.min_new_tokens = 100000;
            }),
            "");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.max_new_tokens = 0; }), "");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.n = 0; }), "n must be at least 1, got 0");
}

TEST(SamplingParamsTest, ValidateTokenIdsAndGrammars) {
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.logit_bias[kVocab] = 1; }),
            "logit_bias keys must be token ids in [0, 999], got 1000");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.logit_bias[-1] = 1; }),
            "logit_bias keys must be token ids in [0, 999], got -1");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.logit_bias[999] = -100; }), "");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) {
              p.stop_token_ids = {5, 1000};
            }),
            "stop_token_ids must be token ids in [0, 999], got 1000");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) {
              p.regex = "a+";
              p.ebnf = "root ::= \"a\"";
            }),
            "Only one of regex, json_schema, or ebnf can be set");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.json_schema = "{}"; }), "");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) {
              p.structural_tag = "{}";
              p.regex = "a";
            }),
            "structural_tag cannot be combined with regex, json_schema or ebnf");
  EXPECT_EQ(ValidateMessage([](SamplingParams& p) { p.structural_tag = "{}"; }), "");
}

TEST(SamplingParamsJsonTest, NullAndEmptyGiveDefaults) {
  StatusOr<SamplingParams> from_null = SamplingParams::FromJson(json(nullptr));
  ASSERT_TRUE(from_null.ok());
  EXPECT_EQ(from_null->ToJson(), SamplingParams().ToJson());
  EXPECT_EQ(Parse("{}").ToJson(), SamplingParams().ToJson());
  SamplingParams nulls = Parse(R"({"temperature": null, "top_p": null, "top_k": null,
      "min_p": null, "frequency_penalty": null, "presence_penalty": null,
      "repetition_penalty": null, "min_new_tokens": null, "n": null, "ignore_eos": null,
      "skip_special_tokens": null, "stop": null, "stop_token_ids": null, "logit_bias": null,
      "sampling_seed": null, "regex": null, "json_schema": null, "ebnf": null})");
  EXPECT_EQ(nulls.ToJson(), SamplingParams().ToJson());
}

TEST(SamplingParamsJsonTest, MaxNewTokensNullMeansNoCap) {
  EXPECT_FALSE(Parse(R"({"max_new_tokens": null})").max_new_tokens.has_value());
  EXPECT_EQ(Parse(R"({"max_new_tokens": 7})").max_new_tokens, 7);
  EXPECT_EQ(Parse(R"({"max_new_tokens": 7.0})").max_new_tokens, 7);
}

TEST(SamplingParamsJsonTest, ParsesEveryField) {
  SamplingParams p = Parse(R"({
      "max_new_tokens": 64, "min_new_tokens": 2, "temperature": 0.7, "top_p": 0.9,
      "top_k": 40, "min_p": 0.05, "frequency_penalty": 0.5, "presence_penalty": -0.5,
      "repetition_penalty": 1.1, "stop": ["\n\n", "END"], "stop_token_ids": [1, null, 2],
      "ignore_eos": true, "skip_special_tokens": false,
      "spaces_between_special_tokens": false, "no_stop_trim": true,
      "logit_bias": {"5": -100, "7": 2.5}, "sampling_seed": 42, "n": 3, "regex": "[a-z]+",
      "some_future_field": {"x": 1}})");
  EXPECT_EQ(p.max_new_tokens, 64);
  EXPECT_EQ(p.min_new_tokens, 2);
  EXPECT_FLOAT_EQ(p.temperature, 0.7f);
  EXPECT_FLOAT_EQ(p.top_p, 0.9f);
  EXPECT_EQ(p.top_k, 40);
  EXPECT_FLOAT_EQ(p.min_p, 0.05f);
  EXPECT_FLOAT_EQ(p.frequency_penalty, 0.5f);
  EXPECT_FLOAT_EQ(p.presence_penalty, -0.5f);
  EXPECT_FLOAT_EQ(p.repetition_penalty, 1.1f);
  EXPECT_EQ(p.stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_EQ(p.stop_token_ids, (std::vector<int32_t>{1, 2}));
  EXPECT_TRUE(p.ignore_eos);
  EXPECT_FALSE(p.skip_special_tokens);
  EXPECT_FALSE(p.spaces_between_special_tokens);
  EXPECT_TRUE(p.no_stop_trim);
  ASSERT_EQ(p.logit_bias.size(), 2u);
  EXPECT_EQ(p.logit_bias.at(5), -100.0f);
  EXPECT_EQ(p.logit_bias.at(7), 2.5f);
  EXPECT_EQ(p.sampling_seed, 42);
  EXPECT_EQ(p.n, 3);
  EXPECT_EQ(p.regex, "[a-z]+");
  EXPECT_TRUE(p.Validate(kVocab).ok());
  // Round trip.
  StatusOr<SamplingParams> again = SamplingParams::FromJson(p.ToJson());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ToJson(), p.ToJson());
}

TEST(SamplingParamsJsonTest, StopAsStringOrEmptyList) {
  EXPECT_EQ(Parse(R"({"stop": "###"})").stop, std::vector<std::string>{"###"});
  EXPECT_TRUE(Parse(R"({"stop": []})").stop.empty());
  EXPECT_TRUE(Parse(R"({"stop_token_ids": []})").stop_token_ids.empty());
  EXPECT_EQ(Parse(R"({"top_k": -1})").top_k, -1);
}

TEST(SamplingParamsJsonTest, JsonSchemaStringOrObject) {
  EXPECT_EQ(Parse(R"({"json_schema": "{\"type\": \"string\"}"})").json_schema,
            R"({"type": "string"})");
  SamplingParams p = Parse(R"({"json_schema": {"type": "object"}})");
  ASSERT_TRUE(p.json_schema.has_value());
  EXPECT_EQ(json::parse(*p.json_schema), json::parse(R"({"type": "object"})"));
  EXPECT_EQ(ParseError(R"({"json_schema": 5})"),
            "json_schema must be a string or a JSON schema object, got 5");
}

TEST(SamplingParamsJsonTest, StructuralTagStringOrObject) {
  EXPECT_EQ(Parse(R"({"structural_tag": "{\"triggers\": []}"})").structural_tag,
            R"({"triggers": []})");
  SamplingParams p = Parse(R"({"structural_tag": {"triggers": ["<a>"]}})");
  ASSERT_TRUE(p.structural_tag.has_value());
  EXPECT_EQ(json::parse(*p.structural_tag), json::parse(R"({"triggers": ["<a>"]})"));
  EXPECT_EQ(json::parse(p.ToJson().dump())["structural_tag"], *p.structural_tag);
  EXPECT_EQ(ParseError(R"({"structural_tag": 5})"),
            "structural_tag must be a string or a JSON object, got 5");
}

TEST(SamplingParamsJsonTest, WrongTypesNameTheField) {
  EXPECT_EQ(ParseError(R"([1, 2])"), "sampling_params must be a JSON object, got array");
  EXPECT_EQ(ParseError(R"({"temperature": "hot"})"),
            "temperature must be a number, got string \"hot\"");
  EXPECT_EQ(ParseError(R"({"temperature": true})"), "temperature must be a number, got boolean");
  EXPECT_EQ(ParseError(R"({"top_k": 1.5})"), "top_k must be an integer, got 1.5");
  EXPECT_EQ(ParseError(R"({"max_new_tokens": "10"})"),
            "max_new_tokens must be an integer, got string \"10\"");
  EXPECT_EQ(ParseError(R"({"max_new_tokens": 1e12})"),
            "max_new_tokens must be an integer, got 1000000000000.0");
  EXPECT_EQ(ParseError(R"({"n": 99999999999})"), "n is out of range, got 99999999999");
  EXPECT_EQ(ParseError(R"({"ignore_eos": 1})"), "ignore_eos must be a boolean, got 1");
  EXPECT_EQ(ParseError(R"({"stop": 5})"), "stop must be a string or a list of strings, got 5");
  EXPECT_EQ(ParseError(R"({"stop": ["a", 5]})"),
            "stop must be a string or a list of strings, got 5");
  EXPECT_EQ(ParseError(R"({"stop_token_ids": 5})"),
            "stop_token_ids must be a list of token ids, got 5");
  EXPECT_EQ(ParseError(R"({"stop_token_ids": ["x"]})"),
            "stop_token_ids must be a list of token ids, got string \"x\"");
  EXPECT_EQ(ParseError(R"({"logit_bias": [1]})"),
            "logit_bias must be an object mapping token ids to numbers, got array");
  EXPECT_EQ(ParseError(R"({"logit_bias": {"abc": 1}})"),
            "logit_bias keys must be token ids, got \"abc\"");
  EXPECT_EQ(ParseError(R"({"logit_bias": {" 5": 1}})"),
            "logit_bias keys must be token ids, got \" 5\"");
  EXPECT_EQ(ParseError(R"({"logit_bias": {"5x": 1}})"),
            "logit_bias keys must be token ids, got \"5x\"");
  EXPECT_EQ(ParseError(R"({"logit_bias": {"3": "x"}})"),
            "logit_bias value for token 3 must be a number, got string \"x\"");
  EXPECT_EQ(ParseError(R"({"sampling_seed": "s"})"),
            "sampling_seed must be an integer, got string \"s\"");
  EXPECT_EQ(ParseError(R"({"regex": 3})"), "regex must be a string, got 3");
  EXPECT_EQ(ParseError(R"({"ebnf": []})"), "ebnf must be a string, got array");
}

TEST(SamplingParamsJsonTest, ParsedValuesStillNeedValidate) {
  SamplingParams p = Parse(R"({"temperature": -1, "logit_bias": {"5000": 1}})");
  Status status = p.Validate(kVocab);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "temperature must be a non-negative finite number, got -1");
}

}  // namespace
}  // namespace radixlm
