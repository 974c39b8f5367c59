#include "server/listen_socket.h"

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <utility>

namespace radixlm::server {

namespace net = boost::asio;
using tcp = net::ip::tcp;

StatusOr<ListenSocket> ListenSocket::Open(const std::string& host, int port) {
  if (port < 0 || port > 65535) {
    return InvalidArgument("--port must be in [0, 65535], got " + std::to_string(port));
  }
  boost::system::error_code ec;
  net::io_context ioc;
  tcp::resolver resolver(ioc);
  auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec || endpoints.empty()) {
    return IoError("cannot resolve --host " + host + ": " + ec.message());
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  tcp::acceptor acceptor(ioc);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  ListenSocket socket;
  if (!ec) socket.port_ = acceptor.local_endpoint(ec).port();
  if (!ec) socket.fd_ = acceptor.release(ec);
  if (ec) {
    return IoError("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  }
  socket.ipv6_ = endpoint.protocol() == tcp::v6();
  return socket;
}

ListenSocket::ListenSocket(ListenSocket&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), ipv6_(other.ipv6_), port_(other.port_) {}

ListenSocket& ListenSocket::operator=(ListenSocket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    ipv6_ = other.ipv6_;
    port_ = other.port_;
  }
  return *this;
}

ListenSocket::~ListenSocket() {
  if (fd_ >= 0) ::close(fd_);
}

int ListenSocket::Release() { return std::exchange(fd_, -1); }

}  // namespace radixlm::server
