// JSON request decoding: the input is a request body for one of the three generation routes
// (the input's length picks which, so seed files are plain JSON), routed through the server's
// Router like a parsed HTTP request (request_routes.h): JSON parsing with its depth limit, then
// the route's request parser. Errors must come back as ApiError JSON; nothing may throw out.
#include <cstdint>
#include <string>

#include "request_routes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kPaths[] = {"/generate", "/v1/completions", "/v1/chat/completions"};
  radixlm::server::HttpRequest request;
  request.method = "POST";
  request.path = kPaths[size % 3];
  request.authorization = "Bearer sk-fuzz";
  request.content_type = "application/json";
  request.body.assign(reinterpret_cast<const char*>(data), size);
  radixlm::server::HandlerResult result = radixlm::fuzz::DecodingRouter().Handle(request);
  if (!result.response.has_value()) std::abort();  // these routes answer at once
  radixlm::fuzz::CheckResponse(*result.response);
  return 0;
}
