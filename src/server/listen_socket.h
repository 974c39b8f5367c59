// ListenSocket: a TCP socket bound to host:port and listening, not yet accepting connections.
//
//   RADIXLM_ASSIGN_OR_RETURN(ListenSocket listener, ListenSocket::Open("127.0.0.1", 30000));
//   ...                                  // load the model, start the KV transfer
//   http->Start(std::move(listener));    // the server accepts on it
//
// `radixlm serve` claims its port with this first, before the model loads and before the KV
// transfer starts (its transports bind ephemeral ports of their own): a port in use is reported
// at once, and nothing the process opens later can take the port.
#pragma once

#include <string>

#include "util/status.h"

namespace radixlm::server {

class ListenSocket {
 public:
  // Resolves host, binds (SO_REUSEADDR; port 0: any free port) and listens. IoError naming the
  // address when it cannot.
  static StatusOr<ListenSocket> Open(const std::string& host, int port);

  ListenSocket() = default;
  ListenSocket(ListenSocket&& other) noexcept;
  ListenSocket& operator=(ListenSocket&& other) noexcept;
  ListenSocket(const ListenSocket&) = delete;
  ListenSocket& operator=(const ListenSocket&) = delete;
  ~ListenSocket();  // closes the socket unless Release() handed it over

  bool is_open() const { return fd_ >= 0; }
  bool ipv6() const { return ipv6_; }
  int port() const { return port_; }  // the bound port (the chosen one for port 0)
  // The descriptor, now the caller's to close; the object is closed afterwards.
  int Release();

 private:
  int fd_ = -1;
  bool ipv6_ = false;
  int port_ = 0;
};

}  // namespace radixlm::server
