// KvReceiver: the decode server's end of the KV transfer (kv_sender.h has the protocol). It
// connects to a prefill server's KV sender (one endpoint per host:port, kept for later rooms),
// asks for a room, and waits for the record.
//
// Fetch never hangs: it returns the record's bytes, or an error naming the problem — the
// timeout passed (DeadlineExceeded is reported as Aborted with "timed out"), the prefill
// server could not be reached or closed the connection (IoError), or the receiver is shutting
// down (Aborted), or the record is longer than Options::max_record_bytes (InvalidArgument; none
// of its bytes are received, so a buggy or hostile peer cannot make this server allocate more).
// Thread-safe; any number of fetches may wait at once. Only built with UCX.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace radixlm::disagg {

class KvReceiver {
 public:
  struct Options {
    // The longest record accepted; the decode server sets it from its own KV layout
    // (pd_transfer.h: MaxKvRecordBytes).
    uint64_t max_record_bytes = std::numeric_limits<uint64_t>::max();
  };
  static StatusOr<std::unique_ptr<KvReceiver>> Create();  // no cap on a record's length
  static StatusOr<std::unique_ptr<KvReceiver>> Create(const Options& options);
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

  // Totals since creation, for /metrics and tests.
  struct Counters {
    int64_t received = 0;        // records delivered whole
    int64_t bytes_received = 0;  // their bytes
    // Their transfer time: from a record's announcement (its first message) to its last byte;
    // about zero for a record small enough to arrive in one message.
    double receive_seconds = 0;
    int64_t refused = 0;  // records longer than max_record_bytes
  };
  Counters counters() const;

 private:
  class Impl;
  explicit KvReceiver(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace radixlm::disagg
