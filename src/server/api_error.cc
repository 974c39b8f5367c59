#include "server/api_error.h"

#include <nlohmann/json.hpp>
#include <string>

namespace radixlm::server {

const char* ApiError::type() const {
  switch (http_status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 501:
      return "not_implemented_error";
    case 503:
      return "service_unavailable_error";
    default:
      return http_status >= 500 ? "server_error" : "invalid_request_error";
  }
}

ApiError ApiErrorFromStatus(const Status& status) {
  int code = 500;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      code = 400;
      break;
    case StatusCode::kNotFound:
      code = 404;
      break;
    case StatusCode::kUnimplemented:
      code = 501;
      break;
    case StatusCode::kAborted:
    case StatusCode::kResourceExhausted:
      code = 503;
      break;
    default:
      code = 500;
  }
  return ApiError{code, status.message(), ""};
}

nlohmann::json ErrorJson(const ApiError& error) {
  nlohmann::json body;
  body["message"] = error.message;
  body["type"] = error.type();
  body["param"] = error.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(error.param);
  body["code"] = error.http_status;
  return nlohmann::json{{"error", std::move(body)}};
}

HttpResponse ErrorResponse(const ApiError& error) {
  return HttpResponse::Json(error.http_status, ErrorJson(error));
}

HttpResponse SglangAbortErrorResponse(const ApiError& error) {
  nlohmann::json body;
  body["object"] = "error";
  body["message"] = error.message;
  body["type"] = std::to_string(error.http_status);
  body["param"] = nullptr;
  body["code"] = error.http_status;
  return HttpResponse::Json(error.http_status, body);
}

}  // namespace radixlm::server
