// HttpSession: one client connection (HTTP/1.1, keep-alive), on its own strand.
//
// Reads a request with Beast's parser (header and body limits → 431 / 413, malformed → 400,
// "Expect: 100-continue" answered), converts it to an HttpRequest and asks the Router. An
// immediate response is written at once; blocking work runs on the server's blocking pool and
// its response comes back to the strand; a ServerCall (a GenerationCall, or an event stream)
// is driven by events: each notifier posts one coalesced wake-up to the strand, which drains the
// call and queues bytes (SSE chunks, or the whole response at the end).
//
// While a generation is in flight the session also keeps a read pending on the socket, so a
// client that disconnects (before or during streaming) is noticed at once and its requests are
// aborted in the engine, freeing their KV. Writes are queued and coalesced: at most one
// async_write is in flight, carrying everything produced since the previous one.
//
// Bounds on slow peers (ServerConfig): the request header must arrive within the keep-alive
// timeout and the body within the read timeout, else the connection closes; a write that does
// not finish within the write timeout, or a stream with more than max_stream_buffer_bytes
// queued behind the write in flight, aborts the request and closes the connection. While the
// server is stopping, each new request is answered 503 and its connection closed.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <optional>
#include <string>

#include "server/router.h"
#include "server/server_config.h"

namespace radixlm::server {

class ServerCall;
struct HandlerResult;
class ServerMetrics;

// The server's HttpRequest for a request Beast has parsed: the target split at '?' (one
// trailing '/' of the path dropped), the body, and the Authorization and Content-Type headers.
HttpRequest ToHttpRequest(
    const boost::beast::http::request<boost::beast::http::string_body>& request);

// What sessions share (owned by HttpServer, outlives every session).
struct SessionEnv {
  const Router* router = nullptr;
  const ServerConfig* config = nullptr;
  ServerMetrics* metrics = nullptr;
  boost::asio::thread_pool* blocking_pool = nullptr;
  std::atomic<bool>* stopping = nullptr;  // set at shutdown: finish the exchange, then close
  std::atomic<int64_t>* open_sessions = nullptr;
  std::atomic<int64_t>* active_calls = nullptr;
};

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(boost::asio::ip::tcp::socket socket, const SessionEnv& env);
  ~HttpSession();
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  void Start();

 private:
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

  void ReadRequest();
  void OnHeader(boost::beast::error_code ec);
  void ReadBody();
  void OnBody(boost::beast::error_code ec);
  void RespondToReadError(boost::beast::error_code ec);
  void Dispatch();
  void RunBlocking(std::function<HttpResponse()> work);
  void RunDeferred(std::function<HandlerResult()> rest);
  void SendResponse(const HttpResponse& response);

  void StartCall(std::shared_ptr<ServerCall> call);
  void OnWake();
  void WatchForDisconnect();
  void OnWatch(boost::beast::error_code ec, size_t bytes);
  void OnClientGone();

  void Enqueue(std::string bytes);
  void Flush();
  void OnWrite(boost::beast::error_code ec);
  void FinishExchange();
  void Continue();
  void LingerAndClose();
  void DiscardInput();
  void Close();

  boost::beast::tcp_stream stream_;
  const SessionEnv env_;
  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  bool keep_alive_ = true;

  // Output: bytes queued (pending_) and in flight (writing_).
  std::string pending_;
  std::string writing_;
  bool write_in_flight_ = false;
  bool exchange_complete_ = false;  // the current response is fully queued

  std::shared_ptr<ServerCall> call_;
  bool call_counted_ = false;
  bool watching_ = false;
  bool resume_after_watch_ = false;
  bool client_gone_ = false;
  bool closed_ = false;
  std::string discard_;  // LingerAndClose's sink
};

}  // namespace radixlm::server
