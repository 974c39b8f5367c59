// HttpRequest / HttpResponse: the server's own plain request and response values.
//
// The Beast session (http_session.h) converts to and from these, so the router, the API
// handlers and their tests never see a socket or a Beast type.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

namespace radixlm::server {

struct HttpRequest {
  std::string method;  // "GET", "POST", ... (as sent, upper case)
  std::string path;    // the target without its query string
  std::string query;   // after '?', or ""
  std::string body;
  std::string authorization;  // the Authorization header, or ""
  std::string content_type;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers, e.g. Allow

  // `body` serialized compactly; invalid UTF-8 in strings is replaced, never thrown on.
  static HttpResponse Json(int status, const nlohmann::json& body);
  static HttpResponse Text(int status, std::string body, std::string content_type);
};

// json.dump() that never throws: invalid UTF-8 (e.g. a partial token text) becomes U+FFFD.
std::string DumpJson(const nlohmann::json& value);

// The parameters of a query string ("a=1&b=x%2Cy" -> {a: "1", b: "x,y"}): percent escapes and
// '+' decoded; a name without '=' maps to ""; of a repeated name the last value wins.
std::map<std::string, std::string> ParseQuery(const std::string& query);

// "OK", "Bad Request", ... for the status line.
const char* HttpStatusReason(int status);

}  // namespace radixlm::server
