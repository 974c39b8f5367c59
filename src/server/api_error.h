// ApiError: every error the server answers with, in one JSON shape (OpenAI's, which SGLang's
// native routes also use; the one exception, as in SGLang: SglangAbortErrorResponse below):
//
//   {"error": {"message": "...", "type": "invalid_request_error", "param": "top_p" | null,
//              "code": 400}}
//
// Handlers return errors as values; the router turns them (and anything a handler throws) into
// a response with ErrorResponse, so no failure path can skip the JSON body.
#pragma once

#include <string>

#include "server/http_message.h"
#include "util/status.h"

namespace radixlm::server {

struct ApiError {
  int http_status = 400;
  std::string message;
  std::string param;  // the offending request field, "" when none applies

  // The OpenAI error "type" for http_status: invalid_request_error, authentication_error,
  // not_found_error, not_implemented_error, service_unavailable_error, server_error.
  const char* type() const;
};

inline ApiError BadRequest(std::string message, std::string param = "") {
  return ApiError{400, std::move(message), std::move(param)};
}

// InvalidArgument / OutOfRange → 400, NotFound → 404, Unimplemented → 501, Aborted /
// ResourceExhausted → 503, anything else → 500.
ApiError ApiErrorFromStatus(const Status& status);

nlohmann::json ErrorJson(const ApiError& error);
HttpResponse ErrorResponse(const ApiError& error);

// SGLang's flat ErrorResponse, which its native /generate answers an abort carrying an HTTP
// status other than 400 with (a waiting timeout: 503), and which its clients check:
//   {"object": "error", "message": "...", "type": "503", "param": null, "code": 503}
HttpResponse SglangAbortErrorResponse(const ApiError& error);

}  // namespace radixlm::server
