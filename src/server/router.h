// Router: maps (method, path) to a handler, enforces the API key, and is the one place where
// every failure becomes a JSON error response: unknown path → 404, known path with another
// method → 405 (with Allow), bad or missing key → 401, a handler's ApiError → its status, and
// anything a handler throws → 400 (a JSON type error from a request) or 500.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "server/api_error.h"
#include "server/http_message.h"

namespace radixlm::server {

class ServerCall;

// What a handler produced: exactly one of an immediate response, a call in flight (a
// generation or an event stream: the session drives it), work that may block on the engine (run
// off the IO threads), or a handler's slow remainder (reading and encoding a request's images:
// run off the IO threads, its own result then handled as the handler's would be).
struct HandlerResult {
  std::optional<HttpResponse> response;
  std::shared_ptr<ServerCall> call;
  std::function<HttpResponse()> blocking;
  std::function<HandlerResult()> deferred;

  static HandlerResult Respond(HttpResponse response);
  static HandlerResult Error(const ApiError& error);
  static HandlerResult Generate(std::shared_ptr<ServerCall> call);
  static HandlerResult Blocking(std::function<HttpResponse()> work);
  static HandlerResult Deferred(std::function<HandlerResult()> rest);
};

using Handler = std::function<HandlerResult(const HttpRequest&)>;

class Router {
 public:
  // api_key "" disables authentication.
  explicit Router(std::string api_key) : api_key_(std::move(api_key)) {}

  // `open` routes need no API key (health checks and metrics, as in SGLang).
  void Add(const std::string& method, const std::string& path, Handler handler, bool open = false);

  // Never throws. A blocking or deferred result's work is wrapped the same way.
  HandlerResult Handle(const HttpRequest& request) const;

 private:
  struct Route {
    Handler handler;
    bool open = false;
  };
  bool Authorized(const HttpRequest& request) const;

  const std::string api_key_;
  std::map<std::string, std::map<std::string, Route>> routes_;  // path → method → route
};

// The request body as JSON: 400 "malformed JSON ..." / "empty body" as an ApiError.
// Returns nullopt and sets *error on failure.
std::optional<nlohmann::json> ParseJsonBody(const HttpRequest& request, ApiError* error);

// Runs fn, turning exceptions into error responses (nlohmann::json exceptions → 400).
HttpResponse GuardedCall(const std::function<HttpResponse()>& fn);

}  // namespace radixlm::server
