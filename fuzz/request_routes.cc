#include "request_routes.h"

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/native_request.h"
#include "server/openai_request.h"

namespace radixlm::fuzz {
namespace {

using server::ApiError;
using server::HandlerResult;
using server::HttpRequest;
using server::HttpResponse;

template <typename Parse>
server::Handler Decoding(Parse parse) {
  return [parse](const HttpRequest& request) {
    ApiError error;
    std::optional<nlohmann::json> body = server::ParseJsonBody(request, &error);
    if (!body.has_value()) return HandlerResult::Error(error);
    const auto parsed = parse(*body, FuzzServerConfig());
    if (!parsed.ok()) return HandlerResult::Error(server::ApiErrorFromStatus(parsed.status()));
    return HandlerResult::Respond(HttpResponse::Json(200, nlohmann::json::object()));
  };
}

}  // namespace

const server::ServerConfig& FuzzServerConfig() {
  static const server::ServerConfig config;
  return config;
}

const server::Router& DecodingRouter() {
  static const server::Router* const router = [] {
    auto* r = new server::Router("sk-fuzz");
    r->Add("POST", "/generate", Decoding(server::ParseNativeGenerate));
    r->Add("POST", "/v1/completions", Decoding(server::ParseCompletionRequest));
    r->Add("POST", "/v1/chat/completions", Decoding(server::ParseChatRequest));
    r->Add(
        "GET", "/health",
        [](const HttpRequest&) {
          return HandlerResult::Respond(HttpResponse::Text(200, "", "text/plain"));
        },
        /*open=*/true);
    return r;
  }();
  return *router;
}

void CheckResponse(const HttpResponse& response) {
  if (response.status < 200 || response.status > 599) {
    fprintf(stderr, "response status %d\n", response.status);
    std::abort();
  }
  if (response.status < 400) return;
  const nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
  if (body.is_discarded() || !body.contains("error") || !body["error"].contains("message")) {
    fprintf(stderr, "error response without an ApiError body: %s\n", response.body.c_str());
    std::abort();
  }
}

}  // namespace radixlm::fuzz
