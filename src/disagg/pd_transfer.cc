#include "disagg/pd_transfer.h"

#include <algorithm>

#include "disagg/kv_transfer_record.h"

namespace radixlm::disagg {

namespace {

// PrefixKv and KvTransferRecord carry the same KV fields (the tokens apart: tokens /
// prompt_ids); moves them from one to the other.
template <typename From, typename To>
void MoveKvFields(From& from, To* to) {
  to->row_elems = static_cast<decltype(to->row_elems)>(from.row_elems);
  to->dtype = static_cast<decltype(to->dtype)>(from.dtype);
  to->rows_from = std::move(from.rows_from);
  to->kv = std::move(from.kv);
  to->lora_identity = from.lora_identity;
  to->lora_name = std::move(from.lora_name);
  to->state_layers = from.state_layers;
  to->state_conv_floats = from.state_conv_floats;
  to->state_delta_floats = from.state_delta_floats;
  to->state = std::move(from.state);
}

}  // namespace

PrefixKv PrefixKvFromRecord(KvTransferRecord&& record) {
  PrefixKv kv;
  kv.tokens = std::move(record.prompt_ids);
  MoveKvFields(record, &kv);
  return kv;
}

uint64_t MaxKvRecordBytes(int64_t max_tokens, int64_t kv_token_bytes, int64_t state_bytes) {
  const auto tokens = static_cast<uint64_t>(std::max<int64_t>(max_tokens, 0));
  const auto per_token = static_cast<uint64_t>(std::max<int64_t>(kv_token_bytes, 0));
  const auto state = static_cast<uint64_t>(std::max<int64_t>(state_bytes, 0));
  return tokens * (per_token + sizeof(int32_t)) + state + kRecordSlackBytes;
}

KvTransferRecord RecordFromPrefixKv(uint64_t room, StatusOr<PrefixKv>&& kv) {
  KvTransferRecord record;
  record.room = room;
  if (!kv.ok()) {
    record.error = kv.status().message();
    return record;
  }
  record.prompt_ids = std::move(kv->tokens);
  MoveKvFields(*kv, &record);
  return record;
}

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
