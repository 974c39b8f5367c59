// KvReceiver: the decode server's end of the KV transfer (kv_sender.h has the protocol). It
// connects to a prefill server's KV sender (one endpoint per host:port, kept for later rooms),
// asks for a room, and waits for the record.
//
// Fetch never hangs: it returns the record's bytes, or an error naming the problem — the
// timeout passed (DeadlineExceeded is reported as Aborted with "timed out"), the prefill
// server could not be reached or closed the connection (IoError), or the receiver is shutting
// down (Aborted). Thread-safe; any number of fetches may wait at once. Only built with UCX.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace radixlm::disagg {

class KvReceiver {
 public:
  static StatusOr<std::unique_ptr<KvReceiver>> Create();
  ~KvReceiver();  // fetches still waiting end with Aborted

  // `host` is an IPv4 address or a host name (resolved to IPv4).
  StatusOr<std::vector<uint8_t>> Fetch(const std::string& host, int port, uint64_t room,
                                       std::chrono::milliseconds timeout);

  // As Fetch, without blocking: `done` runs exactly once — on the receiver's thread, or on the
  // caller's when the host does not resolve or the receiver is shutting down — and must not
  // block.
  using FetchCallback = std::function<void(StatusOr<std::vector<uint8_t>>)>;
  void FetchAsync(const std::string& host, int port, uint64_t room,
                  std::chrono::milliseconds timeout, FetchCallback done);

 private:
  class Impl;
  explicit KvReceiver(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace radixlm::disagg
