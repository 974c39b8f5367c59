// SSE framing, chunked encoding, response serialization and the JSON error shape.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/sse.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

TEST(WireTest, SseEventIsOneDataLineAndABlankLine) {
  EXPECT_EQ(SseEvent(json{{"text", "a\nb"}}), "data: {\"text\":\"a\\nb\"}\n\n");
  EXPECT_EQ(kSseDone, "data: [DONE]\n\n");
}

TEST(WireTest, SseEventReplacesInvalidUtf8InsteadOfThrowing) {
  const std::string event = SseEvent(json{{"text", std::string("ab\xE4\xBD")}});
  EXPECT_EQ(event, "data: {\"text\":\"ab\xEF\xBF\xBD\"}\n\n");
}

TEST(WireTest, HttpChunkHasHexLengthAndCrlf) {
  EXPECT_EQ(HttpChunk("hello"), "5\r\nhello\r\n");
  EXPECT_EQ(HttpChunk(std::string(26, 'x')), "1a\r\n" + std::string(26, 'x') + "\r\n");
  EXPECT_EQ(HttpChunk(""), "");  // an empty chunk would end the body
  EXPECT_EQ(kHttpLastChunk, "0\r\n\r\n");
}

TEST(WireTest, SerializeResponseWritesStatusHeadersAndBody) {
  HttpResponse r = HttpResponse::Json(404, json{{"a", 1}});
  r.headers.emplace_back("Allow", "POST");
  const std::string wire = SerializeResponse(r, /*keep_alive=*/true);
  EXPECT_EQ(wire.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u);
  EXPECT_NE(wire.find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_NE(wire.find("Content-Length: 7\r\n"), std::string::npos);
  EXPECT_NE(wire.find("Connection: keep-alive\r\n"), std::string::npos);
  EXPECT_NE(wire.find("Allow: POST\r\n"), std::string::npos);
  EXPECT_EQ(wire.substr(wire.size() - 11), "\r\n\r\n{\"a\":1}");
  EXPECT_NE(SerializeResponse(r, false).find("Connection: close\r\n"), std::string::npos);
}

TEST(WireTest, SseHeadIsChunkedEventStream) {
  const std::string head = SseResponseHead(true);
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_NE(head.find("Content-Type: text/event-stream"), std::string::npos);
  EXPECT_NE(head.find("Transfer-Encoding: chunked\r\n"), std::string::npos);
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n");
}

TEST(WireTest, ErrorJsonHasOpenAiShape) {
  const json body = ErrorJson(BadRequest("top_p must be in (0, 1]", "top_p"));
  ASSERT_TRUE(body.contains("error"));
  EXPECT_EQ(body["error"]["message"], "top_p must be in (0, 1]");
  EXPECT_EQ(body["error"]["type"], "invalid_request_error");
  EXPECT_EQ(body["error"]["param"], "top_p");
  EXPECT_EQ(body["error"]["code"], 400);
  EXPECT_TRUE(ErrorJson(ApiError{404, "x", ""})["error"]["param"].is_null());
}

TEST(WireTest, StatusCodesMapToHttpStatuses) {
  EXPECT_EQ(ApiErrorFromStatus(InvalidArgument("x")).http_status, 400);
  EXPECT_EQ(ApiErrorFromStatus(OutOfRange("x")).http_status, 400);
  EXPECT_EQ(ApiErrorFromStatus(NotFound("x")).http_status, 404);
  EXPECT_EQ(ApiErrorFromStatus(Unimplemented("x")).http_status, 501);
  EXPECT_EQ(ApiErrorFromStatus(Aborted("x")).http_status, 503);
  EXPECT_EQ(ApiErrorFromStatus(Internal("x")).http_status, 500);
  EXPECT_STREQ((ApiError{401, "", ""}).type(), "authentication_error");
  EXPECT_STREQ((ApiError{501, "", ""}).type(), "not_implemented_error");
}

}  // namespace
}  // namespace radixlm::server
