#include "server/http_session.h"

#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cstdint>

#include "server/api_error.h"
#include "server/metrics.h"
#include "server/server_call.h"
#include "server/server_log.h"
#include "server/sse.h"

namespace radixlm::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// Bytes a pipelined client may send while a generation runs before we stop reading them.
constexpr size_t kMaxBufferedInput = 1u << 20;
// Stream bytes one wake-up formats before it posts itself again. Chunks keep arriving while a
// wake-up formats them, and cumulative events (top logprobs, n samples) can take longer to
// format than a decode step takes to produce: without a bound, one wake-up would hold the
// connection's strand until the generation ended, and the write timeout, the writes themselves
// and the client's disconnect would all wait behind it.
constexpr size_t kFormatBytesPerWake = 1u << 20;

bool IsDisconnect(beast::error_code ec) {
  return ec == net::error::eof || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe || ec == net::error::operation_aborted ||
         ec == beast::error::timeout || ec == net::error::not_connected ||
         ec == http::error::end_of_stream;
}

}  // namespace

HttpRequest ToHttpRequest(const http::request<http::string_body>& req) {
  HttpRequest out;
  out.method = std::string(req.method_string());
  const std::string_view target(req.target().data(), req.target().size());
  const size_t question = target.find('?');
  out.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) out.query = std::string(target.substr(question + 1));
  // Tolerate one trailing slash ("/generate/"), as FastAPI's redirect effectively does.
  if (out.path.size() > 1 && out.path.back() == '/') out.path.pop_back();
  out.body = req.body();
  out.authorization = std::string(req[http::field::authorization]);
  out.content_type = std::string(req[http::field::content_type]);
  return out;
}

HttpSession::HttpSession(net::ip::tcp::socket socket, const SessionEnv& env)
    : stream_(std::move(socket)), env_(env) {
  env_.open_sessions->fetch_add(1);
}

HttpSession::~HttpSession() {
  if (call_ != nullptr && !call_->done()) call_->Abort();
  if (call_counted_) env_.active_calls->fetch_sub(1);
  env_.open_sessions->fetch_sub(1);
}

void HttpSession::Start() {
  beast::error_code ec;
  stream_.socket().set_option(net::ip::tcp::no_delay(true), ec);
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadRequest(); });
}

// ---- reading a request ---------------------------------------------------------------------

void HttpSession::ReadRequest() {
  if (closed_) return;
  parser_.emplace();
  parser_->header_limit(static_cast<uint32_t>(env_.config->max_header_bytes));
  parser_->body_limit(env_.config->max_body_bytes);
  stream_.expires_after(std::chrono::seconds(env_.config->keep_alive_timeout_s));
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
}

void HttpSession::OnHeader(beast::error_code ec) {
  if (ec) return RespondToReadError(ec);
  stream_.expires_after(std::chrono::seconds(env_.config->read_timeout_s));
  const auto& req = parser_->get();
  if (const auto length = parser_->content_length();
      length.has_value() && *length > env_.config->max_body_bytes) {
    return RespondToReadError(http::error::body_limit);
  }
  if (!parser_->is_done() && beast::iequals(req[http::field::expect], "100-continue")) {
    net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->Close();
                       self->ReadBody();
                     });
    return;
  }
  ReadBody();
}

void HttpSession::ReadBody() {
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->OnBody(ec); });
}

void HttpSession::OnBody(beast::error_code ec) {
  if (ec) return RespondToReadError(ec);
  Dispatch();
}

void HttpSession::RespondToReadError(beast::error_code ec) {
  if (ec == http::error::end_of_stream || IsDisconnect(ec)) return Close();
  keep_alive_ = false;
  ApiError error;
  if (ec == http::error::body_limit) {
    error = ApiError{413,
                     "the request body is larger than the limit of " +
                         std::to_string(env_.config->max_body_bytes) + " bytes",
                     ""};
  } else if (ec == http::error::header_limit) {
    error = ApiError{431, "the request headers are larger than the limit", ""};
  } else {
    error = BadRequest("malformed HTTP request: " + ec.message());
  }
  SendResponse(ErrorResponse(error));
}

// ---- dispatch ------------------------------------------------------------------------------

void HttpSession::Dispatch() {
  const auto& req = parser_->get();
  keep_alive_ = req.keep_alive();
  HttpRequest request = ToHttpRequest(req);
  parser_.reset();
  if (LogEnabled(LogLevel::kDebug)) Log(LogLevel::kDebug, request.method + " " + request.path);
  if (env_.stopping->load()) {  // draining: in-flight requests finish, new ones are refused
    keep_alive_ = false;
    return SendResponse(ErrorResponse(ApiError{503, "the server is shutting down", ""}));
  }
  HandlerResult result = env_.router->Handle(request);
  if (result.call != nullptr) return StartCall(std::move(result.call));
  if (result.blocking) return RunBlocking(std::move(result.blocking));
  if (result.deferred) return RunDeferred(std::move(result.deferred));
  SendResponse(result.response.value_or(ErrorResponse(ApiError{500, "no response", ""})));
}

void HttpSession::RunDeferred(std::function<HandlerResult()> rest) {
  stream_.expires_never();
  net::post(*env_.blocking_pool, [self = shared_from_this(), rest = std::move(rest)] {
    auto result = std::make_shared<HandlerResult>(rest());
    net::post(self->stream_.get_executor(), [self, result] {
      if (result->call != nullptr) return self->StartCall(std::move(result->call));
      self->SendResponse(
          result->response.value_or(ErrorResponse(ApiError{500, "no response", ""})));
    });
  });
}

void HttpSession::RunBlocking(std::function<HttpResponse()> work) {
  stream_.expires_never();
  net::post(*env_.blocking_pool, [self = shared_from_this(), work = std::move(work)] {
    HttpResponse response = work();
    net::post(self->stream_.get_executor(),
              [self, response = std::move(response)] { self->SendResponse(response); });
  });
}

void HttpSession::SendResponse(const HttpResponse& response) {
  if (closed_) return;
  env_.metrics->OnHttpResponse(response.status);
  if (env_.stopping->load()) keep_alive_ = false;
  Enqueue(SerializeResponse(response, keep_alive_));
  exchange_complete_ = true;
  Flush();
}

// ---- generation calls ----------------------------------------------------------------------

void HttpSession::StartCall(std::shared_ptr<ServerCall> call) {
  call_ = std::move(call);
  call_counted_ = true;
  env_.active_calls->fetch_add(1);
  stream_.expires_never();
  if (call_->streaming()) {
    env_.metrics->OnHttpResponse(200);
    Enqueue(SseResponseHead(keep_alive_));
    Flush();
  }
  WatchForDisconnect();
  auto pending = std::make_shared<std::atomic<bool>>(false);
  auto executor = stream_.get_executor();
  std::weak_ptr<HttpSession> weak = weak_from_this();
  call_->SetWaker([weak, pending, executor] {
    if (pending->exchange(true)) return;  // a wake-up is already queued
    net::post(executor, [weak, pending] {
      pending->store(false);
      if (auto self = weak.lock()) self->OnWake();
    });
  });
}

void HttpSession::OnWake() {
  if (call_ == nullptr || call_->done()) return;
  // A stream formats no more than its buffer has room for; past that (the check below) the
  // client is too slow and the call is aborted, so chunks left in the engine's stream are moot.
  const size_t limit = env_.config->max_stream_buffer_bytes;
  size_t room = SIZE_MAX;
  if (call_->streaming()) {
    room = std::min(pending_.size() < limit ? limit - pending_.size() : 0, kFormatBytesPerWake);
  }
  std::string out;
  const bool done = call_->Drain(&out, room);
  if (client_gone_ || closed_) return;
  if (call_->streaming()) {
    if (!out.empty()) Enqueue(HttpChunk(out));
    if (pending_.size() > env_.config->max_stream_buffer_bytes) {
      // The client reads slower than the stream is produced (or not at all): stop buffering.
      Log(LogLevel::kWarning, "a streaming client is not reading (" +
                                  std::to_string(pending_.size()) +
                                  " bytes unsent); aborting its request");
      return OnClientGone();
    }
    if (done) {
      Enqueue(std::string(kHttpLastChunk));
      exchange_complete_ = true;
    }
    Flush();
    // Drain stopped at the per-wake bound with chunks possibly left: finish them in a later
    // handler, after whatever else waits on this strand.
    if (!done && out.size() > kFormatBytesPerWake) {
      net::post(stream_.get_executor(), [self = shared_from_this()] { self->OnWake(); });
    }
  } else if (done) {
    SendResponse(call_->TakeResponse());
  }
}

void HttpSession::WatchForDisconnect() {
  if (watching_ || closed_) return;
  watching_ = true;
  // Only the read timer is idle here (a write may be in flight with its own deadline).
  stream_.expires_never();
  stream_.async_read_some(buffer_.prepare(4096),
                          [self = shared_from_this()](beast::error_code ec, size_t bytes) {
                            self->OnWatch(ec, bytes);
                          });
}

void HttpSession::OnWatch(beast::error_code ec, size_t bytes) {
  watching_ = false;
  if (!ec) buffer_.commit(bytes);
  if (resume_after_watch_) {  // the exchange ended and cancelled this read
    resume_after_watch_ = false;
    return Continue();
  }
  if (ec) return OnClientGone();
  // A pipelined request arrived early; keep it buffered and keep watching.
  if (call_ != nullptr && buffer_.size() < kMaxBufferedInput) WatchForDisconnect();
}

void HttpSession::OnClientGone() {
  client_gone_ = true;
  if (call_ != nullptr && !call_->done()) {
    Log(LogLevel::kDebug, "client disconnected; aborting its request");
    call_->Abort();
  }
  Close();
}

// ---- writing -------------------------------------------------------------------------------

void HttpSession::Enqueue(std::string bytes) {
  if (pending_.empty()) {
    pending_ = std::move(bytes);
  } else {
    pending_ += bytes;
  }
}

void HttpSession::Flush() {
  if (write_in_flight_ || closed_) return;
  if (pending_.empty()) {
    if (exchange_complete_) FinishExchange();
    return;
  }
  writing_.swap(pending_);
  pending_.clear();
  write_in_flight_ = true;
  // Sets the write timer (and the read timer when no read is pending; every read sets its own
  // before it starts): a client that stops reading fails this write with a timeout.
  stream_.expires_after(std::chrono::seconds(env_.config->write_timeout_s));
  net::async_write(
      stream_, net::buffer(writing_),
      [self = shared_from_this()](beast::error_code ec, size_t) { self->OnWrite(ec); });
}

void HttpSession::OnWrite(beast::error_code ec) {
  write_in_flight_ = false;
  writing_.clear();
  if (ec) return OnClientGone();
  Flush();
}

void HttpSession::FinishExchange() {
  exchange_complete_ = false;
  if (call_ != nullptr) {
    call_.reset();
    if (call_counted_) env_.active_calls->fetch_sub(1);
    call_counted_ = false;
  }
  if (watching_) {  // OnWatch continues once the pending read is cancelled
    resume_after_watch_ = true;
    beast::error_code ignored;
    stream_.socket().cancel(ignored);
    return;
  }
  Continue();
}

void HttpSession::Continue() {
  if (!keep_alive_ || env_.stopping->load()) return LingerAndClose();
  ReadRequest();
}

// Half-closes, then reads and drops whatever the client still sends (e.g. the rest of an
// oversized body) until it closes too, so it reads our response instead of a reset.
void HttpSession::LingerAndClose() {
  if (closed_) return;
  beast::error_code ec;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
  if (ec) return Close();
  stream_.expires_after(std::chrono::seconds(3));
  discard_.resize(64 * 1024);
  DiscardInput();
}

void HttpSession::DiscardInput() {
  stream_.async_read_some(net::buffer(discard_),
                          [self = shared_from_this()](beast::error_code ec, size_t) {
                            if (ec) return self->Close();
                            self->DiscardInput();
                          });
}

void HttpSession::Close() {
  if (closed_) return;
  closed_ = true;
  beast::error_code ec;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
  stream_.close();
}

}  // namespace radixlm::server
