// The embedding request bodies (server/embedding_request.h): OpenAI's /v1/embeddings and
// SGLang's /encode parsed into engine requests, the refusals naming their field, dimensions
// truncation and the base64 wire form.
#include "server/embedding_request.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace radixlm::server {
namespace {

using json = nlohmann::json;

TEST(EmbeddingRequestTest, OpenAiInputShapes) {
  StatusOr<EmbeddingCall> one = ParseOpenAiEmbedding(json{{"input", "hello"}});
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_EQ(one->requests.size(), 1u);
  EXPECT_EQ(one->requests[0].text, "hello");
  EXPECT_TRUE(one->requests[0].embed);
  EXPECT_FALSE(one->base64);
  EXPECT_FALSE(one->dimensions.has_value());

  StatusOr<EmbeddingCall> texts = ParseOpenAiEmbedding(json{{"input", {"a", "b", "c"}}});
  ASSERT_TRUE(texts.ok());
  ASSERT_EQ(texts->requests.size(), 3u);
  EXPECT_EQ(texts->requests[2].text, "c");
  EXPECT_TRUE(texts->batch);

  StatusOr<EmbeddingCall> ids = ParseOpenAiEmbedding(json{{"input", {5, 6, 7}}});
  ASSERT_TRUE(ids.ok());
  ASSERT_EQ(ids->requests.size(), 1u);  // one input of three tokens
  EXPECT_EQ(ids->requests[0].input_ids, (std::vector<int32_t>{5, 6, 7}));

  StatusOr<EmbeddingCall> lists = ParseOpenAiEmbedding(
      json{{"input", {{1, 2}, {3}}}, {"encoding_format", "base64"}, {"dimensions", 8}});
  ASSERT_TRUE(lists.ok());
  ASSERT_EQ(lists->requests.size(), 2u);
  EXPECT_EQ(lists->requests[1].input_ids, (std::vector<int32_t>{3}));
  EXPECT_TRUE(lists->base64);
  EXPECT_EQ(lists->dimensions, 8);
}

TEST(EmbeddingRequestTest, OpenAiRefusalsNameTheField) {
  struct Case {
    json body;
    std::string word;
  };
  const std::vector<Case> cases = {
      {json{{"model", "m"}}, "'input'"},
      {json{{"input", ""}}, "empty"},
      {json{{"input", json::array()}}, "empty"},
      {json{{"input", json::array({"a", 3})}}, "input[1]"},
      {json{{"input", {{1}, {}}}}, "input[1]"},
      {json{{"input", {-1}}}, "token id"},
      {json{{"input", 2.5}}, "'input'"},
      {json{{"input", "a"}, {"encoding_format", "int8"}}, "encoding_format"},
      {json{{"input", "a"}, {"dimensions", 0}}, "dimensions"},
      {json{{"input", "a"}, {"dimensions", "8"}}, "dimensions"},
      {json::array(), "object"},
  };
  for (const Case& c : cases) {
    StatusOr<EmbeddingCall> call = ParseOpenAiEmbedding(c.body);
    ASSERT_FALSE(call.ok()) << c.body.dump();
    EXPECT_EQ(call.status().code(), StatusCode::kInvalidArgument) << c.body.dump();
    EXPECT_NE(call.status().message().find(c.word), std::string::npos)
        << c.body.dump() << ": " << call.status().message();
  }
  json many = json::array();
  for (size_t i = 0; i <= kMaxEmbeddingInputs; ++i) many.push_back("x");
  StatusOr<EmbeddingCall> too_many = ParseOpenAiEmbedding(json{{"input", many}});
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("2048"), std::string::npos);
}

TEST(EmbeddingRequestTest, NativeEncode) {
  StatusOr<EmbeddingCall> text = ParseNativeEmbedding(json{{"text", "hi"}, {"rid", "r1"}});
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_FALSE(text->batch);
  EXPECT_EQ(text->requests[0].rid, "r1");
  StatusOr<EmbeddingCall> ids = ParseNativeEmbedding(json{{"input_ids", {{1, 2}, {3, 4}}}});
  ASSERT_TRUE(ids.ok());
  EXPECT_TRUE(ids->batch);
  EXPECT_EQ(ids->requests[1].input_ids, (std::vector<int32_t>{3, 4}));
  EXPECT_FALSE(ParseNativeEmbedding(json{{"text", "a"}, {"input_ids", {1}}}).ok());
  EXPECT_FALSE(ParseNativeEmbedding(json::object()).ok());
  EXPECT_FALSE(ParseNativeEmbedding(json{{"input_ids", {"a"}}}).ok());  // ids only
  EXPECT_FALSE(ParseNativeEmbedding(json{{"text", json::array({"a", "b"})}, {"rid", "one"}}).ok());
}

TEST(EmbeddingRequestTest, DimensionsAndBase64) {
  // The first two of (0.6, 0.8, 0, 0) ... renormalised; a larger or absent dimensions keeps all.
  const std::vector<float> v = {0.3f, 0.4f, 0.5f, std::sqrt(0.5f)};
  const std::vector<float> two = TruncateEmbedding(v, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NEAR(two[0], 0.6f, 1e-6f);
  EXPECT_NEAR(two[1], 0.8f, 1e-6f);
  EXPECT_EQ(TruncateEmbedding(v, 4), v);
  EXPECT_EQ(TruncateEmbedding(v, std::nullopt), v);
  // Python: base64.b64encode(struct.pack('<2f', 1.0, -2.0)) and ('<3f', 0.5, 0.25, 3.0).
  EXPECT_EQ(EmbeddingToBase64({1.0f, -2.0f}), "AACAPwAAAMA=");
  EXPECT_EQ(EmbeddingToBase64({0.5f, 0.25f, 3.0f}), "AAAAPwAAgD4AAEBA");
  EXPECT_EQ(EmbeddingToBase64({}), "");
}

}  // namespace
}  // namespace radixlm::server
