#include "disagg/pd_transfer.h"

#include "disagg/kv_transfer_record.h"

namespace radixlm::disagg {

StatusOr<std::unique_ptr<PrefillKvExporter>> PrefillKvExporter::Listen(const std::string& host,
                                                                       int port) {
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<KvSender> sender,
                           KvSender::Listen({.host = host, .port = port}));
  return std::unique_ptr<PrefillKvExporter>(new PrefillKvExporter(std::move(sender)));
}

void PrefillKvExporter::Export(uint64_t room, StatusOr<PrefixKv> kv) {
  sender_->Publish(room, SerializeKvTransferRecord(RecordFromPrefixKv(room, std::move(kv))));
}

StatusOr<std::unique_ptr<DecodeKvImporter>> DecodeKvImporter::Create(
    std::chrono::milliseconds timeout, uint64_t max_record_bytes) {
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<KvReceiver> receiver,
                           KvReceiver::Create({.max_record_bytes = max_record_bytes}));
  return std::unique_ptr<DecodeKvImporter>(new DecodeKvImporter(std::move(receiver), timeout));
}

std::shared_future<StatusOr<PrefixKv>> DecodeKvImporter::Fetch(const std::string& host, int port,
                                                               uint64_t room) {
  auto promise = std::make_shared<std::promise<StatusOr<PrefixKv>>>();
  std::shared_future<StatusOr<PrefixKv>> future = promise->get_future().share();
  const std::string peer = host + ":" + std::to_string(port);
  receiver_->FetchAsync(
      host, port, room, timeout_, [promise, peer, room](StatusOr<std::vector<uint8_t>> bytes) {
        if (!bytes.ok()) {
          promise->set_value(bytes.status());
          return;
        }
        StatusOr<KvTransferRecord> record = ParseKvTransferRecord(*bytes);
        if (!record.ok()) {
          promise->set_value(record.status());
        } else if (!record->error.empty()) {
          promise->set_value(Aborted("the prefill server " + peer +
                                     " sent no KV for "
                                     "bootstrap_room " +
                                     std::to_string(room) + ": " + record->error));
        } else {
          promise->set_value(PrefixKvFromRecord(std::move(*record)));
        }
      });
  return future;
}

}  // namespace radixlm::disagg
