#include "server/router.h"

#include <algorithm>
#include <exception>
#include <nlohmann/json.hpp>

namespace radixlm::server {
namespace {

// Constant-time comparison, so the key cannot be guessed byte by byte from timings.
bool SecureEquals(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

ApiError FromException(const std::exception& e) {
  if (dynamic_cast<const nlohmann::json::exception*>(&e) != nullptr) {
    return BadRequest(std::string("invalid request: ") + e.what());
  }
  return ApiError{500, std::string("internal error: ") + e.what(), ""};
}

// Deepest array/object nesting in `text` (brackets inside strings do not count), stopping early
// past `limit`. Guards the parser and everything after it against stack exhaustion.
int NestingDepth(const std::string& text, int limit) {
  int depth = 0;
  int max_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
      if (max_depth > limit) return max_depth;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
}

constexpr int kMaxJsonDepth = 128;

}  // namespace

HandlerResult HandlerResult::Respond(HttpResponse response) {
  HandlerResult r;
  r.response = std::move(response);
  return r;
}

HandlerResult HandlerResult::Error(const ApiError& error) { return Respond(ErrorResponse(error)); }

HandlerResult HandlerResult::Generate(std::shared_ptr<ServerCall> call) {
  HandlerResult r;
  r.call = std::move(call);
  return r;
}

HandlerResult HandlerResult::Blocking(std::function<HttpResponse()> work) {
  HandlerResult r;
  r.blocking = std::move(work);
  return r;
}

HandlerResult HandlerResult::Deferred(std::function<HandlerResult()> rest) {
  HandlerResult r;
  r.deferred = std::move(rest);
  return r;
}

void Router::Add(const std::string& method, const std::string& path, Handler handler, bool open) {
  routes_[path][method] = Route{std::move(handler), open};
}

bool Router::Authorized(const HttpRequest& request) const {
  if (api_key_.empty()) return true;
  return SecureEquals(request.authorization, "Bearer " + api_key_);
}

HandlerResult Router::Handle(const HttpRequest& request) const {
  auto path = routes_.find(request.path);
  if (path == routes_.end()) {
    return HandlerResult::Error(
        ApiError{404, "no route for " + request.method + " " + request.path, ""});
  }
  auto method = path->second.find(request.method);
  if (method == path->second.end()) {
    std::string allow;
    for (const auto& [name, route] : path->second) allow += (allow.empty() ? "" : ", ") + name;
    HttpResponse response =
        ErrorResponse(ApiError{405,
                               "method " + request.method + " is not allowed on " + request.path +
                                   " (allowed: " + allow + ")",
                               ""});
    response.headers.emplace_back("Allow", allow);
    return HandlerResult::Respond(std::move(response));
  }
  if (!method->second.open && !Authorized(request)) {
    HttpResponse response = ErrorResponse(
        ApiError{401,
                 request.authorization.empty()
                     ? "missing API key: send the header 'Authorization: Bearer <key>'"
                     : "invalid API key",
                 ""});
    response.headers.emplace_back("WWW-Authenticate", "Bearer");
    return HandlerResult::Respond(std::move(response));
  }
  try {
    HandlerResult result = method->second.handler(request);
    if (result.blocking) {
      result.blocking = [work = std::move(result.blocking)] { return GuardedCall(work); };
    }
    if (result.deferred) {
      result.deferred = [rest = std::move(result.deferred)]() -> HandlerResult {
        try {
          HandlerResult inner = rest();
          if (inner.blocking || inner.deferred) {
            return HandlerResult::Error(ApiError{500, "internal error: nested deferred work", ""});
          }
          return inner;
        } catch (const std::exception& e) {
          return HandlerResult::Error(FromException(e));
        } catch (...) {
          return HandlerResult::Error(ApiError{500, "internal error", ""});
        }
      };
    }
    return result;
  } catch (const std::exception& e) {
    return HandlerResult::Error(FromException(e));
  } catch (...) {
    return HandlerResult::Error(ApiError{500, "internal error", ""});
  }
}

std::optional<nlohmann::json> ParseJsonBody(const HttpRequest& request, ApiError* error) {
  if (request.body.empty()) {
    *error = BadRequest("the request body is empty; expected a JSON object");
    return std::nullopt;
  }
  if (NestingDepth(request.body, kMaxJsonDepth) > kMaxJsonDepth) {
    *error = BadRequest("the request body nests JSON deeper than " + std::to_string(kMaxJsonDepth) +
                        " levels");
    return std::nullopt;
  }
  nlohmann::json body = nlohmann::json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    // Parse again with exceptions for the position and reason.
    std::string detail;
    try {
      const nlohmann::json reparsed = nlohmann::json::parse(request.body);
    } catch (const nlohmann::json::parse_error& e) {
      detail = e.what();
    }
    *error = BadRequest("malformed JSON in the request body: " + detail);
    return std::nullopt;
  }
  return body;
}

HttpResponse GuardedCall(const std::function<HttpResponse()>& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return ErrorResponse(FromException(e));
  } catch (...) {
    return ErrorResponse(ApiError{500, "internal error", ""});
  }
}

}  // namespace radixlm::server
