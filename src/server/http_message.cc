#include "server/http_message.h"

#include <nlohmann/json.hpp>

namespace radixlm::server {

std::string DumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

HttpResponse HttpResponse::Json(int status, const nlohmann::json& body) {
  HttpResponse response;
  response.status = status;
  response.body = DumpJson(body);
  return response;
}

HttpResponse HttpResponse::Text(int status, std::string body, std::string content_type) {
  HttpResponse response;
  response.status = status;
  response.content_type = std::move(content_type);
  response.body = std::move(body);
  return response;
}

const char* HttpStatusReason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}

}  // namespace radixlm::server
