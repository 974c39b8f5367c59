// HttpServer: radixlm's HTTP front end (SGLang-native and OpenAI routes, SSE, metrics).
//
//   auto server = HttpServer::Create(config, engine.get());
//   (*server)->Start();              // bind, listen, start the IO threads
//   (*server)->Start(std::move(listener));  // or: accept on a ListenSocket opened earlier
//   (*server)->WaitForShutdown();    // until SIGINT / SIGTERM / RequestStop()
//
// Threading: config.io_threads threads run one io_context; every connection has its own
// strand (http_session.h). Handlers that would block on the engine (stats, flush) run on a
// small separate pool. No server thread touches engine state; they use Engine's thread-safe
// API, and generation output arrives through stream notifiers.
//
// Shutdown (WaitForShutdown after SIGTERM / SIGINT) ends the tree event streams and drains: new
// requests, on new or kept-alive connections, are answered 503 and their connections closed,
// while in-flight generations run to their normal end for up to
// config.graceful_shutdown_timeout_s (a second signal cuts this short). Then the listener
// closes, Engine::Shutdown() aborts whatever is still running (those responses end with
// finish_reason abort), the server waits up to a few seconds for the last bytes to be written,
// and stops its threads.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.h"
#include "server/http_session.h"
#include "server/listen_socket.h"
#include "server/metrics.h"
#include "server/radix_tree_feed.h"
#include "server/router.h"
#include "server/server_config.h"
#include "server/server_context.h"
#include "util/mutex.h"

namespace radixlm::server {

class HttpServer {
 public:
  // `engine` must outlive the server. The model's metadata and chat template are the engine's
  // (Engine::assets()); without a chat template, chat requests get its chat_status.
  static StatusOr<std::unique_ptr<HttpServer>> Create(const ServerConfig& config, Engine* engine);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (port 0: any free port) and starts serving (ListenSocket::Open):
  // InvalidArgument for a port outside [0, 65535], IoError naming the address when it cannot
  // bind.
  Status Start();
  // Starts serving on a socket already listening (ListenSocket::Open of config's host and port).
  Status Start(ListenSocket listener);
  int port() const { return bound_port_; }
  std::string url() const;

  // Blocks until SIGINT or SIGTERM arrives (or RequestStop is called), then shuts down as
  // described above. Idempotent.
  void WaitForShutdown();
  // drain = false (the destructor's, and a second signal's): abort in-flight work at once.
  void RequestStop(bool drain = true);

 private:
  HttpServer(const ServerConfig& config, Engine* engine);
  void Accept();
  void WaitForSignal();
  void Shutdown();
  // Waits until no generation is in flight, the drain deadline passes, or a forced stop.
  void Drain();

  const ServerConfig config_;
  Engine* const engine_;
  ServerMetrics metrics_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> open_sessions_{0};
  std::atomic<int64_t> active_calls_{0};
  LiveRequests live_requests_;
  RadixTreeFeed tree_feed_;  // /radix_tree/events
  LoadRateMeter load_rates_;
  GrammarCheckMemo grammar_checks_;
  ServerContext context_;
  Router router_;
  SessionEnv env_;

  boost::asio::io_context ioc_;
  boost::asio::strand<boost::asio::io_context::executor_type> accept_strand_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::signal_set signals_;
  boost::asio::thread_pool blocking_pool_{2};
  std::vector<std::thread> threads_;
  int bound_port_ = 0;

  Mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_requested_ GUARDED_BY(stop_mu_) = false;
  bool force_stop_ GUARDED_BY(stop_mu_) = false;
  bool shut_down_ GUARDED_BY(stop_mu_) = false;
};

}  // namespace radixlm::server
