// A small blocking HTTP/1.1 client (Boost.Beast), shared by the frontend's remote backend and
// `radixlm bench`: one connection per request, the response body handed over fragment by
// fragment as it arrives (so streamed SSE tokens are timed when they arrive, not when the
// response ends). http and https (TLS through OpenSSL: the peer's certificate is verified
// against OpenSSL's default trust store, which SSL_CERT_FILE / SSL_CERT_DIR can name, and its
// host name or IP address checked).
// Thread-safe: every call uses its own io_context and socket.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace radixlm::net {

struct HttpTarget {
  std::string host;
  std::string port;
  std::string path_prefix;  // e.g. "" or "/api" (no trailing slash)
  bool tls = false;         // https
};

// "http://127.0.0.1:30000" (port defaults to 80, 443 for https://; a path becomes
// path_prefix; no scheme means http).
StatusOr<HttpTarget> ParseBaseUrl(const std::string& url);

struct HttpCall {
  std::string method = "POST";  // or "GET"
  std::string path;             // appended to the target's path_prefix
  std::string body;             // JSON (POST)
  std::string api_key;          // sent as "Authorization: Bearer ..." when not empty
  std::string user_agent = "radixlm";
  double timeout_s = 600;  // whole call
};

// Performs the call; on_data receives body fragments in order. Returns the HTTP status, or an
// error for connection / TLS / protocol failures and timeouts. When `location` is given it
// receives the response's Location header (empty when there is none).
StatusOr<int> Fetch(const HttpTarget& target, const HttpCall& call,
                    const std::function<void(std::string_view)>& on_data,
                    std::string* location = nullptr);

// Splits a byte stream of server-sent events into the payloads of its "data:" lines.
class SseSplitter {
 public:
  // Feeds bytes; calls on_event(payload) for every complete "data: ..." line.
  void Feed(std::string_view bytes, const std::function<void(std::string_view)>& on_event);

 private:
  std::string pending_;  // an incomplete line
};

}  // namespace radixlm::net
