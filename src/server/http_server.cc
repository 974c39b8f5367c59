#include "server/http_server.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <csignal>
#include <unistd.h>

#include "chat/reasoning_parser.h"
#include "chat/tool_call_parser.h"
#include "server/embeddings_api.h"
#include "server/loads_api.h"
#include "server/lora_api.h"
#include "server/native_api.h"
#include "server/openai_api.h"
#include "server/ops_api.h"
#include "server/pause_api.h"
#include "server/radix_tree_api.h"
#include "server/server_log.h"
#include "server/tokenize_api.h"
#include "server/web_ui.h"
#include "util/model_path.h"

namespace radixlm::server {

namespace net = boost::asio;
using tcp = net::ip::tcp;

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(const ServerConfig& config,
                                                         Engine* engine) {
  if (engine == nullptr) return InvalidArgument("HttpServer needs an engine");
  if (config.io_threads < 1) return InvalidArgument("--io-threads must be at least 1");
  if (!config.tool_call_parser.empty()) {
    RADIXLM_RETURN_IF_ERROR(chat::ToolCallFormatFromName(config.tool_call_parser).status());
  }
  if (!config.reasoning_parser.empty()) {
    RADIXLM_RETURN_IF_ERROR(chat::ReasoningFormatFromName(config.reasoning_parser).status());
  }
  return std::unique_ptr<HttpServer>(new HttpServer(config, engine));
}

HttpServer::HttpServer(const ServerConfig& config, Engine* engine)
    : config_(config),
      engine_(engine),
      tree_feed_(engine, std::chrono::milliseconds(config.radix_tree_event_interval_ms)),
      router_(config.api_key),
      accept_strand_(net::make_strand(ioc_)),
      acceptor_(accept_strand_),
      signals_(ioc_) {
  context_.engine = engine_;
  context_.metrics = &metrics_;
  context_.config = &config_;
  const ModelAssets& assets = engine_->assets();
  context_.model_info = &assets.info();
  context_.served_model_name = config_.served_model_name.empty()
                                   ? ShortModelName(assets.info().model_path)
                                   : config_.served_model_name;
  context_.created_unix_s = std::chrono::duration_cast<std::chrono::seconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
  context_.chat = assets.chat();
  context_.chat_status = assets.chat_status();
  context_.shutting_down = &stopping_;
  context_.live = &live_requests_;
  context_.load_rates = &load_rates_;
  context_.grammar_checks = &grammar_checks_;
  AddNativeGenerateRoutes(context_, &router_);
  AddOpsRoutes(context_, &router_);
  AddLoadsRoutes(context_, &router_);
  AddPauseRoutes(context_, &router_);
  AddLoraRoutes(context_, &router_);
  AddOpenAiRoutes(context_, &router_);
  AddTokenizeRoutes(context_, &router_);
  AddEmbeddingRoutes(context_, &router_);  // after the generation routes (it may refuse them)
  AddRadixTreeRoutes(context_, &tree_feed_, &router_);
  if (!config_.disable_web_ui) AddWebUiRoutes(&router_);
  env_.router = &router_;
  env_.config = &config_;
  env_.metrics = &metrics_;
  env_.blocking_pool = &blocking_pool_;
  env_.stopping = &stopping_;
  env_.open_sessions = &open_sessions_;
  env_.active_calls = &active_calls_;
}

HttpServer::~HttpServer() {
  RequestStop(/*drain=*/false);
  Shutdown();
}

std::string HttpServer::url() const {
  const bool v6 = config_.host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + config_.host + "]" : config_.host) + ":" +
         std::to_string(bound_port_);
}

Status HttpServer::Start() {
  RADIXLM_ASSIGN_OR_RETURN(ListenSocket listener, ListenSocket::Open(config_.host, config_.port));
  return Start(std::move(listener));
}

Status HttpServer::Start(ListenSocket listener) {
  if (!listener.is_open()) return InvalidArgument("HttpServer::Start needs an open ListenSocket");
  boost::system::error_code ec;
  bound_port_ = listener.port();
  const int fd = listener.Release();
  acceptor_.assign(listener.ipv6() ? tcp::v6() : tcp::v4(), fd, ec);
  if (ec) {
    ::close(fd);
    return IoError("cannot accept on port " + std::to_string(bound_port_) + ": " + ec.message());
  }

  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  WaitForSignal();
  net::post(accept_strand_, [this] { Accept(); });
  for (int i = 0; i < config_.io_threads; ++i) {
    threads_.emplace_back([this] { ioc_.run(); });
  }
  return Status::Ok();
}

void HttpServer::Accept() {
  acceptor_.async_accept(
      net::make_strand(ioc_), [this](boost::system::error_code ec, tcp::socket socket) {
        if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
        if (!ec) {
          std::make_shared<HttpSession>(std::move(socket), env_)->Start();
          return Accept();
        }
        // Out of file descriptors (or a transient error): back off instead of spinning.
        Log(LogLevel::kWarning, "accept failed: " + ec.message());
        auto timer = std::make_shared<net::steady_timer>(accept_strand_);
        timer->expires_after(std::chrono::milliseconds(50));
        timer->async_wait([this, timer](boost::system::error_code) { Accept(); });
      });
}

// The first signal starts a drain; a second one aborts what is still running.
void HttpServer::WaitForSignal() {
  signals_.async_wait([this](const boost::system::error_code& error, int signal) {
    if (error) return;
    const std::string name = signal == SIGINT ? "SIGINT" : "SIGTERM";
    bool first = false;
    {
      MutexLock lock(&stop_mu_);
      first = !stop_requested_;
    }
    if (first) {
      Log(LogLevel::kInfo, "received " + name + "; finishing in-flight requests (up to " +
                               std::to_string(config_.graceful_shutdown_timeout_s) +
                               " s; another signal aborts them), refusing new ones");
    } else {
      Log(LogLevel::kInfo, "received " + name + " again; aborting in-flight requests");
    }
    RequestStop(/*drain=*/first);
    if (first) WaitForSignal();
  });
}

void HttpServer::RequestStop(bool drain) {
  {
    MutexLock lock(&stop_mu_);
    stop_requested_ = true;
    if (!drain) force_stop_ = true;
  }
  stop_cv_.notify_all();
}

void HttpServer::Drain() {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(config_.graceful_shutdown_timeout_s);
  MutexLock lock(&stop_mu_);
  // active_calls_ is not guarded by stop_mu_, so poll it.
  while (active_calls_.load() > 0 && !force_stop_ && std::chrono::steady_clock::now() < deadline) {
    lock.WaitUntil(stop_cv_, std::min(deadline, std::chrono::steady_clock::now() +
                                                    std::chrono::milliseconds(20)));
  }
  if (active_calls_.load() > 0) {
    Log(LogLevel::kInfo,
        "aborting " + std::to_string(active_calls_.load()) + " in-flight request(s)");
  }
}

void HttpServer::WaitForShutdown() {
  {
    MutexLock lock(&stop_mu_);
    while (!stop_requested_) lock.Wait(stop_cv_);
  }
  Shutdown();
}

void HttpServer::Shutdown() {
  {
    MutexLock lock(&stop_mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  stopping_.store(true);
  // The tree event streams never end on their own: end them first, so the drain waits only for
  // generations.
  tree_feed_.Stop();
  if (!threads_.empty()) Drain();
  if (!threads_.empty()) {
    net::post(accept_strand_, [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      signals_.cancel(ignored);
    });
  }
  // Ends every in-flight generation (aborted); sessions write what remains and close.
  engine_->Shutdown();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (active_calls_.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  blocking_pool_.join();
  ioc_.stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  Log(LogLevel::kInfo, "server stopped");
}

}  // namespace radixlm::server
