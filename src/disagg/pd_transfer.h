// The two ends of prefill/decode disaggregation as `radixlm serve` wires them to the engine
// (docs/disaggregation.md). Only built with UCX.
//
//   PrefillKvExporter: listens on the bootstrap port (a UCX listener: the gateway passes this
//     port to the decode server as bootstrap_port); the engine's KV export sink hands it each
//     finished prefill's prompt KV, which it serializes (kv_transfer_record.h) and holds for the
//     decode server that asks for the room.
//   DecodeKvImporter: the server's fetch_prefix_kv: asks the prefill server's exporter for a
//     room and resolves the engine's import future with the KV, or with an error naming the
//     problem (unreachable, connection lost, timed out, malformed or oversized record) within
//     the timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <string>

#include "disagg/kv_receiver.h"
#include "disagg/kv_sender.h"
#include "disagg/kv_transfer_record.h"
#include "disagg/prefix_kv_record.h"
#include "engine/api.h"
#include "util/status.h"

namespace radixlm::disagg {

class PrefillKvExporter {
 public:
  static StatusOr<std::unique_ptr<PrefillKvExporter>> Listen(const std::string& host, int port);
  int port() const { return sender_->port(); }
  // The engine's KV export sink (scheduler thread): serializes and publishes; never blocks.
  void Export(uint64_t room, StatusOr<PrefixKv> kv);
  KvSender::Counters counters() const { return sender_->counters(); }

 private:
  explicit PrefillKvExporter(std::unique_ptr<KvSender> sender) : sender_(std::move(sender)) {}
  std::unique_ptr<KvSender> sender_;
};

class DecodeKvImporter {
 public:
  // Records longer than max_record_bytes (MaxKvRecordBytes) fail the fetch.
  static StatusOr<std::unique_ptr<DecodeKvImporter>> Create(std::chrono::milliseconds timeout,
                                                            uint64_t max_record_bytes);
  std::shared_future<StatusOr<PrefixKv>> Fetch(const std::string& host, int port, uint64_t room);
  KvReceiver::Counters counters() const { return receiver_->counters(); }

 private:
  DecodeKvImporter(std::unique_ptr<KvReceiver> receiver, std::chrono::milliseconds timeout)
      : receiver_(std::move(receiver)), timeout_(timeout) {}
  std::unique_ptr<KvReceiver> receiver_;
  const std::chrono::milliseconds timeout_;
};

}  // namespace radixlm::disagg
