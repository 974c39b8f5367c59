// POST /generate body parsing: shapes, batches, per-prompt fields, nulls and bad input.
#include "server/native_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace radixlm::server {
namespace {

using json = nlohmann::json;

StatusOr<NativeGenerateCall> Parse(const std::string& body) {
  return ParseNativeGenerate(json::parse(body), ServerConfig());
}

std::string ErrorOf(const std::string& body) {
  StatusOr<NativeGenerateCall> call = Parse(body);
  EXPECT_FALSE(call.ok()) << body;
  return call.ok() ? "" : call.status().message();
}

TEST(NativeRequestTest, SingleText) {
  auto call = Parse(R"({"text": "hi", "sampling_params": {"max_new_tokens": 5}, "rid": "r1"})");
  ASSERT_TRUE(call.ok()) << call.status().ToString();
  ASSERT_EQ(call->requests.size(), 1u);
  EXPECT_FALSE(call->batch);
  EXPECT_FALSE(call->ReturnsList());
  EXPECT_EQ(call->requests[0].text, "hi");
  EXPECT_EQ(call->requests[0].rid, "r1");
  EXPECT_EQ(call->requests[0].sampling_params.max_new_tokens, 5);
}

TEST(NativeRequestTest, BatchOfTextsWithPerPromptFields) {
  auto call = Parse(R"({"text": ["a", "b"], "rid": ["x", "y"],
      "sampling_params": [{"max_new_tokens": 1}, {"max_new_tokens": 2}],
      "return_logprob": [true, false], "logprob_start_len": 0, "top_logprobs_num": [2, 0],
      "stream": true, "return_text_in_logprobs": true})");
  ASSERT_TRUE(call.ok()) << call.status().ToString();
  ASSERT_EQ(call->requests.size(), 2u);
  EXPECT_TRUE(call->batch);
  EXPECT_TRUE(call->ReturnsList());
  EXPECT_TRUE(call->stream);
  EXPECT_TRUE(call->return_text_in_logprobs);
  EXPECT_EQ(call->requests[1].rid, "y");
  EXPECT_EQ(call->requests[1].sampling_params.max_new_tokens, 2);
  EXPECT_TRUE(call->requests[0].return_logprob);
  EXPECT_FALSE(call->requests[1].return_logprob);
  EXPECT_EQ(call->requests[0].logprob_start_len, 0);
  EXPECT_EQ(call->requests[1].logprob_start_len, 0);
  EXPECT_EQ(call->requests[0].top_logprobs_num, 2);
}

TEST(NativeRequestTest, InputIdsSingleAndBatch) {
  auto single = Parse(R"({"input_ids": [1, 2, 3]})");
  ASSERT_TRUE(single.ok());
  EXPECT_FALSE(single->batch);
  EXPECT_EQ(*single->requests[0].input_ids, (std::vector<int32_t>{1, 2, 3}));
  auto batch = Parse(R"({"input_ids": [[1, 2], [3]]})");
  ASSERT_TRUE(batch.ok());
  EXPECT_TRUE(batch->batch);
  EXPECT_EQ(batch->requests.size(), 2u);
}

TEST(NativeRequestTest, NullsEmptyListsAndMinusOneMeanDefaults) {
  auto call = Parse(R"({"text": "x", "rid": null, "stream": null, "return_logprob": null,
      "sampling_params": {"top_k": -1, "stop": [], "stop_token_ids": [], "regex": null,
      "json_schema": null, "temperature": null, "max_new_tokens": 3, "stop_regex": null}})");
  ASSERT_TRUE(call.ok()) << call.status().ToString();
  const SamplingParams& p = call->requests[0].sampling_params;
  EXPECT_EQ(p.top_k, -1);
  EXPECT_TRUE(p.stop.empty());
  EXPECT_FALSE(p.regex.has_value());
  EXPECT_FLOAT_EQ(p.temperature, 1.0f);
  EXPECT_FALSE(call->stream);
  auto null_params = Parse(R"({"text": "x", "sampling_params": null})");
  ASSERT_TRUE(null_params.ok());
}

TEST(NativeRequestTest, NGreaterThanOneReturnsAList) {
  auto call = Parse(R"({"text": "x", "sampling_params": {"n": 3}})");
  ASSERT_TRUE(call.ok());
  EXPECT_TRUE(call->ReturnsList());
}

TEST(NativeRequestTest, BadInputNamesTheProblem) {
  EXPECT_EQ(ErrorOf(R"({"sampling_params": {}})"), "Either text or input_ids should be provided.");
  EXPECT_EQ(ErrorOf(R"({"text": "a", "input_ids": [1]})"),
            "Only one of text and input_ids may be provided.");
  EXPECT_NE(ErrorOf(R"({"text": 5})").find("text must be"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": []})").find("empty"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": ["a", 1]})").find("text[1]"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"input_ids": [1, "a"]})").find("input_ids[1]"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"input_ids": [1.5]})").find("input_ids[0]"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": "a", "stream": "yes"})").find("stream must be a boolean"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": "a", "sampling_params": 3})").find("sampling_params"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(R"({"text": "a", "sampling_params": {"temperature": "hot"}})").find("temperature"),
      std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": ["a", "b"], "rid": ["x"]})").find("rid has 1 entries"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": ["a", "b"], "rid": "x"})").find("rid must be a list"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": "a", "rid": ["x"]})").find("single prompt"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": "a", "logprob_start_len": -2})").find("logprob_start_len"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": "a", "top_logprobs_num": -1})").find("top_logprobs_num"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"([1, 2])").find("JSON object"), std::string::npos);
}

TEST(NativeRequestTest, AMisspeltSamplingParameterIsRefused) {
  EXPECT_EQ(ErrorOf(R"({"text": "a", "sampling_params": {"temprature": 0.5}})"),
            "sampling_params.temprature is not a sampling parameter");
  EXPECT_NE(ErrorOf(R"({"text": ["a", "b"], "sampling_params": [{}, {"max_tokens": 3}]})")
                .find("sampling_params.max_tokens"),
            std::string::npos);
  // Every parameter SGLang's clients send is known, set or null.
  auto call = Parse(R"({"text": "a", "sampling_params": {"max_new_tokens": 2,
      "min_new_tokens": 1, "n": 1, "stop": ["x"], "stop_token_ids": [1], "stop_regex": null,
      "temperature": 0.5, "top_p": 0.9, "top_k": 5, "min_p": 0.1, "frequency_penalty": 0.1,
      "presence_penalty": 0.1, "repetition_penalty": 1.1, "ignore_eos": false, "regex": null,
      "json_schema": null, "ebnf": null, "structural_tag": null, "skip_special_tokens": true,
      "spaces_between_special_tokens": true, "no_stop_trim": false, "logit_bias": {"3": 1},
      "sampling_seed": 4, "custom_params": null, "stream_interval": 2}})");
  ASSERT_TRUE(call.ok()) << call.status().ToString();
  EXPECT_EQ(call->requests[0].sampling_params.top_k, 5);
}

// SGLang's image_data: one image or a list per prompt; a batch has one entry per prompt.
TEST(NativeRequestTest, ImageDataIsReadPerPrompt) {
  auto one = Parse(R"({"text": "a <__media__>", "image_data": "x.png"})");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->image_refs, (std::vector<std::vector<std::string>>{{"x.png"}}));
  auto list = Parse(R"({"text": "a", "image_data": ["x.png", "data:image/png;base64,AA"]})");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->image_refs[0].size(), 2u);
  auto batch = Parse(R"({"text": ["a", "b"], "image_data": [null, ["y.png"]]})");
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(batch->image_refs, (std::vector<std::vector<std::string>>{{}, {"y.png"}}));
  for (const char* body :
       {R"({"text": ["a", "b"], "image_data": ["x.png"]})", R"({"text": "a", "image_data": 3})",
        R"({"text": "a", "image_data": ["x.png", 3]})"}) {
    auto bad = Parse(body);
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << body;
    EXPECT_NE(bad.status().message().find("image_data"), std::string::npos) << body;
  }
}

TEST(NativeRequestTest, UnsupportedFeaturesAreUnimplemented) {
  for (const char* body : {R"({"text": "a", "audio_data": "x.wav"})",
                           R"({"text": "a", "return_hidden_states": true})"}) {
    auto call = Parse(body);
    ASSERT_FALSE(call.ok()) << body;
    EXPECT_EQ(call.status().code(), StatusCode::kUnimplemented) << body;
  }
  EXPECT_TRUE(Parse(R"({"text": "a", "image_data": null, "lora_path": null})").ok());
  auto regex = Parse(R"({"text": "a", "sampling_params": {"stop_regex": ["x+", ""]}})");
  ASSERT_TRUE(regex.ok());
  EXPECT_EQ(regex->requests[0].sampling_params.stop_regex, std::vector<std::string>{"x+"});
  // null, "", [], {} and false mean "not set" (SGLang's clients send "lora_path": "").
  for (const char* body :
       {R"({"text": "a", "lora_path": ""})", R"({"text": "a", "image_data": []})",
        R"({"text": "a", "session_params": {}})", R"({"text": "a", "input_embeds": false})",
        R"({"text": "a", "sampling_params": {"stop_regex": ""}})",
        R"({"text": "a", "sampling_params": {"stop_regex": []}})"}) {
    EXPECT_TRUE(Parse(body).ok()) << body;
  }
}

TEST(NativeRequestTest, LoraPathNamesAnAdapterPerPrompt) {
  auto single = Parse(R"({"text": "a", "lora_path": "l"})");
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  EXPECT_EQ(single->requests[0].lora_path, "l");
  auto batch = Parse(R"({"text": ["a", "b", "c"], "lora_path": ["l", null, ""]})");
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(batch->requests[0].lora_path, "l");
  EXPECT_EQ(batch->requests[1].lora_path, "");
  EXPECT_EQ(batch->requests[2].lora_path, "");
  auto shared = Parse(R"({"text": ["a", "b"], "lora_path": "l"})");
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(shared->requests[1].lora_path, "l");
  for (const char* body :
       {R"({"text": ["a", "b"], "lora_path": ["l"]})", R"({"text": "a", "lora_path": ["l"]})",
        R"({"text": "a", "lora_path": 1})"}) {
    auto bad = Parse(body);
    ASSERT_FALSE(bad.ok()) << body;
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << body;
    EXPECT_NE(bad.status().message().find("lora_path"), std::string::npos) << body;
  }
}

TEST(NativeRequestTest, TokenIdsLogprobIsPerPromptAndMayBeRagged) {
  auto single = Parse(R"({"text": "a", "return_logprob": true, "token_ids_logprob": [5, 9, 5]})");
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  EXPECT_EQ(single->requests[0].token_ids_logprob, (std::vector<int32_t>{5, 9, 5}));
  auto ragged = Parse(R"({"text": ["a", "b", "c"], "return_logprob": true, )"
                      R"("token_ids_logprob": [[1, 2], null, [3]]})");
  ASSERT_TRUE(ragged.ok()) << ragged.status().ToString();
  EXPECT_EQ(ragged->requests[0].token_ids_logprob, (std::vector<int32_t>{1, 2}));
  EXPECT_TRUE(ragged->requests[1].token_ids_logprob.empty());
  EXPECT_EQ(ragged->requests[2].token_ids_logprob, (std::vector<int32_t>{3}));
  auto flat = Parse(R"({"text": ["a", "b"], "token_ids_logprob": [4]})");
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(flat->requests[1].token_ids_logprob, (std::vector<int32_t>{4}));
  EXPECT_TRUE(
      Parse(R"({"text": "a", "token_ids_logprob": []})")->requests[0].token_ids_logprob.empty());
  EXPECT_NE(ErrorOf(R"({"text": "a", "token_ids_logprob": [[1]]})").find("single prompt"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": ["a", "b"], "token_ids_logprob": [[1]]})").find("2 prompts"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": "a", "token_ids_logprob": [1, "x"]})").find("token_ids_logprob[1]"),
            std::string::npos);
}

TEST(NativeRequestTest, SessionParams) {
  auto call = Parse(
      R"({"text": "a", "session_params": {"id": "s", "rid": "r1", "offset": -1,
          "replace": true, "drop_previous_output": false}})");
  ASSERT_TRUE(call.ok()) << call.status().ToString();
  const std::optional<SessionParams>& p = call->requests[0].session_params;
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->id, "s");
  EXPECT_EQ(p->rid, "r1");
  EXPECT_EQ(p->offset, -1);
  EXPECT_TRUE(p->replace);
  EXPECT_FALSE(p->drop_previous_output);
  auto minimal = Parse(R"({"text": "a", "session_params": {"id": "s", "rid": null}})");
  ASSERT_TRUE(minimal.ok());
  EXPECT_FALSE(minimal->requests[0].session_params->rid.has_value());
  EXPECT_FALSE(minimal->requests[0].session_params->offset.has_value());
  EXPECT_NE(ErrorOf(R"({"text": "a", "session_params": {"rid": "r"}})").find("id is required"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": ["a", "b"], "session_params": {"id": "s"}})").find("single prompt"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": "a", "session_params": {"id": "s", "offset": "x"}})")
                .find("session_params.offset"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"text": "a", "session_params": {"id": "s", "replace": 1}})")
                .find("session_params.replace"),
            std::string::npos);
}

TEST(NativeRequestTest, ServerLimits) {
  ServerConfig limits;
  limits.max_new_tokens_cap = 10;
  limits.max_batch_samples = 4;
  auto big = ParseNativeGenerate(json::parse(R"({"text": "a",
      "sampling_params": {"max_new_tokens": 11}})"),
                                 limits);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("at most 10"), std::string::npos);
  auto many = ParseNativeGenerate(json::parse(R"({"text": ["a", "b", "c"],
      "sampling_params": {"n": 2}})"),
                                  limits);
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().message().find("6 samples"), std::string::npos)
      << many.status().message();
  auto defaulted = ParseNativeGenerate(json::parse(R"({"text": "a"})"), limits);
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ(defaulted->requests[0].sampling_params.max_new_tokens, 10);  // lowered to the cap
}

}  // namespace
}  // namespace radixlm::server
