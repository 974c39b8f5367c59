#include "net/http_client.h"

#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <limits>

namespace radixlm::net {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;

StatusOr<HttpTarget> ParseBaseUrl(const std::string& url) {
  std::string rest = url;
  HttpTarget t;
  if (rest.rfind("https://", 0) == 0) {
    rest = rest.substr(8);
    t.tls = true;
  } else if (rest.rfind("http://", 0) == 0) {
    rest = rest.substr(7);
  }
  if (rest.empty()) return InvalidArgument("empty base URL");
  const size_t slash = rest.find('/');
  std::string hostport = rest.substr(0, slash);
  if (slash != std::string::npos) t.path_prefix = rest.substr(slash);
  while (!t.path_prefix.empty() && t.path_prefix.back() == '/') t.path_prefix.pop_back();
  const size_t colon = hostport.rfind(':');
  if (colon == std::string::npos) {
    t.host = hostport;
    t.port = t.tls ? "443" : "80";
  } else {
    t.host = hostport.substr(0, colon);
    t.port = hostport.substr(colon + 1);
  }
  if (t.host.empty() || t.port.empty()) return InvalidArgument("bad base URL: " + url);
  return t;
}

namespace {

// One request and its response over a connected (and, for TLS, handshaken) stream.
template <class Stream>
StatusOr<int> Exchange(Stream& stream, const HttpTarget& target, const HttpCall& call,
                       const std::function<void(std::string_view)>& on_data,
                       std::string* location) {
  beast::error_code ec;
  http::request<http::string_body> req(call.method == "GET" ? http::verb::get : http::verb::post,
                                       target.path_prefix + call.path, 11);
  req.set(http::field::host, target.host);
  req.set(http::field::user_agent, call.user_agent);
  if (!call.api_key.empty()) req.set(http::field::authorization, "Bearer " + call.api_key);
  if (call.method != "GET") {
    req.set(http::field::content_type, "application/json");
    req.body() = call.body;
  }
  req.prepare_payload();
  http::write(stream, req, ec);
  if (ec) return IoError("write: " + ec.message());

  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  // No limit. (Not boost::none: Boost 1.74-1.8x compares Content-Length against the optional,
  // and any length is "greater" than none, so every response with a Content-Length failed.)
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  http::read_header(stream, buffer, parser, ec);
  if (ec) return IoError("read header: " + ec.message());
  if (location != nullptr) {
    const auto value = parser.get()[http::field::location];
    location->assign(value.data(), value.size());
  }
  char chunk[8192];
  while (!parser.is_done()) {
    parser.get().body().data = chunk;
    parser.get().body().size = sizeof(chunk);
    http::read(stream, buffer, parser, ec);
    if (ec == http::error::need_buffer) ec = {};
    if (ec) return IoError("read body: " + ec.message());
    const size_t n = sizeof(chunk) - parser.get().body().size;
    if (n > 0) on_data(std::string_view(chunk, n));
  }
  return static_cast<int>(parser.get().result_int());
}

bool IsIpAddress(const std::string& host) {
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

}  // namespace

StatusOr<int> Fetch(const HttpTarget& target, const HttpCall& call,
                    const std::function<void(std::string_view)>& on_data, std::string* location) {
  asio::io_context ioc;
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(call.timeout_s * 1000));
  beast::error_code ec;
  asio::ip::tcp::resolver resolver(ioc);
  const auto endpoints = resolver.resolve(target.host, target.port, ec);
  if (ec) return IoError("resolve " + target.host + ": " + ec.message());
  if (!target.tls) {
    beast::tcp_stream stream(ioc);
    stream.expires_after(timeout);
    stream.connect(endpoints, ec);
    if (ec) return IoError("connect " + target.host + ":" + target.port + ": " + ec.message());
    StatusOr<int> status = Exchange(stream, target, call, on_data, location);
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    return status;
  }
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  ctx.set_default_verify_paths(ec);
  if (ec) return IoError("TLS trust store: " + ec.message());
  ctx.set_verify_mode(asio::ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream(ioc, ctx);
  // SNI names hosts, never IP literals (RFC 6066); the certificate is checked against either.
  if (!IsIpAddress(target.host) &&
      !SSL_set_tlsext_host_name(stream.native_handle(), target.host.c_str())) {
    return IoError("TLS: cannot set the server name " + target.host);
  }
  stream.set_verify_callback(asio::ssl::host_name_verification(target.host));
  beast::get_lowest_layer(stream).expires_after(timeout);
  beast::get_lowest_layer(stream).connect(endpoints, ec);
  if (ec) return IoError("connect " + target.host + ":" + target.port + ": " + ec.message());
  stream.handshake(asio::ssl::stream_base::client, ec);
  if (ec) return IoError("TLS handshake with " + target.host + ": " + ec.message());
  StatusOr<int> status = Exchange(stream, target, call, on_data, location);
  stream.shutdown(ec);  // servers often close without close_notify: not an error here
  return status;
}

void SseSplitter::Feed(std::string_view bytes,
                       const std::function<void(std::string_view)>& on_event) {
  pending_.append(bytes);
  size_t start = 0;
  for (size_t nl = pending_.find('\n', start); nl != std::string::npos;
       nl = pending_.find('\n', start)) {
    std::string_view line(pending_.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.rfind("data:", 0) == 0) {
      line.remove_prefix(5);
      if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      on_event(line);
    }
    start = nl + 1;
  }
  pending_.erase(0, start);
}

}  // namespace radixlm::net
