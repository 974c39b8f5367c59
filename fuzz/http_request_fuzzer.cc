// HTTP request parsing: the input is the bytes a client sends. They go through Beast's request
// parser with the limits HttpSession sets (ServerConfig's header and body limits), and a
// complete request is converted (ToHttpRequest) and routed as the session does, to the
// decoding routes of request_routes.h. Malformed requests are parse errors (a 400 in the
// server); a request that parses must get a well-formed response.
#include <boost/beast/http.hpp>
#include <cstdint>
#include <cstdlib>

#include "request_routes.h"
#include "server/http_session.h"

namespace http = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const radixlm::server::ServerConfig& config = radixlm::fuzz::FuzzServerConfig();
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<uint32_t>(config.max_header_bytes));
  parser.body_limit(config.max_body_bytes);
  parser.eager(true);
  boost::beast::error_code ec;
  size_t used = 0;
  // Beast consumes what it can per call; feed the rest until it is done, stuck or fails.
  while (used < size && !parser.is_done()) {
    const size_t n = parser.put(boost::asio::buffer(data + used, size - used), ec);
    if (ec == http::error::need_more) break;
    if (ec) return 0;
    if (n == 0) break;
    used += n;
  }
  if (!parser.is_done()) {
    parser.put_eof(ec);
    if (ec || !parser.is_done()) return 0;
  }
  const radixlm::server::HttpRequest request = radixlm::server::ToHttpRequest(parser.get());
  radixlm::server::HandlerResult result = radixlm::fuzz::DecodingRouter().Handle(request);
  if (!result.response.has_value()) std::abort();  // these routes answer at once
  radixlm::fuzz::CheckResponse(*result.response);
  return 0;
}
