// Routing, authentication, and the one error wrapper (404 / 405 / 401 / exceptions / JSON).
#include "server/router.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace radixlm::server {
namespace {

using json = nlohmann::json;

HttpRequest Request(std::string method, std::string path, std::string auth = "") {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.authorization = std::move(auth);
  return r;
}

int StatusOf(const HandlerResult& result) {
  EXPECT_TRUE(result.response.has_value());
  return result.response.has_value() ? result.response->status : -1;
}

json BodyOf(const HandlerResult& result) { return json::parse(result.response->body); }

Router MakeRouter(std::string key) {
  Router router(std::move(key));
  router.Add("POST", "/generate", [](const HttpRequest&) {
    return HandlerResult::Respond(HttpResponse::Json(200, json{{"ok", true}}));
  });
  router.Add(
      "GET", "/health",
      [](const HttpRequest&) {
        return HandlerResult::Respond(HttpResponse::Json(200, json::object()));
      },
      /*open=*/true);
  router.Add("GET", "/throw_json", [](const HttpRequest&) -> HandlerResult {
    return HandlerResult::Respond(HttpResponse::Json(200, json::parse("{").at("x")));
  });
  router.Add("GET", "/throw",
             [](const HttpRequest&) -> HandlerResult { throw std::runtime_error("boom"); });
  router.Add("GET", "/blocking", [](const HttpRequest&) {
    return HandlerResult::Blocking([]() -> HttpResponse { throw std::runtime_error("late"); });
  });
  return router;
}

TEST(RouterTest, DispatchesAndRejectsUnknownRoutesAndMethods) {
  Router router = MakeRouter("");
  EXPECT_EQ(StatusOf(router.Handle(Request("POST", "/generate"))), 200);
  HandlerResult missing = router.Handle(Request("GET", "/nope"));
  EXPECT_EQ(StatusOf(missing), 404);
  EXPECT_EQ(BodyOf(missing)["error"]["type"], "not_found_error");
  HandlerResult wrong = router.Handle(Request("GET", "/generate"));
  EXPECT_EQ(StatusOf(wrong), 405);
  ASSERT_EQ(wrong.response->headers.size(), 1u);
  EXPECT_EQ(wrong.response->headers[0], (std::pair<std::string, std::string>{"Allow", "POST"}));
}

TEST(RouterTest, ApiKey) {
  Router router = MakeRouter("sekrit");
  HandlerResult none = router.Handle(Request("POST", "/generate"));
  EXPECT_EQ(StatusOf(none), 401);
  EXPECT_NE(BodyOf(none)["error"]["message"].get<std::string>().find("missing"), std::string::npos);
  EXPECT_EQ(StatusOf(router.Handle(Request("POST", "/generate", "Bearer wrong"))), 401);
  EXPECT_EQ(StatusOf(router.Handle(Request("POST", "/generate", "sekrit"))), 401);
  EXPECT_EQ(StatusOf(router.Handle(Request("POST", "/generate", "Bearer sekrit"))), 200);
  EXPECT_EQ(StatusOf(router.Handle(Request("GET", "/health"))), 200);  // open route
}

TEST(RouterTest, ExceptionsBecomeJsonErrors) {
  Router router = MakeRouter("");
  HandlerResult json_error = router.Handle(Request("GET", "/throw_json"));
  EXPECT_EQ(StatusOf(json_error), 400);
  HandlerResult other = router.Handle(Request("GET", "/throw"));
  EXPECT_EQ(StatusOf(other), 500);
  EXPECT_NE(BodyOf(other)["error"]["message"].get<std::string>().find("boom"), std::string::npos);
  HandlerResult blocking = router.Handle(Request("GET", "/blocking"));
  ASSERT_TRUE(blocking.blocking);
  EXPECT_EQ(blocking.blocking().status, 500);
}

TEST(RouterTest, ParseJsonBody) {
  ApiError error;
  HttpRequest r = Request("POST", "/generate");
  EXPECT_FALSE(ParseJsonBody(r, &error).has_value());
  EXPECT_NE(error.message.find("empty"), std::string::npos);
  r.body = "{\"a\": ";
  EXPECT_FALSE(ParseJsonBody(r, &error).has_value());
  EXPECT_NE(error.message.find("malformed JSON"), std::string::npos);
  r.body = std::string(100000, '[');
  EXPECT_FALSE(ParseJsonBody(r, &error).has_value());
  EXPECT_NE(error.message.find("deeper"), std::string::npos);
  r.body = "{\"a\": \"[[[[\"}";
  ASSERT_TRUE(ParseJsonBody(r, &error).has_value());
}

}  // namespace
}  // namespace radixlm::server
