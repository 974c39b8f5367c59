// KvSender: the prefill server's end of the KV transfer. It listens (UCX client/server
// connection over a socket address: UCX's tcp transport, or shm and others once connected)
// for decode servers; a decode server asks for a bootstrap room (kv_receiver.h), and the
// sender answers with the record published for that room, as soon as both the question and the
// record are there, in whichever order they come.
//
// Wire protocol (UCX Active Messages): the receiver sends kWant with the room (8 bytes) as the
// header and asks for a reply endpoint; the sender replies kRecord with the room as the header
// and the serialized KvTransferRecord (kv_transfer_record.h) as the data.
//
// A record nobody asked for within `ttl`, and a question left without a record as long, are
// dropped. A question whose receiver has given up (its own timeout) still takes the record;
// the receiver drops it, so a room is asked for once (the gateway names a new room on retry).
// Thread-safe. Only built with UCX.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace radixlm::disagg {

inline constexpr unsigned kAmWant = 71;
inline constexpr unsigned kAmRecord = 72;

class KvSender {
 public:
  struct Options {
    std::string host = "0.0.0.0";  // the address to listen on
    int port = 0;                  // 0: any free port (see port())
    std::chrono::milliseconds ttl{120'000};
  };
  // IoError naming the address when UCX cannot listen there (e.g. the port is taken).
  static StatusOr<std::unique_ptr<KvSender>> Listen(const Options& options);
  ~KvSender();  // closes the connections; records not yet sent are dropped

  int port() const;

  // Queues `record` (serialized) for the decode server that asks for `room`.
  void Publish(uint64_t room, std::vector<uint8_t> record);

  // Counters for tests and logs.
  struct Counters {
    int64_t published = 0;
    int64_t sent = 0;         // replies whose send completed
    int64_t bytes_sent = 0;   // their records' bytes
    double send_seconds = 0;  // their transfer time: from the send's start to its completion
    int64_t send_errors = 0;
    int64_t expired = 0;  // records and questions dropped after ttl
    int64_t waiting_records = 0;
    int64_t waiting_questions = 0;
  };
  Counters counters() const;

 private:
  class Impl;
  explicit KvSender(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace radixlm::disagg
